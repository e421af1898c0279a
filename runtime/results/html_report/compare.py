"""The page of a comparison (`schedc compare --report`): the comparison table as `compare`
prints it, every scalar metric side by side, mean response per area category and per width x
length category (with mean bounded slowdown) side by side, the warnings (each once), the
figures, and the provenance the runs share, then each run's own."""

from __future__ import annotations

from collections.abc import Sequence

from schedc.runtime.results.html_report.page import Page
from schedc.runtime.results.run_result import RunResult


def compare_page(results: Sequence[RunResult], labels: Sequence[str],
                 figures: bool = True) -> Page:
    from schedc.runtime.results.report import class_title, compare_columns, label, run_title

    titles = [run_title(r) for r in results]
    names = list(labels)
    if len(set(titles)) > 1:  # runs on different machines: each row says its own
        names = [f"{name} ({t})" for name, t in zip(names, titles, strict=True)]
    page = Page(f"{', '.join(dict.fromkeys(labels))} on {titles[0]}" if len(set(titles)) == 1
                else f"Comparison of {len(results)} runs")
    columns = compare_columns(results)
    first = results[0].metrics()
    page.table("Comparison", ["policy", *(label(key, first) for key, _ in columns)],
               [[name, *(r.metrics()[key] for key, _ in columns)]
                for name, r in zip(names, results, strict=True)],
               note="schedc compare --json and --csv carry every metric.")
    page.table("Every metric", ["metric", *names], _metric_table(results))
    page.table("Mean response per area category (s)", ["category", "area", *names],
               _category_table(results))
    title = class_title(first)
    for key, what in (("class_mean_response", "Mean response (s)"),
                      ("class_mean_bounded_slowdown", "Mean bounded slowdown")):
        rows = _class_table(results, key)
        if rows:
            page.table(f"{what} {title}", ["category", *names], rows)
    warnings = dict.fromkeys(w for r in results for w in r.warnings)  # each once
    if warnings:
        from schedc.dsl import render_diagnostics

        page.preformatted(render_diagnostics(warnings), title="Warnings")
    if figures:
        from schedc.runtime.results.plots import compare_figures

        titles_of = {"metrics": "Metrics side by side",
                     "categories": "Mean response per area category"}
        for key, fig in compare_figures(results, labels).items():
            page.figure(titles_of.get(key, key), fig)
    provenance = [r.provenance for r in results]
    if all(p is not None for p in provenance):
        page.provenance(provenance, labels=names)  # type: ignore[arg-type]
    return page


def _metric_table(results: Sequence[RunResult]) -> list[list[object]]:
    """A row per scalar metric (the first run's, in its order): each run's value."""
    from schedc.runtime.results.report import label, scalar_metrics

    first = results[0].metrics()
    return [[label(key, first), *(r.metrics().get(key) for r in results)]
            for key, _ in scalar_metrics(first)]


def _class_table(results: Sequence[RunResult], key: str) -> list[list[object]]:
    """A row per width x length category any run has jobs in: each run's ``key`` value
    (empty where that run has none)."""
    from schedc.runtime.results.metrics import CLASSES

    runs = [r.metrics() for r in results]
    if any("class_jobs" not in m for m in runs):
        return []
    return [[name, *(m[key][k] if m["class_jobs"][k] else None for m in runs)]
            for k, name in enumerate(CLASSES) if any(m["class_jobs"][k] for m in runs)]


def _category_table(results: Sequence[RunResult]) -> list[list[object]]:
    """A row per area category any run has jobs in: each run's mean response (empty where
    that run has none)."""
    from schedc.runtime.results.report import category_rows

    per_run = [{c: (area, response) for c, area, _, response in category_rows(r.metrics())}
               for r in results]
    rows = []
    for c in sorted({c for run in per_run for c in run}):
        area = next(run[c][0] for run in per_run if c in run)
        rows.append([c, area, *(run[c][1] if c in run else None for run in per_run)])
    return rows
