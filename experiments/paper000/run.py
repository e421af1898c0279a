"""Paper 000 experiment (b): % change of mean turnaround time per job category, moldable vs rigid.

Srinivasan, Krishnamoorthy & Sadayappan (papers/000, sections 2 and 5) compare a moldable
policy with rigid conservative backfilling on real traces made moldable with a range factor
RF, Downey's sigma and a load factor LF. For each trace and LF this script simulates the rigid
baseline once (LF applied, jobs left rigid: the same arrival times as the moldable runs), then
the moldable policy for each (sigma, RF), and reports per job category (runtime/results/metrics.py:
decades of the trace's procs x run time) 100 * (moldable - rigid) / rigid of the mean
response time. Run from the repository root:

    python -m experiments.paper000.run --jobs 2

Writes results.json, results.md and figure.png (if matplotlib is installed) into --out.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
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
from schedc.runtime.engine.monitor import MonitorViolation
from schedc.runtime.results.metrics import NCATEGORIES
from schedc.runtime.run import RunOptions, WorkloadCache, load_for, run_policy
from schedc.runtime.workloads.moldable import MoldableSpec

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# Jobs past their requested time end at it, as schedc ran them when the committed
# results were made (`--overrun kill`): a rerun reproduces them.
KILLED = "kill"

# the tests' convention (tests/support/shared_traces.py): $SCHEDC_TRACES, else ../shared/traces
TRACES_DIR = Path(os.environ.get("SCHEDC_TRACES") or ROOT.parent / "shared" / "traces")
TRACES = {"KTH-SP2": "KTH-SP2-1996-2.1-cln.swf.gz", "LANL-CM5": "LANL-CM5-1994-4.1-cln.swf.gz"}
DEFAULT_POLICY = "examples/robust-moldable.pol"
DEFAULT_BASELINE = "examples/conservative.pol"


# --- what is simulated -------------------------------------------------------------------


@frozen
class Trace:
    name: str  # KTH-SP2, or the file name of a trace given by path
    path: str


@frozen
class Task:
    """One simulation; ``rf is None`` is the rigid baseline (LF only)."""

    trace: Trace
    load_factor: float
    policy_file: str
    rf: float | None = None
    sigma: float | None = None
    limit: int | None = None

    @property
    def role(self) -> str:
        return "rigid" if self.rf is None else "moldable"

    @property
    def key(self) -> str:
        head = f"{self.trace.name} LF={self.load_factor:g}"
        return f"{head} rigid" if self.rf is None else f"{head} sigma={self.sigma:g} RF={self.rf:g}"

    def spec(self) -> MoldableSpec:
        return MoldableSpec(self.rf, self.sigma or 0.0, self.load_factor)


def _sort_key(task: Task) -> tuple:
    # rigid first within a (trace, LF); numbers compare as numbers, not strings
    return (task.trace.name, task.load_factor, task.rf is not None, task.sigma or 0.0,
            task.rf or 0.0)


def plan(traces: Sequence[Trace], lfs: Sequence[float], sigmas: Sequence[float],
         rfs: Sequence[float], policy: str, baseline: str, limit: int | None) -> list[Task]:
    tasks = []
    for trace in traces:
        for lf in lfs:
            tasks.append(Task(trace, lf, baseline, limit=limit))
            tasks += [Task(trace, lf, policy, rf, sigma, limit) for sigma in sigmas for rf in rfs]
    return sorted(tasks, key=_sort_key)


# --- simulation (also in worker processes) -------------------------------------------------


# The traces as read, per machine, limit: forked workers inherit what the parent loaded while
# checking inputs
LOADED: WorkloadCache = {}


def options_for(task: Task) -> RunOptions:
    # the spec with RF None scales arrivals only: the rigid baseline sees exactly the submit
    # times of the moldable runs of the same LF
    return RunOptions(moldable=task.spec(), limit=task.limit, overrun=KILLED)


def run_task(task: Task) -> dict[str, Any]:
    try:
        result = run_policy(task.policy_file, task.trace.path, options_for(task), LOADED)
    except MonitorViolation as exc:  # re-raised as a plain exception: it crosses processes
        raise SimulationFailed(f"{task.key}: runtime monitor: {exc}") from None
    workload = result.workload
    return {"key": task.key, "metrics": result.metrics(),
            "machine": dict(zip(workload.resources, workload.capacities, strict=True)),
            "transform": workload.transform, "wall": result.wall}


def _longest_first(tasks: Sequence[Task]) -> list[Task]:
    # moldable runs take longer than rigid ones: starting them first shortens the tail
    return sorted(tasks, key=lambda t: t.rf is None)


def _progress(result: dict[str, Any], done: int, total: int) -> dict[str, Any]:
    mean = result["metrics"]["mean_response"]
    print(f"[{done}/{total}] {result['key']}: {result['wall']:.2f} s, "
          f"mean response {mean:,.0f} s", file=sys.stderr, flush=True)
    return result


# --- results ----------------------------------------------------------------------------


def pct_change(moldable: float | None, rigid: float | None) -> float | None:
    """100 (moldable - rigid) / rigid; None without jobs (or a zero rigid mean)."""
    if moldable is None or rigid is None or rigid == 0:
        return None
    return 100.0 * (moldable - rigid) / rigid


def _run_entry(task: Task, outcome: dict[str, Any]) -> dict[str, Any]:
    return {"key": task.key, "trace": task.trace.name, "role": task.role,
            "load_factor": num(task.load_factor),
            "sigma": None if task.sigma is None else num(task.sigma),
            "range_factor": None if task.rf is None else num(task.rf),
            "policy_file": shown(task.policy_file), "transform": outcome["transform"],
            "machine": outcome["machine"], "metrics": outcome["metrics"]}


def _change_entry(task: Task, rigid: dict[str, Any], moldable: dict[str, Any]) -> dict[str, Any]:
    r, m = rigid["metrics"], moldable["metrics"]
    by_category = [pct_change(mc, rc) for mc, rc in
                   zip(m["category_mean_response"], r["category_mean_response"], strict=True)]
    return {"key": task.key, "trace": task.trace.name, "load_factor": num(task.load_factor),
            "sigma": num(task.sigma or 0.0), "range_factor": num(task.rf or 0.0),
            "overall_pct": pct_change(m["mean_response"], r["mean_response"]),
            "category_pct": by_category}


def build_results(args: argparse.Namespace, traces: Sequence[Trace], tasks: Sequence[Task],
                  outcomes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Everything, in sorted order; only the WALL_KEY part differs between reruns."""
    # the rigid run of a moldable task has its key with rf and sigma dropped
    changes = [_change_entry(t, outcomes[attrs.evolve(t, rf=None, sigma=None).key],
                             outcomes[t.key]) for t in tasks if t.rf is not None]
    policies = {role: {"file": shown(path), "name": load_policy(path).name,
                       "sha256": sha256(path)}
                for role, path in (("moldable", args.policy), ("rigid", args.baseline))}
    return {
        "experiment": "papers/000 (b): % change of mean turnaround per job category, "
                      "moldable policy vs rigid baseline",
        "categories": f"{NCATEGORIES} decades of the trace's recorded procs x run time: "
                      "category c holds [10^c, 10^(c+1)) procs*s (0 also below 10, "
                      f"{NCATEGORIES - 1} also above)",
        "pct_change": "100 * (moldable - rigid) / rigid of the mean response (turnaround) "
                      "time; negative = the moldable policy is faster; null = no job",
        "parameters": {"traces": [t.name for t in traces],
                       "load_factors": [num(x) for x in args.lf],
                       "sigmas": [num(x) for x in args.sigma],
                       "range_factors": [num(x) for x in args.rf], "limit": args.limit},
        "policies": policies,
        "traces": {t.name: {"file": Path(t.path).name, "sha256": sha256(t.path)}
                   for t in traces},
        "runs": [_run_entry(t, outcomes[t.key]) for t in tasks],
        "changes": changes,
        WALL_KEY: {t.key: round(outcomes[t.key]["wall"], 3) for t in tasks},
    }


# --- markdown -----------------------------------------------------------------------------


def _cell(value: float | None) -> str:
    return "–" if value is None else f"{value:+.1f}"


def markdown(results: dict[str, Any]) -> str:
    pol = results["policies"]
    lines = ["# Paper 000 (b): % change in mean turnaround time, moldable vs rigid", "",
             f"Moldable policy `{pol['moldable']['file']}` (`{pol['moldable']['name']}`, "
             f"sha256 {pol['moldable']['sha256'][:12]}), rigid baseline "
             f"`{pol['rigid']['file']}` (`{pol['rigid']['name']}`, sha256 "
             f"{pol['rigid']['sha256'][:12]}). Cells: 100 (moldable - rigid) / rigid of the "
             "mean response time, negative = better; – = no job. Ck: jobs of recorded "
             "procs x run time in [10^k, 10^(k+1)) procs*s.", ""]
    if results["parameters"]["limit"] is not None:
        lines += [f"Only the first {results['parameters']['limit']} jobs of each trace.", ""]
    header = ["sigma", "RF", "overall", *(f"C{c}" for c in range(NCATEGORIES))]
    rigid_runs = [r for r in results["runs"] if r["role"] == "rigid"]
    for rigid in rigid_runs:
        m = rigid["metrics"]
        lines += [f"## {rigid['trace']}, LF {rigid['load_factor']}", "", row(header),
                  row(["---"] * len(header)),
                  row(["jobs", "", m["jobs"], *m["category_jobs"]]),
                  row(["rigid mean (s)", "", f"{m['mean_response']:,.0f}",
                        *("–" if v is None else f"{v:,.0f}"
                          for v in m["category_mean_response"])])]
        for ch in results["changes"]:
            if (ch["trace"], ch["load_factor"]) == (rigid["trace"], rigid["load_factor"]):
                lines.append(row([ch["sigma"], ch["range_factor"], _cell(ch["overall_pct"]),
                                   *map(_cell, ch["category_pct"])]))
        lines.append("")
    return "\n".join(lines)


# --- figure ----------------------------------------------------------------------------


def write_figure(results: dict[str, Any], path: Path) -> bool:
    """A grid of bar charts, one panel per (trace, LF, sigma); False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    params = results["parameters"]
    rows = [r for r in results["runs"] if r["role"] == "rigid"]
    sigmas, rfs = params["sigmas"], params["range_factors"]
    fig, axes = plt.subplots(len(rows), len(sigmas), squeeze=False, sharey="row",
                             figsize=(5.5 * len(sigmas), 3.4 * len(rows)))
    colors = [plt.get_cmap("viridis")(i / max(1, len(rfs) - 1) * 0.85) for i in range(len(rfs))]
    for i, rigid in enumerate(rows):
        for j, sigma in enumerate(sigmas):
            changes = {ch["range_factor"]: ch for ch in results["changes"]
                       if (ch["trace"], ch["load_factor"], ch["sigma"])
                       == (rigid["trace"], rigid["load_factor"], sigma)}
            _panel(axes[i][j], rigid, changes, rfs, colors)
            axes[i][j].set_title(f"{rigid['trace']}, LF {rigid['load_factor']}, sigma {sigma}",
                                 fontsize=10)
        axes[i][0].set_ylabel("% change in mean turnaround")
    for ax in axes[-1]:
        ax.set_xlabel("category (jobs in it)", fontsize=8)
    axes[0][-1].legend(title="RF", fontsize=8, title_fontsize=8, loc="best")
    pol = results["policies"]
    fig.suptitle(f"{pol['moldable']['name']} vs rigid {pol['rigid']['name']}: "
                 "% change in mean turnaround per category (negative = better)")
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
    return True


def _panel(ax: Any, rigid: dict[str, Any], changes: dict[Any, dict[str, Any]],
           rfs: Sequence[Any], colors: Sequence[Any]) -> None:
    """Bars per non-empty category (and overall), grouped by RF; x labels carry job counts
    (the bars of `schedc plot compare --kind categories`)."""
    from schedc.runtime.results.plots.compare import category_bars

    counts = rigid["metrics"]["category_jobs"]
    cats = [c for c in range(NCATEGORIES) if counts[c]]
    labels = [f"C{c}\n{counts[c]}" for c in cats] + [f"all\n{rigid['metrics']['jobs']}"]
    series = [(f"{rf}", [changes[rf]["category_pct"][c] for c in cats]
               + [changes[rf]["overall_pct"]]) for rf in rfs]
    category_bars(ax, labels, series, colors)
    ax.axhline(0, color="black", linewidth=0.8)


# --- command line ---------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m experiments.paper000.run",
        description="papers/000 experiment (b): % change of the mean turnaround time per job "
        "category of a moldable policy against rigid conservative backfilling.")
    p.add_argument("--traces", nargs="+", default=sorted(TRACES), metavar="NAME",
                   help=f"trace names ({', '.join(sorted(TRACES))}) or paths to SWF files")
    p.add_argument("--traces-dir", default=str(TRACES_DIR), metavar="DIR",
                   help="folder of the named traces (default $SCHEDC_TRACES or "
                   "../shared/traces beside the repository)")
    p.add_argument("--lf", nargs="+", type=float, default=[100, 125], metavar="LF",
                   help="load factors, percent (default 100 125)")
    p.add_argument("--sigma", nargs="+", type=float, default=[0, 1], metavar="S",
                   help="Downey's sigma values (default 0 1)")
    p.add_argument("--rf", nargs="+", type=float, default=[1, 2, 3, 4], metavar="RF",
                   help="range factors (default 1 2 3 4)")
    p.add_argument("--policy", default=DEFAULT_POLICY, help="moldable policy (.pol)")
    p.add_argument("--baseline", default=DEFAULT_BASELINE, help="rigid baseline policy (.pol)")
    add_output_options(p, HERE)
    p.add_argument("--limit", type=int, metavar="N",
                   help="only the first N jobs of each trace (quick runs)")
    return p


def _trace(name: str, folder: str) -> Trace:
    if name in TRACES:
        path = Path(folder) / TRACES[name]
        if not path.is_file():
            raise ExperimentError(f"trace file not found: {path} (see --traces-dir)")
        return Trace(name, str(path))
    if Path(name).is_file():
        return Trace(Path(name).name, name)
    raise ExperimentError(f"unknown trace {name!r}: give {', '.join(sorted(TRACES))} "
                          "or the path of an SWF file")


def _checked(args: argparse.Namespace) -> list[Trace]:
    """Normalise the options and load every input once, so mistakes surface before any run."""
    if args.jobs < 1 or (args.limit is not None and args.limit < 1):
        raise ExperimentError("--jobs and --limit must be at least 1")
    args.lf, args.sigma, args.rf = (sorted(set(v)) for v in (args.lf, args.sigma, args.rf))
    try:
        for lf in args.lf:
            for sigma in args.sigma:
                for rf in args.rf:
                    MoldableSpec(rf, sigma, lf)
    except ValueError as exc:
        raise ExperimentError(str(exc)) from None
    args.policy, args.baseline = policy_path(args.policy), policy_path(args.baseline)
    traces = sorted({_trace(n, args.traces_dir) for n in args.traces}, key=lambda t: t.name)
    if len({t.name for t in traces}) < len(traces):
        raise ExperimentError("two traces have the same name")
    for trace in traces:
        options = RunOptions(limit=args.limit, overrun=KILLED)
        cpus = {load_for(p, trace.path, options, LOADED).capacities[0]
                for p in map(load_policy, (args.policy, args.baseline))}
        if len(cpus) > 1:  # a % change across two machine sizes would mean nothing
            raise ExperimentError(f"the policies' machines differ on {trace.name}: "
                                  f"{sorted(cpus)} cpus (see their `machine` blocks)")
    return traces


def experiment(args: argparse.Namespace) -> dict[str, Any]:
    started = time.perf_counter()
    traces = _checked(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tasks = plan(traces, args.lf, args.sigma, args.rf, args.policy, args.baseline, args.limit)
    outcomes = run_all(tasks, args.jobs, run_task, _progress, _longest_first)
    results = build_results(args, traces, tasks, outcomes)
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
