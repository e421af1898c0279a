"""The figures hold what they should (titles, labels, bars, rectangles, lines, bands), and
the same figure saves to the same bytes."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from matplotlib.collections import PolyCollection

from schedc.runtime.jobs import Job
from schedc.runtime.results.allocation import intervals, processor_sets
from schedc.runtime.results.plots import (
    compare_figures,
    figure_svg,
    run_figures,
    save_figure,
    sweep_figure,
)
from schedc.runtime.results.plots import run as run_plots
from schedc.runtime.results.plots.save import FigureFormatError
from schedc.runtime.run import RunOptions, RunResult, run_policy
from schedc.runtime.workloads.workload import Workload
from tests.support.preempted_runs import preempted_run
from tests.support.repo import ROOT

EASY, FCFS = ROOT / "examples" / "easy.pol", ROOT / "examples" / "fcfs.pol"


@cache
def easy_200() -> RunResult:
    return run_policy(EASY, None, RunOptions(limit=200))


@cache
def fcfs_200() -> RunResult:
    return run_policy(FCFS, None, RunOptions(limit=200))


def texts(fig) -> list[str]:
    return [t.get_text() for t in fig.findobj(lambda o: hasattr(o, "get_text"))]


def test_run_figures_keys_and_titles() -> None:
    figures = run_figures(easy_200())
    assert list(figures) == ["gantt", "utilisation", "waits"]
    for fig in figures.values():
        title = fig.axes[0].get_title()
        assert "easy" in title and "KTH-SP2-1996-2.1-cln.swf.gz" in title and "200 jobs" in title


def test_gantt_has_one_rectangle_per_run_of_ids() -> None:
    result = easy_200()
    ax = run_plots.gantt_figure(result).axes[0]
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    expected = sum(len(intervals(ids)) for r, ids in zip(
        result.schedule.records, processor_sets(result.schedule), strict=True)
        if r.end > r.start)
    assert len(bars.get_paths()) == expected > 200  # some jobs split over non-adjacent ids
    assert ax.get_ylabel() == "processor id"
    assert ax.get_xlabel() == "time since the first submission (hours)"
    assert ax.get_ylim() == (0, 100)
    assert not bars.get_rasterized()


def test_gantt_is_rasterized_above_a_few_thousand_jobs(monkeypatch) -> None:
    monkeypatch.setattr(run_plots, "RASTER_ABOVE", 100)
    fig = run_plots.gantt_figure(easy_200())
    svg = figure_svg(fig)
    assert "<image" in svg and svg.count("<path") < 100  # one bitmap, not 200+ paths


def test_utilisation_has_two_panels_with_means() -> None:
    fig = run_plots.utilisation_figure(easy_200())
    top, bottom = fig.axes[:2]
    assert top.get_ylabel() == "fraction of 100 cpus"
    assert bottom.get_ylabel() == "queue length (jobs)"
    labels = [t.get_text() for ax in (top, bottom) for t in ax.get_legend().get_texts()]
    mean = easy_200().metrics()
    assert labels == ["busy cpus", f"utilisation {mean['utilisation']:.1%}", "waiting jobs",
                      f"mean {mean['mean_queue']:.1f} jobs"]
    busy = top.lines[0].get_ydata()
    assert max(busy) <= 1.0 and min(busy) >= 0.0


def test_waits_histogram_counts_jobs_that_waited() -> None:
    result = easy_200()
    ax = run_plots.waits_figure(result).axes[0]
    waited = sum(1 for r in result.schedule.records if r.wait > 0)
    assert sum(p.get_height() for p in ax.patches) == waited
    assert ax.get_xscale() == "log"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert f"{waited} jobs waited" in legend
    assert f"{200 - waited} jobs did not wait" in legend
    assert any(t.startswith("mean ") for t in legend)


def test_an_empty_run_draws_without_error() -> None:
    result = run_policy(EASY, Workload((), ("cpus",), (4,), source="empty.csv"))
    for fig in run_figures(result).values():
        assert fig.axes


def test_compare_metrics_and_categories() -> None:
    figures = compare_figures([easy_200(), fcfs_200()], ["EASY", "FCFS"])
    assert list(figures) == ["metrics", "categories"]
    panels = figures["metrics"].axes
    assert len(panels) == 6
    assert [ax.get_title() for ax in panels][:2] == ["mean wait (s)", "mean response (s)"]
    assert all(len(ax.patches) == 2 for ax in panels)
    cats = figures["categories"].axes[0]
    nonempty = sum(1 for n in easy_200().metrics()["category_jobs"] if n)
    assert len(cats.patches) == nonempty + 1  # FCFS against EASY per category, and `all`
    assert "vs EASY" in cats.get_ylabel()
    assert [t.get_text() for t in cats.get_xticklabels()][-1] == "all\n200"


def summary_rows() -> list[dict[str, object]]:
    rows = []
    for policy, extra in (("easy", 0), ("fcfs", 500)):
        for lf in (80, 100, 120):
            mean = 10 * lf + extra
            rows.append({"policy": policy, "workload": "KTH", "load_factor": lf,
                         "mean_wait_mean": mean, "mean_wait_ci_low": mean - 50,
                         "mean_wait_ci_high": mean + 50, "runs": 3})
    return rows


def test_sweep_one_line_and_band_per_group() -> None:
    fig = sweep_figure(summary_rows(), "load_factor", "mean_wait", ["policy"])
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.lines] == ["easy", "fcfs"]
    assert list(ax.lines[1].get_ydata()) == [1300, 1500, 1700]
    assert len(ax.collections) == 2  # the bands
    band = ax.collections[0].get_paths()[0].vertices[:, 1]
    assert min(band) == 750 and max(band) == 1250
    assert ax.get_xlabel().startswith("load factor") and ax.get_ylabel() == "mean wait (s)"


def test_sweep_lines_in_numeric_order_and_integer_ticks() -> None:
    rows = [{**r, "param.depth": d, "policy": "easy", "mean_wait_mean": lf + d,
             "mean_wait_ci_low": lf + d, "mean_wait_ci_high": lf + d, "runs": 1}
            for r in summary_rows()[:3] for d in (0, 2, 10) for lf in [r["load_factor"]]]
    fig = sweep_figure(rows, "param.depth", "mean_wait", ["load_factor"])
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.lines] == ["80", "100", "120"]  # not as text
    fig.canvas.draw()
    assert all(float(t).is_integer() for t in ax.get_xticks())
    assert "no confidence band" in ax.get_title()  # one run each
    assert "95% confidence band" in sweep_figure(summary_rows(), "load_factor", "mean_wait",
                                                 ["policy"]).axes[0].get_title()


def test_sweep_refuses_two_configurations_on_one_point() -> None:
    rows = summary_rows() + [{**summary_rows()[0], "workload": "LANL"}]
    with pytest.raises(ValueError, match="workload"):
        sweep_figure(rows, "load_factor", "mean_wait", ["policy"])


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_save_figure_same_bytes_twice(tmp_path: Path, suffix: str) -> None:
    a, b = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    save_figure(sweep_figure(summary_rows(), "load_factor", "mean_wait", ["policy"]), a)
    save_figure(sweep_figure(summary_rows(), "load_factor", "mean_wait", ["policy"]), b)
    assert a.read_bytes() == b.read_bytes()
    head = a.read_bytes()[:8]
    assert head.startswith(b"\x89PNG") if suffix == ".png" else b"<?xml" in head


def test_save_figure_refuses_other_formats(tmp_path: Path) -> None:
    fig = sweep_figure(summary_rows(), "load_factor", "mean_wait", ["policy"])
    with pytest.raises(FigureFormatError, match=r"\.png or \.svg"):
        save_figure(fig, tmp_path / "figure.pdf")
    assert not (tmp_path / "figure.pdf").exists()


def test_figure_svg_is_inline_svg() -> None:
    svg = figure_svg(sweep_figure(summary_rows(), "load_factor", "mean_wait", ["policy"]))
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert "<dc:date>" not in svg


def test_job_colours_are_stable_per_id() -> None:
    from schedc.runtime.results.plots.style import job_colour_index

    assert job_colour_index(7) == job_colour_index(7)
    assert len({job_colour_index(i) for i in range(1, 11)}) >= 6


def test_a_zero_length_job_draws_nothing() -> None:
    jobs = (Job(1, 0, 0, 0, 5, (2,)), Job(2, 1, 0, 10, 10, (2,)))
    result = run_policy(EASY, Workload(jobs, ("cpus",), (4,), source="two.csv"))
    ax = run_plots.gantt_figure(result).axes[0]
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(bars.get_paths()) == 1


def test_compare_of_one_run_shows_its_mean_response_per_category() -> None:
    figures = compare_figures([easy_200()], ["EASY"])
    ax = figures["categories"].axes[0]
    assert ax.get_ylabel() == "mean response (s)"
    heights = [p.get_height() for p in ax.patches]
    assert heights[-1] == pytest.approx(easy_200().metrics()["mean_response"])


class _Stub:
    """What `metrics_figure` reads of a run: its metrics and its workload's source."""

    def __init__(self, **metrics: float) -> None:
        base = {"mean_wait": 1.0, "mean_response": 10.0, "mean_bounded_slowdown": 1.0,
                "utilisation": 0.5, "artww": 10.0, "sldwa": 1.0}
        self._metrics = {**base, **metrics}
        self.workload = type("W", (), {"source": "k.swf"})()

    def metrics(self) -> dict[str, float]:
        return self._metrics


def test_a_panel_spanning_more_than_two_decades_is_log_scaled_and_says_so() -> None:
    from schedc.runtime.results.plots.compare import metrics_figure

    fig = metrics_figure([_Stub(mean_wait=2.0), _Stub(mean_wait=5_000.0, utilisation=0.6),
                          _Stub(mean_wait=3.0)], ["a", "b", "c"])
    panels = {ax.get_title(): ax for ax in fig.axes}
    assert panels["mean wait (s)"].get_yscale() == "log"
    assert "log" in panels["mean wait (s)"].get_ylabel()
    assert panels["utilisation (fraction of cpus)"].get_yscale() == "linear"
    assert panels["mean response (s)"].get_ylabel() == ""
    # a zero has no place on a log axis: linear then
    fig = metrics_figure([_Stub(mean_wait=0.0), _Stub(mean_wait=5_000.0)], ["a", "b"])
    assert {ax.get_title(): ax for ax in fig.axes}["mean wait (s)"].get_yscale() == "linear"


# --- a preemptive run (tests/support/preempted_runs.py) -------------------------------------


def _extents(artist) -> tuple[float, float, float, float]:
    box = (artist.get_path() if hasattr(artist, "get_path") else artist).get_extents()
    return box.x0, box.x1, box.y0, box.y1


def test_a_preemptive_gantt_shades_each_phase_and_says_so(tmp_path: Path) -> None:
    per_minute = 1 / 60  # 2,005 s shown in minutes
    # running: job 1's two stretches, job 2, job 3; a fill per held phase, not suspended
    for mechanism, phases, sizes in (("suspend", ["running", "suspended"], [4]),
                                     ("requeue", ["running", "dispatching"], [4, 1]),
                                     ("checkpoint", ["running", "dispatching",
                                                     "checkpointing"], [4, 1, 1])):
        ax = run_plots.gantt_figure(preempted_run(tmp_path, mechanism)).axes[0]
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert legend == [run_plots.PHASES[phase][2] for phase in phases], mechanism
        fills = [c for c in ax.collections if isinstance(c, PolyCollection)]
        assert [len(c.get_paths()) for c in fills] == sizes, mechanism
        hatched = {p.get_hatch(): _extents(p) for p in ax.patches if p.get_hatch()}
        if mechanism == "suspend":  # job 1's [100, 110) on cpus 0-3, hatched over job 2
            assert hatched == {"////": (100 * per_minute, 110 * per_minute, 0.0, 4.0)}
            assert next(p for p in ax.patches if p.get_hatch()).get_zorder() == 2
        if mechanism == "checkpoint":
            assert hatched == {"xxxx": (100 * per_minute, 120 * per_minute, 0.0, 4.0),
                               "....": (130 * per_minute, 135 * per_minute, 0.0, 4.0)}


def test_a_rigid_gantt_has_no_legend_or_hatching() -> None:
    ax = run_plots.gantt_figure(easy_200()).axes[0]
    assert ax.get_legend() is None and not ax.patches


def test_preemptive_utilisation_counts_the_cpus_held(tmp_path: Path) -> None:
    # suspended over [100, 110): job 1 holds no cpu, job 2 all 4 (busy 1.0, never 2.0)
    result = preempted_run(tmp_path, "suspend")
    top, bottom = run_plots.utilisation_figure(result).axes[:2]
    assert _seconds_and_values(top.lines[0]) == ([0, 100, 110, 1010, 2000, 2005],
                                                 [1.0, 1.0, 1.0, 0.0, 0.25, 0.0])
    labels = [t.get_text() for t in bottom.get_legend().get_texts()]
    assert labels[:2] == ["jobs waiting to start", "preempted jobs waiting to run again"]
    assert _seconds_and_values(bottom.lines[1]) == ([100, 110], [1, 0])  # job 1, suspended
    # requeued at 100, restarted at 110: dispatching [110, 140) holds its cpus
    result = preempted_run(tmp_path, "requeue")
    top, bottom = run_plots.utilisation_figure(result).axes[:2]
    assert _seconds_and_values(top.lines[0]) == ([0, 100, 110, 140, 1140, 2000, 2005],
                                                 [1.0, 1.0, 1.0, 1.0, 0.0, 0.25, 0.0])
    assert _seconds_and_values(bottom.lines[1]) == ([100, 110], [1, 0])


def _seconds_and_values(line) -> tuple[list[float], list[float]]:
    """A step line's changes: x in seconds (the figure's are minutes), rounded, and y."""
    return [round(x * 60, 6) for x in line.get_xdata()], list(line.get_ydata())


def test_a_preempted_job_s_wait_is_until_its_first_start(tmp_path: Path) -> None:
    # checkpointed: job 1 started at 0 (restarted at 130: no wait), job 2 waited 20 s for
    # job 1's checkpoint
    result = preempted_run(tmp_path, "checkpoint")
    ax = run_plots.waits_figure(result).axes[0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "1 jobs waited" in legend and "2 jobs did not wait" in legend
    assert sum(p.get_height() for p in ax.patches) == 1
