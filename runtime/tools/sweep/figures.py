"""A sweep's figures, chosen from its summary: for each numeric input that varies (a param,
the load factor, ...) and each workload, a metric against that input, one line per
combination of the other inputs that vary (the policy first), the mean over seeds with its
95% band (`schedc.runtime.results.plots.sweep_figure`). Written as PNGs into `OUT/figures/` and put
on the `--report` page; matplotlib is imported only when a figure is drawn."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from attrs import frozen

from schedc.runtime.tools.sweep.runs import is_label

METRICS = ("mean_wait", "mean_bounded_slowdown")  # what each figure's y is
FOLDER = "figures"
STAMP = ".summary.sha256"  # the summary the figures on disk were drawn from


@frozen
class SweepFigure:
    name: str  # the file's stem
    x: str
    y: str
    workload: str
    group: tuple[str, ...]
    rows: tuple[Mapping[str, Any], ...]  # the summary rows drawn


def planned_figures(summary: Sequence[Mapping[str, Any]], inputs: Sequence[str]
                    ) -> list[SweepFigure]:
    """The figures of a summary (``inputs``: its input columns, "seed" among them or not)."""
    rows = [r for r in summary if r.get("runs")]
    # a param's label column (its spec text) varies with its value: a line per label would
    # split each line into points
    varying = [c for c in inputs if c != "seed" and not is_label(c)
               and len({r.get(c) for r in rows}) > 1]
    axes = [c for c in varying if c not in ("policy", "workload") and all(
        isinstance(r.get(c), int | float) or r.get(c) is None for r in rows)]
    out = []
    for x in axes:
        group = tuple(c for c in varying if c not in (x, "workload"))
        for workload in sorted({str(r["workload"]) for r in rows}):
            mine = tuple(r for r in rows if str(r["workload"]) == workload
                         and r.get(x) is not None)
            if len({r[x] for r in mine}) < 2:
                continue
            for y in METRICS:
                if any(r.get(f"{y}_mean") is None for r in mine):
                    continue
                name = re.sub(r"[^\w.-]+", "_", f"{y}-vs-{x}-{_stem(workload)}")
                out.append(SweepFigure(name, x, y, workload, group, mine))
    return out


def draw(figure: SweepFigure) -> Any:
    """The matplotlib figure, its title naming the workload."""
    from schedc.runtime.results.plots import sweep_figure

    fig = sweep_figure(figure.rows, figure.x, figure.y, figure.group)
    ax = fig.axes[0]
    first, _, rest = ax.get_title().partition("\n")
    ax.set_title(f"{first} on {figure.workload}\n{rest}", fontsize=10)
    return fig


def figure_path(out: str, figure: SweepFigure) -> str:
    return str(Path(out) / FOLDER / f"{figure.name}.png")


def write_figures(out: str, figures: Sequence[SweepFigure]) -> dict[str, Any]:
    """Each figure drawn and saved as `OUT/figures/NAME.png`, then a stamp of the summary
    they show; returns them by path."""
    from schedc.runtime.atomicio import write_text_atomic
    from schedc.runtime.results.plots import save_figure

    drawn = {}
    (Path(out) / FOLDER).mkdir(exist_ok=True)
    for figure in figures:
        fig = draw(figure)
        save_figure(fig, figure_path(out, figure))
        drawn[figure_path(out, figure)] = fig
    write_text_atomic(Path(out) / FOLDER / STAMP, _summary_hash(out))
    return drawn


def is_fresh(out: str, figures: Sequence[SweepFigure]) -> bool:
    """Whether every figure is on disk, drawn from the summary now in ``out``."""
    stamp = Path(out) / FOLDER / STAMP
    return (stamp.is_file() and stamp.read_text(encoding="utf-8") == _summary_hash(out)
            and all(Path(figure_path(out, f)).is_file() for f in figures))


def _summary_hash(out: str) -> str:
    from schedc.runtime.results.provenance import sha256_text

    text = (Path(out) / "summary.csv").read_text(encoding="utf-8")
    return sha256_text(text + f"\n{METRICS}")


def _stem(workload: str) -> str:
    for suffix in (".gz", ".swf", ".csv"):
        workload = workload.removesuffix(suffix)
    return workload
