"""A sweep's figure: a metric against a parameter or load, one line per group (policy, ...),
the mean with its 95% confidence band over seeds (the summary's `_ci_low`/`_ci_high`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from schedc.runtime.results.plots.style import new_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

LABEL = ".text"  # the suffix of a sweep param's label column (`runtime/tools/sweep/runs.py`)

# Axis names of the sweep's input columns and common metrics (others show as they are)
AXIS_NAMES = {
    "load_factor": "load factor (% of the trace's load)",
    "range_factor": "range factor",
    "sigma": "sigma (Downey)",
    "background_load": "background load",
    "mean_wait": "mean wait (s)",
    "mean_response": "mean response (s)",
    "mean_bounded_slowdown": "mean bounded slowdown (10 s)",
    "utilisation": "utilisation",
    "artww": "ARTwW (s)",
    "makespan": "makespan (s)",
}


def sweep_figure(summary: Sequence[Mapping[str, object]], x: str, y: str,
                 group: Sequence[str]) -> Figure:
    """``y`` (a metric: the summary's `Y_mean`, `Y_ci_low`, `Y_ci_high`) against ``x`` (an
    input column), one line per distinct value of the ``group`` columns. Each (group, x)
    must be one configuration: two rows there mean a column that varies was left out of
    ``group`` (ValueError naming the columns that differ)."""
    lines: dict[tuple, dict[float, tuple[float, float, float]]] = {}
    seen: dict[tuple, Mapping[str, object]] = {}
    names: dict[tuple, str] = {}  # each line's legend
    ticks: dict[float, object] = {}  # x's spec text ("1h") by value, when the spec gave one
    for row in summary:
        key = tuple(row.get(g) for g in group)
        at = float(row[x])  # type: ignore[arg-type]
        names.setdefault(key, _legend(row, group))
        ticks[at] = row.get(f"{x}{LABEL}")
        if (key, at) in seen:
            other = seen[key, at]
            differ = sorted(k for k in row if not k.endswith(("_mean", "_ci_low", "_ci_high"))
                            and k != "runs" and row.get(k) != other.get(k))
            raise ValueError(f"two configurations have the same {x} in one line: they "
                             f"differ in {', '.join(differ) or 'nothing shown'}; add "
                             "them to the group")
        seen[key, at] = row
        mean = float(row[f"{y}_mean"])  # type: ignore[arg-type]
        # one run has no interval (empty cells): no band there
        low = float(_or(row.get(f"{y}_ci_low"), mean))  # type: ignore[arg-type]
        high = float(_or(row.get(f"{y}_ci_high"), mean))  # type: ignore[arg-type]
        lines.setdefault(key, {})[at] = (mean, low, high)
    fig, axes = new_figure(8, 5)
    ax = axes[0][0]
    for key in sorted(lines, key=_natural):  # 80 before 100, numbers before names
        points = sorted(lines[key].items())
        xs = [p for p, _ in points]
        label = names[key] if group else y
        line, = ax.plot(xs, [m for _, (m, _, _) in points], marker="o", markersize=4,
                        label=label)
        ax.fill_between(xs, [lo for _, (_, lo, _) in points],
                        [hi for _, (_, _, hi) in points], color=line.get_color(), alpha=0.2,
                        linewidth=0)
    if all(float(p).is_integer() for line in lines.values() for p in line):
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # depth 0..4, not 0.5 steps
    if ticks and all(t is not None for t in ticks.values()):  # "1h", not 3600
        ax.set_xticks(sorted(ticks), [str(ticks[t]) for t in sorted(ticks)])
    ax.set_xlabel(AXIS_NAMES.get(x, x))
    ax.set_ylabel(AXIS_NAMES.get(y, y))
    ax.grid(linewidth=0.3)
    if lines:
        ax.legend(title=", ".join(group) if group else None, fontsize=8)
    one_seed = all(row.get("runs") == 1 for row in summary)
    ax.set_title(f"{AXIS_NAMES.get(y, y)} against {AXIS_NAMES.get(x, x)}\n" +
                 ("one run each (one seed): no confidence band" if one_seed else
                  "mean over seeds, 95% confidence band"), fontsize=10)
    return fig


def _or(value: object, default: float) -> object:
    return default if value is None or value == "" else value


def _legend(row: Mapping[str, object], group: Sequence[str]) -> str:
    """A line's name: its group's values, a param's as the spec wrote it; a column the
    line's configuration does not have (a param of another policy) is left out, not `None`."""
    shown = [row.get(f"{g}{LABEL}", row.get(g)) for g in group]
    return ", ".join(str(v) for v in shown if v is not None) or "(no value)"


def _natural(key: tuple) -> tuple:
    """A group's sort key: numbers by value, before text."""
    return tuple((0, float(v), "") if isinstance(v, int | float) and not isinstance(v, bool)
                 else (1, 0.0, str(v)) for v in key)
