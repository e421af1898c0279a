"""`schedc sweep SPEC.toml`: the spec read and every run checked, the store listed, the
missing runs made on Dask (a progress bar on a terminal), then the tables written and a
short summary printed. Exit status 0 when every run succeeded, 1 when some failed (each is
a row of the results with its error), 2 for a mistake in the spec or the command line."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from schedc.runtime.cli.errors import EXIT_OK, EXIT_VIOLATION, UserError
from schedc.runtime.cli.errors import report as report_diagnostics
from schedc.runtime.cli.extras import require
from schedc.runtime.cli.run import report_output
from schedc.runtime.outputs import Input, Output, check_outputs, policy_inputs

# The metrics the summary names a best configuration for: (metric, lower is better, label).
# Not utilisation: on a fixed workload it is its work over the makespan, which a policy
# barely moves; the worst wait is what a user of a scenario feels.
BEST = (("mean_wait", True, "lowest mean wait (s)"),
        ("mean_bounded_slowdown", True, "lowest mean bounded slowdown"),
        ("max_wait", True, "lowest max wait (s)"))


def add_parser(commands: Any) -> None:
    sub = commands.add_parser(
        "sweep", help="run a sweep (policies x params x workloads x transforms x seeds) on Dask",
        description="Run every run of a sweep spec (TOML: policies, params, workloads, "
        "transforms, seeds, explicit [[run]] tables; see docs/reference/formats/sweep-spec.md) "
        "on a Dask cluster: a local one of one worker process per core by default, or an "
        "existing one with --scheduler. Each finished run is stored in OUT/runs/ at once; a "
        "rerun makes only the runs not stored yet. Writes OUT/results.csv and .parquet, "
        "OUT/categories.csv and .parquet, OUT/classes.csv and .parquet, OUT/summary.csv (mean "
        "and 95% confidence interval over seeds). Exit status: 0 every run succeeded, 1 some "
        "runs failed (recorded with their errors), 2 a mistake in the spec.")
    sub.add_argument("spec", metavar="SPEC.toml", help="the sweep spec")
    sub.add_argument("--out", metavar="DIR", help="output folder (default: the spec's `out`, "
                     "else SPEC.out beside the spec)")
    sub.add_argument("--scheduler", metavar="ADDRESS", help="an existing Dask scheduler, e.g. "
                     "tcp://10.0.0.1:8786 (workers started with `dask worker ADDRESS` in an "
                     "environment with schedc installed, seeing the same paths)")
    sub.add_argument("--workers", type=int, metavar="N", help="worker processes of the "
                     "local cluster (default: one per core)")
    sub.add_argument("--retry-failed", action="store_true",
                     help="make again the runs stored as failed")
    sub.add_argument("--run-timeout", type=float, metavar="SECONDS",
                     help="a run still going after this long is recorded failed (its worker "
                     "ended) and the sweep goes on; --retry-failed makes it again (default: "
                     "the spec's run_timeout, else 10800)")
    sub.add_argument("--report", metavar="FILE.html", help="also write a self-contained page: "
                     "the runs, failures, best configurations, figures, summary, provenance")
    sub.add_argument("--no-figures", action="store_true", help="do not draw OUT/figures/*.png "
                     "(a metric against each numeric input that varies, per workload)")
    sub.add_argument("--json", action="store_true", help="print the summary as JSON")
    sub.add_argument("--no-progress", action="store_true", help="never show a progress bar")


def run(args: argparse.Namespace) -> int:
    require("sweep", "schedc sweep (Dask, Parquet tables, figures)")
    from schedc.runtime.cli.exit import allow_quick_exit
    from schedc.runtime.tools.sweep.execute import RUN_TIMEOUT, execute
    from schedc.runtime.tools.sweep.runs import plan, repeated_seeds
    from schedc.runtime.tools.sweep.spec import MAX_RUN_TIMEOUT, read_spec
    from schedc.runtime.tools.sweep.store import FAILED, Store
    from schedc.runtime.tools.sweep.tables import shared_facts, write_tables

    if args.workers is not None and args.workers < 1:
        raise UserError(f"--workers {args.workers}: at least 1",
                        help="the local cluster's worker processes, e.g. --workers 2")
    if args.workers is not None and args.scheduler:
        raise UserError("--workers is for the local cluster, not with --scheduler",
                        help="an existing cluster has its own workers: drop --workers")
    if args.run_timeout is not None and not 0 < args.run_timeout <= MAX_RUN_TIMEOUT:
        raise UserError(f"--run-timeout {args.run_timeout:g}: give a positive number of "
                        f"seconds, at most {MAX_RUN_TIMEOUT:,}",
                        help="e.g. --run-timeout 3600 (default 10800)")
    spec = read_spec(args.spec)
    # the folder as given: this process works there and its messages name it so
    out = args.out or spec.out or str(Path(args.spec).with_suffix(".out"))
    check_outputs([*_written(args, spec, out), report_output(args.report)],
                  _inputs(args, spec), stdout="--json" if args.json else "the summary")
    runs = plan(spec)  # a spec refused makes no folder
    _make_folder(out)
    warning = repeated_seeds(spec, runs)
    if warning is not None:
        report_diagnostics([warning])
    store = Store(out)
    stored = store.records({r.key for r in runs.runs})
    todo = [r for r in runs.runs if r.key not in stored
            or (args.retry_failed and stored[r.key]["status"] == FAILED)]
    with _progress(args, len(runs.runs), len(runs.runs) - len(todo)) as bar:
        timeout = args.run_timeout or spec.run_timeout or RUN_TIMEOUT
        # absolute: the workers of an existing cluster (--scheduler) write the records
        # there, whatever their own working folder
        made = execute(todo, os.path.abspath(out), args.scheduler, args.workers, done=bar.update,
                       ready=lambda: _cluster_up(bar), timeout=timeout)
    records = store.records({r.key for r in runs.runs}) if made else stored
    paths = write_tables(out, runs, records, args.spec)
    failed = [r for r in runs.runs if records.get(r.key, {}).get("status") != "ok"]
    facts = {"spec": args.spec, "out": out, "runs": len(runs.runs), "made": len(made),
             "stored_before": len(runs.runs) - len(todo),
             "failed": len(failed), "files": paths,
             "warnings": [warning.message] if warning is not None else [],
             "failed_runs": [_failure(r, records.get(r.key)) for r in failed[:20]],
             "best": _best(out)}
    figures = _figures(out, runs, save=not args.no_figures, page=bool(args.report))
    facts["files"].update({Path(p).name: p for p in figures if not args.no_figures})
    if args.json:
        print(json.dumps(facts, indent=2))
    else:
        _print(facts)
    if args.report:
        _write_report(args.report, facts, out, figures, shared_facts(runs, records, args.spec))
    allow_quick_exit()  # every file above is written and closed
    return EXIT_VIOLATION if failed else EXIT_OK


def _written(args: argparse.Namespace, spec: Any, out: str) -> list[Output]:
    """The output folder and the tables written into it (the figures and the store are
    in folders of their own)."""
    from schedc.runtime.tools.sweep.tables import CATEGORIES, CLASSES, RESULTS, SUMMARY

    flag = "--out" if args.out else "the spec's out" if spec.out else "the default --out"
    tables = [f"{name}.{kind}" for name in (RESULTS, CATEGORIES, CLASSES)
              for kind in ("csv", "parquet")] + [SUMMARY]
    return [Output(flag, folder, "sweep.out", checked=False)
            for folder in (out, *(os.path.join(out, t) for t in tables))]


def _inputs(args: argparse.Namespace, spec: Any) -> Iterator[Input]:
    """The spec, and every policy (with its imports) and workload it names."""
    yield Input("SPEC.toml", args.spec)
    explicit = spec.runs
    policies = {p.file: p.text.removesuffix(f":{p.name}" if p.name else "")
                for p in (*spec.policies, *(r.policy for r in explicit))}
    for file, shown in policies.items():
        yield from policy_inputs(file, "the spec's policy", shown)
    for file in dict.fromkeys([*(w.file for w in spec.workloads),
                               *(r.workload.file for r in explicit)]):
        yield Input("the spec's workload", file)


def _cluster_up(bar: _progress) -> None:
    """Once the workers run (forked: no thread of ours before), the bar starts and the
    table writer's imports are made in a thread, while this process waits for the runs."""
    import threading

    from schedc.runtime.tools.sweep.tables import warm_up

    bar.start()
    threading.Thread(target=warm_up, name="schedc-warm-tables", daemon=True).start()


def _figures(out: str, runs: Any, save: bool, page: bool) -> dict[str, Any]:
    """The sweep's figures by path: drawn and saved, or drawn for the page only, or (None)
    already on disk from the same summary (each figure takes about a second to draw)."""
    from schedc.runtime.tools.sweep import read_summary
    from schedc.runtime.tools.sweep.figures import (
        draw,
        figure_path,
        is_fresh,
        planned_figures,
        write_figures,
    )
    from schedc.runtime.tools.sweep.tables import input_columns

    if not save and not page:
        return {}
    planned = planned_figures(read_summary(out), input_columns(runs))
    if save and not is_fresh(out, planned):
        return write_figures(out, planned)
    return {figure_path(out, f): draw(f) if page else None for f in planned}


def _write_report(path: str, facts: Mapping[str, Any], out: str, figures: Mapping[str, Any],
                  shared: Mapping[str, Any]) -> None:
    from schedc.runtime.results.html_report.sweep import sweep_page
    from schedc.runtime.tools.sweep import read_summary

    titled = {Path(p).stem.replace("-", " "): fig for p, fig in figures.items()}
    sweep_page(facts, read_summary(out), titled, shared).write(path)


def _make_folder(out: str) -> None:
    try:
        Path(out).mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise UserError(f"output folder {out} is a file",
                        help="give a folder with --out, or move the file") from None
    except OSError as error:
        raise UserError(f"cannot make the output folder {out}: {error.strerror or error}",
                        help="choose a folder you may write with --out") from None


def _failure(desc: Any, record: Mapping[str, Any] | None) -> dict[str, Any]:
    error = (record or {}).get("error") or "not run"
    return {"key": desc.key, "policy": desc.policy, "workload": desc.workload,
            "params": dict(desc.params), "seed": desc.seed, "error": error}


def _best(out: str) -> list[dict[str, Any]]:
    """Per scenario (workload and transforms), the best policy configuration by each of
    `BEST`'s metrics, by their mean over seeds."""
    from schedc.runtime.tools.sweep import read_summary

    rows = [r for r in read_summary(out) if r["runs"]]
    if not rows:
        return []
    config = [c for c in rows[0] if c == "policy" or c.startswith("param.")]
    scenario = [c for c in rows[0] if c not in config and not c.endswith(
        ("_mean", "_ci_low", "_ci_high")) and c != "runs"]
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(row[c] for c in scenario), []).append(row)
    best = []
    for key, members in groups.items():
        entry: dict[str, Any] = {"scenario": dict(zip(scenario, key, strict=True))}
        for metric, lower, _ in BEST:
            scored = [r for r in members if r.get(f"{metric}_mean") is not None]
            if not scored:
                continue
            top = (min if lower else max)(scored, key=lambda r: r[f"{metric}_mean"])
            entry[metric] = {"configuration": {c: top[c] for c in config
                                               if top[c] is not None},
                             "mean": top[f"{metric}_mean"],
                             "ci": [top[f"{metric}_ci_low"], top[f"{metric}_ci_high"]],
                             "runs": top["runs"]}
        best.append(entry)
    return best


def _print(facts: Mapping[str, Any]) -> None:
    out = sys.stdout
    out.write(f"sweep {facts['spec']}: {facts['runs']} runs, {facts['made']} made now, "
              f"{facts['stored_before']} stored before, {facts['failed']} failed\n")
    for failure in facts["failed_runs"]:
        first = failure["error"].splitlines()[0] if failure["error"] else ""
        out.write(f"  failed: {failure['policy']} on {failure['workload']} "
                  f"{_config(failure['params'])}seed {failure['seed']}: {first}\n")
    if facts["failed"] > len(facts["failed_runs"]):
        out.write(f"  ... and {facts['failed'] - len(facts['failed_runs'])} more: see "
                  "results.csv\n")
    shown = facts["best"][:12]
    one_run = all(entry[m]["runs"] == 1 for entry in shown for m, _, _ in BEST if m in entry)
    if shown:  # one seed has no interval: said here once, not as an empty one per line
        out.write("best configurations (one run each, one seed: no 95% interval):\n"
                  if one_run else "best configurations (mean over seeds [95% interval]):\n")
    for entry in shown:
        scenario = ", ".join(f"{k}={v}" for k, v in entry["scenario"].items() if v is not None)
        out.write(f"  {scenario}\n")
        for metric, _, label in BEST:
            if metric in entry:
                b = entry[metric]
                low, high = b["ci"]
                ci = (f" [{_num(low)}, {_num(high)}]" if low is not None and low != high
                      else "")
                out.write(f"    {label}: {_config(b['configuration']).strip()} "
                          f"{_num(b['mean'])}{ci}\n")
    if len(facts["best"]) > len(shown):
        out.write(f"  ... {len(facts['best']) - len(shown)} more scenarios in summary.csv\n")
    out.write("wrote " + ", ".join(facts["files"].values()) + "\n")


def _config(values: Mapping[str, Any]) -> str:
    """`k=v ...`, a param given as text ("1h") shown as the spec wrote it, not its value."""
    return "".join(f"{k}={values.get(f'{k}.text', v)} " for k, v in values.items()
                   if not k.endswith(".text"))


def _num(x: float) -> str:
    return f"{x:,.4g}" if abs(x) < 10 else f"{x:,.1f}"


class _progress:  # noqa: N801 - used as a context manager, like a function
    """A rich bar of runs done (rate, ETA, failures) on a terminal; nothing otherwise. It
    starts when the cluster is up: its refresh thread must not run while the local cluster
    forks its workers."""

    def __init__(self, args: argparse.Namespace, total: int, stored: int) -> None:
        self.on = not (args.no_progress or args.json) and sys.stderr.isatty()
        self.total, self.stored, self.failed = total, stored, 0
        self._bar: Any = None

    def __enter__(self) -> _progress:
        return self

    def start(self) -> None:
        if not self.on or self._bar is not None:
            return
        import time

        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        from schedc.runtime.results.report import stderr_console

        self._bar = Progress(TextColumn("sweep"), BarColumn(), MofNCompleteColumn(),
                             TaskProgressColumn(), TextColumn("{task.fields[rate]}"),
                             TextColumn("{task.fields[failed]}"), TimeElapsedColumn(),
                             TextColumn("ETA"), TimeRemainingColumn(),
                             console=stderr_console(), transient=True)
        self._bar.__enter__()
        self._task = self._bar.add_task("sweep", total=self.total, completed=self.stored,
                                        rate="", failed="")
        self._started = time.perf_counter()
        self._made = 0

    def update(self, desc: Any, status: str) -> None:
        if self._bar is None:
            return
        import time

        self._made += 1
        self.failed += status != "ok"
        rate = self._made / max(time.perf_counter() - self._started, 1e-9)
        self._bar.update(self._task, advance=1, rate=f"{rate:.2f} runs/s",
                         failed=f"{self.failed} failed" if self.failed else "")

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
