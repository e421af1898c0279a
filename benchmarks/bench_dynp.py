"""Speed of self-tuning dynP (papers/001): conservative planning against dynP (FCFS, SJF,
LJF planning; ARTwW; advanced decider) on KTH-SP2 and LANL-CM5, and the wall time per
self-tuning step as the waiting queue grows (the paper: under 10 ms for 25 waiting jobs).

    python -m benchmarks.bench_dynp [--repeat 3] [--traces ../shared/traces] [--limit N]

Times are of the simulation alone (``RunResult.wall``, in process: the trace is read once),
best of --repeat runs. The dynP policy is built from the three planning examples as the
language lowers `examples/dynp.pol`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

import attrs

from schedc.dsl import compile_file, ir
from schedc.runtime.results.tuning_report import percentile
from schedc.runtime.run import RunOptions, run_policy

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
BUCKETS = ((1, 10), (11, 25), (26, 50), (51, 100), (101, None))


def dynp_policy(decider: str = "advanced", metric: str = "artww") -> ir.Policy:
    """dynP over the three planning examples (what `examples/dynp.pol` compiles to)."""
    cands = tuple(compile_file(EXAMPLES / f, n) for f, n in (
        ("conservative.pol", "conservative"), ("conservative-sjf.pol", "conservative_sjf"),
        ("conservative-ljf.pol", "conservative_ljf")))
    return attrs.evolve(cands[0], name="dynp", tuning=ir.Tuning(
        candidates=cands, metric=metric, decider=decider, step="submit"))


def best_of(repeat: int, policy, trace: Path, options: RunOptions):
    runs = [run_policy(policy, trace, options) for _ in range(repeat)]
    return min(runs, key=lambda r: r.wall)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_dynp",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--traces", type=Path, default=ROOT.parent / "shared" / "traces")
    parser.add_argument("--limit", type=int, default=None, help="only the first N jobs")
    args = parser.parse_args(argv)
    options = RunOptions(limit=args.limit)
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, simulation "
          f"wall time, best of {args.repeat}")
    print(f"{'trace':<10}{'jobs':>8}{'conservative s':>16}{'dynP s':>9}{'ratio':>7}"
          f"{'steps':>8}{'switches':>10}")
    dynp = dynp_policy()
    step_times: list[tuple[int, float]] = []
    for name in ("KTH-SP2-1996-2.1-cln.swf.gz", "LANL-CM5-1994-4.1-cln.swf.gz"):
        trace = args.traces / name
        if not trace.exists():
            print(f"{name}: not found under {args.traces}")
            continue
        cons = best_of(args.repeat, EXAMPLES / "conservative.pol", trace, options)
        tuned = best_of(args.repeat, dynp, trace, options)
        t = tuned.schedule.tuning
        assert t is not None
        step_times += list(zip(t.step_queue, t.step_seconds, strict=True))
        print(f"{name.split('-1')[0]:<10}{len(tuned.schedule.records):>8,}{cons.wall:>16.2f}"
              f"{tuned.wall:>9.2f}{tuned.wall / cons.wall:>7.2f}{t.steps:>8,}"
              f"{len(t.switches):>10,}")
    print("\ntime per self-tuning step by waiting jobs (both traces, 3 candidates planned):")
    print(f"{'waiting':<10}{'steps':>8}{'median ms':>11}{'p99 ms':>9}{'max ms':>9}")
    for low, high in BUCKETS:
        ms = [s * 1000 for q, s in step_times if q >= low and (high is None or q <= high)]
        label = f"{low}-{high}" if high is not None else f">{low - 1}"
        if ms:
            print(f"{label:<10}{len(ms):>8,}{statistics.median(ms):>11.3f}"
                  f"{percentile(ms, 99):>9.3f}{max(ms):>9.3f}")
        else:
            print(f"{label:<10}{0:>8}")


if __name__ == "__main__":
    main()
