"""CP-SAT on the quasi off-line problem as the waiting queue grows (issue 14's speed targets).

For each size N of --sizes, --per instants of a run of examples/conservative.pol with exactly
N waiting jobs are drawn (seed 0, the sampling of `schedc optimal --steps`) on each trace,
then solved with --workers workers and a --time-limit; prints status, solve seconds, gap
(on ARTwW), the quality of the best of the FCFS/SJF/LJF planning policies
(SLDwA(optimal) / SLDwA(policy)) and what gave the verdict (the event search or CP-SAT).

    python -m benchmarks.bench_optimal [--sizes 10 20 30 40] [--per 2] [--time-limit 60]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from schedc.runtime.run import RunOptions, prepare_run
from schedc.runtime.tools.optimal.instance import sample_steps, state_at
from schedc.runtime.tools.optimal.outcome import optimise
from schedc.runtime.tools.optimal.report import gap

# Jobs past their requested time end at it, as schedc ran them when the committed
# results were made (`--overrun kill`): a rerun reproduces them.
KILLED = "kill"

ROOT = Path(__file__).resolve().parents[1]
TRACES = {"KTH-SP2": ROOT / "runtime" / "data" / "KTH-SP2-1996-2.1-cln.swf.gz",
          "LANL-CM5": ROOT.parent / "shared" / "traces" / "LANL-CM5-1994-4.1-cln.swf.gz"}
POLICIES = ("conservative", "conservative-sjf", "conservative-ljf")


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_optimal",
                                description=__doc__.splitlines()[0])
    p.add_argument("--sizes", nargs="+", type=int, default=[10, 20, 30, 40])
    p.add_argument("--per", type=int, default=2, help="instances per size and trace")
    p.add_argument("--time-limit", type=float, default=60.0)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--traces", nargs="+", default=list(TRACES), choices=list(TRACES))
    args = p.parse_args()
    print(f"{'trace':9} {'jobs':>4} {'t':>9} {'status':8} {'seconds':>7} {'gap':>7} "
          f"{'quality':>7} by")
    for trace in args.traces:
        prepared = [prepare_run(ROOT / "examples" / f"{name}.pol", TRACES[trace],
                                RunOptions(overrun=KILLED)) for name in POLICIES]
        schedule = prepared[0].run().schedule
        for n in args.sizes:
            for t in sample_steps(schedule, args.per, 0, n, n):
                outcome = optimise([q.policy for q in prepared], state_at(schedule, t, trace),
                                   time_limit=args.time_limit, workers=args.workers)
                best = max(outcome.quality("sldwa", plan) or 0 for plan in outcome.plans)
                g = gap(outcome)
                print(f"{trace:9} {n:4} {t:9} {outcome.solution.status:8} "
                      f"{outcome.solution.seconds:7.2f} "
                      f"{'-' if g is None else f'{float(g):.2%}':>7} {float(best):7.4f} "
                      f"{outcome.solution.solver}", flush=True)


if __name__ == "__main__":
    main()
