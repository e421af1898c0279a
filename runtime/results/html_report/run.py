"""The page of one run (`schedc run --report`): its provenance, the metrics as `schedc run`
prints them, the warnings, a dynP policy's self-tuning block, and the run's figures."""

from __future__ import annotations

from schedc.runtime.results.html_report.page import Page
from schedc.runtime.results.run_result import RunResult


def run_page(result: RunResult, figures: bool = True) -> Page:
    from schedc.runtime.results.report import run_title

    page = Page(f"{result.policy.name} on {run_title(result)}")
    add_run(page, result, figures=figures)
    if result.provenance is not None:
        page.provenance(result.provenance)
    return page


def add_run(page: Page, result: RunResult, figures: bool = True, label: str = "") -> None:
    """One run's sections: metrics, percentiles, categories (by area, by width x length),
    warnings, dynP block, figures."""
    from schedc.runtime.results.report import (
        PERCENTILE_COLUMNS,
        category_rows,
        class_rows,
        class_title,
        metric_rows,
        percentile_rows,
        tau_text,
    )

    of = f" ({label})" if label else ""
    metrics = result.metrics()
    page.table(f"Metrics{of}", ["metric", "value"], [list(row) for row in metric_rows(metrics)])
    if result.schedule.preempted is not None:
        page.table(f"Preemption{of}", ["total", "value"], preemption_rows(result),
                   note=PREEMPTION_NOTE if figures else "")
    if percentile_rows(metrics):
        page.table(f"Percentiles (nearest rank){of}",
                   ["of", *(header for _, header in PERCENTILE_COLUMNS)],
                   percentile_rows(metrics))
    skipped = result.workload.skipped
    note = ("skipped jobs: " + ", ".join(f"{n:,} {reason}" for reason, n in
                                         sorted(skipped.items()))) if skipped else ""
    page.table(f"Mean response per area category{of}",
               ["category", "area (procs x run time)", "jobs", "mean response (s)"],
               category_rows(metrics), note=note)
    if class_rows(metrics):
        title = class_title(metrics)
        page.table(f"{title[0].upper()}{title[1:]}{of}",
                   ["category", "jobs", "mean response (s)",
                    f"mean bounded slowdown ({tau_text(metrics)} s)"],
                   [list(row) for row in class_rows(metrics)])
    if result.warnings:
        from schedc.dsl import render_diagnostics

        page.preformatted(render_diagnostics(result.warnings), title=f"Warnings{of}")
    if result.schedule.tuning is not None:
        from schedc.runtime.results.tuning_report import tuning_lines

        page.preformatted("\n".join(tuning_lines(result.schedule.tuning, shown=20)),
                          title=f"Self-tuning dynP{of}")
    if figures:
        from schedc.runtime.results.plots import run_figures

        titles = {"gantt": "Gantt chart by processor",
                  "utilisation": "Utilisation and queue length over time",
                  "waits": "Wait distribution"}
        for key, fig in run_figures(result).items():
            page.figure(titles.get(key, key) + of, fig)


# A preemptive run's totals (`preemption_json`'s keys), in the order of the `preemptions:`
# and `cpus:` lines of `schedc run`, the processor-seconds of the shares before them
PREEMPTION_TOTALS = (
    ("suspensions", "suspensions"), ("checkpoints", "checkpoints"), ("requeues", "requeues"),
    ("jobs_preempted", "jobs preempted"),
    ("most_preemptions_of_a_job", "most preemptions of one job"),
    ("suspended_time", "time suspended (s)"), ("stopped_time", "time stopped (s)"),
    ("lost_work", "work lost to requeues (cpu-s)"),
    ("overhead", "overhead: dispatch, checkpoint (cpu-s)"),
    ("useful_work", "useful work (cpu-s)"), ("held_idle", "held idle for claims (cpu-s)"),
    ("utilisation_useful", "share of the cpus: useful"),
    ("utilisation_overhead", "share of the cpus: overhead"),
    ("utilisation_lost", "share of the cpus: lost"),
    ("utilisation_held_idle", "share of the cpus: held idle for claims"),
    ("mean_pending", "mean jobs pending"), ("mean_stopped", "mean jobs stopped"),
    ("most_resident", "most jobs resident on a processor"))
PREEMPTION_NOTE = ("The Gantt chart draws each job's segments: running in the job's colour, "
                   "dispatching and checkpointing paled and hatched (its processors held, no "
                   "progress), suspended hatched over the jobs that run on its processors "
                   "meanwhile. A job's wait is until its first start.")


def preemption_rows(result: RunResult) -> list[list[object]]:
    """A preemptive run's totals, as the `preemptions:` and `cpus:` lines of `schedc run`
    give them (a total the report no longer has is left out, not an error)."""
    from schedc.runtime.results.report import preemption_json

    totals = preemption_json(result.schedule)
    return [[label, totals[key]] for key, label in PREEMPTION_TOTALS if key in totals]
