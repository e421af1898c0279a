"""The figures of one run: the Gantt chart by processor, utilisation and queue length over
time, and the distribution of waits."""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

from schedc.runtime.results.allocation import processor_runs
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
    from matplotlib.figure import Figure

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
    submission) when given, in a time unit fitting its span."""
    import matplotlib
    import numpy as np
    from matplotlib.collections import PolyCollection

    schedule = result.schedule
    whole = _span(result)
    low, high = window[0] or 0.0, whole if window[1] is None else window[1]
    origin, scale, unit = _origin_and_scale(
        result, None if window == (None, None) else max(high - low, 0.0))
    per_second = scale / seconds(result.workload.time_unit)  # plotted units per second
    # one row per rectangle: x0, x1, first id, count, colour index; built as arrays (a
    # list of vertex lists costs seconds on LANL-CM5's 122,000 jobs)
    rows = [(r.start, r.end, first, count, job_colour_index(r.job.id))
            for r, runs in zip(schedule.records, processor_runs(schedule), strict=True)
            if r.end > r.start for first, count in runs]
    table = np.array(rows, dtype=np.float64).reshape(-1, 5)
    x0 = (table[:, 0] - origin) * scale
    x1 = (table[:, 1] - origin) * scale
    if window != (None, None):  # only what shows: a small SVG of a day of a long trace
        shown = (x1 > low * per_second) & (x0 < high * per_second)
        table, x0, x1 = table[shown], x0[shown], x1[shown]
    y0, y1 = table[:, 2], table[:, 2] + table[:, 3]
    verts = np.stack([np.stack(corner, axis=1) for corner in
                      ((x0, y0), (x0, y1), (x1, y1), (x1, y0))], axis=1)
    palette = np.array([matplotlib.colormaps[PALETTE](i / 20 + 0.025) for i in range(20)])
    colours = palette[table[:, 4].astype(int)]
    many = (len(schedule.records) if window == (None, None) else len(table)) > RASTER_ABOVE
    fig, axes = new_figure(10, 5)
    ax = axes[0][0]
    bars = PolyCollection(verts, facecolors=colours,
                          edgecolors="white" if not many else "face",
                          linewidths=0.3 if not many else 0.0)
    bars.set_rasterized(many)
    ax.add_collection(bars)
    end = float(x1.max()) if len(x1) else 1.0
    if window == (None, None):
        ax.set_xlim(0, end if end > 0 else 1.0)
    else:  # the rectangles outside are clipped by the axes
        ax.set_xlim(low * per_second, max(high, low + 1) * per_second)
    ax.set_ylim(0, schedule.capacities[0])
    ax.set_xlabel(f"time since the first submission ({unit})")
    ax.set_ylabel("processor id")
    span = "" if window == (None, None) else f" from {_duration(low)} to {_duration(high)}"
    ax.set_title(run_title(result, f"Processors{span}"), fontsize=10)
    return fig


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
    bottom.step(xs, ys, where="post", linewidth=0.6, color="tab:orange", label="waiting jobs")
    bottom.axhline(result.metrics()["mean_queue"], color="tab:red", linewidth=0.8,
                   linestyle="--", label=f"mean {result.metrics()['mean_queue']:.1f} jobs")
    bottom.set_ylabel("queue length (jobs)")
    bottom.set_xlabel(f"time since the first submission ({unit})")
    bottom.set_ylim(bottom=0)
    bottom.legend(loc="upper right", fontsize=8)
    return fig


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
