"""The sweep's summary over seeds: one seed has no 95% interval (empty cells, said once in
the printed summary, no band drawn), while seeds that agree have a zero-wide one; the best
configurations are by waits and slowdown, not by utilisation; `sweep --help` prints `95%`."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

from schedc.runtime.cli import sweep as cli_sweep
from schedc.runtime.tools.sweep import read_summary
from schedc.runtime.tools.sweep.runs import plan
from schedc.runtime.tools.sweep.spec import read_spec
from schedc.runtime.tools.sweep.summary import interval
from schedc.runtime.tools.sweep.tables import write_tables
from tests.support.sweep_specs import DEPTH2, run_cli, write_spec


def test_one_value_has_no_interval_and_equal_values_a_zero_wide_one() -> None:
    assert interval([3.0]) == (3.0, None, None)
    assert interval([3.0, 3.0]) == (3.0, 3.0, 3.0)


def _written(tmp_path: Path) -> Path:
    spec = write_spec(tmp_path, f'policies = ["{DEPTH2}"]\nseeds = [0]\n'
                      "[params]\ndepth = [0, 1]\n")
    runs = plan(read_spec(str(spec)))
    # metrics by the run's depth, not its place: run keys (hence their order) hash the
    # policy file's bytes
    records = {r.key: {"status": "ok", "metrics": {
        "mean_wait": 10.0 + i, "mean_bounded_slowdown": 2.0 - i, "max_wait": 50 - i,
        "utilisation": 0.5}} for r in runs.runs for i in [dict(r.params)["depth"]]}
    out = tmp_path / "out"
    out.mkdir()
    write_tables(str(out), runs, records, str(spec))
    return out


def test_one_seed_leaves_the_interval_empty_and_says_so_once(tmp_path: Path,
                                                           capsys) -> None:
    out = _written(tmp_path)
    summary = read_summary(out)
    assert all(r["mean_wait_ci_low"] is None and r["mean_wait_ci_high"] is None
               for r in summary)
    best = cli_sweep._best(str(out))
    assert {m for m in best[0] if m != "scenario"} == {"mean_wait", "mean_bounded_slowdown",
                                                      "max_wait"}
    assert best[0]["max_wait"]["configuration"]["param.depth"] == 1  # the lowest max wait
    cli_sweep._print({"spec": "s.toml", "runs": 2, "made": 2, "stored_before": 0,
                      "failed": 0, "failed_runs": [], "best": best, "files": {}})
    printed = capsys.readouterr().out
    assert printed.count("no 95% interval") == 1 and "[" not in printed
    assert "utilisation" not in printed and "lowest max wait" in printed


def test_a_figure_of_one_seed_draws_without_a_band(tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    from schedc.runtime.results.plots import sweep_figure

    fig = sweep_figure(read_summary(_written(tmp_path)), "param.depth", "mean_wait",
                       ["policy"])
    assert fig.axes[0].get_lines()
    plt.close("all")


def test_sweep_help_prints_one_percent_sign(capsys, monkeypatch) -> None:
    monkeypatch.setattr(sys, "argv", ["schedc"])
    with contextlib.suppress(SystemExit):
        run_cli(capsys, "sweep", "--help")
    out = capsys.readouterr().out
    assert "95%" in out.replace("\n", " ") and "%%" not in out
