"""The `schedc` command line: every command, every user-error path, exit statuses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from schedc.runtime.cli.main import bundled_trace, main
from schedc.runtime.results.provenance import read_csv
from tests.support.repo import ROOT
from tests.support.tiny_traces import THREE_JOBS_SWF

EXAMPLES = ROOT / "examples"

# DESIGN.md's 3-job case: 10 processors; 6 procs/100 s, 10/100 s, 4/1000 s at t=0, 1, 2.


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# --- run ------------------------------------------------------------------------------------


def test_run_json_on_design_example(capsys, three_jobs: Path, tmp_path: Path) -> None:
    jobs_csv = tmp_path / "jobs.csv"
    code, out, err = run_cli(capsys, "run", EXAMPLES / "easy.pol", "--workload", three_jobs,
                             "--json", "--jobs-out", jobs_csv)
    assert code == 0, err
    result = json.loads(out)
    assert result["policy"] == "easy"
    assert result["machine"] == {"cpus": 10}
    assert result["metrics"]["jobs"] == 3
    header, rows = read_csv(jobs_csv)
    assert header.pop("capacity") == {"cpus": 10}
    assert header == result["provenance"]
    starts = {int(r["job_id"]): int(r["start"]) for r in rows}
    # The head (job 2) is reserved at t=100; the 4-proc job would delay it, so it waits.
    assert starts == {1: 0, 2: 100, 3: 200}
    assert list(rows[0])[:5] == ["job_id", "submit", "start", "end", "procs"]


def test_run_prints_table(capsys, three_jobs: Path) -> None:
    code, out, _ = run_cli(capsys, "run", EXAMPLES / "fcfs.pol", "--workload", three_jobs)
    assert code == 0
    assert "fcfs" in out and "three.swf" in out


def test_run_default_workload_is_bundled_kth() -> None:
    assert bundled_trace().name == "KTH-SP2-1996-2.1-cln.swf.gz"
    assert bundled_trace().exists()


def test_run_swf_out_round_trips(capsys, three_jobs: Path, tmp_path: Path) -> None:
    out_swf = tmp_path / "out.swf"
    code, _, err = run_cli(capsys, "run", EXAMPLES / "easy.pol", "--workload", three_jobs,
                           "--swf-out", out_swf, "--json")
    assert code == 0, err
    # The written schedule is itself a valid workload: replaying it works.
    code, out, err = run_cli(capsys, "run", EXAMPLES / "fcfs.pol", "--workload", out_swf,
                             "--json")
    assert code == 0, err
    assert json.loads(out)["metrics"]["jobs"] == 3


def test_run_is_deterministic(capsys, three_jobs: Path) -> None:
    first = run_cli(capsys, "run", EXAMPLES / "easy.pol", "--workload", three_jobs, "--json")
    second = run_cli(capsys, "run", EXAMPLES / "easy.pol", "--workload", three_jobs, "--json")
    assert first == second


def test_run_with_param_override(capsys, three_jobs: Path) -> None:
    code, out, err = run_cli(capsys, "run", EXAMPLES / "depth2.pol", "--workload", three_jobs,
                             "--param", "depth=0", "--json")
    assert code == 0, err
    # depth 0 with first fit: the 4-proc job starts at once (nothing protects the head).
    assert json.loads(out)["metrics"]["jobs"] == 3


def test_run_capacity_override(capsys, three_jobs: Path) -> None:
    code, out, err = run_cli(capsys, "run", EXAMPLES / "easy.pol", "--workload", three_jobs,
                             "--capacity", "cpus=20", "--json")
    assert code == 0, err
    assert json.loads(out)["machine"] == {"cpus": 20}


def test_compare_one_row_per_policy(capsys, three_jobs: Path, tmp_path: Path) -> None:
    table = tmp_path / "cmp.csv"
    code, out, err = run_cli(capsys, "compare", EXAMPLES / "fcfs.pol", EXAMPLES / "easy.pol",
                             EXAMPLES / "conservative.pol", "--workload", three_jobs, "--csv",
                             table, "--json")
    assert code == 0, err
    names = [p["policy"] for p in json.loads(out)["policies"]]
    assert names == ["fcfs", "easy", "conservative"]
    header, rows = read_csv(table)
    assert [r["policy"] for r in rows] == ["fcfs", "easy", "conservative"]
    assert header["runs"][1]["policy"]["name"] == "easy"


def test_compile_emits_json(capsys, tmp_path: Path) -> None:
    code, out, _ = run_cli(capsys, "compile", EXAMPLES / "easy-sjf.pol", "--emit", "json")
    assert code == 0
    ir = json.loads(out)
    assert ir["name"] == "easy_sjf"
    target = tmp_path / "ir.json"
    code, _, _ = run_cli(capsys, "compile", EXAMPLES / "easy-sjf.pol", "-o", target)
    assert code == 0
    assert json.loads(target.read_text()) == ir


def test_check_examples(capsys) -> None:
    files = sorted(EXAMPLES.glob("*.pol"))
    code, out, err = run_cli(capsys, "check", *files)
    assert code == 0, err
    assert out.count("ok: ") == len(files)


def test_version(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.startswith("schedc ")


def test_console_script_help_on_every_command() -> None:
    for command in ([], ["check"], ["compile"], ["run"], ["compare"]):
        done = subprocess.run([sys.executable, "-m", "schedc.runtime.cli.main", *command, "--help"],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert "usage: schedc" in done.stdout


# --- user errors: exit 2, a message, never a traceback -------------------------------------


def assert_user_error(code: int, err: str, *fragments: str) -> None:
    assert code == 2
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, err


def test_missing_policy_file(capsys) -> None:
    code, _, err = run_cli(capsys, "run", "nope.pol")
    assert_user_error(code, err, "policy file not found: nope.pol", "help:")


def test_policy_path_is_directory(capsys, tmp_path: Path) -> None:
    code, _, err = run_cli(capsys, "check", tmp_path)
    assert_user_error(code, err, "is a directory")


@pytest.mark.parametrize("command", ["check", "run", "verify"])
def test_a_policy_file_that_is_not_utf8_is_located(capsys, tmp_path: Path,
                                                   command: str) -> None:
    path = tmp_path / "latin1.pol"
    path.write_bytes("policy p {\n  order job.submit asc // café\n}\n".encode("latin-1"))
    code, _, err = run_cli(capsys, command, path)
    assert_user_error(code, err, f"{path}:2:30", "is not UTF-8 text: byte 0xe9",
                      "help: save the policy file as UTF-8")


def test_an_imported_file_that_is_not_utf8_is_located(capsys, tmp_path: Path) -> None:
    (tmp_path / "lib.pol").write_bytes(b"def d = 1 // \xff\n")
    (tmp_path / "main.pol").write_text('import "lib.pol"\npolicy p { order d asc }\n')
    code, _, err = run_cli(capsys, "check", tmp_path / "main.pol")
    assert_user_error(code, err, f"{tmp_path / 'lib.pol'}:1:14", "is not UTF-8 text")


def test_missing_workload(capsys) -> None:
    code, _, err = run_cli(capsys, "run", EXAMPLES / "easy.pol", "--workload", "none.swf")
    assert_user_error(code, err, "workload file not found: none.swf")


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("cpus", "is not of the form NAME=VALUE"),
        ("cpus=many", "must be a whole number"),
        ("cpus=0", "must be at least 1"),
        ("cpu=10", "did you mean `cpus`?"),
    ],
)
def test_bad_capacity(capsys, three_jobs: Path, flag: str, message: str) -> None:
    code, _, err = run_cli(capsys, "run", EXAMPLES / "easy.pol", "--workload", three_jobs,
                           "--capacity", flag)
    assert_user_error(code, err, message)


@pytest.mark.parametrize("flag", ["depth", "depth=-1", "depth=1.5", "dpth=1"])
def test_bad_param(capsys, three_jobs: Path, flag: str) -> None:
    code, _, err = run_cli(capsys, "run", EXAMPLES / "depth2.pol", "--workload", three_jobs,
                           "--param", flag)
    assert_user_error(code, err)
    assert "depth" in err or "dpth" in err


def test_syntax_error_has_location_and_caret(capsys, tmp_path: Path) -> None:
    bad = write(tmp_path, "bad.pol", "policy p {\n  order job.submit asc\n  reserve @\n}\n")
    code, _, err = run_cli(capsys, "check", bad)
    assert_user_error(code, err, f"{bad}:3:11", "reserve @", "^")


def test_check_reports_all_errors_of_all_files(capsys, tmp_path: Path) -> None:
    one = write(tmp_path, "one.pol", "policy p {\n  order job.sumbit\n  size job.runtime\n}\n")
    two = write(tmp_path, "two.pol", "policy q {\n  reserve al\n}\n")
    code, _, err = run_cli(capsys, "check", one, two)
    assert_user_error(code, err, "one.pol:2:", "one.pol:3:", "two.pol:2:",
                      "did you mean `submit`?")


def test_several_policies_need_policy_flag(capsys, tmp_path: Path, three_jobs: Path) -> None:
    both = write(tmp_path, "both.pol", "policy a { reserve 0 }\npolicy b { reserve 1 }\n")
    code, _, err = run_cli(capsys, "run", both, "--workload", three_jobs)
    assert_user_error(code, err, "--policy")
    code, _, err = run_cli(capsys, "run", both, "--workload", three_jobs, "--policy", "c")
    assert_user_error(code, err)
    code, _, err = run_cli(capsys, "run", both, "--workload", three_jobs, "--policy", "b",
                           "--json")
    assert code == 0, err


def test_malformed_swf_line_strict_and_lenient(capsys, tmp_path: Path) -> None:
    trace = write(tmp_path, "bad.swf", THREE_JOBS_SWF + "4 3 -1 oops 4 -1 -1 4 10 -1 1 1 1 1 1"
                  " -1 -1 -1\n")
    code, _, err = run_cli(capsys, "run", EXAMPLES / "easy.pol", "--workload", trace)
    assert_user_error(code, err, "bad.swf:5:")
    code, out, err = run_cli(capsys, "run", EXAMPLES / "easy.pol", "--workload", trace,
                             "--lenient", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["metrics"]["jobs"] == 3
    assert sum(result["skipped"].values()) == 1


def test_unknown_workload_format(capsys, tmp_path: Path) -> None:
    trace = write(tmp_path, "jobs.txt", "hello\n")
    code, _, err = run_cli(capsys, "run", EXAMPLES / "easy.pol", "--workload", trace)
    assert_user_error(code, err, "jobs.txt")


def test_unwritable_output_is_a_user_error(capsys, three_jobs: Path, tmp_path: Path) -> None:
    target = tmp_path / "missing-dir" / "jobs.csv"
    code, _, err = run_cli(capsys, "run", EXAMPLES / "easy.pol", "--workload", three_jobs,
                           "--jobs-out", target)
    assert_user_error(code, err)
    assert not target.exists()


def test_unknown_command_exits_2() -> None:
    assert main(["frobnicate"]) == 2  # a diagnostic, not argparse's exit (test_usage.py)


def test_violated_invariant_stops_the_run(capsys, tmp_path: Path, three_jobs: Path) -> None:
    small = write(tmp_path, "small.pol",
                  "policy small {\n  reserve 1\n  backfill first_fit\n"
                  "  invariant job.procs <= 6\n}\n")
    code, _, err = run_cli(capsys, "run", small, "--workload", three_jobs)
    assert code == 1
    assert "invariant" in err and "Traceback" not in err


def test_progress_bar_on_a_terminal(capsys, monkeypatch, three_jobs: Path) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    code, out, err = run_cli(capsys, "run", EXAMPLES / "easy.pol", "--workload", three_jobs)
    assert code == 0, err
    assert "jobs ended" in err and "Traceback" not in err
