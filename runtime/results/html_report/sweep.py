"""The page of a sweep (`schedc sweep --report`): what was run and what failed, the best
configurations per scenario, the figures, the summary (mean and 95% interval over seeds of
the main metrics per configuration) and the provenance the runs share."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from schedc.runtime.results.html_report.page import Page

SHOWN = ("mean_wait", "mean_bounded_slowdown", "utilisation")  # the summary table's metrics


def sweep_page(facts: Mapping[str, Any], summary: Sequence[Mapping[str, Any]],
               figures: Mapping[str, Any], provenance: Mapping[str, Any]) -> Page:
    """``facts``: what `schedc sweep --json` prints; ``summary``: `read_summary`'s rows;
    ``figures``: titles to matplotlib figures; ``provenance``: the facts the runs share."""
    from pathlib import Path

    page = Page(f"Sweep {Path(str(facts['spec'])).name}: {facts['runs']} runs")
    page.text(f"{facts['runs']} runs: {facts['made']} made now, {facts['stored_before']} "
              f"stored before, {facts['failed']} failed. Output folder: `{facts['out']}` "
              "(results.csv and .parquet, categories.csv and .parquet, summary.csv).",
              title="Runs")
    if facts["failed_runs"]:
        page.table("Failed runs", ["policy", "workload", "params", "seed", "error"],
                   [[f["policy"], f["workload"],
                     " ".join(f"{k}={v}" for k, v in f["params"].items()), f["seed"],
                     f["error"]] for f in facts["failed_runs"]],
                   note="at most 20 shown; results.csv has every run's error")
    best = _best_rows(facts["best"])
    if best:
        page.table("Best configurations", ["scenario", "metric", "configuration", "mean",
                                           "95% low", "95% high", "runs"], best,
                   note="per scenario (workload and transforms), by the mean over seeds")
    for title, fig in figures.items():
        page.figure(title, fig)
    if summary:
        inputs = [c for c in summary[0] if not c.endswith(("_mean", "_ci_low", "_ci_high"))
                  and c != "runs"]
        columns = [*inputs, *(f"{m}_{s}" for m in SHOWN for s in ("mean", "ci_low",
                                                                   "ci_high")), "runs"]
        page.table("Summary", columns, [[r.get(c) for c in columns] for r in summary],
                   note="mean and 95% Student t interval over seeds; summary.csv has every "
                   "metric")
    page.provenance(provenance, title="Provenance shared by the runs")
    return page


def _best_rows(best: Sequence[Mapping[str, Any]]) -> list[list[object]]:
    rows: list[list[object]] = []
    for entry in best:
        scenario = ", ".join(f"{k}={v}" for k, v in entry["scenario"].items()
                             if v is not None)
        for metric, got in entry.items():
            if metric == "scenario":
                continue
            shown = got["configuration"]  # a param given as text ("1h") as the spec wrote it
            config = " ".join(f"{k}={shown.get(f'{k}.text', v)}" for k, v in shown.items()
                              if not k.endswith(".text"))
            rows.append([scenario, metric, config, got["mean"], *got["ci"], got["runs"]])
    return rows
