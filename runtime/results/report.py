"""Human tables (rich) and machine-readable results (JSON, CSV) of simulation runs."""

from __future__ import annotations

import csv
import functools
import operator
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from schedc.runtime.atomicio import open_atomic
from schedc.runtime.engine.schedule import Preempted, Schedule
from schedc.runtime.results.run_result import RunResult


def stderr_console():
    return _console_class()(stderr=True)


def stdout_console():
    # Piped output keeps a fixed width so that files compare byte for byte across terminals.
    return _console_class()(width=None if sys.stdout.isatty() else 120)


@functools.cache
def _console_class() -> type:
    """rich's Console, but a closed pipe (`schedc run P | head -1`) raises BrokenPipeError,
    which the CLI ends with status 141 (`errors.handled`): rich's own exit is status 1, which
    means "the monitor stopped the run"."""
    from rich.console import Console

    class PipeAwareConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError

    return PipeAwareConsole


def _machine(outcome: RunResult) -> dict[str, int]:
    return dict(zip(outcome.workload.resources, outcome.workload.capacities, strict=True))


def _format(value: Any, short: bool = False) -> str:
    if isinstance(value, float):
        if short and abs(value) >= 100:
            return f"{value:,.0f}"
        return f"{value:,.3f}" if abs(value) < 1e6 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _scalar_items(metrics: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(k, v) for k, v in metrics.items() if not isinstance(v, dict | list)]


scalar_metrics = _scalar_items  # the metrics of the table, for the HTML report too


def run_json(outcome: RunResult, timing: bool = False) -> dict[str, Any]:
    """A run as JSON; a dynP policy's adds ``"tuning"`` (its step times with ``timing``)."""
    out = {
        "policy": outcome.policy.name,
        "policy_file": outcome.policy_file,
        "workload": outcome.workload.source,
        "transform": outcome.workload.transform,
        "machine": _machine(outcome),
        "cluster": outcome.cluster,
        "skipped": dict(sorted(outcome.workload.skipped.items())),
        "passes": outcome.schedule.passes,
        "metrics": outcome.metrics(),
        "overrun": overrun_json(outcome),
        "warnings": [d.message for d in outcome.warnings],
        "provenance": outcome.provenance.to_json() if outcome.provenance else None,
    }
    if outcome.schedule.tuning is not None:
        from schedc.runtime.results.tuning_report import tuning_json

        out["tuning"] = tuning_json(outcome.schedule.tuning, timing)
    if outcome.schedule.preempted is not None:
        out["preemption"] = preemption_json(outcome.schedule)
    return out


def preemption_json(schedule: Schedule) -> dict[str, int | float]:
    """A preemptive run's totals: preemptions by kind, the jobs preempted, seconds jobs
    were suspended and stopped, processor-seconds of useful work, of work lost to requeues,
    held by dispatch and checkpoint costs and held idle by claims, each also as a share of
    the cpus over the run's span (the metrics' makespan); the mean numbers of pending and of
    stopped jobs over that span; the most jobs resident on one processor."""
    assert schedule.preempted is not None
    jobs = schedule.preempted

    def times(p: Preempted) -> int:
        return p.suspensions + p.checkpoints + p.requeues

    useful = sum(r.alloc[0] * p.ran if p.cpu_time is None else p.cpu_time
                 for r, p in zip(schedule.records, jobs, strict=True))
    # time waiting for a first start or a restart: its response less its segments
    pending = sum(r.end - r.job.submit - sum(s.end - s.start for s in p.segments)
                  for r, p in zip(schedule.records, jobs, strict=True))
    totals = schedule.preemption_totals
    held_idle = 0 if totals is None else totals.held_idle
    out: dict[str, int | float] = {
        "suspensions": sum(p.suspensions for p in jobs),
        "checkpoints": sum(p.checkpoints for p in jobs),
        "requeues": sum(p.requeues for p in jobs),
        "jobs_preempted": sum(1 for p in jobs if times(p)),
        "most_preemptions_of_a_job": max(map(times, jobs), default=0),
        "suspended_time": sum(p.suspended for p in jobs),
        "stopped_time": sum(p.stopped for p in jobs),
        "lost_work": sum(p.lost for p in jobs),
        "overhead": sum(p.overhead for p in jobs),
        "useful_work": useful, "held_idle": held_idle,
        "most_resident": 0 if totals is None else totals.most_resident}
    records = schedule.records
    span = (max(r.end for r in records) - min(r.job.submit for r in records)) if records else 0
    area = span * schedule.capacities[0]
    for name, value in (("useful", useful), ("overhead", out["overhead"]),
                        ("lost", out["lost_work"]), ("held_idle", held_idle)):
        out[f"utilisation_{name}"] = value / area if area else 0.0
    out["mean_pending"] = pending / span if span else 0.0
    out["mean_stopped"] = out["stopped_time"] / span if span else 0.0
    return out


def overrun_json(outcome: RunResult) -> dict[str, Any]:
    """How the run treated jobs recorded past their estimate (`--overrun`): the workload's
    facts, the jobs the run ended at their estimate and the cpu-seconds it simulated."""
    from schedc.runtime.workloads.overrun import killed, overrun_facts

    workload = outcome.workload
    records = outcome.schedule.records
    return {**overrun_facts(workload).to_dict(workload.overrun),
            "jobs_killed_at_estimate": sum(killed(workload)),
            "work_simulated": sum(map(operator.mul, outcome.schedule.ran(),
                                      (r.alloc[0] for r in records)))}


def provenance_header(outcome: RunResult) -> list[str]:
    """A run's provenance as the comment lines that start its CSVs."""
    from schedc.runtime.results.provenance import header_lines

    return header_lines(outcome.provenance.to_json()) if outcome.provenance else []


LABELS = {
    "jobs": "jobs simulated",
    "skipped": "jobs skipped",
    "mean_wait": "mean wait (s)",
    "max_wait": "max wait (s)",
    "mean_response": "mean response (s)",
    "mean_slowdown": "mean slowdown",
    "mean_bounded_slowdown": "mean bounded slowdown (10 s)",
    "utilisation": "utilisation",
    "makespan": "makespan (s)",
    "artww": "ARTwW (s)",
    "sldwa": "SLDwA",
    "mean_queue": "mean queue length (jobs)",
    "weighted_response": "weighted response (s, K-resource)",
    "measured": "jobs measured",
    "warmup_jobs": "jobs left out: warm-up",
    "cooldown_jobs": "jobs left out: cool-down",
    "bsld_tau": "bounded slowdown threshold (s)",
    "users": "users (known id)",
    "user_bsld_std": "per-user mean bsld: std dev",
    "user_bsld_min": "per-user mean bsld: min",
    "user_bsld_max": "per-user mean bsld: max",
    "user_bsld_max_over_min": "per-user mean bsld: max / min",
}
# The percentiles' table (rows: quantity; columns: percentile), not the metrics table's rows
PERCENTILE_ROWS = (("wait", "wait (s)"), ("response", "response (s)"),
                   ("bounded_slowdown", "bounded slowdown"))
PERCENTILE_COLUMNS = (("median", "median"), ("p90", "90th"), ("p95", "95th"), ("p99", "99th"))
_IN_PERCENTILES = frozenset(f"{c}_{r}" for r, _ in PERCENTILE_ROWS for c, _ in PERCENTILE_COLUMNS)
_LEFT_OUT = ("measured", "warmup_jobs", "cooldown_jobs")


def label(key: str, metrics: dict[str, Any]) -> str:
    """A metric's label in the tables; bounded slowdown's says the threshold it used."""
    if key == "mean_bounded_slowdown":
        return f"mean bounded slowdown ({tau_text(metrics)} s)"
    if key in _IN_PERCENTILES:  # e.g. "wait (s): 95th percentile"
        which, _, of = key.partition("_")
        rows = dict(PERCENTILE_ROWS, bounded_slowdown=f"bounded slowdown ({tau_text(metrics)} s)")
        return f"{rows[of]}: {dict(PERCENTILE_COLUMNS)[which]}" + (
            "" if which == "median" else " percentile")
    return LABELS.get(key, key)


def tau_text(metrics: dict[str, Any]) -> str:
    return str(metrics.get("bsld_tau", 10))


def metric_rows(metrics: dict[str, Any]) -> list[tuple[str, Any]]:
    """The metrics table's rows (label, value), as `schedc run` prints them: the scalars
    but the percentiles (their own table) and tau (in the label); the jobs measured and
    left out after the jobs simulated, when some were left out; the per-user spread only
    when some job has a user."""
    rows = []
    shown = dict(_scalar_items(metrics))
    left_out = shown.get("warmup_jobs") or shown.get("cooldown_jobs")
    for key, value in shown.items():
        if key in _IN_PERCENTILES or key == "bsld_tau" or key in _LEFT_OUT or (
                key.startswith("user_bsld_") and value is None):
            continue
        rows.append((label(key, metrics), value))
        if key == "jobs" and left_out:
            rows += [(LABELS[k], shown[k]) for k in _LEFT_OUT]
    return rows


def percentile_rows(metrics: dict[str, Any]) -> list[list[Any]]:
    """The percentiles' table: a row per quantity (label, median, 90th, 95th, 99th); none
    from a result without them."""
    if "median_wait" not in metrics:
        return []
    names = dict(PERCENTILE_ROWS, bounded_slowdown=f"bounded slowdown ({tau_text(metrics)} s)")
    return [[names[r], *(metrics[f"{c}_{r}"] for c, _ in PERCENTILE_COLUMNS)]
            for r, _ in PERCENTILE_ROWS]


def class_title(metrics: dict[str, Any]) -> str:
    from schedc.runtime.results.metrics import NARROW_PROCS, SHORT_RUN

    return (f"per width x length category (short: run <= {SHORT_RUN // 3600} h, narrow: <= "
            f"{NARROW_PROCS} procs)")


def class_rows(metrics: dict[str, Any]) -> list[tuple[str, int, float, float]]:
    """The width x length categories that have jobs: (category, jobs, mean response, mean
    bounded slowdown)."""
    from schedc.runtime.results.metrics import CLASSES

    if "class_jobs" not in metrics:
        return []
    return [(name, n, metrics["class_mean_response"][k], metrics["class_mean_bounded_slowdown"][k])
            for k, (name, n) in enumerate(zip(CLASSES, metrics["class_jobs"], strict=True)) if n]


def _title(outcome: RunResult) -> str:
    machine = ", ".join(f"{k}={v:,}" for k, v in _machine(outcome).items())
    changed = f", {outcome.workload.transform}" if outcome.workload.transform else ""
    cluster = f", {outcome.cluster}" if outcome.cluster else ""
    return f"{Path(outcome.workload.source).name} ({machine}{cluster}{changed})"


def run_title(outcome: RunResult) -> str:
    """The workload and machine a run's table is titled with."""
    return _title(outcome)


def category_rows(metrics: dict[str, Any]) -> list[tuple[int, str, int, float]]:
    """The area categories that have jobs: (category, area range, jobs, mean response)."""
    from schedc.runtime.results.metrics import NCATEGORIES

    rows = []
    for c in range(NCATEGORIES):
        jobs = metrics["category_jobs"][c]
        if jobs:
            low = "0" if c == 0 else f"1e{c}"
            high = "" if c == NCATEGORIES - 1 else f"1e{c + 1}"
            rows.append((c, f"[{low}, {high})" if high else f">= {low}", jobs,
                         metrics["category_mean_response"][c]))
    return rows


def print_run(outcome: RunResult, to_stderr: bool = False, timing: bool = False) -> None:
    from rich.table import Table


    metrics = outcome.metrics()
    title = f"{outcome.policy.name} on {_title(outcome)}"
    table = Table(title=title, min_width=len(title))  # the title on one line
    table.add_column("metric")
    table.add_column("value", justify="right")
    for name, value in metric_rows(metrics):
        table.add_row(name, _format(value))
    console = stderr_console() if to_stderr else stdout_console()
    console.print(table)
    percentiles = Table(title="percentiles (nearest rank)")
    percentiles.add_column("of")
    for _, header in PERCENTILE_COLUMNS:
        percentiles.add_column(header, justify="right")
    for row in percentile_rows(metrics):
        percentiles.add_row(row[0], *map(_format, row[1:]))
    if percentile_rows(metrics):
        console.print(percentiles)
    categories = Table(title="mean response per area category (procs x run time)")
    for column in ("category", "area", "jobs", "mean response (s)"):
        categories.add_column(column, justify="right")
    for c, area, jobs, response in category_rows(metrics):
        categories.add_row(str(c), area, _format(jobs), _format(response))
    console.print(categories)
    title = class_title(metrics)
    classes = Table(title=title, min_width=len(title))
    classes.add_column("category")
    for column in ("jobs", "mean response (s)", f"mean bsld ({tau_text(metrics)} s)"):
        classes.add_column(column, justify="right")
    for name, jobs, response, bsld in class_rows(metrics):
        classes.add_row(name, _format(jobs), _format(response), _format(bsld))
    if class_rows(metrics):
        console.print(classes)
    skipped = outcome.workload.skipped
    if skipped:
        detail = ", ".join(f"{n:,} {reason}" for reason, n in sorted(skipped.items()))
        console.print(f"skipped jobs: {detail}")
    if outcome.schedule.preempted is not None:
        p = preemption_json(outcome.schedule)
        console.print(f"preemptions: {p['suspensions']:,} suspensions, "
                      f"{p['checkpoints']:,} checkpoints and {p['requeues']:,} requeues of "
                      f"{p['jobs_preempted']:,} jobs (at most "
                      f"{p['most_preemptions_of_a_job']:,} of one); {p['suspended_time']:,} s "
                      f"suspended, {p['stopped_time']:,} s stopped; lost work "
                      f"{p['lost_work']:,} cpu-s; overhead (dispatch, checkpoint) "
                      f"{p['overhead']:,} cpu-s")
        console.print(f"cpus: {p['utilisation_useful']:.3f} useful, "
                      f"{p['utilisation_overhead']:.3f} overhead, {p['utilisation_lost']:.3f} "
                      f"lost, {p['utilisation_held_idle']:.3f} held idle for claims; mean "
                      f"{p['mean_pending']:.3f} jobs pending and {p['mean_stopped']:.3f} "
                      f"stopped; at most {p['most_resident']:,} jobs resident on a processor")
    if outcome.schedule.tuning is not None:
        from schedc.runtime.results.tuning_report import tuning_lines

        for line in tuning_lines(outcome.schedule.tuning, timing):
            console.print(line, highlight=False, markup=False)


def compare_json(outcomes: Sequence[RunResult], labels: Sequence[str] | None = None
                 ) -> dict[str, Any]:
    first = outcomes[0]
    shared, own = _compare_provenance(outcomes)
    return {
        "workload": first.workload.source,
        "machine": _machine(first),
        "provenance": shared,
        "policies": [
            {"policy": o.policy.name, "label": label, "policy_file": o.policy_file,
             "metrics": o.metrics(), "overrun": overrun_json(o), "provenance": mine}
            for o, label, mine in zip(outcomes, _labels(outcomes, labels), own, strict=True)
        ],
    }


def _labels(outcomes: Sequence[RunResult], labels: Sequence[str] | None) -> Sequence[str]:
    return labels if labels is not None else [o.policy.name for o in outcomes]


def _compare_provenance(outcomes: Sequence[RunResult]
                        ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The facts all runs share, and each run's own (its policy, params, ...)."""
    from schedc.runtime.results.provenance import shared_and_own

    records = [o.provenance for o in outcomes]
    if any(r is None for r in records):
        return {}, [{} for _ in outcomes]
    return shared_and_own(records)  # type: ignore[arg-type]


def _compare_rows(outcomes: Sequence[RunResult], labels: Sequence[str] | None = None
                  ) -> tuple[list[str], list[list[Any]]]:
    per_policy = [(label, _scalar_items(o.metrics()))
                  for o, label in zip(outcomes, _labels(outcomes, labels), strict=True)]
    columns = ["policy"] + [key for key, _ in per_policy[0][1]]  # stable metric keys
    rows = [[name] + [value for _, value in items] for name, items in per_policy]
    return columns, rows


# The comparison table shows the headline metrics under short headers, to fit a terminal;
# --json and --csv carry every metric.
COMPARE_COLUMNS = (
    ("jobs", "jobs"),
    ("mean_wait", "mean wait s"),
    ("max_wait", "max wait s"),
    ("mean_response", "mean resp. s"),
    ("mean_bounded_slowdown", "mean bsld"),
    ("utilisation", "util."),
    ("artww", "ARTwW s"),
    ("sldwa", "SLDwA"),
)


# On K >= 2 resources, papers/004's measures too: the load (mean queue length) and the
# weighted response (run time x mean share of the K resources).
K_RESOURCE_COLUMNS = (
    ("mean_queue", "queue"),
    ("weighted_response", "w. resp. s"),
)


def compare_columns(outcomes: Sequence[RunResult]) -> tuple[tuple[str, str], ...]:
    several = len(outcomes[0].workload.resources) > 1
    return COMPARE_COLUMNS + (K_RESOURCE_COLUMNS if several else ())


def print_compare(outcomes: Sequence[RunResult], labels: Sequence[str] | None = None,
                  to_stderr: bool = False, console: Any = None) -> None:
    """One row per run; the metric columns split over as many tables as it takes to fit the
    console's width, so that no number or name is ever cut."""
    from rich.table import Table

    console = console or (stderr_console() if to_stderr else stdout_console())
    columns = compare_columns(outcomes)
    names = list(_labels(outcomes, labels))
    titles = [_title(o) for o in outcomes]
    title = titles[0]
    if len(set(titles)) > 1:  # runs on different machines: each row says its own
        title = Path(outcomes[0].workload.source).name
        names = [f"{name} ({t.removeprefix(title).strip(' ()')})"
                 for name, t in zip(names, titles, strict=True)]
    cells = [[_format(o.metrics()[key], short=True) for key, _ in columns] for o in outcomes]
    widths = [max(len(header), *(len(row[i]) for row in cells))
              for i, (_, header) in enumerate(columns)]
    for number, group in enumerate(_fit(max(map(len, ("policy", *names))), widths,
                                        console.width)):
        table = Table(title=title if number == 0 else None)
        table.add_column("policy", overflow="fold")
        for i in group:
            table.add_column(columns[i][1], justify="right", overflow="fold")
        for name, row in zip(names, cells, strict=True):
            table.add_row(name, *(row[i] for i in group))
        console.print(table)


def _fit(first: int, widths: Sequence[int], total: int) -> list[list[int]]:
    """The columns grouped in order so that each table (the first column, then a group)
    fits ``total`` characters: a rich table takes 1 + sum(width + 3)."""
    groups: list[list[int]] = [[]]
    used = 1 + first + 3
    for i, width in enumerate(widths):
        if groups[-1] and used + width + 3 > total:
            groups.append([])
            used = 1 + first + 3
        groups[-1].append(i)
        used += width + 3
    return groups


def write_compare_csv(outcomes: Sequence[RunResult], labels: Sequence[str] | None,
                      path: str) -> None:
    """The comparison with its provenance first: the facts all runs share as `# KEY: VALUE`
    lines, then `# runs: [...]`, each run's own facts in row order."""
    from schedc.runtime.results.provenance import header_lines

    columns, rows = _compare_rows(outcomes, labels)
    shared, own = _compare_provenance(outcomes)
    with open_atomic(path, newline="") as handle:
        handle.writelines(header_lines({**shared, "runs": own}))
        writer = csv.writer(handle)
        writer.writerow(columns)
        writer.writerows(rows)
