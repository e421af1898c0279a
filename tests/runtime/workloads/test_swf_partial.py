"""SWF partial executions (field 11 = 2, 3, 4): a job recorded in parts is read as one job,
its parts kept as its history; under `; Preemption: Double` its summary line is the job. Each
inconsistency is a located error, or under --lenient skipped and counted (a job whose parts
never end: kept as far as it ran). Hand-made files, each grouped job asserted exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedc.runtime.cli.main import main
from schedc.runtime.jobs import Job
from schedc.runtime.workloads import swf
from schedc.runtime.workloads.load import load_workload
from schedc.runtime.workloads.workload import Part, WorkloadError

HEADER = "; Version: 2.2\n; MaxProcs: 16\n"  # data lines start at line 3
DOUBLE = HEADER + "; Preemption: Double\n"  # data lines start at line 4


def ln(jid: int, submit: int, wait: int, run: int, procs: int = 4, req_time: int = 500,
       status: int = 1, user: int = -1, used_mem: int = -1) -> str:
    fields = [jid, submit, wait, run, procs, -1, used_mem, procs, req_time, -1, status, user]
    return " ".join(map(str, fields + [-1] * 6))


def write(tmp_path: Path, lines: list[str], header: str = HEADER, name: str = "t.swf") -> Path:
    path = tmp_path / name
    path.write_text(header + "".join(line + "\n" for line in lines))
    return path


def located(path: Path, lineno: int, field: int, message: str, help: str = "") -> WorkloadError:
    """Reading ``path`` stops at ``lineno``, with the caret on its 0-based ``field``."""
    with pytest.raises(WorkloadError) as caught:
        load_workload(path)
    err = caught.value
    source = path.read_text().splitlines()[lineno - 1]
    assert (err.line, err.col, err.source_line) == (lineno, swf._field_col(source, field),
                                                    source), str(err)
    assert message in err.message, str(err)
    assert help in (err.help or ""), str(err)
    assert "\n" not in err.message
    return err


def test_parts_only_make_one_job_at_its_first_line(tmp_path) -> None:
    # job 1 runs 40 s, is stopped, runs 60 s more (status 2 then 3); job 3's last part failed
    lines = [ln(1, 0, 5, 40, status=2, user=7), ln(2, 10, 0, 50, procs=2, req_time=100),
             ln(1, 0, 100, 60, status=3, user=7), ln(3, 20, 1, 10, procs=1, status=2),
             ln(3, 20, 20, 20, procs=1, status=4)]
    workload = load_workload(write(tmp_path, lines))
    assert workload.jobs == (
        Job(1, 0, 0, 100, 500, (4,), user=7),  # submit, size, labels: its first part's
        Job(2, 1, 10, 50, 100, (2,)),
        Job(3, 2, 20, 30, 500, (1,)))
    assert workload.recorded_runs == (100, 50, 30)
    assert workload.recorded_status == (1, 1, 0)  # 3: completed, 4: failed
    assert workload.parts == {
        1: (Part(line=3, start=5, run=40, procs=4, status=2),
            Part(line=5, start=100, run=60, procs=4, status=3)),
        3: (Part(line=6, start=21, run=10, procs=1, status=2),
            Part(line=7, start=40, run=20, procs=1, status=4))}
    assert workload.parts[1][1].end == 160
    assert workload.part_counts() == (2, 4, 0)
    assert workload.skipped == {}


def test_interleaved_jobs_each_take_their_own_parts(tmp_path) -> None:
    lines = [ln(1, 0, 0, 10, status=2), ln(2, 5, 0, 20, procs=2, status=2),
             ln(1, 0, 30, 10, status=2), ln(2, 5, 40, 20, procs=2, status=3),
             ln(1, 0, 70, 10, status=3)]
    workload = load_workload(write(tmp_path, lines))
    assert workload.jobs == (Job(1, 0, 0, 30, 500, (4,)), Job(2, 1, 5, 40, 500, (2,)))
    assert [[p.line for p in workload.parts[j]] for j in (1, 2)] == [[3, 5, 7], [4, 6]]
    assert [p.start for p in workload.parts[1]] == [0, 30, 70]


def test_the_requested_time_and_memory_are_the_most_a_part_gives(tmp_path) -> None:
    lines = [ln(1, 0, 0, 10, req_time=-1, used_mem=8, status=2),
             ln(1, 0, 20, 10, req_time=300, used_mem=16, status=3),
             ln(2, 0, 0, 10, req_time=-1, status=2), ln(2, 0, 20, 5, req_time=-1, status=3)]
    workload = load_workload(write(tmp_path, lines, HEADER + "; MaxMemory: 64\n"),
                             resources=("cpus", "memory"), capacities={"memory": 1000})
    assert workload.jobs == (Job(1, 0, 0, 20, 300, (4, 64)),
                             Job(2, 1, 0, 15, 15, (4, 0)))  # no requested time: its run
    assert workload.unrequested == (1,)


def test_a_double_summary_is_the_job_and_its_parts_its_history(tmp_path) -> None:
    # job 1: summary first; job 2: summary after its parts, which change size (history only);
    # job 3: not preempted, one line; job 4: parts without a summary, read from the parts
    lines = [ln(1, 0, 0, 100, req_time=400, user=3), ln(1, 0, 0, 40, status=2),
             ln(1, 0, 50, 60, status=3),
             ln(2, 5, 1, 20, procs=2, status=2), ln(2, 5, 30, 10, procs=4, status=4),
             ln(2, 5, 1, 30, procs=2, req_time=60, status=0),
             ln(3, 6, 0, 7, procs=1),
             ln(4, 8, 0, 3, procs=1, status=2), ln(4, 8, 9, 4, procs=1, status=3)]
    workload = load_workload(write(tmp_path, lines, DOUBLE))
    assert workload.jobs == (Job(1, 0, 0, 100, 400, (4,), user=3), Job(2, 1, 5, 30, 60, (2,)),
                             Job(3, 2, 6, 7, 500, (1,)), Job(4, 3, 8, 7, 500, (1,)))
    assert workload.recorded_status == (1, 0, 1, 1)
    assert workload.parts == {
        1: (Part(5, 0, 40, 4, 2), Part(6, 50, 60, 4, 3)),
        2: (Part(7, 6, 20, 2, 2), Part(8, 35, 10, 4, 4)),
        4: (Part(11, 8, 3, 1, 2), Part(12, 17, 4, 1, 3))}
    assert workload.part_counts() == (3, 6, 0)


def test_a_summary_that_is_not_its_parts_sum_is_located_at_its_run_time(tmp_path) -> None:
    lines = [ln(1, 0, 0, 100), ln(1, 0, 0, 40, status=2), ln(1, 0, 50, 50, status=3),
             ln(2, 1, 0, 10)]
    path = write(tmp_path, lines, DOUBLE)
    located(path, 4, swf.F_RUN, "job 1: the summary's run time 100 is not its 2 parts' sum, "
            "90 (lines 5, 6)", "--lenient to skip and count such jobs")
    workload = load_workload(path, lenient=True)
    assert workload.jobs == (Job(2, 0, 1, 10, 500, (4,)),)
    assert workload.skipped == {"summary disagrees with its parts": 1}
    assert workload.parts == {}


def test_a_summary_and_last_part_that_disagree_on_the_outcome(tmp_path) -> None:
    lines = [ln(1, 0, 0, 40, status=2), ln(1, 0, 50, 60, status=4), ln(1, 0, 0, 100, status=1)]
    path = write(tmp_path, lines, DOUBLE)
    located(path, 6, swf.F_STATUS, "job 1: the summary says completed (status 1), its last "
            "part (line 5) failed (status 4)")
    assert load_workload(path, lenient=True).skipped == {"summary disagrees with its parts": 1}


def test_parts_of_different_sizes_need_a_summary(tmp_path) -> None:
    lines = [ln(1, 0, 0, 40, status=2), ln(2, 1, 0, 5), ln(1, 0, 50, 60, procs=8, status=3)]
    path = write(tmp_path, lines)
    located(path, 5, swf.F_PROCS, "job 1: this part has 8 processors, its first part (line 3) 4",
            "`; Preemption: Double`")
    workload = load_workload(path, lenient=True)
    assert [j.id for j in workload.jobs] == [2]
    assert workload.skipped == {"parts of different sizes": 1}


def test_a_part_after_the_last_part(tmp_path) -> None:
    lines = [ln(1, 0, 0, 40, status=2), ln(1, 0, 50, 60, status=3), ln(1, 0, 200, 9, status=3)]
    path = write(tmp_path, lines)
    located(path, 5, swf.F_STATUS, "job 1: a part after its last part (line 4, status 3)",
            "--lenient to skip and count such lines")
    workload = load_workload(path, lenient=True)
    assert workload.jobs == (Job(1, 0, 0, 100, 500, (4,)),)
    assert workload.skipped == {"part after the last part": 1}
    assert [p.line for p in workload.parts[1]] == [3, 4]


def test_parts_that_never_end_point_at_the_last_and_lenient_keeps_what_ran(tmp_path) -> None:
    lines = [ln(1, 0, 0, 40, status=2), ln(2, 1, 0, 5), ln(1, 0, 50, 60, status=2)]
    path = write(tmp_path, lines)
    err = located(path, 5, swf.F_STATUS, "job 1: its last part (status 2) is to be continued, "
                  "but no part of it follows", "pass --lenient to keep what such jobs ran")
    assert "(or pass --lenient to skip" not in (err.help or "")
    workload = load_workload(path, lenient=True)
    assert workload.jobs == (Job(1, 0, 0, 100, 500, (4,)), Job(2, 1, 1, 5, 500, (4,)))
    assert workload.recorded_status == (-1, 1)  # unknown: the log ends before the job does
    assert workload.skipped == {}
    assert workload.part_counts() == (1, 2, 1)


def test_a_whole_line_under_a_parts_number_needs_the_double_header(tmp_path) -> None:
    lines = [ln(1, 0, 0, 100), ln(1, 0, 0, 40, status=2), ln(1, 0, 50, 60, status=3)]
    path = write(tmp_path, lines)
    located(path, 3, swf.F_ID, "job 1 is recorded in parts (line 4) and again on this line "
            "(status 1)", "`; Preemption: Double`")
    workload = load_workload(path, lenient=True)
    assert workload.jobs == (Job(1, 0, 0, 100, 500, (4,)),)  # from its parts
    assert workload.skipped == {"repeated id": 1}


def test_two_summaries_repeat_the_id(tmp_path) -> None:
    lines = [ln(1, 0, 0, 100), ln(1, 0, 0, 40, status=2), ln(1, 0, 50, 60, status=3),
             ln(1, 0, 0, 100)]
    located(write(tmp_path, lines, DOUBLE), 7, swf.F_ID,
            "job id 1 is repeated: line 4 has it already")


def test_the_first_mistake_in_file_order_is_reported(tmp_path) -> None:
    lines = [ln(1, 0, 0, 40, status=2), ln(2, 0, 0, 5, status=2), ln(2, 0, 9, 5, status=3),
             ln(2, 0, 20, 5, status=3)]
    located(write(tmp_path, lines), 3, swf.F_STATUS, "job 1: its last part")


def test_parts_of_a_negative_id_are_not_grouped(tmp_path) -> None:
    lines = [ln(-1, 0, 0, 40, status=2), ln(-1, 0, 50, 60, status=3), ln(2, 1, 0, 5)]
    path = write(tmp_path, lines)
    located(path, 3, swf.F_ID, "job id is -1 (unknown)")
    workload = load_workload(path, lenient=True)
    assert [j.id for j in workload.jobs] == [2] and workload.skipped == {"id < 0": 2}


def test_a_grouped_job_is_then_skipped_like_any_other(tmp_path) -> None:
    # a job too wide for the machine: its parts are one job, skipped once
    lines = [ln(1, 0, 0, 40, procs=32, status=2), ln(1, 0, 50, 60, procs=32, status=3),
             ln(2, 1, 0, 5)]
    workload = load_workload(write(tmp_path, lines))
    assert [j.id for j in workload.jobs] == [2]
    assert workload.skipped == {"cpus request > capacity": 1}
    assert workload.parts == {}


def test_workload_info_says_how_many_jobs_came_from_parts(tmp_path, capsys) -> None:
    lines = [ln(1, 0, 5, 40, status=2), ln(2, 10, 0, 50), ln(1, 0, 100, 60, status=3),
             ln(3, 20, 0, 5, status=2), ln(3, 20, 9, 5, status=2), ln(3, 20, 19, 5, status=2)]
    path = write(tmp_path, lines)
    assert main(["workload", "info", str(path), "--json"]) == 2  # job 3 never ends
    capsys.readouterr()
    assert main(["workload", "info", str(path), "--json", "--lenient"]) == 0
    facts = json.loads(capsys.readouterr().out)
    assert facts["jobs"] == 3
    assert facts["partial_executions"] == {"jobs": 2, "parts": 5, "jobs_without_last_part": 1}
    assert main(["workload", "info", str(path), "--lenient"]) == 0
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip()
            for line in capsys.readouterr().out.splitlines() if line.count("│") == 3}
    assert rows["jobs read"] == "3"
    assert rows["jobs read from partial executions (parts)"] == "2 from 5"
    assert rows["of these, jobs without a last part"] == "1"
    assert main(["workload", "info", str(write(tmp_path, [ln(1, 0, 0, 1)], name="u.swf")),
                 "--json"]) == 0
    facts = json.loads(capsys.readouterr().out)
    assert facts["partial_executions"] == {"jobs": 0, "parts": 0, "jobs_without_last_part": 0}


# --- parts that cannot be (issue 44): each located at its field, or skipped under --lenient

@pytest.mark.parametrize(("lines", "header", "at", "message", "reason"), [
    ([ln(1, 0, 0, 40, status=2), ln(1, 0, 50, -10, status=3)], HEADER, (4, swf.F_RUN),
     "job 1: this part's run time is -10", "part with a negative time"),
    ([ln(1, 0, 0, 40, status=2), ln(1, 0, -5, 60, status=3)], HEADER, (4, swf.F_WAIT),
     "job 1: this part's wait time is -5", "part with a negative time"),
    ([ln(1, 0, 0, 100, procs=8), ln(1, 0, 0, 40, procs=99, status=2),
      ln(1, 0, 50, 60, procs=8, status=3)], DOUBLE, (5, swf.F_PROCS),
     "job 1: this part ran on 99 processors, more than the machine's 16",
     "part larger than the machine"),
    ([ln(1, 10, 0, 100), ln(1, 10, 0, 40, status=2), ln(1, 12, 48, 60, status=3)], DOUBLE,
     (6, swf.F_SUBMIT), "job 1: this part's submit time 12 is not its summary's (line 4), 10",
     "parts disagree on the submit time"),
    ([ln(1, 10, 0, 40, status=2), ln(1, 11, 50, 60, status=3)], HEADER, (4, swf.F_SUBMIT),
     "job 1: this part's submit time 11 is not its first part's (line 3), 10",
     "parts disagree on the submit time"),
    ([ln(1, 0, 0, 40, status=2), ln(1, 0, 30, 60, status=3)], HEADER, (4, swf.F_WAIT),
     "job 1: this part starts at 30, before its previous part (line 3) ends at 40",
     "overlapping parts"),
])
def test_a_part_that_cannot_be_is_located_and_lenient_skips_its_job(
        tmp_path, lines, header, at, message, reason) -> None:
    path = write(tmp_path, [*lines, ln(2, 100, 0, 5)], header)
    located(path, *at, message, "--lenient to skip and count such jobs")
    workload = load_workload(path, lenient=True)
    assert [j.id for j in workload.jobs] == [2] and workload.skipped == {reason: 1}
    assert workload.parts == {}


def test_a_lone_last_part_is_located_and_lenient_keeps_it(tmp_path) -> None:
    path = write(tmp_path, [ln(1, 0, 0, 5), ln(2, 3, 1, 30, procs=1, status=3)])
    err = located(path, 4, swf.F_STATUS, "job 2: its only part is a last part (status 3), "
                  "with no part of status 2 before it", "pass --lenient to keep such jobs")
    assert "(or pass --lenient to skip" not in (err.help or "")
    workload = load_workload(path, lenient=True)
    assert workload.jobs[1] == Job(2, 1, 3, 30, 500, (1,)) and workload.skipped == {}
    assert workload.recorded_status == (1, 1)


def test_what_the_standard_allows_is_read(tmp_path) -> None:
    """-1 is unknown (SWF): a part whose wait is unknown has no start and is compared with
    no other; a part of unknown run time leaves its job's unknown (then skipped as any job
    with no run time); parts may touch; under `; Preemption: Double` one summary and one
    last part is a job that ran once, and a job too wide for the machine is skipped."""
    lines = [ln(1, 0, 0, 40, status=2), ln(1, 0, -1, 60, status=2), ln(1, 0, 40, 10, status=3),
             ln(2, 5, 0, 10, status=2), ln(2, 5, -1, -1, status=3),
             ln(3, 6, 0, 7), ln(3, 6, 0, 7, status=3),
             ln(4, 7, 0, 9, procs=99), ln(4, 7, 0, 9, procs=99, status=3)]
    workload = load_workload(write(tmp_path, lines, DOUBLE))
    assert [j.id for j in workload.jobs] == [1, 3]
    assert workload.skipped == {"run time < 0": 1, "cpus request > capacity": 1}
    assert [p.start for p in workload.parts[1]] == [0, None, 40]


def test_cli_exit_2_at_a_bad_part(tmp_path, capsys) -> None:
    path = write(tmp_path, [ln(1, 0, 0, 40, status=2), ln(1, 0, 30, 60, status=3)])
    assert main(["workload", "info", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"--> {path}:4:" in err and "overlapping" not in err and "starts at 30" in err
    assert "help:" in err and "Traceback" not in err
