"""Output options (`--jobs-out`, `--swf-out`, `--csv`, `-o`): checked before any work, written
through links, streamed to `-`, pipes and devices, and a failed write loses no metrics."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from schedc.runtime.cli.main import main
from tests.support.repo import EXAMPLES

EASY = str(EXAMPLES / "easy.pol")


def test_a_bad_output_path_is_reported_before_the_run(tmp_path: Path, capsys,
                                                      monkeypatch) -> None:
    from schedc.runtime import run

    def never(*args, **kwargs):
        raise AssertionError("the run started")

    monkeypatch.setattr(run, "run_policy", never)
    target = tmp_path / "missing" / "jobs.csv"
    assert main(["run", EASY, "--jobs-out", str(target)]) == 2
    err = capsys.readouterr().err
    assert f"cannot write {target}: the folder {target.parent} does not exist" in err
    assert "help: create the folder first" in err


@pytest.mark.parametrize("command", [
    ["compare", EASY, EASY, "--csv"], ["compile", EASY, "-o"], ["verify", EASY, "-o"],
    ["workload", "generate", "--utilisation", "0.5", "-o"],
    ["workload", "kresource", "--resources", "2", "--jobs", "10", "--mean-interarrival", "10",
     "-o"]])
def test_every_output_option_is_checked_first(tmp_path: Path, capsys, command) -> None:
    assert main([*command, str(tmp_path)]) == 2  # a directory
    assert f"cannot write {tmp_path}: it is a directory" in capsys.readouterr().err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_failed_write_still_prints_the_metrics(three_jobs: Path, capsys) -> None:
    assert main(["run", EASY, "--workload", str(three_jobs), "--json",
                 "--jobs-out", "/dev/full"]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out)["metrics"]["jobs"] == 3
    assert "cannot write /dev/full: no space left on device" in err
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_dash_streams_the_jobs_and_moves_the_table_to_stderr(three_jobs: Path, capsys,
                                                              tmp_path: Path,
                                                              monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["run", EASY, "--workload", str(three_jobs), "--jobs-out", "-"]) == 0
    out, err = capsys.readouterr()
    table = [line for line in out.splitlines() if not line.startswith("# ")]
    assert out.startswith("# schedc: ") and table[0].startswith("job_id,submit,start,end")
    assert len(table) == 4
    assert "mean wait" in err
    assert not (tmp_path / "-").exists()


def test_a_symlinked_output_stays_a_link(three_jobs: Path, tmp_path: Path) -> None:
    real, link = tmp_path / "schedule.swf", tmp_path / "latest.swf"
    link.symlink_to(real)
    assert main(["run", EASY, "--workload", str(three_jobs), "--json",
                 "--swf-out", str(link)]) == 0
    assert link.is_symlink() and real.read_text().count("\n") >= 3


@pytest.mark.parametrize("flags, message", [
    (["--jobs-out", "-", "--json"], "--jobs-out - and --json both write to standard output"),
    (["--jobs-out", "-", "--swf-out", "-"],
     "--jobs-out and --swf-out both write to standard output")])
def test_two_outputs_on_stdout_are_refused(three_jobs: Path, capsys, flags, message) -> None:
    assert main(["run", EASY, "--workload", str(three_jobs), *flags]) == 2
    assert message in capsys.readouterr().err


def test_a_generated_table_on_stdout_keeps_its_summary_apart(capsys) -> None:
    assert main(["workload", "generate", "--utilisation", "0.5", "--jobs", "5",
                 "-o", "-"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("#") or out.startswith("id,")
    assert "wrote 5 jobs to -" in err


def test_a_counterexamples_folder_that_is_a_file_is_refused_first(tmp_path: Path,
                                                                  capsys) -> None:
    file = tmp_path / "cex"
    file.write_text("")
    assert main(["verify", EASY, "--counterexamples", str(file)]) == 2
    assert "it is a file, not a folder" in capsys.readouterr().err


def test_an_internal_error_is_one_line_with_its_own_status(monkeypatch, capsys) -> None:
    from schedc.runtime.cli import main as cli_main

    def broken(args):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setitem(cli_main.COMMANDS, "check", broken)
    monkeypatch.delenv("SCHEDC_DEBUG", raising=False)
    assert main(["check", EASY]) == 70
    err = capsys.readouterr().err
    assert err.startswith("internal error: ZeroDivisionError: division by zero\n")
    assert "Traceback" not in err and "please report it" in err


@pytest.mark.parametrize("argv", [
    ["run", "{easy}", "--workload", "{trace}"],  # rich's table
    ["run", "{easy}", "--workload", "{trace}", "--json"],  # print
    ["run", "{easy}", "--workload", "{trace}", "--jobs-out", "-"],  # the CSV writer
    ["verify", "{easy}", "--queued", "2", "--running", "1"],  # the verdicts' tables
])
def test_a_closed_standard_output_ends_quietly_with_141(argv, three_jobs: Path) -> None:
    """`schedc ... | head -1`: once the reader is gone, exit 141 (128 + SIGPIPE) and say
    nothing; rich on its own would exit 1, which means "the monitor stopped the run"."""
    read, write = os.pipe()
    os.close(read)  # the reader has gone before the first write: deterministic
    words = [w.format(easy=EXAMPLES / "easy.pol", trace=three_jobs) for w in argv]
    try:
        done = subprocess.run([sys.executable, "-m", "schedc.runtime.cli.main", *words],
                              stdout=write, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write)
    assert done.returncode == 141, done.stderr
    # nothing said of it (with `--jobs-out -` the table goes to standard error, as always)
    assert "error" not in done.stderr and "Traceback" not in done.stderr
    assert done.stderr == "" or "--jobs-out" in argv
