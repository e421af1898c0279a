"""Paper 003: Table 3 of Parsons & Sevcik, every discipline under every knowledge case.

Parsons & Sevcik (papers/003, sections 5 and 6) run ten scheduling disciplines on a
Poisson stream of jobs (section 6.1's workload: `schedc workload parsons-sevcik`), tag the
first 200 jobs and report their mean response time and makespan under four knowledge cases
(none, service demand, speedup, both). This script runs each discipline's `.pol` file
(`paper.py` lists them) on the same workloads, one per seed, and gives each cell's mean over
the seeds with a 95% Student t interval, its median, and where the paper's value falls
among the seeds. A file that does not exist yet, or does not compile, is listed as not
available and skipped. A policy that declares only some of the knowledge params (`demand`,
`speedup`) runs once per distinct binding: its other cells are the same runs, and say so.

The arrival rate, which the paper does not give, is calibrated on one cell (LSF-MIG, no
knowledge: 678 s) by ``--calibrate`` (calibration.json) and fixed for every other cell.
Run from the repository root:

    python -m experiments.paper003.run --workers 2

Writes results.json, results.md and figure.png (if matplotlib is installed) into --out.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from experiments.common import (
    ROOT,
    WALL_KEY,
    ExperimentError,
    SimulationFailed,
    command,
    dumps,
    one_line,
    run_all,
    shown,
    write_results,
)
from experiments.paper003 import paper, report
from experiments.paper003.metrics import covers, left_after_stream, summarise, tagged_metrics
from experiments.paper003.plan import (
    Available,
    Setup,
    Task,
    discover,
    plan,
    portable,
    select,
)
from schedc.dsl import DiagnosticError
from schedc.runtime.atomicio import write_text_atomic
from schedc.runtime.engine.monitor import MonitorViolation
from schedc.runtime.run import RunOptions, run_policy
from schedc.runtime.tools import calibrate as calibration
from schedc.runtime.workloads import parsons_sevcik as ps
from schedc.runtime.workloads.load import load_workload
from schedc.runtime.workloads.workload import Workload

HERE = Path(__file__).resolve().parent

# --- defaults: see README.md, "Settings" ---------------------------------------------------

# The calibrated mean inter-arrival (s): `--calibrate --workers 2` with the defaults below,
# the median MRT over the seeds at 678 s (calibration.json: every step, and what the mean or
# the makespan would have given)
DEFAULT_MEAN_INTERARRIVAL = 509.4
DEFAULT_SEEDS = 100  # seeds 1..N, one workload each
# The stream's first length. A run whose stream ends before its last tagged completion is
# run again on a stream twice as long, up to MAX_JOBS (README.md, "How many jobs")
DEFAULT_JOBS = 500
DEFAULT_MAX_JOBS = 16_000
CALIBRATION_TOLERANCE = 0.01  # relative
CALIBRATION_START_LOAD = 0.6  # offered load at the requests where the search starts
STATISTICS = ("median", "mean")
# (metric, statistic) searched by --calibrate; the first is the default, the others are
# what the other choices would have given (README.md, "The arrival rate")
SEARCHES = (("mrt", "median"), ("mrt", "mean"), ("makespan", "median"))
QUICK = {"seeds": 2, "tagged": 40, "jobs": 120, "max_jobs": 960}


# --- workloads and runs (also in worker processes) -----------------------------------------


def workload_spec(seed: int, jobs: int, mean_interarrival: float) -> ps.ParsonsSevcikSpec:
    return ps.ParsonsSevcikSpec(jobs=jobs, mean_interarrival=mean_interarrival, seed=seed)


def workload_command(seed: int, jobs: int, mean_interarrival: float) -> str:
    """The command that writes the same table."""
    return (f"schedc workload parsons-sevcik -o jobs.csv --jobs {jobs} --mean-interarrival "
            f"{mean_interarrival!r} --seed {seed}")


@cache
def workload_for(seed: int, jobs: int, mean_interarrival: float) -> Workload:
    """The table `schedc workload parsons-sevcik` writes, read back as `schedc run` reads it.
    Cached per process: forked workers inherit what the parent made."""
    spec = workload_spec(seed, jobs, mean_interarrival)
    with tempfile.TemporaryDirectory(prefix="paper003-") as folder:
        table = Path(folder) / "jobs.csv"
        ps.write_table(ps.generate(spec), table)
        return load_workload(table, ("cpus",), {"cpus": ps.NODES})


def simulate_times(task: Task, jobs: int) -> list[tuple[int, int]]:
    """(submit, completion) of every job of the stream of ``jobs`` jobs, in submit order."""
    workload = workload_for(task.seed, jobs, task.setup.mean_interarrival)
    options = RunOptions(params=dict(task.binding))
    try:
        result = run_policy(task.path, workload, options)
    except MonitorViolation as exc:  # re-raised as a plain exception: it crosses processes
        raise SimulationFailed(f"{task.key}: runtime monitor: {exc}") from None
    return [(r.job.submit, r.end) for r in result.schedule.records]


def run_task(task: Task) -> dict[str, Any]:
    """One (discipline, binding, seed): the stream doubled until it covers the tagged jobs.
    A failed run is an outcome too (its cell says so), so the rest of the table comes out."""
    started = time.perf_counter()
    setup, jobs = task.setup, task.setup.jobs
    try:
        while True:
            times = simulate_times(task, jobs)
            tagged = tagged_metrics(times, setup.tagged)
            if covers(times, tagged) or jobs >= setup.max_jobs:
                break
            jobs = min(2 * jobs, setup.max_jobs)
    except (SimulationFailed, DiagnosticError, ValueError) as exc:
        message = one_line(exc) if isinstance(exc, DiagnosticError) else str(exc)
        return {"key": task.key, "error": portable(message),
                "wall": time.perf_counter() - started}
    return {"key": task.key, "mrt": tagged.mean_response, "makespan": tagged.makespan,
            "jobs": jobs, "covered": covers(times, tagged),
            "left_after_stream": left_after_stream(times, setup.tagged),
            "wall": time.perf_counter() - started}


def _longest_first(tasks: Sequence[Task]) -> list[Task]:
    # the adaptive disciplines' runs take longest (README.md, "How long it takes")
    return sorted(tasks, key=lambda t: not paper.by_name(t.discipline).adaptive)


def _progress(result: dict[str, Any], done: int, total: int) -> dict[str, Any]:
    what = (f"FAILED: {result['error']}" if "error" in result
            else f"MRT {result['mrt']:,.0f} s, makespan {result['makespan']:,} s, "
            f"{result['jobs']} jobs")
    print(f"[{done}/{total}] {result['key']}: {result['wall']:.2f} s, {what}",
          file=sys.stderr, flush=True)
    return result


def _quiet(result: dict[str, Any], done: int, total: int) -> dict[str, Any]:
    return result


# --- calibration -------------------------------------------------------------------------


def statistic_of(values: Sequence[float], statistic: str) -> float:
    return statistics.median(values) if statistic == "median" else statistics.fmean(values)


Runs = Callable[[float], dict[str, list[float]]]  # the gap -> per-seed MRT and makespan


def calibration_runs(mig: Available, seeds: Sequence[int], setup: Setup, workers: int) -> Runs:
    """The calibration cell's runs at a gap, on every seed (each gap simulated once)."""
    binding = mig.binding(paper.CALIBRATION_CASE)

    @cache
    def runs(gap: float) -> dict[str, list[float]]:
        at = Setup(gap, setup.jobs, setup.max_jobs, setup.tagged)
        tasks = [Task(mig.discipline.name, mig.path, binding, s, at) for s in seeds]
        outcomes = run_all(tasks, workers, run_task, _quiet, list)
        failed = [o["error"] for o in outcomes.values() if "error" in o]
        if failed:
            raise SimulationFailed(failed[0])
        return {m: [outcomes[t.key][m] for t in tasks] for m in ("mrt", "makespan")}

    return runs


def load_at(gap: float, at: ps.LoadAt = "request") -> float:
    return ps.offered_load(workload_spec(0, 1, gap), at)


def calibrate_one(runs: Runs, metric: str, statistic: str, target: float) -> dict[str, Any]:
    """Bisection on the log of the gap (runtime/tools/calibrate.py) for the statistic of the
    metric over the seeds, then the gap rounded to 0.1 s and measured again: the value the
    table uses. The makespan grows with the gap (the tagged jobs arrive over a longer span):
    the search runs on its inverse, which falls, as the tool wants."""
    inverse = metric == "makespan"

    def measure(gap: float) -> float:
        value = statistic_of(runs(gap)[metric], statistic)
        print(f"calibration ({metric}, {statistic}): mean inter-arrival {gap:.2f} s (load "
              f"{load_at(gap):.4f}): {value:,.1f} s", file=sys.stderr, flush=True)
        return 1.0 / value if inverse else value

    start = ps.interarrival_for_load(CALIBRATION_START_LOAD)
    try:
        found = calibration.calibrate(measure, 1.0 / target if inverse else target, start,
                                      CALIBRATION_TOLERANCE)
    except ValueError as exc:
        raise ExperimentError(f"calibration ({metric}, {statistic}): {exc}") from None
    rounded = round(found.mean_interarrival, 1)
    at_rounded = runs(rounded)
    return {"metric": metric, "statistic": statistic, "target": target,
            "steps": [{"mean_interarrival": g, "load_request": load_at(g),
                       "value": 1.0 / v if inverse else v} for g, v in found.steps],
            "found": found.mean_interarrival, "mean_interarrival": rounded,
            "value": statistic_of(at_rounded[metric], statistic),
            "load_request": load_at(rounded), "load_minimum": load_at(rounded, "minimum"),
            "there": {m: {s: statistic_of(v, s) for s in STATISTICS}
                      for m, v in at_rounded.items()}}


def run_calibration(args: argparse.Namespace) -> dict[str, Any]:
    mig = discover([paper.by_name(paper.CALIBRATION_DISCIPLINE)], Path(args.policies_dir))[0]
    if not mig:
        raise ExperimentError(f"the calibration needs {paper.CALIBRATION_DISCIPLINE}")
    seeds = list(range(1, args.seeds + 1))
    runs = calibration_runs(mig[0], seeds, Setup(0.0, args.jobs, args.max_jobs, args.tagged),
                            args.workers)
    cell = paper.by_name(paper.CALIBRATION_DISCIPLINE).paper[paper.CALIBRATION_CASE]
    targets = {"mrt": cell.mrt.value, "makespan": cell.makespan.value}
    return {"cell": f"{paper.CALIBRATION_DISCIPLINE}, {paper.CALIBRATION_CASE}",
            "tolerance": CALIBRATION_TOLERANCE, "start_load": CALIBRATION_START_LOAD,
            "seeds": seeds, "tagged": args.tagged, "jobs": args.jobs,
            "max_jobs": args.max_jobs,
            "policy": {"file": shown(mig[0].path), "sha256": mig[0].sha256},
            "method": "bisection on the log of the mean inter-arrival "
                      "(runtime/tools/calibrate.py) until the statistic over the seeds of "
                      "the tagged jobs' metric is within the tolerance of the paper's value; "
                      "then the gap rounded to 0.1 s and measured again. `there`: both "
                      "metrics' median and mean at the rounded gap",
            "default": {"metric": "mrt", "statistic": "median"},
            "searches": [calibrate_one(runs, m, s, targets[m]) for m, s in SEARCHES]}


# --- the table ---------------------------------------------------------------------------


def table(args: argparse.Namespace) -> dict[str, Any]:
    started = time.perf_counter()
    availables, missing = discover(select(args.disciplines), Path(args.policies_dir))
    for name, why in missing.items():
        print(f"{name}: {why}", file=sys.stderr)
    if not availables:
        raise ExperimentError("no discipline is available: " + "; ".join(
            f"{name}: {why}" for name, why in missing.items()))
    seeds = list(range(1, args.seeds + 1))
    setup = Setup(args.mean_interarrival, args.jobs, args.max_jobs, args.tagged)
    for seed in seeds:  # made here, once: forked workers inherit them
        workload_for(seed, setup.jobs, setup.mean_interarrival)
    tasks = plan(availables, seeds, setup)
    outcomes = run_all(tasks, args.workers, run_task, _progress, _longest_first)
    results = report.build_results(parameters(args, seeds, setup), availables, missing,
                                   tasks, outcomes)
    results[WALL_KEY]["total"] = round(time.perf_counter() - started, 3)
    return results


def parameters(args: argparse.Namespace, seeds: Sequence[int], setup: Setup
               ) -> dict[str, Any]:
    gap = setup.mean_interarrival
    return {"seeds": list(seeds), "tagged": setup.tagged, "jobs": setup.jobs,
            "max_jobs": setup.max_jobs, "mean_interarrival": gap,
            "load_request": load_at(gap), "load_minimum": load_at(gap, "minimum"),
            "calibrated": gap == DEFAULT_MEAN_INTERARRIVAL,
            "workload": {"mean_demand": ps.MEAN_DEMAND, "cv_demand": ps.CV_DEMAND,
                         "good_share": ps.GOOD_SHARE, "nodes": ps.NODES,
                         "processors_per_node": ps.PROCS_PER_NODE,
                         "command": workload_command(seeds[0], setup.jobs, gap)},
            "tagged_arrival_span": tagged_arrival_span(seeds, setup),
            "confidence": 0.95, "quick": bool(args.quick)}


def tagged_arrival_span(seeds: Sequence[int], setup: Setup) -> dict[str, Any]:
    """Last minus first tagged submit over the seeds: every makespan is at least this (the
    paper's least makespan, 65,412 s, bounds its own)."""
    spans = []
    for seed in seeds:
        jobs = workload_for(seed, setup.jobs, setup.mean_interarrival).jobs[:setup.tagged]
        spans.append(float(jobs[-1].submit - jobs[0].submit))
    return summarise(spans).to_json()


# --- command line ------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m experiments.paper003.run",
        description="papers/003 Table 3: mean response time and makespan of the first 200 "
        "jobs under each LSF discipline and knowledge case, over seeds.")
    p.add_argument("--seeds", type=int, default=DEFAULT_SEEDS, metavar="N",
                   help=f"seeds 1..N, one workload each (default {DEFAULT_SEEDS})")
    p.add_argument("--jobs", type=int, default=DEFAULT_JOBS, metavar="N",
                   help=f"the stream's first length, doubled while it ends before the tagged "
                   f"jobs have left (default {DEFAULT_JOBS})")
    p.add_argument("--max-jobs", type=int, default=DEFAULT_MAX_JOBS, metavar="N",
                   help=f"the longest stream (default {DEFAULT_MAX_JOBS})")
    p.add_argument("--tagged", type=int, default=paper.TAGGED, metavar="N",
                   help=f"the first N jobs are measured (default {paper.TAGGED})")
    p.add_argument("--mean-interarrival", type=float, default=DEFAULT_MEAN_INTERARRIVAL,
                   metavar="S", help=f"seconds (default {DEFAULT_MEAN_INTERARRIVAL}, "
                   "calibrated: see calibration.json)")
    p.add_argument("--disciplines", nargs="+", metavar="NAME",
                   help="only these rows of Table 3 (default all)")
    p.add_argument("--policies-dir", default=str(ROOT), metavar="DIR",
                   help="where the policy files are looked for (default the repository "
                   "root: examples/preemption/...)")
    p.add_argument("--workers", type=int, default=1, metavar="N", help="worker processes")
    p.add_argument("--out", metavar="DIR",
                   help=f"output folder (default {shown(str(HERE))}; with --quick "
                   f"{shown(str(HERE / 'quick'))})")
    p.add_argument("--quick", action="store_true",
                   help=f"a test run in seconds: {QUICK['seeds']} seeds, "
                   f"{QUICK['tagged']} tagged jobs of {QUICK['jobs']}")
    p.add_argument("--calibrate", action="store_true",
                   help="find the mean inter-arrival at which LSF-MIG without knowledge "
                   "gives the paper's 678 s (the median over the seeds; also the mean, and "
                   "the makespan's median against its 83,985 s) and write calibration.json "
                   "instead of the table")
    return p


def _checked(args: argparse.Namespace) -> None:
    if args.quick:
        for name, value in QUICK.items():
            setattr(args, name, value)
    if args.out is None:
        args.out = str(HERE / "quick" if args.quick else HERE)
    if min(args.seeds, args.jobs, args.tagged, args.workers) < 1:
        raise ExperimentError("--seeds, --jobs, --tagged and --workers must be at least 1")
    if args.tagged > args.jobs or args.jobs > args.max_jobs:
        raise ExperimentError("need --tagged <= --jobs <= --max-jobs")
    if not args.mean_interarrival > 0:
        raise ExperimentError("--mean-interarrival must be more than 0")


def experiment(args: argparse.Namespace) -> dict[str, Any]:
    _checked(args)
    out = Path(args.out)
    if args.calibrate:
        results = run_calibration(args)
        out.mkdir(parents=True, exist_ok=True)
        write_text_atomic(out / "calibration.json", dumps(results))
        print(json.dumps([{k: r[k] for k in ("metric", "statistic", "mean_interarrival",
                                              "value", "load_request", "there")}
                          for r in results["searches"]], indent=2))
        return results
    results = table(args)
    out.mkdir(parents=True, exist_ok=True)
    markdown = report.markdown(results)
    if not write_results(out, results, markdown, report.write_figure):
        print("figure skipped: matplotlib is not installed", file=sys.stderr)
    print(markdown)
    count, messages = report.failures(results)
    if count:
        raise SimulationFailed(f"{count} runs failed ({len(messages)} distinct messages), the "
                               f"first: {messages[0]}")
    return results


def main(argv: Sequence[str] | None = None) -> int:
    return command(build_parser(), experiment, argv)


if __name__ == "__main__":
    sys.exit(main())
