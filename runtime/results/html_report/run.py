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
