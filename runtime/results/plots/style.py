"""What every figure shares: a fresh `Figure` (no pyplot state, the Agg backend), time axes
in readable units, stable job colours, titles naming the policy and the workload."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from schedc.runtime.results.run_result import RunResult

# Above this many jobs a Gantt chart's rectangles are rasterized inside an SVG (a vector
# rectangle per job would make an SVG of tens of MB on a whole trace).
RASTER_ABOVE = 3000
PALETTE = "tab20"


def new_figure(width: float, height: float, rows: int = 1, cols: int = 1, **kw: Any
               ) -> tuple[Figure, Any]:
    """A figure and its axes, outside pyplot (nothing global, nothing to close)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.subplots(rows, cols, squeeze=False, **kw)


def time_unit(span_seconds: float) -> tuple[float, str]:
    """Seconds per plotted unit and its name, for a span: days beyond 3 days, hours beyond
    3 hours, minutes beyond 3 minutes, else seconds."""
    for seconds, name in ((86400.0, "days"), (3600.0, "hours"), (60.0, "minutes")):
        if span_seconds > 3 * seconds:
            return seconds, name
    return 1.0, "s"


def seconds(unit: Fraction | int) -> float:
    """A workload's time unit as float seconds (1 for SWF traces)."""
    return float(unit)


def job_colour_index(job_id: int) -> int:
    """A job's colour among the palette's 20, from a stable hash of its id (Knuth's
    multiplicative hash), so that neighbouring ids differ and the same job has the same
    colour in every figure."""
    return ((job_id * 2654435761) % 2**32) % 20


def run_title(result: RunResult, what: str) -> str:
    """`WHAT: POLICY on WORKLOAD (transform)`."""
    name = Path(result.workload.source).name if result.workload.source else "workload"
    change = f", {result.workload.transform}" if result.workload.transform else ""
    cluster = f", {result.cluster}" if result.cluster else ""
    return f"{what}: {result.policy.name} on {name} ({len(result.workload.jobs):,} jobs" \
        f"{change}{cluster})"
