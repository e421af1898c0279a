"""`--report FILE.html` on run, compare and verify: the page written whole after the work,
its path checked before it, `-` refused, every mistake a one-line message and exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from schedc.runtime.cli.main import main
from tests.support.repo import EXAMPLES, ROOT

EASY = str(EXAMPLES / "easy.pol")
FCFS = str(EXAMPLES / "fcfs.pol")
BROKEN = "examples/broken/easy-freeprocs.pol"  # reservation-safety violated

COMMANDS = {"run": ["run", EASY], "compare": ["compare", EASY, FCFS],
            "verify": ["verify", EASY, "--property", "capacity"]}


def _never(*args, **kwargs):
    raise AssertionError("the work started")


@pytest.fixture
def no_work(monkeypatch):
    """Any simulation or proof fails the test: the path must be refused before."""
    from schedc.dsl.verify import prover
    from schedc.runtime import run

    monkeypatch.setattr(run, "run_policy", _never)
    monkeypatch.setattr(run, "prepare_run", _never)
    monkeypatch.setattr(prover, "verify_policy", _never)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_directory_is_refused_before_the_work(command, tmp_path: Path, capsys,
                                                no_work) -> None:
    assert main([*COMMANDS[command], "--report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[0] == f"error: cannot write {tmp_path}: it is a directory"
    assert "help: give a file name inside it" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("command", COMMANDS)
def test_dash_is_refused(command, capsys, no_work) -> None:
    assert main([*COMMANDS[command], "--report", "-"]) == 2
    err = capsys.readouterr().err
    assert "--report -: the page is written to a file, not to standard output" in err
    assert "help: give a file name, e.g. --report report.html" in err


def test_a_folder_that_is_a_file_is_refused(tmp_path: Path, capsys, no_work) -> None:
    (tmp_path / "notes").write_text("x")
    target = tmp_path / "notes" / "r.html"
    assert main(["run", EASY, "--report", str(target)]) == 2
    assert f"cannot write {target}: the folder" in capsys.readouterr().err


def test_an_unwritable_place_loses_no_metrics_and_leaves_nothing(three_jobs: Path) -> None:
    """As root the folder passes the check and the write itself fails after the run (as
    another user the check refuses it first): either way exit 2, one message, no file."""
    target = "/sys/schedc-report.html"
    done = subprocess.run([sys.executable, "-m", "schedc.runtime.cli", "run", EASY,
                           "--workload", str(three_jobs), "--json", "--report", target],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert f"error: cannot write {target}: " in done.stderr
    assert "Traceback" not in done.stderr
    assert not Path(target).exists()
    if done.stdout:  # the run happened: its metrics were printed first
        assert json.loads(done.stdout)["metrics"]["jobs"] == 3


def test_run_report_with_json(three_jobs: Path, tmp_path: Path, capsys) -> None:
    target = tmp_path / "run.html"
    assert main(["run", EASY, "--workload", str(three_jobs), "--json", "--report",
                 str(target)]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["jobs"] == 3
    page = target.read_text()
    assert "<title>easy on three.swf (cpus=10)</title>" in page
    assert "<td>jobs simulated</td><td class=num>3</td>" in page
    assert "Mean response per area category" in page
    assert "<dt>command</dt>" in page and "--report" in page
    assert page.count("<svg") == 3  # Gantt, utilisation and queue, waits
    assert not list(tmp_path.glob(".run.html.*"))  # no temporary file left


def test_run_report_is_the_same_bytes_twice(three_jobs: Path, tmp_path: Path) -> None:
    pages = []
    for name in ("a.html", "b.html"):
        assert main(["run", EASY, "--workload", str(three_jobs), "--report",
                     str(tmp_path / name), "--json"]) == 0
        pages.append((tmp_path / name).read_text().replace(name, "X.html"))
    assert pages[0] == pages[1]


def test_compare_report(three_jobs: Path, tmp_path: Path, capsys) -> None:
    target = tmp_path / "compare.html"
    assert main(["compare", EASY, FCFS, "--workload", str(three_jobs), "--report",
                 str(target)]) == 0
    page = target.read_text()
    rows = {m for m in ("<td>easy</td>", "<td>fcfs</td>") if m in page}
    assert len(rows) == 2
    assert "<h3>Shared by every run</h3>" in page
    assert "<svg" in page


def test_verify_report_shows_the_counterexample_and_replays_it(tmp_path: Path,
                                                              monkeypatch, capsys) -> None:
    monkeypatch.chdir(ROOT)
    target, folder = tmp_path / "verify.html", tmp_path / "cex"
    assert main(["verify", BROKEN, "--report", str(target), "--counterexamples",
                 str(folder), "--format", "json"]) == 1
    verdicts = json.loads(capsys.readouterr().out)[0]["verdicts"]
    page = target.read_text()
    for v in verdicts:
        assert f'<td>{v["property"]}</td><td class="s-{v["status"]}">' in page
    assert "<h3>reservation-safety: <span class=\"s-violated\">violated</span></h3>" in page
    assert "the simulator's monitor on replay: <code>t=0: policy easy_freeprocs: " \
           "reservation of job 0 at t=1 delayed" in page
    state = folder / "easy-freeprocs.reservation-safety.json"
    assert f"written to <code>{state}</code>" in page
    command = f"schedc run {BROKEN} --state {state}"
    assert f"replay: <code>{command}</code>" in page
    assert "<li>the machine is not overcommitted before the pass</li>" in page  # assumptions
    # the command the page gives replays the violation
    assert main(command.split()[1:]) == 1
    assert "reservation of job 0 at t=1 delayed" in capsys.readouterr().err


def test_verify_report_without_a_folder_says_how_to_save_the_state(tmp_path: Path,
                                                                   monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    target = tmp_path / "verify.html"
    assert main(["verify", BROKEN, "--report", str(target), "--property",
                 "reservation-safety"]) == 1
    page = target.read_text()
    assert "written to" not in page
    assert f"schedc run {BROKEN} --state STATE.json" in page


def test_without_report_no_page_or_plot_module_is_imported(three_jobs: Path) -> None:
    code = ("import sys\nfrom schedc.runtime.cli.main import main\n"
            f"main(['run', {EASY!r}, '--workload', {str(three_jobs)!r}, '--json'])\n"
            "print(sorted(m for m in sys.modules if m.startswith(('matplotlib', "
            "'schedc.runtime.results.plots', 'schedc.runtime.results.html_report'))))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"
