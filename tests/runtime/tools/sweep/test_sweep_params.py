"""A sweep param written as text in the spec ("1h", "1/3") is a number in the tables (so
that `plot sweep --x param.NAME` draws it and its rows sort by value), its text kept beside
it as a label column, shown in legends, ticks and the best configurations; a line's legend
never says `None` for a param its policy does not declare."""

from __future__ import annotations

from pathlib import Path

from schedc.runtime.tools.sweep import read_summary
from schedc.runtime.tools.sweep.figures import draw, planned_figures
from schedc.runtime.tools.sweep.runs import plan
from schedc.runtime.tools.sweep.spec import read_spec
from schedc.runtime.tools.sweep.tables import input_columns, result_rows, write_tables
from tests.support.sweep_specs import EASY, run_cli, write_spec

POLICY = """param starve: int in [0, 1000000] = 1h

policy starve {
  order    job.wait + starve desc
  reserve  1
  backfill first_fit
}
"""


def _planned(tmp_path: Path):
    (tmp_path / "starve.pol").write_text(POLICY, encoding="utf-8")
    spec = write_spec(tmp_path, f'policies = ["starve.pol", "{EASY}"]\n'
                      '[params]\nstarve = ["1d", "1h", "4h", 60]\n'
                      '[transforms]\nlimit = [30]\n')
    runs = plan(read_spec(str(spec)))
    # made-up results: the tables' param handling is what is tested, not the runs
    records = {r.key: {"status": "ok", "metrics": {"mean_wait": float(i),
                                                   "mean_bounded_slowdown": 1.0}}
               for i, r in enumerate(runs.runs)}
    return spec, runs, records


def test_a_duration_param_is_its_value_with_its_text_beside(tmp_path: Path) -> None:
    _, runs, records = _planned(tmp_path)
    assert "param.starve.text" in input_columns(runs)
    _, rows = result_rows(runs, records)
    mine = [r for r in rows if r["policy"] == "starve"]
    assert [r["param.starve"] for r in mine] == [60, 3600, 14400, 86400]  # by value
    assert [r["param.starve.text"] for r in mine] == ["60", "1h", "4h", "1d"]


def test_its_figure_draws_it_by_value_with_the_text_as_ticks(tmp_path: Path) -> None:
    spec, runs, records = _planned(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    write_tables(str(out), runs, records, str(spec))
    summary = read_summary(out)
    figures = planned_figures(summary, input_columns(runs))
    assert {f.x for f in figures} == {"param.starve"}
    assert all(f.group == ("policy",) for f in figures)  # not a line per label
    ax = draw(figures[0]).axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["60", "1h", "4h", "1d"]


def test_plot_sweep_takes_the_param_on_x_and_legends_leave_out_none(tmp_path: Path,
                                                                     capsys) -> None:
    import matplotlib.pyplot as plt

    spec, runs, records = _planned(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    write_tables(str(out), runs, records, str(spec))
    code, _, err = run_cli(capsys, "plot", "sweep", out, "--x", "param.starve", "--y",
                           "mean_wait", "-o", tmp_path / "s.png", "--where", "policy=starve")
    assert code == 0, err
    code, _, err = run_cli(capsys, "plot", "sweep", out, "--x", "param.starve", "--y",
                           "mean_wait", "-o", tmp_path / "t.png", "--where",
                           "param.starve=1h")  # found by its text as well as by 3600
    assert code == 0, err
    from schedc.runtime.results.plots import sweep_figure

    fig = sweep_figure(read_summary(out), "limit", "mean_wait", ["policy", "param.starve"])
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "easy" in legend and "starve, 1h" in legend
    assert not any("None" in name for name in legend)
    plt.close("all")
