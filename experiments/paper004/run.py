"""Paper 004 experiment: K-resource backfilling, figures 2 and 3, and LANL-CM5 with memory.

Leinberger, Karypis & Kumar (papers/004, section 3) compare FCFS/BL-EASY, FCFS/BB-EASY and
FCFS/FF-CONS with the baseline FCFS/FF-EASY on K-resource workloads: for K in {2, 4, 8},
requirements drawn uniform or exponential and scaled by the job's size, and three loads, each
the arrival rate at which FF-EASY keeps 64, 128 or 256 jobs waiting on average. Figure 2 is
the gain in average response time over FF-EASY, figure 3 the gain in weighted average
response time (weight = resource requirement x run time), positive = better.

Here the workloads are `schedc workload kresource` (runtime/workloads/kresource.py: sizes and
run times of a trace, by default the Lublin-Feitelson model trace in ../shared/traces, in place
of the paper's Feitelson 1996 model), the load calibration is tools/calibrate.py on the baseline
(the first policy), and each policy runs on the machine of its own resources plus r2..rK, as
`schedc run POLICY --resources K`. The same four policies also run on LANL-CM5 with its
requested memory per processor as a second resource (`--resources cpus,memory --capacity
memory=33554432`: 32 MB per node x 1,024 nodes, in KB), the paper's "real 2-resource case".
Run from the repository root:

    python -m experiments.paper004.run --jobs 2

Writes results.json, results.md and figure.png (if matplotlib is installed) into --out.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import attrs
from attrs import frozen

from experiments.common import (
    WALL_KEY,
    ExperimentError,
    SimulationFailed,
    add_output_options,
    command,
    num,
    policy_path,
    row,
    run_all,
    save_figure,
    sha256,
    shown,
    write_results,
)
from schedc.dsl import ir
from schedc.runtime.engine.monitor import MonitorViolation
from schedc.runtime.engine.policy import RuntimePolicy
from schedc.runtime.run import (
    RunOptions,
    WorkloadCache,
    compiled,
    load_for,
    prepared_policy,
    run_policy,
)
from schedc.runtime.tools import calibrate
from schedc.runtime.workloads import kresource
from schedc.runtime.workloads.load import load_workload
from schedc.runtime.workloads.workload import Workload

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# Jobs past their requested time end at it, as schedc ran them when the committed
# results were made (`--overrun kill`): a rerun reproduces them.
KILLED = "kill"

# the baseline first: gains are over it
DEFAULT_POLICIES = ("examples/ff-easy.pol", "examples/bl-easy.pol", "examples/bb-easy.pol",
                    "examples/ff-cons.pol")
TRACES = ROOT.parent / "shared" / "traces"
DEFAULT_SOURCE = TRACES / "lublin_256.swf.gz"
DEFAULT_LANL = TRACES / "LANL-CM5-1994-4.1-cln.swf.gz"
LANL_MEMORY_KB = 32 * 1024 * 1024  # 1,024 nodes of 32 MB, in the trace's KB
METRICS = ("mean_response", "weighted_response", "mean_queue", "mean_wait", "utilisation",
           "jobs")


@frozen
class Setup:
    source: str  # the trace of sizes and run times
    source_jobs: int  # its first N jobs (0: all)
    seed: int
    tolerance: float
    policies: tuple[str, ...]  # files, the baseline first


@frozen
class Task:
    """One calibrated cell of figures 2 and 3 (k > 0), or one policy on LANL (k = 0)."""

    k: int
    distribution: str
    queue_length: float
    setup: Setup
    lanl: str = ""
    lanl_policy: str = ""

    @property
    def key(self) -> str:
        if self.k == 0:
            return f"LANL {Path(self.lanl_policy).stem}"
        return f"K={self.k} {self.distribution} Q={self.queue_length:g}"


def derived_seed(seed: int, k: int, distribution: str) -> int:
    """One seed per (K, distribution): the three loads of a graph share their jobs."""
    text = f"papers/004:{seed}:{k}:{distribution}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


@cache
def source_of(setup: Setup) -> tuple[tuple[kresource.SourceJob, ...], int]:
    """The source trace's jobs and capacity (cached: forked workers inherit it)."""
    trace = load_workload(setup.source)
    return kresource.source_jobs(trace, setup.source_jobs or None), trace.capacities[0]


@cache
def draws_of(setup: Setup, k: int, distribution: str) -> kresource.Draws:
    source, _ = source_of(setup)
    return kresource.draw(source, k, distribution, derived_seed(setup.seed, k, distribution))


def policy_on(path: str, k: int) -> RuntimePolicy:
    return prepared_policy(path, RunOptions(resources=k))


def measured(policy: ir.Policy, workload: Workload, key: str,
             options: RunOptions | None = None, cache: WorkloadCache | None = None
             ) -> dict[str, Any]:
    """One run's METRICS, its policy's name, and the simulation's wall time."""
    try:
        result = run_policy(policy, workload, options, cache)
    except MonitorViolation as exc:  # re-raised as a plain exception: it crosses processes
        raise SimulationFailed(f"{key} {policy.name}: runtime monitor: {exc}") from None
    m = result.metrics()
    return {"metrics": {name: m[name] for name in METRICS}, "name": result.policy.name,
            "wall": result.wall}


def run_cell(task: Task) -> dict[str, Any]:
    setup = task.setup
    source, capacity = source_of(setup)
    draws = draws_of(setup, task.k, task.distribution)
    on_k = RunOptions(resources=task.k)
    irs = [compiled(p, on_k) for p in setup.policies]
    baseline = prepared_policy(irs[0], RunOptions())
    started = time.perf_counter()
    try:
        found = calibrate.calibrate_rate(baseline, source, draws, capacity,
                                         task.queue_length, setup.tolerance)
    except ValueError as exc:
        raise ExperimentError(f"{task.key}: {exc}") from None
    calibration_wall = time.perf_counter() - started
    w = kresource.workload(source, draws, capacity, found.mean_interarrival)
    runs = {r["name"]: r for r in (measured(p, w, task.key) for p in irs)}
    return {"key": task.key, "calibration": {
        "mean_interarrival": found.mean_interarrival, "queue_length": found.queue_length,
        "steps": [list(s) for s in found.steps]},
        "runs": {n: r["metrics"] for n, r in runs.items()},
        "wall": {"calibration": calibration_wall, **{n: r["wall"] for n, r in runs.items()}}}


# LANL-CM5 on cpus and memory, as `schedc run --resources cpus,memory --capacity memory=...`
LANL = RunOptions(resources=("cpus", "memory"), capacities={"memory": LANL_MEMORY_KB},
                  overrun=KILLED)
# The trace as read (forked workers inherit it; every policy's LANL run shares it)
LOADED: WorkloadCache = {}


def lanl_workload(path: str, policy: str = DEFAULT_POLICIES[0]) -> Workload:
    """The LANL trace as ``policy``'s run reads it."""
    return load_for(prepared_policy(policy_path(policy), LANL), path, LANL, LOADED)


def run_lanl(task: Task) -> dict[str, Any]:
    policy = compiled(task.lanl_policy, LANL)  # on cpus and memory: its name for a stop
    r = measured(policy, task.lanl, task.key, attrs.evolve(LANL, resources=None), LOADED)
    return {"key": task.key, "policy": r["name"], "metrics": r["metrics"],
            "wall": {r["name"]: r["wall"]}}


def run_task(task: Task) -> dict[str, Any]:
    return run_lanl(task) if task.k == 0 else run_cell(task)


def _longest_first(tasks: Sequence[Task]) -> list[Task]:
    # LANL runs are the longest (122,000 jobs), then more resources and longer queues
    return sorted(tasks, key=lambda t: (t.k != 0, -t.k, -t.queue_length))


def _progress(result: dict[str, Any], done: int, total: int) -> dict[str, Any]:
    wall = sum(result["wall"].values())
    print(f"[{done}/{total}] {result['key']}: {wall:.1f} s", file=sys.stderr, flush=True)
    return result


# --- results ----------------------------------------------------------------------------


def gain(baseline: float, value: float) -> float | None:
    """The paper's performance gain, %: positive when ``value`` is lower (better)."""
    return None if baseline == 0 else 100.0 * (baseline - value) / baseline


def _gains(runs: dict[str, dict[str, Any]], names: Sequence[str]) -> dict[str, Any]:
    base = runs[names[0]]
    return {n: {metric: gain(base[metric], runs[n][metric])
                for metric in ("mean_response", "weighted_response")} for n in names[1:]}


def build_results(args: argparse.Namespace, setup: Setup, tasks: Sequence[Task],
                  outcomes: dict[str, dict[str, Any]], names: Sequence[str]) -> dict[str, Any]:
    source, capacity = source_of(setup) if args.ks else ((), 0)
    cells = []
    for t in (t for t in tasks if t.k):
        o = outcomes[t.key]
        cells.append({"k": t.k, "distribution": t.distribution,
                      "target_queue_length": num(t.queue_length),
                      "seed": derived_seed(setup.seed, t.k, t.distribution),
                      "calibration": o["calibration"], "runs": o["runs"],
                      "gain_percent": _gains(o["runs"], names)})
    lanl = None
    if args.lanl:
        runs = {outcomes[t.key]["policy"]: outcomes[t.key]["metrics"]
                for t in tasks if t.k == 0}
        lanl = {"trace": Path(args.lanl).name, "sha256": sha256(args.lanl),
                "resources": {"cpus": 1024, "memory": LANL_MEMORY_KB},
                "runs": runs, "gain_percent": _gains(runs, names)}
    return {
        "experiment": "papers/004 figures 2 and 3: gain in average and weighted average "
                      "response time of BL-EASY, BB-EASY and FF-CONS over FF-EASY",
        "gain_percent": "100 x (baseline - policy) / baseline: positive = better than the "
                        "baseline",
        "metrics": {
            "mean_response": "end - submit, mean over all jobs (s)",
            "weighted_response": "sum(weight x response) / sum(weight), weight = run time "
                                 "x mean share of the K resources (s)",
            "mean_queue": "time-averaged number of waiting jobs: sum(wait) / makespan"},
        "parameters": {
            "source": Path(setup.source).name if args.ks else None,
            "source_sha256": sha256(setup.source) if args.ks else None,
            "source_jobs": len(source), "capacity_per_resource": capacity,
            "ks": args.ks, "distributions": args.distributions,
            "queue_lengths": [num(q) for q in args.queue_lengths], "seed": setup.seed,
            "tolerance": num(setup.tolerance)},
        "policies": [{"file": shown(p), "name": n, "sha256": sha256(p)}
                     for p, n in zip(setup.policies, names, strict=True)],
        "cells": cells,
        "lanl": lanl,
        WALL_KEY: {t.key: {k: round(v, 3) for k, v in outcomes[t.key]["wall"].items()}
                   for t in tasks},
    }


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:+.1f}"


def markdown(results: dict[str, Any]) -> str:
    names = [p["name"] for p in results["policies"]]
    p = results["parameters"]
    lines = ["# Paper 004: K-resource backfilling, gains over " + names[0], "",
             "Gain (%) = 100 x (baseline - policy) / baseline, positive = better than "
             f"`{names[0]}`. Policies: "
             + ", ".join(f"`{q['file']}` (sha256 {q['sha256'][:12]})"
                         for q in results["policies"]) + "."]
    if results["cells"]:
        lines += ["", f"Workloads: the first {p['source_jobs']} jobs of {p['source']} "
                  f"(sizes, run times), K resources of {p['capacity_per_resource']} each, "
                  f"Poisson arrivals at the rate where `{names[0]}`'s mean queue length is "
                  f"the target Q (within {p['tolerance']:.0%}); seed {p['seed']}.", ""]
        others = names[1:]
        lines += [row(["K", "distribution", "Q", "Q measured", "mean inter-arrival s",
                       *(f"{n} resp." for n in others), *(f"{n} w. resp." for n in others)]),
                  row(["---"] * (5 + 2 * len(others)))]
        for c in results["cells"]:
            g = c["gain_percent"]
            lines.append(row([c["k"], c["distribution"], c["target_queue_length"],
                              f"{c['calibration']['queue_length']:.1f}",
                              f"{c['calibration']['mean_interarrival']:.1f}",
                              *(_pct(g[n]["mean_response"]) for n in others),
                              *(_pct(g[n]["weighted_response"]) for n in others)]))
        lines += ["", "Absolute values (s): mean response / weighted response per policy.",
                  "", row(["K", "distribution", "Q", *names]),
                  row(["---"] * (3 + len(names)))]
        for c in results["cells"]:
            lines.append(row([c["k"], c["distribution"], c["target_queue_length"],
                              *(f"{c['runs'][n]['mean_response']:,.0f} / "
                                f"{c['runs'][n]['weighted_response']:,.0f}" for n in names)]))
    lanl = results["lanl"]
    if lanl:
        lines += ["", f"## {lanl['trace']} with memory (cpus 1,024, memory "
                  f"{lanl['resources']['memory']:,} KB)", "",
                  row(["policy", "jobs", "mean response s", "weighted response s",
                       "mean queue", "gain resp. %", "gain w. resp. %"]),
                  row(["---"] * 7)]
        for n in names:
            m = lanl["runs"][n]
            g = lanl["gain_percent"].get(n)
            lines.append(row([n, m["jobs"], f"{m['mean_response']:,.0f}",
                              f"{m['weighted_response']:,.0f}", f"{m['mean_queue']:.1f}",
                              _pct(g["mean_response"]) if g else "baseline",
                              _pct(g["weighted_response"]) if g else "baseline"]))
    return "\n".join(lines) + "\n"


def write_figure(results: dict[str, Any], path: Path) -> bool:
    """Figures 2 and 3 as one: a row per metric, a panel per (K, distribution) and LANL,
    grouped bars per load; False without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    names = [p["name"] for p in results["policies"]]
    others = names[1:]
    panels: dict[str, list[dict[str, Any]]] = {}
    for c in results["cells"]:
        panels.setdefault(f"K={c['k']} {c['distribution']}", []).append(c)
    columns = list(panels) + (["LANL-CM5 memory"] if results["lanl"] else [])
    if not columns:
        return False
    fig, axes = plt.subplots(2, len(columns), figsize=(2.4 * len(columns) + 1, 6.0),
                             squeeze=False, sharey="row")
    width = 0.8 / len(others)
    for r, (metric, label) in enumerate((("mean_response", "gain in average response %"),
                                         ("weighted_response",
                                          "gain in weighted avg response %"))):
        for col, title in enumerate(columns):
            ax = axes[r][col]
            if title in panels:
                groups = [(f"Q={c['target_queue_length']}", c["gain_percent"])
                          for c in panels[title]]
            else:
                groups = [("trace", results["lanl"]["gain_percent"])]
            for i, n in enumerate(others):
                xs = [g + (i - (len(others) - 1) / 2) * width for g in range(len(groups))]
                ys = [gains[n][metric] or 0.0 for _, gains in groups]
                ax.bar(xs, ys, width, label=n if (r, col) == (0, 0) else None)
            ax.set_xticks(range(len(groups)), [g for g, _ in groups], fontsize=7)
            ax.axhline(0, color="black", linewidth=0.6)
            ax.grid(axis="y", linewidth=0.3)
            if r == 0:
                ax.set_title(title, fontsize=8)
            if col == 0:
                ax.set_ylabel(label, fontsize=8)
    fig.legend(loc="lower center", ncol=len(others), fontsize=8)
    fig.suptitle(f"papers/004: gains over {names[0]} (positive = better)", fontsize=9)
    fig.tight_layout(rect=(0, 0.05, 1, 0.97))
    save_figure(fig, path)
    plt.close(fig)
    return True


# --- command line ---------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m experiments.paper004.run",
        description="papers/004 figures 2 and 3: gains of K-resource backfilling rules "
        "over FCFS/FF-EASY on calibrated K-resource workloads, and on LANL-CM5 with memory.")
    p.add_argument("--policies", nargs="+", default=list(DEFAULT_POLICIES), metavar="POLICY",
                   help="policy files, the baseline first (default "
                   + " ".join(DEFAULT_POLICIES) + ")")
    p.add_argument("--source", default=str(DEFAULT_SOURCE), metavar="TRACE",
                   help="trace of sizes and run times (default ../shared/traces/"
                   "lublin_256.swf.gz)")
    p.add_argument("--source-jobs", type=int, default=5000, metavar="N",
                   help="its first N jobs (default 5000; 0: all)")
    p.add_argument("--ks", nargs="*", type=int, default=[2, 4, 8], metavar="K",
                   help="numbers of resources (default 2 4 8; none: LANL only)")
    p.add_argument("--distributions", nargs="+", default=list(kresource.DISTRIBUTIONS),
                   choices=kresource.DISTRIBUTIONS, help="default: both")
    p.add_argument("--queue-lengths", nargs="+", type=float, default=[64, 128, 256],
                   metavar="Q", help="target mean queue lengths (default 64 128 256)")
    p.add_argument("--tolerance", type=float, default=0.03, metavar="F",
                   help="calibrate to within this fraction of Q (default 0.03)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lanl", default=str(DEFAULT_LANL), metavar="TRACE",
                   help="LANL-CM5 trace for the 2-resource runs ('' to skip)")
    add_output_options(p, HERE)
    return p


def experiment(args: argparse.Namespace) -> None:
    if args.jobs < 1 or args.source_jobs < 0:
        raise ExperimentError("--jobs must be at least 1 and --source-jobs at least 0")
    if any(k < 1 for k in args.ks) or not all(q > 0 for q in args.queue_lengths):
        raise ExperimentError("every K must be at least 1 and every Q a number > 0")
    if not 0 < args.tolerance < 1:
        raise ExperimentError(f"--tolerance {args.tolerance} is not in (0, 1)")
    if len(args.policies) < 2:
        raise ExperimentError("give the baseline and at least one policy to compare")
    files = tuple(policy_path(p) for p in args.policies)
    names = [policy_on(f, max(args.ks or [2])).name for f in files]  # mistakes surface now
    if len(set(names)) != len(names):
        raise ExperimentError(f"two policies share a name: {names}")
    for trace in ([args.source] if args.ks else []) + ([args.lanl] if args.lanl else []):
        if not Path(trace).is_file():
            raise ExperimentError(f"trace not found: {trace}")
    setup = Setup(args.source, args.source_jobs, args.seed, args.tolerance, files)
    tasks = [Task(k, d, q, setup) for k in args.ks for d in args.distributions
             for q in args.queue_lengths]
    if args.lanl:
        tasks += [Task(0, "", 0, setup, args.lanl, f) for f in files]
    if args.ks:
        source_of(setup)  # loaded once, before the workers fork
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    outcomes = run_all(tasks, args.jobs, run_task, _progress, _longest_first)
    results = build_results(args, setup, tasks, outcomes, names)
    if write_results(out, results, markdown(results), write_figure):
        print(f"wrote {out / 'figure.png'}", file=sys.stderr)
    print(f"wrote {out / 'results.json'} and {out / 'results.md'}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    return command(build_parser(), experiment, argv)


if __name__ == "__main__":
    sys.exit(main())
