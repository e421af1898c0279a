"""`schedc plot run|compare|sweep`: the files it writes, its located mistakes (exit 2), and
`schedc run` starting without matplotlib."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from schedc.runtime.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
EASY, FCFS = ROOT / "examples" / "easy.pol", ROOT / "examples" / "fcfs.pol"
PNG = b"\x89PNG\r\n\x1a\n"


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_plot_run_draws_the_gantt_chart(tmp_path: Path, capsys) -> None:
    out = tmp_path / "gantt.png"
    code, stdout, err = run_cli(capsys, "plot", "run", EASY, "--limit", "200", "-o", out,
                                "--no-progress")
    assert code == 0, err
    assert out.read_bytes().startswith(PNG)
    assert stdout.splitlines() == [str(out)]


def test_plot_run_all_kinds_as_svg(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run.svg"
    code, stdout, err = run_cli(capsys, "plot", "run", EASY, "--limit", "100", "--kind", "all",
                                "-o", out)
    assert code == 0, err
    for kind in ("gantt", "utilisation", "waits"):
        assert (tmp_path / f"run-{kind}.svg").read_text().lstrip().startswith("<?xml")
    assert not out.exists()


def test_plot_run_same_bytes_twice(tmp_path: Path, capsys) -> None:
    for name in ("a.png", "b.png"):
        assert run_cli(capsys, "plot", "run", EASY, "--limit", "60", "--kind", "waits",
                       "-o", tmp_path / name)[0] == 0
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()


def test_plot_compare(tmp_path: Path, capsys) -> None:
    code, _, err = run_cli(capsys, "plot", "compare", EASY, FCFS, "--limit", "100",
                           "--kind", "metrics,categories", "-o", tmp_path / "c.png")
    assert code == 0, err
    assert (tmp_path / "c-metrics.png").read_bytes().startswith(PNG)
    assert (tmp_path / "c-categories.png").read_bytes().startswith(PNG)


@pytest.mark.parametrize(("argv", "message", "help", "caret"), [
    (["--kind", "gant"], "no figure kind `gant` for `plot run`", "did you mean `gantt`?",
     "gant"),
    (["--kind", "gantt,wait"], "no figure kind `wait`", "did you mean `waits`?", "wait"),
    (["-o", "out.pdf"], "-o out.pdf: a figure is written as .png or .svg",
     "name the file OUT.png or OUT.svg", "out.pdf"),
])
def test_plot_run_mistakes_are_located(tmp_path: Path, capsys, monkeypatch, argv, message,
                                       help, caret) -> None:
    monkeypatch.chdir(tmp_path)
    if "-o" not in argv:
        argv = [*argv, "-o", "out.png"]
    code, _, err = run_cli(capsys, "plot", "run", "p.pol", *argv)
    assert code == 2
    assert message in err and help in err and "Traceback" not in err
    lines = err.splitlines()
    source = next(line for line in lines if line.startswith("1 | "))
    marks = lines[lines.index(source) + 1]
    start = marks.index("^")
    assert source[start:start + len(caret)] == caret
    assert not list(tmp_path.iterdir())  # nothing written


def test_plot_run_missing_folder_found_before_the_run(tmp_path: Path, capsys) -> None:
    code, _, err = run_cli(capsys, "plot", "run", EASY, "-o", tmp_path / "no" / "g.png")
    assert code == 2 and "no" in err


def write_summary(folder: Path) -> None:
    folder.mkdir()
    lines = ["policy,workload,load_factor,seed_count,mean_wait_mean,mean_wait_ci_low,"
             "mean_wait_ci_high,runs"]
    for policy, extra in (("easy", 0), ("fcfs", 500)):
        for lf in (80, 100, 120):
            m = 10 * lf + extra
            lines.append(f"{policy},KTH,{lf},3,{m},{m - 40},{m + 40},3")
    (folder / "summary.csv").write_text("\n".join(lines) + "\n")


def test_plot_sweep(tmp_path: Path, capsys) -> None:
    write_summary(tmp_path / "sweep")
    out = tmp_path / "wait.svg"
    code, _, err = run_cli(capsys, "plot", "sweep", tmp_path / "sweep", "--x", "load_factor",
                           "--y", "mean_wait", "--group", "policy", "-o", out)
    assert code == 0, err
    svg = out.read_text()
    assert "easy" in svg and "fcfs" in svg


def test_plot_sweep_where_keeps_one_workload(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "sweep"
    write_summary(folder)
    with (folder / "summary.csv").open("a") as f:  # a second workload: same x, same policy
        f.write("easy,LANL,80,3,1,0,2,3\n")
    argv = ["plot", "sweep", folder, "--x", "load_factor", "--y", "mean_wait", "-o",
            tmp_path / "f.svg"]
    code, _, err = run_cli(capsys, *argv)
    assert code == 2 and "add them to the group" in err  # two lines' worth in one
    code, _, err = run_cli(capsys, *argv, "--where", "workload=KTH")
    assert code == 0, err


@pytest.mark.parametrize(("argv", "message", "help"), [
    (["--x", "load_factr", "--y", "mean_wait"], "has no input column `load_factr`",
     "did you mean `load_factor`?"),
    (["--x", "load_factor", "--y", "mean_wiat"], "has no metric `mean_wiat`",
     "did you mean `mean_wait`?"),
    (["--x", "load_factor", "--y", "mean_wait", "--group", "polcy"],
     "has no input column `polcy`", "did you mean `policy`?"),
    (["--x", "policy", "--y", "mean_wait"], "column `policy` is not a number", "numeric"),
    (["--x", "load_factor", "--y", "mean_wait", "--where", "wrkload=KTH"],
     "has no input column `wrkload`", "did you mean `workload`?"),
    (["--x", "load_factor", "--y", "mean_wait", "--where", "workload=KTX"],
     "no configuration has workload = KTX", "did you mean `KTH`?"),
    (["--x", "load_factor", "--y", "mean_wait", "--where", "workload"],
     "--where takes COLUMN=VALUE", "e.g. --where workload="),
])
def test_plot_sweep_mistakes(tmp_path: Path, capsys, argv, message, help) -> None:
    write_summary(tmp_path / "sweep")
    code, _, err = run_cli(capsys, "plot", "sweep", tmp_path / "sweep", *argv, "-o",
                           tmp_path / "f.png")
    assert code == 2
    assert message in err and help in err
    assert not (tmp_path / "f.png").exists()


def test_plot_sweep_without_a_summary(tmp_path: Path, capsys) -> None:
    code, _, err = run_cli(capsys, "plot", "sweep", tmp_path, "--x", "a", "--y", "b", "-o",
                           tmp_path / "f.png")
    assert code == 2 and "sweep summary file not found" in err


def test_limit_runs_the_first_jobs(capsys) -> None:
    code, out, err = run_cli(capsys, "run", EASY, "--limit", "25", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["metrics"]["jobs"] == 25 and data["provenance"]["options"]["limit"] == 25


@pytest.mark.parametrize("value", ["0", "-3", "x"])
def test_limit_must_be_positive(capsys, value) -> None:
    code, _, err = run_cli(capsys, "run", EASY, "--limit", value)
    assert code == 2 and "--limit" in err


def test_run_does_not_import_matplotlib(tmp_path: Path) -> None:
    code = ("import sys; from schedc.runtime.cli.main import main; "
            f"status = main(['run', {str(EASY)!r}, '--limit', '30', '--no-progress', "
            f"'--jobs-out', {str(tmp_path / 'j.csv')!r}]); "
            "print(status, 'matplotlib' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split()[-2:] == ["0", "False"], done.stderr


def test_plot_run_of_a_state(tmp_path: Path, capsys) -> None:
    state = {"now": 2, "capacity": {"cpus": 10},
             "running": [{"id": 1, "submit": 0, "start": 0, "estimate": 100, "run_time": 100,
                          "request": {"cpus": 6}}],
             "queue": [{"id": 2, "submit": 1, "estimate": 100, "run_time": 100,
                        "request": {"cpus": 10}}]}
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state))
    code, _, err = run_cli(capsys, "plot", "run", EASY, "--state", path, "-o",
                           tmp_path / "g.svg")
    assert code == 0, err
    assert (tmp_path / "g.svg").read_text().count("<path") > 2
    code, _, err = run_cli(capsys, "plot", "run", EASY, "--state", path, "--limit", "1",
                           "-o", tmp_path / "h.svg")
    assert code == 2 and "--limit does not apply with --state" in err


def test_plot_run_draws_a_time_window_of_the_gantt_chart(tmp_path: Path, capsys,
                                                         monkeypatch) -> None:
    from schedc.runtime.results.plots import run as run_plots

    drawn = []
    gantt = run_plots.gantt_figure

    def kept(result, window=(None, None)):
        drawn.append(fig := gantt(result, window=window))
        return fig

    monkeypatch.setattr(run_plots, "gantt_figure", kept)
    out = tmp_path / "gantt.png"
    code, _, err = run_cli(capsys, "plot", "run", EASY, "--limit", "500", "--from", "1d",
                           "--to", "36h", "-o", out)
    assert code == 0, err
    ax = drawn[0].axes[0]
    assert ax.get_xlim() == (24.0, 36.0) and "(hours)" in ax.get_xlabel()
    assert "from 1.0 d to 1.5 d" in ax.get_title()
    # only the jobs that run in the window are drawn
    whole = gantt(_easy_500())
    assert len(ax.collections[0].get_paths()) < len(whole.axes[0].collections[0].get_paths())


def _easy_500():
    from schedc.runtime.run import RunOptions, run_policy

    return run_policy(EASY, None, RunOptions(limit=500))


@pytest.mark.parametrize(("argv", "message"), [
    (["--from", "2d", "--to", "1d"], "--from 172800 s is not before --to 86400 s"),
    (["--from", "1x"], "'1x' is not a time"),
    (["--from", "1d", "--kind", "waits"], "--from and --to choose the Gantt chart's"),
])
def test_plot_run_refuses_a_window_that_is_not_one(tmp_path: Path, capsys, argv,
                                                   message) -> None:
    code, _, err = run_cli(capsys, "plot", "run", EASY, "--limit", "50", *argv, "-o",
                           tmp_path / "g.png")
    assert code == 2 and message in err
