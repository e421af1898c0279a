"""The figures of a comparison: metrics side by side, one panel per metric; and the mean
response per area category (papers/000), as a change against the first run."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schedc.runtime.results.plots.style import new_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from schedc.runtime.results.run_result import RunResult

# The panels: metric key, title with its unit
METRICS = (
    ("mean_wait", "mean wait (s)"),
    ("mean_response", "mean response (s)"),
    ("mean_bounded_slowdown", "mean bounded slowdown (10 s)"),
    ("utilisation", "utilisation (fraction of cpus)"),
    ("artww", "ARTwW (s)"),
    ("sldwa", "SLDwA"),
)


def compare_figures(results: Sequence[RunResult], labels: Sequence[str]
                    ) -> dict[str, Figure]:
    """``"metrics"``, and ``"categories"`` when the runs have area categories (jobs)."""
    figures = {"metrics": metrics_figure(results, labels)}
    if results and any(any(r.metrics()["category_jobs"]) for r in results):
        figures["categories"] = categories_figure(results, labels)
    return figures


def _colours(n: int) -> list[Any]:
    import matplotlib

    cmap = matplotlib.colormaps["tab10"]
    return [cmap(i % 10) for i in range(n)]


def _workload_title(results: Sequence[RunResult]) -> str:
    sources = dict.fromkeys(Path(r.workload.source).name for r in results)
    return ", ".join(sources) if sources else "no workload"


def metrics_figure(results: Sequence[RunResult], labels: Sequence[str]) -> Figure:
    """One small bar chart per metric, one bar per run (same colour in every panel)."""
    fig, axes = new_figure(11, 6, rows=2, cols=3)
    colours = _colours(len(results))
    xs = list(range(len(results)))
    for ax, (key, title) in zip((a for row in axes for a in row), METRICS, strict=True):
        values = [float(r.metrics()[key]) for r in results]
        bars = ax.bar(xs, values, color=colours)
        ax.bar_label(bars, labels=[_short(v) for v in values], fontsize=7)
        if key == "mean_bounded_slowdown" and results:  # the threshold the runs used
            title = f"mean bounded slowdown ({results[0].metrics().get('bsld_tau', 10)} s)"
        ax.set_title(title, fontsize=9)
        if _spans_decades(values):  # else the small bars are flat lines beside a tall one
            ax.set_yscale("log")
            ax.set_ylabel("log scale", fontsize=8)
        ax.set_xticks(xs, [str(i + 1) for i in xs], fontsize=8)
        ax.margins(y=0.15)
        ax.grid(axis="y", linewidth=0.3)
    handles = [_patch(c) for c in colours]
    fig.legend(handles, [f"{i + 1}: {label}" for i, label in enumerate(labels)],
               loc="outside lower center", ncols=min(3, max(1, len(labels))), fontsize=8)
    fig.suptitle(f"Metrics of {len(results)} runs on {_workload_title(results)}", fontsize=11)
    return fig


LOG_SPAN = 100.0  # a panel's largest value over its smallest above which its scale is log


def _spans_decades(values: Sequence[float]) -> bool:
    """Whether ``values`` span more than two decades, all above 0 (a log axis has no 0)."""
    return bool(values) and min(values) > 0 and max(values) / min(values) > LOG_SPAN


def categories_figure(results: Sequence[RunResult], labels: Sequence[str]) -> Figure:
    """papers/000's per-category bars: for each run after the first, the % change of the
    mean response per area category (and overall) against the first run; with one run,
    its mean response per category."""
    from schedc.runtime.results.metrics import NCATEGORIES

    base = results[0].metrics()
    counts = base["category_jobs"]
    cats = [c for c in range(NCATEGORIES) if counts[c]]
    names = [f"C{c}\n{counts[c]:,}" for c in cats] + [f"all\n{base['jobs']:,}"]
    fig, axes = new_figure(10, 4.8)
    ax = axes[0][0]
    if len(results) == 1:
        values = [base["category_mean_response"][c] for c in cats] + [base["mean_response"]]
        category_bars(ax, names, [(labels[0], values)], _colours(1))
        ax.set_ylabel("mean response (s)")
        what = f"Mean response per area category: {labels[0]}"
    else:
        series = []
        for result, label in zip(results[1:], labels[1:], strict=True):
            m = result.metrics()
            values = [pct_change(m["category_mean_response"][c],
                                 base["category_mean_response"][c]) for c in cats]
            series.append((label, values + [pct_change(m["mean_response"],
                                                       base["mean_response"])]))
        category_bars(ax, names, series, _colours(len(results))[1:])
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_ylabel(f"% change in mean response vs {labels[0]}")
        what = f"Mean response per area category, change against {labels[0]} (negative = " \
            "better)"
    ax.set_xlabel("area category: procs x run time in [10^c, 10^(c+1)) (jobs in it)")
    ax.set_title(f"{what}\non {_workload_title(results)}", fontsize=10)
    ax.legend(fontsize=8)
    return fig


def category_bars(ax: Any, names: Sequence[str],
                  series: Sequence[tuple[str, Sequence[float | None]]],
                  colours: Sequence[Any]) -> list[Any]:
    """Grouped bars: one group per name (the last one, `all`, set off by a dotted line), one
    bar per series; None draws no bar. Returns the bar containers."""
    width = 0.8 / max(1, len(series))
    containers = []
    for k, (label, values) in enumerate(series):
        xs = [x + (k - (len(series) - 1) / 2) * width for x in range(len(names))]
        containers.append(ax.bar(xs, [float("nan") if v is None else v for v in values],
                                 width, color=colours[k], label=label))
    ax.axvline(len(names) - 1.5, color="grey", linewidth=0.5, linestyle=":")
    ax.set_xticks(range(len(names)), names, fontsize=7)
    ax.grid(axis="y", linewidth=0.3)
    return containers


def pct_change(value: float | None, base: float | None) -> float | None:
    if value is None or base is None or base == 0:
        return None
    return 100.0 * (value - base) / base


def _short(value: float) -> str:
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def _patch(colour: Any) -> Any:
    from matplotlib.patches import Patch

    return Patch(facecolor=colour)
