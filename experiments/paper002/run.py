"""Paper 002 experiment (a): mean response time against offered utilisation, MAP, HAP, IHAP.

Chhabra & Singh (papers/002, sections 5 and 6.1, figure 1) compare three adaptive
space-sharing policies on a non-dedicated heterogeneous cluster: 64 processors, 32 of 1 BPU
and 32 of 2 BPU, each with a background load uniform in [0, 30%]. The workload is theirs
(runtime/workloads/synthetic.py, as `schedc workload generate`): Poisson arrivals, two-stage
hyper-exponential service demand with mean 16 and CV 4, Pmax uniform in [1, 32]; the
arrival rate sets the offered utilisation by eq. 9 (rate x mean demand / 64). For each
utilisation the script generates one workload (a seed derived from --seed and the
utilisation), simulates every policy on it, and gives each policy's mean response time
(end - submit) with a confidence interval from batch means (experiments/stats.py). Run from
the repository root:

    python -m experiments.paper002.run --jobs 2

Writes results.json, results.md and figure.png (if matplotlib is installed) into --out.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import sys
import tempfile
import textwrap
import time
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from attrs import frozen

from experiments.common import (
    WALL_KEY,
    ExperimentError,
    SimulationFailed,
    add_output_options,
    command,
    load_policy,
    num,
    policy_path,
    row,
    run_all,
    save_figure,
    sha256,
    shown,
    write_results,
)
from experiments.stats import BatchMeans, batch_means
from schedc.dsl import compile_file
from schedc.dsl.number_text import json_number
from schedc.runtime.engine.cluster import ClusterError, parse_speeds
from schedc.runtime.engine.from_ir import bind_params
from schedc.runtime.engine.monitor import MonitorViolation
from schedc.runtime.engine.schedule import Schedule
from schedc.runtime.results.metrics import compute_metrics
from schedc.runtime.run import RunOptions, run_policy
from schedc.runtime.workloads import synthetic
from schedc.runtime.workloads.load import load_workload
from schedc.runtime.workloads.workload import Workload

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

DEFAULT_POLICIES = ("examples/map.pol", "examples/hap.pol", "examples/ihap.pol")
DEFAULT_UTILISATIONS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
# papers/002 table 1 and section 5.2
MEAN_DEMAND, CV_DEMAND, CV_INTERARRIVAL, PMAX = 16.0, 4.0, 1.0, 32


# --- the machine -------------------------------------------------------------------------

def _with_help(exc: ClusterError) -> str:
    """The cluster's message with its hint, on one line."""
    return f"{exc} ({exc.help})" if exc.help else str(exc)


def _groups(speeds: Sequence[float]) -> str:
    """"32 x 1 + 32 x 2": the processor groups, as --speeds gives them, for people."""
    runs: list[list[Any]] = []
    for s in speeds:
        if runs and runs[-1][1] == s:
            runs[-1][0] += 1
        else:
            runs.append([1, s])
    return " + ".join(f"{n} x {s:g}" for n, s in runs)


# --- what is simulated -------------------------------------------------------------------


@frozen
class Setup:
    """What every run of the experiment shares."""

    jobs: int
    seed: int
    time_scale: int  # times in units of 1 / time_scale s
    speeds: tuple[float, ...]  # BPU per processor
    background_load: float  # per-processor load uniform in [0, background_load]

    @property
    def processors(self) -> int:
        return len(self.speeds)


@frozen
class Analysis:
    """The batch means of each run (kept out of Setup, the key of the cached workloads)."""

    batches: int
    warmup: float
    confidence: float


@frozen
class Task:
    utilisation: float
    policy_file: str
    policy_name: str
    setup: Setup
    analysis: Analysis

    @property
    def key(self) -> str:
        return f"U={self.utilisation:g} {self.policy_name}"


def derived_seed(seed: int, purpose: str, utilisation: float) -> int:
    """A seed per (purpose, utilisation): stable across runs and Python versions (sha256)."""
    text = f"papers/002 (a):{seed}:{purpose}:{float(utilisation)!r}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def plan(utilisations: Sequence[float], policies: Sequence[tuple[str, str]], setup: Setup,
         analysis: Analysis) -> list[Task]:
    """Utilisation ascending, then the policies in the order given (the table's columns)."""
    return [Task(u, path, name, setup, analysis) for u in utilisations
            for path, name in policies]


# --- simulation (also in worker processes) -------------------------------------------------


def spec_for(utilisation: float, setup: Setup) -> synthetic.SyntheticSpec:
    """The workload at one utilisation, as `schedc workload generate --utilisation U
    --processors P --time-scale K` writes it: eq. 9 with the processor count, every time
    (inter-arrivals and demands alike) multiplied by K."""
    mean = synthetic.interarrival_for_utilisation(utilisation, MEAN_DEMAND, setup.processors)
    k = setup.time_scale
    return synthetic.SyntheticSpec(
        jobs=setup.jobs, mean_interarrival=mean * k, cv_interarrival=CV_INTERARRIVAL,
        mean_demand=MEAN_DEMAND * k, cv_demand=CV_DEMAND, pmax_high=PMAX,
        seed=derived_seed(setup.seed, "workload", utilisation))


@cache
def workload_for(utilisation: float, setup: Setup) -> tuple[Workload, dict[str, Any]]:
    """The moldable job table of `schedc workload generate`, read back as `schedc run
    --capacity cpus=P` reads it, with what the draws realised (mean demand, eq. 9).

    Cached per process: forked workers inherit what the parent generated.
    """
    spec = spec_for(utilisation, setup)
    jobs = synthetic.generate(spec)
    with tempfile.TemporaryDirectory(prefix="paper002-") as folder:
        table = Path(folder) / "workload.csv"
        synthetic.write_schedc_table(jobs, table)
        workload = load_workload(table, ("cpus",), {"cpus": setup.processors})
    k = setup.time_scale
    demand = math.fsum(j.demand for j in jobs) / k  # BPU-seconds
    span = jobs[-1].submit / k  # the arrival stream starts at 0
    realised = {"mean_demand": demand / len(jobs),
                "utilisation": demand / (setup.processors * span) if span > 0 else None,
                "mean_pmax": sum(j.pmax for j in jobs) / len(jobs)}
    return workload, realised


def run_options(task: Task) -> RunOptions:
    """The heterogeneous cluster of the run (the run draws its background loads afresh)."""
    setup = task.setup
    return RunOptions(speeds=setup.speeds, background_load=setup.background_load,
                      load_seed=derived_seed(setup.seed, "cluster", task.utilisation))


def run_task(task: Task) -> dict[str, Any]:
    workload, _ = workload_for(task.utilisation, task.setup)
    try:
        result = run_policy(task.policy_file, workload, run_options(task))
    except MonitorViolation as exc:  # re-raised as a plain exception: it crosses processes
        raise SimulationFailed(f"{task.key}: runtime monitor: {exc}") from None
    except ClusterError as exc:  # e.g. a policy that makes reservations
        raise ExperimentError(f"{task.key}: {_with_help(exc)}") from None
    return {"key": task.key, "wall": result.wall, **summarise(result.schedule, task)}


def responses(schedule: Schedule, time_scale: int) -> list[float]:
    """Each job's response time (end - submit) in seconds, in arrival (file) order."""
    return [(r.end - r.job.submit) / time_scale for r in schedule.records]


def summarise(schedule: Schedule, task: Task) -> dict[str, Any]:
    setup = task.setup
    values = responses(schedule, setup.time_scale)
    a = task.analysis
    ci = batch_means(values, a.batches, a.warmup, a.confidence)  # checked by the parent
    sizes = [r.alloc[0] for r in schedule.records]
    return {"jobs": len(values), "skipped": schedule.workload.skipped_total,
            "mean_response_all": math.fsum(values) / len(values),
            "max_response": max(values), "batch_means": _ci_entry(ci),
            "mean_size": sum(sizes) / len(sizes),
            "utilisation_schedule": compute_metrics(schedule).utilisation}


def _ci_entry(ci: BatchMeans) -> dict[str, Any]:
    return {"mean": ci.mean, "half_width": ci.half_width, "batches": ci.batches,
            "batch_size": ci.batch_size, "transient": ci.transient, "dropped": ci.dropped,
            "confidence": ci.confidence, "lag1_autocorrelation": ci.lag1,
            "batch_means": list(ci.batch_means)}


def _longest_first(tasks: Sequence[Task]) -> list[Task]:
    # queues grow with the load, and so does the time of a pass
    return sorted(tasks, key=lambda t: -t.utilisation)


def _progress(result: dict[str, Any], done: int, total: int) -> dict[str, Any]:
    ci = result["batch_means"]
    print(f"[{done}/{total}] {result['key']}: {result['wall']:.2f} s, mean response "
          f"{ci['mean']:.3f} +- {ci['half_width']:.3f} s", file=sys.stderr, flush=True)
    return result


# --- results ----------------------------------------------------------------------------


def machine_text(setup: Setup) -> str:
    return (f"heterogeneous: {_groups(setup.speeds)} BPU, background load uniform in "
            f"[0, {setup.background_load:g}] per processor, redrawn at arrivals and departures")


def _workload_entry(u: float, setup: Setup) -> dict[str, Any]:
    spec = spec_for(u, setup)
    _, realised = workload_for(u, setup)
    return {"utilisation": num(u), "seed": spec.seed,
            "mean_interarrival": spec.mean_interarrival / setup.time_scale,
            "realised": realised, "cluster_seed": derived_seed(setup.seed, "cluster", u)}


def _run_entry(task: Task, outcome: dict[str, Any]) -> dict[str, Any]:
    entry = {k: v for k, v in outcome.items() if k not in ("key", "wall")}
    return {"key": task.key, "utilisation": num(task.utilisation),
            "policy": task.policy_name, "policy_file": shown(task.policy_file), **entry}


def _policy_entry(path: str) -> dict[str, Any]:
    ir = compile_file(path)  # its params with their defaults (MAP's f = adaptive_f)
    return {"file": shown(path), "name": ir.name, "sha256": sha256(path),
            "params": {k: json_number(v) for k, v in sorted(bind_params(ir, {}).items())}}


def build_results(args: argparse.Namespace, setup: Setup, tasks: Sequence[Task],
                  outcomes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Everything, in a fixed order; only the WALL_KEY part differs between reruns."""
    return {
        "experiment": "papers/002 (a), figure 1: mean response time against offered "
                      "utilisation (eq. 9) for adaptive space-sharing policies",
        "machine": machine_text(setup),
        "response_time": "end - submit, seconds; the mean and the confidence interval are "
                         "batch means over the jobs in arrival order, after the warm-up",
        "utilisation_schedule": "processors held x time / (processors x makespan) "
                                "(runtime/results/metrics.py; processors, not BPU; the makespan "
                                "includes the drain after the last arrival)",
        "parameters": {
            "utilisations": [num(u) for u in args.utilisations],
            "jobs_per_run": setup.jobs, "seed": setup.seed, "time_scale": setup.time_scale,
            "batches": args.batches, "warmup": num(args.warmup),
            "confidence": num(args.confidence), "processors": setup.processors,
            "speeds": args.speeds, "bpu_total": num(math.fsum(setup.speeds)),
            "background_load": num(setup.background_load),
            "eq9_processors": setup.processors, "mean_demand": num(MEAN_DEMAND),
            "cv_demand": num(CV_DEMAND), "cv_interarrival": num(CV_INTERARRIVAL),
            "pmax": [1, PMAX]},
        "policies": [_policy_entry(path) for path in args.policies],
        "workloads": [_workload_entry(u, setup) for u in args.utilisations],
        "runs": [_run_entry(t, outcomes[t.key]) for t in tasks],
        WALL_KEY: {t.key: round(outcomes[t.key]["wall"], 3) for t in tasks},
    }


# --- markdown -----------------------------------------------------------------------------


def _by_cell(results: dict[str, Any]) -> dict[tuple[Any, str], dict[str, Any]]:
    return {(r["utilisation"], r["policy"]): r for r in results["runs"]}


def markdown(results: dict[str, Any]) -> str:
    params = results["parameters"]
    names = [p["name"] for p in results["policies"]]
    runs = _by_cell(results)
    policies = ", ".join(f"`{p['file']}` (`{p['name']}`, sha256 {p['sha256'][:12]})"
                         for p in results["policies"])
    lines = ["# Paper 002 (a): mean response time against offered utilisation", "",
             f"Machine: {results['machine']}. Policies: {policies}. Workload: "
             f"{params['jobs_per_run']} jobs per run, Poisson arrivals, H2 demand with mean "
             f"{params['mean_demand']} s and CV {params['cv_demand']}, Pmax uniform in "
             f"[1, {params['pmax'][1]}]; utilisation by eq. 9 over {params['eq9_processors']} "
             f"processors. Cells: mean response time (s) +- the half width of its "
             f"{params['confidence']:.0%} confidence interval, from {params['batches']} "
             f"batch means after dropping the first {params['warmup']:.0%} of the jobs.", "",
             row(["utilisation", *names]), row(["---"] * (len(names) + 1))]
    for u in params["utilisations"]:
        lines.append(row([u, *(_ci_cell(runs[u, n]["batch_means"]) for n in names)]))
    lines += ["", "Lag-1 autocorrelation of the batch means (near 0: nearly independent "
              "batches) and mean number of processors given:", "",
              row(["utilisation", *(f"{n} lag-1" for n in names),
                    *(f"{n} size" for n in names)]),
              row(["---"] * (2 * len(names) + 1))]
    for u in params["utilisations"]:
        cells = [runs[u, n] for n in names]
        lines.append(row([u, *(_lag_cell(c["batch_means"]["lag1_autocorrelation"])
                                for c in cells), *(f"{c['mean_size']:.2f}" for c in cells)]))
    return "\n".join(lines) + "\n"


def _ci_cell(ci: dict[str, Any]) -> str:
    return f"{ci['mean']:.2f} ± {ci['half_width']:.2f}"


def _lag_cell(value: float | None) -> str:
    return "–" if value is None else f"{value:+.2f}"


# --- figure ----------------------------------------------------------------------------


def write_figure(results: dict[str, Any], path: Path) -> bool:
    """Mean response vs utilisation, one line per policy with its confidence band (the
    figure of `schedc plot sweep`); False without matplotlib."""
    try:
        import matplotlib  # noqa: F401  (present: the figure is drawn)
    except ImportError:
        return False
    from schedc.runtime.results.plots import sweep_figure

    params = results["parameters"]
    rows = [{"policy": r["policy"].upper(), "utilisation": r["utilisation"],
             "mean_response_mean": r["batch_means"]["mean"],
             "mean_response_ci_low": r["batch_means"]["mean"] - r["batch_means"]["half_width"],
             "mean_response_ci_high": r["batch_means"]["mean"]
             + r["batch_means"]["half_width"]} for r in results["runs"]]
    fig = sweep_figure(rows, "utilisation", "mean_response", ["policy"])
    ax = fig.axes[0]
    lows = [r["mean_response_ci_low"] for r in rows]
    highs = [r["mean_response_ci_high"] for r in rows]
    if min(lows) > 0 and max(highs) / min(lows) > 100:  # more than two decades
        ax.set_yscale("log")
    ax.set_xlabel("offered utilisation (eq. 9: arrival rate x mean demand / "
                  f"{params['eq9_processors']})")
    ax.set_ylabel("mean response time (s)")
    ax.grid(linewidth=0.3, which="both")
    ax.legend(title=None)
    ax.set_title(_figure_title(results), fontsize=8)
    save_figure(fig, path)
    return True


def _figure_title(results: dict[str, Any]) -> str:
    p = results["parameters"]
    return "\n".join([
        textwrap.fill(f"papers/002 (a), {results['machine']}", 100),
        f"{p['jobs_per_run']} jobs/run, D = {p['mean_demand']}, CVs = {p['cv_demand']}, "
        f"CVa = {p['cv_interarrival']}, Pmax U[1, {p['pmax'][1]}], seed {p['seed']}",
        f"{p['confidence']:.0%} CI from {p['batches']} batch means after a "
        f"{p['warmup']:.0%} warm-up"])


# --- command line ---------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m experiments.paper002.run",
        description="papers/002 experiment (a): mean response time against offered "
        "utilisation for MAP, HAP and IHAP on a non-dedicated heterogeneous cluster, with "
        "batch-means confidence intervals.")
    p.add_argument("--utilisations", nargs="+", type=float, default=list(DEFAULT_UTILISATIONS),
                   metavar="U", help="offered utilisations, eq. 9 (default 0.1 0.2 ... 0.9)")
    p.add_argument("--policies", nargs="+", default=list(DEFAULT_POLICIES), metavar="POLICY",
                   help="policy files (default " + " ".join(DEFAULT_POLICIES) + ")")
    # papers/002 section 6: 31 batches of 7,000 jobs, the first dropped, 90% confidence
    p.add_argument("--jobs-per-run", type=int, default=217_000, metavar="N",
                   help="jobs in each workload (default 217000: 31 x 7000, as the paper)")
    p.add_argument("--seed", type=int, default=0, help="the seed all others derive from")
    p.add_argument("--batches", type=int, default=30, metavar="B",
                   help="batches of the batch means (default 30)")
    p.add_argument("--warmup", type=float, default=1 / 31, metavar="F",
                   help="fraction of the jobs dropped first as the transient (default 1/31: "
                   "the paper's first batch)")
    p.add_argument("--confidence", type=float, default=0.90, metavar="C",
                   help="confidence level of the intervals (default 0.90, as the paper)")
    p.add_argument("--time-scale", type=int, default=100, metavar="K",
                   help="times in units of 1/K s (default 100: see `schedc workload "
                   "generate --help`)")
    p.add_argument("--speeds", default="32x1,32x2", metavar="GROUPS",
                   help="processors as COUNTxBPU groups (default 32x1,32x2)")
    p.add_argument("--background-load", type=float, default=0.3, metavar="L",
                   help="each processor's background load is uniform in [0, L] "
                   "(default 0.3)")
    add_output_options(p, HERE)
    return p


def _check_numbers(args: argparse.Namespace) -> None:
    if args.jobs < 1 or args.time_scale < 1:
        raise ExperimentError("--jobs and --time-scale must be at least 1")
    if args.jobs_per_run < 2:
        raise ExperimentError("--jobs-per-run must be at least 2")
    if not all(math.isfinite(u) and u > 0 for u in args.utilisations):
        raise ExperimentError("every utilisation must be a number > 0")
    if not 0 <= args.background_load < 1:
        raise ExperimentError(f"--background-load {args.background_load} is not in [0, 1)")
    try:  # the batch-means arguments, checked before any simulation
        batch_means([0.0] * args.jobs_per_run, args.batches, args.warmup, args.confidence)
    except ValueError as exc:
        raise ExperimentError(f"{exc} (see --batches, --warmup, --jobs-per-run)") from None


def _checked_policies(given: Sequence[str], processors: int) -> list[tuple[str, str]]:
    """(path, name) of each policy, compiled once here so that mistakes surface first."""
    policies: list[tuple[str, str]] = []
    for path in map(policy_path, given):
        policy = load_policy(path)
        if policy.resources != ("cpus",):
            raise ExperimentError(f"{shown(path)}: the workload has cpus only, the policy's "
                                  f"machine has {list(policy.resources)}")
        if policy.capacities[0] not in (None, processors):
            raise ExperimentError(f"{shown(path)}: the policy's machine has "
                                  f"{policy.capacities[0]} cpus, --speeds {processors}")
        policies.append((path, policy.name))
    names = [name for _, name in policies]
    if len(set(names)) < len(names):  # runs, columns and lines are labelled by name
        raise ExperimentError(f"two policies have the same name: {', '.join(names)}")
    return policies


def _setup(args: argparse.Namespace) -> Setup:
    try:
        speeds = parse_speeds(args.speeds)
    except ClusterError as exc:
        raise ExperimentError(f"--speeds: {_with_help(exc)}") from None
    if len(speeds) < PMAX:  # a job of Pmax cpus would not fit: the table would skip it
        raise ExperimentError(f"--speeds gives {len(speeds)} processors, fewer than the "
                              f"largest Pmax ({PMAX})")
    return Setup(args.jobs_per_run, args.seed, args.time_scale, speeds, args.background_load)


def _checked(args: argparse.Namespace) -> tuple[Setup, list[tuple[str, str]]]:
    """Normalise the options and load every input once, so mistakes surface before any run."""
    _check_numbers(args)
    args.utilisations = sorted(set(args.utilisations))
    setup = _setup(args)
    policies = _checked_policies(args.policies, setup.processors)
    args.policies = [path for path, _ in policies]
    for u in args.utilisations:  # generated here, once: forked workers inherit them
        try:
            workload_for(u, setup)
        except ValueError as exc:
            raise ExperimentError(f"utilisation {u:g}: {exc}") from None
    return setup, policies


def experiment(args: argparse.Namespace) -> dict[str, Any]:
    started = time.perf_counter()
    setup, policies = _checked(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tasks = plan(args.utilisations, policies, setup,
                 Analysis(args.batches, args.warmup, args.confidence))
    outcomes = run_all(tasks, args.jobs, run_task, _progress, _longest_first)
    results = build_results(args, setup, tasks, outcomes)
    results[WALL_KEY]["total"] = round(time.perf_counter() - started, 3)
    table = markdown(results)
    if not write_results(out, results, table, write_figure):
        print("figure skipped: matplotlib is not installed", file=sys.stderr)
    print(table)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    return command(build_parser(), experiment, argv)


if __name__ == "__main__":
    sys.exit(main())
