"""The figures of one run: the Gantt chart by processor, utilisation and queue length over
time, and the distribution of waits."""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

from schedc.runtime.engine.lifecycle import HOLDS_CPUS
from schedc.runtime.results.allocation import intervals, processor_runs
from schedc.runtime.results.plots.style import (
    PALETTE,
    RASTER_ABOVE,
    job_colour_index,
    new_figure,
    run_title,
    seconds,
    time_unit,
)

if TYPE_CHECKING:
    import numpy as np
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.patches import PathPatch

    from schedc.runtime.engine.schedule import Schedule
    from schedc.runtime.results.run_result import RunResult


def run_figures(result: RunResult) -> dict[str, Figure]:
    """``"gantt"``, ``"utilisation"`` (with the queue length) and ``"waits"``."""
    return {"gantt": gantt_figure(result), "utilisation": utilisation_figure(result),
            "waits": waits_figure(result)}


def _origin_and_scale(result: RunResult, span: float | None = None
                      ) -> tuple[int, float, str]:
    """Time 0 of the plots (the first submission), plotted units per workload time unit,
    the plotted unit's name (for ``span`` seconds shown: default, the whole run's)."""
    records = result.schedule.records
    if not records:
        return 0, 1.0, "s"
    first = min(r.job.submit for r in records)
    last = max(r.end for r in records)
    unit = seconds(result.workload.time_unit)
    per, name = time_unit((last - first) * unit if span is None else span)
    return first, unit / per, name


# A time window of a figure: (from, to) in seconds since the first submission, None: the
# run's start or end
Window = tuple[float | None, float | None]


def gantt_figure(result: RunResult, window: Window = (None, None)) -> Figure:
    """One rectangle per job and run of consecutive processor ids, time on x, processor id
    on y, coloured by a stable hash of the job id; only ``window`` (seconds since the first
    submission) when given, in a time unit fitting its span. A preemptive run's jobs are
    drawn segment by segment, each phase shaded as ``PHASES`` says, with a legend."""
    import matplotlib
    import numpy as np
    from matplotlib.collections import Collection

    schedule = result.schedule
    whole = _span(result)
    low, high = window[0] or 0.0, whole if window[1] is None else window[1]
    origin, scale, unit = _origin_and_scale(
        result, None if window == (None, None) else max(high - low, 0.0))
    per_second = scale / seconds(result.workload.time_unit)  # plotted units per second
    # phase: its rectangles' table and x extents, those in the window
    shown: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for phase, table in _gantt_tables(schedule).items():
        x0 = (table[:, 0] - origin) * scale
        x1 = (table[:, 1] - origin) * scale
        if window != (None, None):  # only what shows: a small SVG of a day of a long trace
            inside = (x1 > low * per_second) & (x0 < high * per_second)
            table, x0, x1 = table[inside], x0[inside], x1[inside]
        shown[phase] = (table, x0, x1)
    palette = np.array([matplotlib.colormaps[PALETTE](i / 20 + 0.025) for i in range(20)])
    rectangles = sum(len(table) for table, _, _ in shown.values())
    many = (len(schedule.records) if window == (None, None) else rectangles) > RASTER_ABOVE
    fig, axes = new_figure(10, 5)
    ax = axes[0][0]
    for phase, (table, x0, x1) in shown.items():
        for artist in _bars(phase, table, x0, x1, palette, many):
            if isinstance(artist, Collection):
                ax.add_collection(artist)
            else:  # not add_patch: the limits are set below, a patch's cost a loop per corner
                ax.add_artist(artist)
    ends = [float(x1.max()) for _, _, x1 in shown.values() if len(x1)]
    end = max(ends) if ends else 1.0
    if window == (None, None):
        ax.set_xlim(0, end if end > 0 else 1.0)
    else:  # the rectangles outside are clipped by the axes
        ax.set_xlim(low * per_second, max(high, low + 1) * per_second)
    ax.set_ylim(0, schedule.capacities[0])
    ax.set_xlabel(f"time since the first submission ({unit})")
    ax.set_ylabel("processor id")
    span = "" if window == (None, None) else f" from {_duration(low)} to {_duration(high)}"
    ax.set_title(run_title(result, f"Processors{span}"), fontsize=10)
    if schedule.preempted is not None:
        _phase_legend(ax, [phase for phase in PHASES if phase in shown])
    return fig


# How a preemptive run's Gantt chart shades each phase of a job (`engine/lifecycle.py`):
# (fill: the job's colour, the job's colour paled, or none; hatch; legend). Stopped and
# pending jobs hold no processor and are not drawn. A suspended job's processors run other
# jobs meanwhile, so its segment is hatching only, drawn over them.
PHASES: dict[str, tuple[str, str, str]] = {
    "running": ("job", "", "running (colour: the job)"),
    "dispatching": ("pale", "....", "dispatching: held, no progress"),
    "checkpointing": ("pale", "xxxx", "checkpointing: held, saving its work"),
    "suspended": ("none", "////", "suspended: its processors lent to others"),
}
_HATCH = "#3a3a3a"  # hatching's colour (and a hatched bar's edge colour, its width 0)


def _gantt_tables(schedule: Schedule) -> dict[str, np.ndarray]:
    """Per phase, one row per rectangle: x0, x1, first id, count, colour index; built as
    arrays (a list of vertex lists costs seconds on LANL-CM5's 122,000 jobs). A rigid run's
    rectangles are its jobs', all ``running``."""
    import numpy as np

    rows: dict[str, list[tuple[int, int, int, int, int]]] = {"running": []}
    if schedule.preempted is None:
        rows["running"] = [
            (r.start, r.end, first, count, job_colour_index(r.job.id))
            for r, runs in zip(schedule.records, processor_runs(schedule), strict=True)
            if r.end > r.start for first, count in runs]
    else:
        for r, p in zip(schedule.records, schedule.preempted, strict=True):
            colour = job_colour_index(r.job.id)
            for seg in p.segments:
                if seg.phase in PHASES and seg.end > seg.start:
                    rows.setdefault(seg.phase, []).extend(
                        (seg.start, seg.end, first, count, colour)
                        for first, count in intervals(seg.processors))
    return {phase: np.array(rows[phase], dtype=np.float64).reshape(-1, 5)
            for phase in PHASES if phase in rows}  # drawn in this order


def _bars(phase: str, table: np.ndarray, x0: np.ndarray, x1: np.ndarray,
          palette: np.ndarray, many: bool) -> list[Artist]:
    """One phase's rectangles, shaded as ``PHASES`` says: one collection for the fills,
    one patch for the hatching (one compound path: hatching each polygon of a collection
    costs seconds on a whole trace)."""
    import numpy as np
    from matplotlib.collections import PolyCollection

    y0, y1 = table[:, 2], table[:, 2] + table[:, 3]
    verts = np.stack([np.stack(corner, axis=1) for corner in
                      ((x0, y0), (x0, y1), (x1, y1), (x1, y0))], axis=1)
    colours = palette[table[:, 4].astype(int)]
    fill, hatch, _ = PHASES[phase]
    artists: list[Artist] = []
    if fill == "job":
        artists.append(PolyCollection(verts, facecolors=colours,
                                      edgecolors="white" if not many else "face",
                                      linewidths=0.3 if not many else 0.0))
    elif fill == "pale":  # the job's colour paled towards white
        artists.append(PolyCollection(verts, facecolors=0.45 * colours + 0.55,
                                      edgecolors="face", linewidths=0.0))
    if hatch and len(verts):
        artists.append(_hatching(verts, hatch, zorder=2 if fill == "none" else 1))
    for artist in artists:
        artist.set_rasterized(many)
    return artists


def _hatching(verts: np.ndarray, hatch: str, zorder: float) -> PathPatch:
    """Rectangles (n x 4 corners) hatched, unfilled, as one patch."""
    import numpy as np
    from matplotlib.patches import PathPatch
    from matplotlib.path import Path

    closed = np.concatenate([verts, verts[:, :1]], axis=1).reshape(-1, 2)
    codes = np.tile([Path.MOVETO, Path.LINETO, Path.LINETO, Path.LINETO, Path.CLOSEPOLY],
                    len(verts)).astype(Path.code_type)
    # a patch's hatching takes its edge colour; width 0 draws no edge
    return PathPatch(Path(closed, codes), facecolor="none", edgecolor=_HATCH, linewidth=0.0,
                     hatch=hatch, zorder=zorder)


def _phase_legend(ax: Axes, phases: list[str]) -> None:
    """The legend of a preemptive run's phases, beside the chart (it would hide bars)."""
    from matplotlib.patches import Patch

    handles = [Patch(facecolor={"job": "#8c9cb0", "pale": "#d5dbe3", "none": "white"}[fill],
                     edgecolor=_HATCH, linewidth=0.5, hatch=hatch, label=label)
               for fill, hatch, label in (PHASES[phase] for phase in phases)]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8,
              frameon=False)


def _span(result: RunResult) -> float:
    """Seconds from the first submission to the last end."""
    records = result.schedule.records
    if not records:
        return 0.0
    return (max(r.end for r in records) - min(r.job.submit for r in records)) * seconds(
        result.workload.time_unit)


def _steps(events: list[tuple[int, int]], origin: int, scale: float
           ) -> tuple[list[float], list[int]]:
    """A step function from (time, change) events: x at each change, y after it."""
    events.sort()
    xs: list[float] = []
    ys: list[int] = []
    level = 0
    for t, change in events:
        level += change
        x = (t - origin) * scale
        if xs and xs[-1] == x:
            ys[-1] = level
        else:
            xs.append(x)
            ys.append(level)
    return xs, ys


def utilisation_figure(result: RunResult) -> Figure:
    """Two panels sharing the time axis: the fraction of cpus busy, and the jobs waiting."""
    schedule = result.schedule
    origin, scale, unit = _origin_and_scale(result)
    busy: list[tuple[int, int]] = []
    queued: list[tuple[int, int]] = []
    for r in schedule.records:
        if r.end > r.start:
            busy += [(r.start, r.alloc[0]), (r.end, -r.alloc[0])]
        if r.start > r.job.submit:
            queued += [(r.job.submit, 1), (r.start, -1)]
    again: list[tuple[int, int]] = []  # preempted jobs waiting to run again
    if schedule.preempted is not None:  # a job's pieces: busy only while it holds cpus
        busy, again = _held_and_preempted(schedule)
    cap = schedule.capacities[0]
    fig, axes = new_figure(10, 5, rows=2, sharex=True)
    top, bottom = axes[0][0], axes[1][0]
    xs, ys = _steps(busy, origin, scale)
    top.step(xs, [y / cap for y in ys], where="post", linewidth=0.6, color="tab:blue",
             label="busy cpus")
    mean = result.metrics()["utilisation"]
    top.axhline(mean, color="tab:red", linewidth=0.8, linestyle="--",
                label=f"utilisation {mean:.1%}")
    top.set_ylim(0, 1.02)
    top.set_ylabel(f"fraction of {cap:,} cpus")
    top.legend(loc="lower right", fontsize=8)
    top.set_title(run_title(result, "Utilisation and queue"), fontsize=10)
    xs, ys = _steps(queued, origin, scale)
    bottom.step(xs, ys, where="post", linewidth=0.6, color="tab:orange",
                label="waiting jobs" if schedule.preempted is None else "jobs waiting to start")
    if schedule.preempted is not None:
        xs, ys = _steps(again, origin, scale)
        bottom.step(xs, ys, where="post", linewidth=0.6, color="tab:purple",
                    label="preempted jobs waiting to run again")
    mean = result.metrics()["mean_queue"]
    bottom.axhline(mean, color="tab:red", linewidth=0.8, linestyle="--",
                   label=f"mean {mean:.1f} jobs" + ("" if schedule.preempted is None else
                                                     " waiting to start"))
    bottom.set_ylabel("queue length (jobs)")
    bottom.set_xlabel(f"time since the first submission ({unit})")
    bottom.set_ylim(bottom=0)
    bottom.legend(loc="upper right", fontsize=8)
    return fig


def _held_and_preempted(schedule: Schedule) -> tuple[list[tuple[int, int]],
                                                     list[tuple[int, int]]]:
    """A preemptive run's step events: the cpus held (dispatching, running, checkpointing:
    never a suspended job's, lent to others), and the jobs that started and wait to run
    again (suspended, stopped after a checkpoint, or queued again after a requeue)."""
    assert schedule.preempted is not None
    held: list[tuple[int, int]] = []
    again: list[tuple[int, int]] = []
    for r, p in zip(schedule.records, schedule.preempted, strict=True):
        since = r.start  # the end of its last stretch holding cpus
        for seg in p.segments:
            if seg.phase not in HOLDS_CPUS:
                continue
            if seg.end > seg.start:
                held += [(seg.start, len(seg.processors)), (seg.end, -len(seg.processors))]
            if seg.start > since:  # it held nothing in between
                again += [(since, 1), (seg.start, -1)]
            since = max(since, seg.end)
    return held, again


def waits_figure(result: RunResult) -> Figure:
    """A histogram of the waits of jobs that waited (log x), median and mean of all waits
    marked; the jobs that did not wait are counted in the legend."""
    unit = seconds(result.workload.time_unit)
    waits = [r.wait * unit for r in result.schedule.records]
    fig, axes = new_figure(8, 4.5)
    ax = axes[0][0]
    waited = [w for w in waits if w > 0]
    none = len(waits) - len(waited)
    if waited:
        low, high = min(waited), max(waited)
        bins = _log_bins(low, high)
        ax.hist(waited, bins=bins, color="tab:blue", alpha=0.8,
                label=f"{len(waited):,} jobs waited")
        ax.set_xscale("log")
    if waits:
        median, mean = statistics.median(waits), statistics.fmean(waits)
        for value, name, style in ((median, "median", "-"), (mean, "mean", "--")):
            if value > 0:
                ax.axvline(value, color="tab:red", linestyle=style, linewidth=1.0,
                           label=f"{name} {_duration(value)}")
            else:
                ax.plot([], [], " ", label=f"{name} 0 s")
    ax.plot([], [], " ", label=f"{none:,} jobs did not wait")
    ax.set_xlabel("wait (s, log scale)" if waited else "wait (s)")
    ax.set_ylabel("jobs")
    ax.legend(fontsize=8)
    ax.set_title(run_title(result, "Waits"), fontsize=10)
    return fig


def _log_bins(low: float, high: float, count: int = 40) -> list[float]:
    import math

    a, b = math.log10(low), math.log10(high)
    if b - a < 1e-9:
        return [low / 1.5, high * 1.5]
    inner = [10 ** (a + (b - a) * i / count) for i in range(1, count)]
    return [low, *inner, high]  # exact ends: 10 ** log10(x) may round below x and drop it


def _duration(s: float) -> str:
    for size, name in ((86400, "d"), (3600, "h"), (60, "min")):
        if s >= size:
            return f"{s / size:.1f} {name}"
    return f"{s:.0f} s"
