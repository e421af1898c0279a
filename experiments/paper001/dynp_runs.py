"""Paper 001 experiment, part one: self-tuning dynP against its candidates.

Grothklags & Streit (papers/001) switch a planning-based scheduler (CCS) between FCFS, SJF
and LJF planning at every submission, by the ARTwW of each policy's full plan. Here: dynP
with the simple and the advanced decider (ARTwW, step at each submission) against the three
planning examples alone (examples/conservative.pol, conservative-sjf.pol,
conservative-ljf.pol) on the four shared traces. Reported per run: ARTwW and SLDwA of the
whole run's schedule (runtime/results/metrics.py: with run times where the plan metrics use
estimates), the number of steps and switches, the share of time each candidate was active,
and the wall time per self-tuning step (median, 99th percentile). Run from the repository
root:

    python -m experiments.paper001.dynp_runs --jobs 2

Writes results.json and results.md into --out (default experiments/paper001/dynp/); only
the wall times (under "wall_seconds_not_reproducible") vary between reruns. ``--quick``: the
first 400 jobs of the bundled KTH-SP2 only (the test's mode).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attrs import frozen

from experiments.common import (
    WALL_KEY,
    ExperimentError,
    SimulationFailed,
    command,
    dumps,
    row,
    run_all,
    sha256,
    shown,
)
from schedc.dsl import compile_file, ir
from schedc.runtime.atomicio import write_text_atomic
from schedc.runtime.engine.monitor import MonitorViolation
from schedc.runtime.results.tuning_report import percentile
from schedc.runtime.run import RunOptions, bundled_trace, run_policy

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# Jobs past their requested time end at it, as schedc ran them when the committed
# results were made (`--overrun kill`): a rerun reproduces them.
KILLED = "kill"

TRACES = ROOT.parent / "shared" / "traces"
DEFAULT_TRACES = ("KTH-SP2-1996-2.1-cln.swf.gz", "LANL-CM5-1994-4.1-cln.swf.gz",
                  "NASA-iPSC-1993-3.1-cln.swf.gz", "lublin_256.swf.gz")
CANDIDATES = (("conservative.pol", "conservative"), ("conservative-sjf.pol", "conservative_sjf"),
              ("conservative-ljf.pol", "conservative_ljf"))
POLICIES = ("conservative", "conservative_sjf", "conservative_ljf", "dynp_simple", "dynp")
QUICK_JOBS = 400


def policy(name: str) -> ir.Policy:
    """A planning example, or dynP over the three (examples/dynp.pol, dynp-simple.pol)."""
    files = {n: f for f, n in CANDIDATES} | {"dynp": "dynp.pol", "dynp_simple": "dynp-simple.pol"}
    return compile_file(ROOT / "examples" / files[name], name)


@frozen
class Task:
    trace: str
    policy: str
    limit: int | None

    @property
    def key(self) -> str:
        return f"{Path(self.trace).name}/{self.policy}"


def run_task(task: Task) -> dict[str, Any]:
    try:
        result = run_policy(policy(task.policy), task.trace, RunOptions(limit=task.limit,
                                                                      overrun=KILLED))
    except MonitorViolation as exc:
        raise SimulationFailed(f"{task.key}: runtime monitor: {exc}") from None
    m = result.metrics()
    out: dict[str, Any] = {"key": task.key, "trace": Path(task.trace).name,
                           "policy": task.policy, "jobs": m["jobs"], "artww": m["artww"],
                           "sldwa": m["sldwa"], "wall": result.wall}
    t = result.schedule.tuning
    if t is not None:
        ms = [s * 1000 for s in t.step_seconds]
        out.update(steps=t.steps, switches=len(t.switches),
                   share={n: round(float(v), 6) for n, v in t.share},
                   step_ms={"median": statistics.median(ms) if ms else None,
                            "p99": percentile(ms, 99) if ms else None})
    return out


def experiment(args: argparse.Namespace) -> None:
    if args.quick:
        traces, limit = [str(bundled_trace())], QUICK_JOBS
    else:
        traces = [str(Path(args.traces) / t) for t in args.trace or DEFAULT_TRACES]
        limit = None
    for t in traces:
        if not Path(t).is_file():
            raise ExperimentError(f"trace not found: {t} (give --traces DIR)")
    tasks = [Task(t, p, limit) for t in traces for p in POLICIES]

    def progress(outcome: dict[str, Any], done: int, total: int) -> dict[str, Any]:
        print(f"[{done}/{total}] {outcome['key']}", file=sys.stderr)
        return outcome

    outcomes = run_all(tasks, args.jobs, run_task, progress, lambda ts: list(ts))
    runs, walls = [], {}
    for task in tasks:
        o = dict(outcomes[task.key])
        walls[task.key] = {"simulation_s": round(o.pop("wall"), 3),
                           **({"step_ms": o.pop("step_ms")} if "step_ms" in o else {})}
        runs.append(o)
    results = {"paper": "001", "experiment": "dynP against FCFS, SJF and LJF planning",
               "metric": "artww", "step": "submit", "limit": limit,
               "traces": {Path(t).name: sha256(t) for t in traces},
               "policies": list(POLICIES), "runs": runs, WALL_KEY: walls}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / "results.json", dumps(results))
    write_text_atomic(out / "results.md", table(runs, walls))
    print(f"wrote {shown(str(out / 'results.json'))} and results.md", file=sys.stderr)


def table(runs: Sequence[dict[str, Any]], walls: dict[str, Any]) -> str:
    lines = ["| trace | policy | ARTwW (s) | SLDwA | steps | switches | share FCFS/SJF/LJF "
             "| step median / p99 (ms) |", "|---|---|---:|---:|---:|---:|---|---|"]
    for r in runs:
        share = r.get("share")
        shares = "/".join(f"{share[n]:.0%}" for _, n in CANDIDATES) if share else ""
        step = walls[f"{r['trace']}/{r['policy']}"].get("step_ms")
        times = f"{step['median']:.3f} / {step['p99']:.3f}" if step and step["median"] else ""
        lines.append(row((r["trace"].split("-")[0].split("_")[0], r["policy"],
                          f"{r['artww']:,.0f}", f"{r['sldwa']:.2f}", r.get("steps", ""),
                          r.get("switches", ""), shares, times)))
    return "\n".join(lines) + "\n"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m experiments.paper001.dynp_runs",
                                description=__doc__.splitlines()[0])
    p.add_argument("--traces", default=str(TRACES), metavar="DIR",
                   help="folder of the shared traces")
    p.add_argument("--trace", action="append", default=None, metavar="NAME",
                   help="a trace of --traces (repeatable; default the four shared ones)")
    p.add_argument("--out", default=str(HERE / "dynp"), metavar="DIR",
                   help="output folder (default experiments/paper001/dynp)")
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="worker processes")
    p.add_argument("--quick", action="store_true",
                   help=f"the bundled KTH-SP2's first {QUICK_JOBS} jobs only (for a test)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    return command(parser(), experiment, argv)


if __name__ == "__main__":
    sys.exit(main())
