"""`schedc workload info`: a workload's facts, as a table and as JSON, computed by hand here on
small files; the work it says a mode simulates is the one `run --json` reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedc.runtime.cli.main import main
from tests.support.repo import ROOT

# On 8 cpus (MaxProcs). Fields: id submit wait run procs cpu mem req_procs req_time req_mem
# status user group executable queue partition preceding think.
#   1: t=0,    2 cpus, ran 100 s of 200 requested     run/estimate 0.5
#   2: t=10,   4 cpus, ran 300 s of 100 requested     over its estimate: 3.0, 800 cpu-s past
#   3: t=20,   1 cpu,  ran 50 s, no requested time    its estimate is its run time
#   4: t=3600, 1 cpu,  ran 40 s of 80 requested       run/estimate 0.5
#   5: 16 cpus > 8: skipped; 6: run time -5: skipped
# Users 3, 3, -1, 7 (two); queue 1 for all; no group, executable or partition.
SWF = """\
; Version: 2.2
; MaxProcs: 8
1 0 -1 100 2 -1 -1 2 200 -1 1 3 -1 -1 1 -1 -1 -1
2 10 -1 300 4 -1 -1 4 100 -1 1 3 -1 -1 1 -1 -1 -1
3 20 -1 50 1 -1 -1 1 -1 -1 1 -1 -1 -1 1 -1 -1 -1
4 3600 -1 40 1 -1 -1 1 80 -1 1 7 -1 -1 1 -1 -1 -1
5 3700 -1 40 16 -1 -1 16 80 -1 1 7 -1 -1 1 -1 -1 -1
6 3800 -1 -5 1 -1 -1 1 80 -1 1 7 -1 -1 1 -1 -1 -1
"""
RECORDED = 2 * 100 + 4 * 300 + 1 * 50 + 1 * 40  # 1490 cpu-s
CAPPED = 2 * 100 + 4 * 100 + 1 * 50 + 1 * 40  # 690: job 2 ends at its 100 s
SPAN = 3600


def run_cli(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    path = tmp_path / "small.swf"
    path.write_text(SWF)
    return path


def info_json(capsys, *argv: object) -> dict:
    code, out, err = run_cli(capsys, "workload", "info", *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def test_the_json_facts_of_a_small_trace(capsys, trace: Path) -> None:
    facts = info_json(capsys, trace)
    assert list(facts) == ["workload", "format", "jobs", "skipped", "skipped_total",
                           "partial_executions", "time_unit", "machine", "time",
                           "offered_load", "work", "overrun", "estimates", "sizes", "labels",
                           "missing"]
    assert facts["workload"] == str(trace)
    assert facts["format"] == "swf"
    assert facts["jobs"] == 4
    assert facts["skipped"] == {"cpus request > capacity": 1, "run time < 0": 1}
    assert facts["skipped_total"] == 2
    assert facts["partial_executions"] == {"jobs": 0, "parts": 0, "jobs_without_last_part": 0}
    assert facts["time_unit"] == "1"
    assert facts["machine"] == {"cpus": {"capacity": 8, "source": "header MaxProcs"}}
    assert facts["time"] == {"first_submit": 0, "last_submit": 3600, "span_seconds": 3600,
                             "span_days": round(3600 / 86400, 6)}
    assert facts["offered_load"] == {"recorded": round(RECORDED / (8 * SPAN), 6),
                                     "capped_at_estimate": round(CAPPED / (8 * SPAN), 6)}
    assert facts["work"] == {"recorded": 1490, "capped_at_estimate": 690, "simulated": 1490,
                             "mode": "estimate"}
    assert facts["overrun"] == {
        "mode": "estimate", "jobs_over_estimate": 1, "share_of_jobs": 0.25,
        "work_past_estimates": 800, "recorded_work": 1490,
        "share_of_work": round(800 / 1490, 6), "median_run_over_estimate": 3.0,
        "p90_run_over_estimate": 3.0, "jobs_without_requested_time": 1,
        "jobs_killed_at_estimate": 0, "work_simulated": 1490}
    # jobs 1, 2, 4 (3 has no request): 0.5, 0.5, 3.0; nearest rank ceil(q n)
    assert facts["estimates"] == {
        "jobs_with_requested_time": 3, "jobs_without_requested_time": 1,
        "run_over_estimate": {"p10": 0.5, "p25": 0.5, "p50": 0.5, "p75": 3.0, "p90": 3.0}}
    assert facts["sizes"] == {"min": 1, "median": 1.5, "max": 4, "distinct": 3,
                              "serial_share": 0.5}
    assert facts["labels"] == {"user": 2, "group": 0, "executable": 0, "queue": 1,
                               "partition": 0}
    assert facts["missing"] == {"fields": ["group", "executable", "partition"],
                                "jobs_without_requested_time": 1, "jobs_requesting_none": {}}


@pytest.mark.parametrize(("mode", "work", "killed"),
                         [("estimate", RECORDED, 0), ("extend", RECORDED, 0),
                          ("kill", CAPPED, 1)])
def test_the_work_a_mode_simulates_is_the_runs(capsys, trace: Path, mode: str, work: int,
                                               killed: int) -> None:
    """The work `info` announces for a mode is what a rigid run in that mode simulates:
    `run --json`'s whole "overrun" object, work_simulated included, is `info`'s."""
    facts = info_json(capsys, trace, "--overrun", mode)
    assert facts["work"]["simulated"] == work
    assert facts["overrun"]["jobs_killed_at_estimate"] == killed
    code, out, err = run_cli(capsys, "run", ROOT / "examples" / "fcfs.pol", "--workload", trace,
                             "--overrun", mode, "--json", "--no-progress")
    assert code == 0, err
    ran = json.loads(out)["overrun"]
    assert ran["work_simulated"] == facts["overrun"]["work_simulated"] == work
    assert ran == facts["overrun"]


def test_the_table(capsys, trace: Path) -> None:
    code, out, err = run_cli(capsys, "workload", "info", trace, "--overrun", "kill")
    assert code == 0, err
    assert "small.swf: 4 jobs (--overrun kill)" in out
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip()
            for line in out.splitlines() if line.count("│") == 3}
    assert rows["jobs read"] == "4"
    assert rows["skipped: cpus request > capacity"] == "1"
    assert rows["skipped: run time < 0"] == "1"
    assert rows["capacity of cpus"] == "8 (header MaxProcs)"
    assert rows["span of submissions"] == "3,600 s (0.04167 days)"
    assert rows["offered load, recorded run times"] == "0.05174"
    assert rows["offered load, run times capped at estimates"] == "0.02396"
    assert rows["work simulated, --overrun kill (cpus x s)"] == "690"
    assert rows["jobs over their estimate"] == "1 (25.0% of jobs, 53.7% of work)"
    assert rows["run/estimate of those: median, p90"] == "3, 3"
    assert rows["jobs without a requested time"] == "1"
    assert rows["run/estimate of jobs with one: p10, p25, p50, p75, p90"] == "0.5, 0.5, 0.5, 3, 3"
    assert rows["jobs --overrun kill ends at their estimate"] == "1"
    assert rows["cpus requested: min, median, max"] == "1, 1.5, 4"
    assert rows["serial jobs"] == "50.0%"
    assert rows["distinct users"] == "2"
    assert rows["fields missing"] == "group, executable, partition"
    assert rows["memory"] == "not read (--resources cpus,memory)"


def test_the_output_is_the_same_bytes_each_time(capsys, trace: Path) -> None:
    first = run_cli(capsys, "workload", "info", trace, "--json")
    assert run_cli(capsys, "workload", "info", trace, "--json") == first
    table = run_cli(capsys, "workload", "info", trace)
    assert run_cli(capsys, "workload", "info", trace) == table


def test_a_job_table_with_its_capacity_line_and_names(capsys, tmp_path: Path) -> None:
    path = tmp_path / "jobs.csv"
    path.write_text("# capacity cpus=16\n"
                    "id,submit,run_time,estimate,cpus,user\n"
                    "1,0,60,120,4,alice\n"
                    "2,100,240,120,16,bob\n"
                    "3,200,30,0,1,alice\n")
    facts = info_json(capsys, path, "--overrun", "kill")
    assert facts["format"] == "csv"
    assert facts["machine"] == {"cpus": {"capacity": 16, "source": "# capacity line"}}
    assert facts["labels"]["user"] == 2
    assert facts["time"]["span_seconds"] == 200
    # 4 x 60 + 16 x 240 + 1 x 30 recorded; job 2 killed at 120
    assert facts["work"] == {"recorded": 4110, "capped_at_estimate": 2190, "simulated": 2190,
                             "mode": "kill"}
    assert facts["offered_load"]["recorded"] == round(4110 / (16 * 200), 6)
    assert facts["estimates"]["run_over_estimate"]["p50"] == 0.5  # 0.5, 2.0
    assert facts["missing"]["fields"] == ["group", "executable", "queue", "partition"]
    again = info_json(capsys, path, "--capacity", "cpus=8")  # the command line wins
    assert again["machine"] == {"cpus": {"capacity": 8, "source": "--capacity"}}
    assert again["skipped"] == {"cpus request > capacity": 1}


def test_memory_read_as_a_resource(capsys, trace: Path) -> None:
    facts = info_json(capsys, trace, "--resources", "cpus,memory", "--capacity", "memory=64")
    assert facts["machine"]["memory"] == {"capacity": 64, "source": "--capacity"}
    assert facts["missing"]["jobs_requesting_none"] == {"memory": 4}
    assert facts["missing"]["fields"][-1] == "memory"


def test_a_workload_of_no_job(capsys, tmp_path: Path) -> None:
    path = tmp_path / "none.swf"
    path.write_text("; MaxNodes: 4\n1 0 -1 10 9 -1 -1 9 10 -1 1 -1 -1 -1 -1 -1 -1 -1\n")
    facts = info_json(capsys, path)
    assert facts["jobs"] == 0
    assert facts["machine"] == {"cpus": {"capacity": 4, "source": "header MaxNodes"}}
    assert facts["time"] == {"first_submit": None, "last_submit": None, "span_seconds": None,
                             "span_days": None}
    assert facts["offered_load"] == {"recorded": None, "capped_at_estimate": None}
    assert facts["sizes"]["median"] is None
    code, out, err = run_cli(capsys, "workload", "info", path)
    assert code == 0, err
    assert "none.swf: 0 jobs" in out


def assert_user_error(code: int, err: str, *fragments: str) -> None:
    assert code == 2
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, err


def test_a_missing_file(capsys, tmp_path: Path) -> None:
    code, out, err = run_cli(capsys, "workload", "info", tmp_path / "nope.swf")
    assert out == ""
    assert_user_error(code, err, f"workload file not found: {tmp_path / 'nope.swf'}", "help:")


def test_a_bad_line_is_located(capsys, tmp_path: Path) -> None:
    path = tmp_path / "bad.swf"
    path.write_text("; MaxProcs: 8\n1 0 -1 x 2 -1 -1 2 200 -1 1 3 -1 -1 1 -1 -1 -1\n")
    code, out, err = run_cli(capsys, "workload", "info", path)
    assert out == ""
    assert_user_error(code, err, f"{path}:2:", "field 4 is not an integer", "--lenient")
    facts = info_json(capsys, path, "--lenient")
    assert facts["skipped"] == {"malformed line": 1}


def test_a_table_without_capacity(capsys, tmp_path: Path) -> None:
    path = tmp_path / "jobs.csv"
    path.write_text("id,submit,run_time,estimate,cpus\n1,0,60,120,4\n")
    code, _, err = run_cli(capsys, "workload", "info", path)
    assert_user_error(code, err, "machine size unknown for `cpus`", "--capacity cpus=N")


def test_a_bad_overrun_mode_is_refused_by_the_parser(capsys, trace: Path) -> None:
    code, out, err = run_cli(capsys, "workload", "info", trace, "--overrun", "cap")
    assert out == ""
    assert_user_error(code, err, "invalid choice: 'cap'", "usage: schedc workload info")


@pytest.mark.parametrize(("argv", "message"), [
    (["--capacity", "memory=4"], "--capacity memory: the workload is read with resources cpus"),
    (["--capacity", "cpus=0"], "the capacity must be at least 1"),
    (["--resources", "memory,cpus"], "expected K or distinct names, cpus first"),
    (["--resources", "0"], "--resources must be at least 1"),
])
def test_bad_options(capsys, trace: Path, argv: list[str], message: str) -> None:
    code, _, err = run_cli(capsys, "workload", "info", trace, *argv)
    assert_user_error(code, err, message)
