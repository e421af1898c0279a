"""Paper 001, Table 1 in spirit: how much the best planning policy loses to the optimal plan.

Grothklags & Streit (papers/001, section 4) solve the quasi off-line problem at self-tuning
steps of the CTC trace with CPLEX (time-scaled to 5-minute slots on average, 5 h 34 min per
instance) and report per instance the problem size (jobs, makespan upper bound, accumulated
run time), the compute time, and the quality SLDwA(CPLEX) / SLDwA(best policy) with the
performance loss (1 - quality) x 100: 0.7% on average.

Here: KTH-SP2 and LANL-CM5 simulated under FCFS planning (examples/conservative.pol); at
--per submissions of each, drawn with --seed among those with --min-jobs..--max-jobs waiting
jobs (`schedc optimal --steps`'s sampling), the waiting jobs are solved with CP-SAT at
1-second resolution (no time-scaling) within --time-limit, and compared with the FCFS, SJF
and LJF planning policies' plans. Run from the repository root:

    python -m experiments.paper001.optimal_steps

Writes results.json and results.md into --out (default experiments/paper001/optimal).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from experiments.common import (
    ExperimentError,
    command,
    dumps,
    row,
    sha256,
    shown,
)
from schedc.runtime.atomicio import write_text_atomic
from schedc.runtime.run import RunOptions, prepare_run
from schedc.runtime.tools.optimal.instance import sample_steps, state_at
from schedc.runtime.tools.optimal.outcome import Outcome, optimise
from schedc.runtime.tools.optimal.report import gap

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# Jobs past their requested time end at it, as schedc ran them when the committed
# results were made (`--overrun kill`): a rerun reproduces them.
KILLED = "kill"

TRACES = {"KTH-SP2": ROOT / "runtime" / "data" / "KTH-SP2-1996-2.1-cln.swf.gz",
          "LANL-CM5": ROOT.parent / "shared" / "traces" / "LANL-CM5-1994-4.1-cln.swf.gz"}
POLICIES = ("conservative", "conservative-sjf", "conservative-ljf")
COLUMNS = ("trace", "time", "jobs", "makespan ub [s]", "run time [s]", "status", "gap",
           "solve [s]", "best policy", "quality", "loss")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m experiments.paper001.optimal_steps",
                                description=__doc__.splitlines()[0])
    p.add_argument("--traces", nargs="+", default=list(TRACES), choices=list(TRACES))
    p.add_argument("--per", type=int, default=6, help="instances per trace (default 6)")
    p.add_argument("--min-jobs", type=int, default=20)
    p.add_argument("--max-jobs", type=int, default=40)
    p.add_argument("--time-limit", type=float, default=60.0, help="seconds per instance")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true",
                   help="a smoke run: 2 instances of KTH-SP2 with 3..8 jobs, 5 s each")
    p.add_argument("--out", default=str(HERE / "optimal"), metavar="DIR",
                   help=f"output folder (default {shown(str(HERE / 'optimal'))})")
    return p


def _row(trace: str, outcome: Outcome) -> dict[str, Any]:
    inst, sol = outcome.instance, outcome.solution
    quality = {p.name: outcome.quality("sldwa", p) for p in outcome.plans}
    best = max(quality, key=lambda name: quality[name] or 0)
    # the best policy's plan ends by this: the paper's makespan upper bound
    ends = {p.name: max([s + j.estimate for j in inst.jobs for s in [p.starts[j.index]]]
                        + [rj.expected_end for rj in inst.running]) for p in outcome.plans}
    g = gap(outcome)
    q = quality[best]
    return {"trace": trace, "time": inst.now, "jobs": len(inst.jobs),
            "makespan_ub": ends[best] - inst.now,
            "run_time": sum(j.estimate for j in inst.jobs), "status": sol.status,
            "gap": None if g is None else round(float(g), 6), "seconds": round(sol.seconds, 2),
            "best_policy": best, "quality": None if q is None else round(float(q), 6),
            "loss": None if q is None else round(float(1 - q), 6)}


def experiment(args: argparse.Namespace) -> dict[str, Any]:
    if args.quick:
        args.traces, args.per, args.min_jobs, args.max_jobs = ["KTH-SP2"], 2, 3, 8
        args.time_limit = 5.0
    if not 1 <= args.min_jobs <= args.max_jobs or args.per < 1 or args.time_limit <= 0:
        raise ExperimentError("want --per >= 1, 1 <= --min-jobs <= --max-jobs and a positive "
                              "--time-limit")
    rows = []
    for trace in args.traces:
        if not TRACES[trace].is_file():
            raise ExperimentError(f"trace not found: {TRACES[trace]}")
        prepared = [prepare_run(ROOT / "examples" / f"{name}.pol", TRACES[trace],
                                RunOptions(overrun=KILLED)) for name in POLICIES]
        schedule = prepared[0].run().schedule
        for t in sample_steps(schedule, args.per, args.seed, args.min_jobs, args.max_jobs):
            outcome = optimise([q.policy for q in prepared], state_at(schedule, t, trace),
                               time_limit=args.time_limit, workers=args.workers)
            rows.append(_row(trace, outcome))
            print(" ".join(str(v) for v in rows[-1].values()), file=sys.stderr, flush=True)
    losses = [r["loss"] for r in rows if r["loss"] is not None]
    results = {
        "settings": {"traces": {t: sha256(str(TRACES[t])) for t in args.traces},
                     "per": args.per, "min_jobs": args.min_jobs, "max_jobs": args.max_jobs,
                     "time_limit": args.time_limit, "workers": args.workers,
                     "seed": args.seed, "policies": list(POLICIES)},
        "instances": rows,
        "averages": {
            "jobs": round(sum(r["jobs"] for r in rows) / len(rows), 1) if rows else None,
            "seconds": round(sum(r["seconds"] for r in rows) / len(rows), 2) if rows else None,
            "optimal": sum(r["status"] == "optimal" for r in rows),
            "loss": round(sum(losses) / len(losses), 6) if losses else None},
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / "results.json", dumps(results))
    write_text_atomic(out / "results.md", table(results))
    return results


def table(results: dict[str, Any]) -> str:
    lines = [row(COLUMNS), row("---" for _ in COLUMNS)]
    for r in results["instances"]:
        lines.append(row((r["trace"], r["time"], r["jobs"], r["makespan_ub"], r["run_time"],
                          r["status"], _pct(r["gap"]), r["seconds"], r["best_policy"],
                          r["quality"], _pct(r["loss"]))))
    a = results["averages"]
    lines.append(row(("averages", "", a["jobs"], "", "", f"{a['optimal']} optimal", "",
                      a["seconds"], "", "", _pct(a["loss"]))))
    return "\n".join(lines) + "\n"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.2f}%"


def main(argv: Sequence[str] | None = None) -> int:
    return command(parser(), experiment, argv)


if __name__ == "__main__":
    sys.exit(main())
