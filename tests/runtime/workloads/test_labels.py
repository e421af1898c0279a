"""Job labels (user, group, executable, queue, partition): read from SWF fields 12-16, from
optional job-table columns and from state files, and written back by the SWF writer."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedc.dsl import compile_source
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.results.swf_out import write_swf
from schedc.runtime.workloads.load import load_workload
from schedc.runtime.workloads.state_file import load_state, state_from_data, state_to_data
from schedc.runtime.workloads.swf import read_swf
from schedc.runtime.workloads.workload import WorkloadError
from tests.support.repo import ROOT

LABELS = ("user", "group", "executable", "queue", "partition")


def labels(job) -> tuple[int, ...]:
    return tuple(getattr(job, a) for a in LABELS)


def swf_line(jid: int, submit: int, run: int, procs: int, tail: str) -> str:
    # fields 1-11, then 12-16 from ``tail``, then 17-18
    return f"{jid} {submit} -1 {run} {procs} -1 -1 {procs} {run} -1 1 {tail} -1 -1\n"


def test_swf_fields_12_to_16_are_the_labels(tmp_path: Path) -> None:
    path = tmp_path / "t.swf"
    path.write_text("; MaxProcs: 8\n"
                    + swf_line(1, 0, 10, 2, "3 4 5 6 7")
                    + swf_line(2, 1, 10, 2, "-1 -1 -1 -1 -1")
                    + swf_line(3, 2, 10, 2, "12 -3 0 1 2"))  # below -1: unknown
    jobs = read_swf(path).jobs
    assert [labels(j) for j in jobs] == [(3, 4, 5, 6, 7), (-1,) * 5, (12, -1, 0, 1, 2)]


def test_swf_careful_path_reads_the_labels_too(tmp_path: Path) -> None:
    # a repeated id sends the reader down its per-line path (it points at the line)
    path = tmp_path / "t.swf"
    path.write_text("; MaxProcs: 8\n" + swf_line(1, 0, 10, 2, "3 4 5 6 7")
                    + swf_line(1, 1, 10, 2, "8 9 10 11 12"))
    (job,) = load_workload(str(path), lenient=True).jobs
    assert labels(job) == (3, 4, 5, 6, 7)


def test_swf_writer_keeps_the_labels(tmp_path: Path) -> None:
    path = tmp_path / "t.swf"
    path.write_text("; MaxProcs: 8\n" + swf_line(1, 0, 10, 2, "3 4 5 6 7"))
    load = read_swf(path)
    out = tmp_path / "out.swf"
    write_swf(simulate(to_runtime(compile_source("policy p {}", "<t>")), load), out)
    assert [labels(j) for j in read_swf(out).jobs] == [(3, 4, 5, 6, 7)]


CSV_HEAD = "id,submit,run_time,estimate,cpus"


def read_table(tmp_path: Path, text: str):
    path = tmp_path / "t.csv"
    path.write_text(text)
    return load_workload(str(path), capacities={"cpus": 8}).jobs


def test_csv_integer_label_columns_are_taken_as_they_are(tmp_path: Path) -> None:
    jobs = read_table(tmp_path, f"user,{CSV_HEAD},partition\n7,1,0,10,10,2,0\n"
                                f"-1,2,0,10,10,2,3\n-5,3,0,10,10,2,\n")
    assert [(j.user, j.partition) for j in jobs] == [(7, 0), (-1, 3), (-1, -1)]
    assert {(j.group, j.executable, j.queue) for j in jobs} == {(-1, -1, -1)}


def test_csv_names_are_numbered_in_order_of_first_appearance(tmp_path: Path) -> None:
    jobs = read_table(tmp_path, f"{CSV_HEAD},user,queue\n1,0,10,10,2,carol,batch\n"
                                "2,0,10,10,2,alice,\n3,0,10,10,2,carol,debug\n"
                                "4,0,10,10,2,42,batch\n5,0,10,10,2,,debug\n")
    # carol 1, alice 2, "42" 3 (a column with names numbers every text), empty -1
    assert [(j.user, j.queue) for j in jobs] == [(1, 1), (2, -1), (1, 2), (3, 1), (-1, 2)]


def test_csv_without_label_columns_has_unknown_labels(tmp_path: Path) -> None:
    (job,) = read_table(tmp_path, f"{CSV_HEAD}\n1,0,10,10,2\n")
    assert labels(job) == (-1,) * 5


def test_csv_skipped_rows_take_no_number(tmp_path: Path) -> None:
    # job 2 asks for more than the machine: skipped, so bob is not numbered before dave
    jobs = read_table(tmp_path, f"{CSV_HEAD},user\n1,0,10,10,2,ann\n2,0,10,10,99,bob\n"
                                "3,0,10,10,2,dave\n")
    assert [j.user for j in jobs] == [1, 2]


def test_state_file_round_trip_with_labels() -> None:
    data = {"now": 5, "capacity": {"cpus": 8},
            "running": [{"id": 1, "submit": 0, "start": 0, "estimate": 10, "run_time": 10,
                         "request": {"cpus": 2}, "user": 3, "queue": 0}],
            "queue": [{"id": 2, "submit": 1, "estimate": 10, "run_time": 10,
                       "request": {"cpus": 2}, "user": -1, "partition": 4},
                      {"id": 3, "submit": 2, "estimate": 10, "run_time": 10,
                       "request": {"cpus": 2}}]}
    state = state_from_data(data)
    assert labels(state.running[0].job) == (3, -1, -1, 0, -1)
    assert [labels(j) for j in state.queue] == [(-1, -1, -1, -1, 4), (-1,) * 5]
    again = state_to_data(state)
    assert state_from_data(again) == state
    assert "user" not in again["queue"][0]  # -1 is the default: not written


@pytest.mark.parametrize(("value", "message"), [
    (-2, "queue[0].user: -2 is below -1"),
    ("alice", 'queue[0].user: "alice" is not an integer'),
])
def test_state_file_rejects_bad_labels_where_they_are(tmp_path: Path, value, message) -> None:
    path = tmp_path / "s.json"
    path.write_text('{"now": 5, "capacity": {"cpus": 8},\n "queue": [{"id": 2, "submit": 1, '
                    '"estimate": 10, "run_time": 10, "request": {"cpus": 2},\n   "user": '
                    + (f'"{value}"' if isinstance(value, str) else str(value)) + "}]}\n")
    with pytest.raises(WorkloadError) as err:
        load_state(str(path))
    assert message in err.value.message and err.value.line == 3


def test_only_the_labels_asked_for_are_read(tmp_path) -> None:
    """`schedc run` without --swf-out reads only the labels its policy reads: the others
    are -1, as if the trace did not record them; None reads them all."""
    from schedc.runtime.workloads.swf import read_swf

    trace = tmp_path / "t.swf"
    trace.write_text("; MaxProcs: 4\n"
                     "1 0 -1 10 1 -1 -1 1 10 -1 1 7 8 9 10 11 -1 -1\n"
                     "2 1 -1 10 1 -1 -1 1 10 -1 1 17 18 19 20 21 -1 -1\n")
    every = read_swf(trace)
    assert [(j.user, j.group, j.executable, j.queue, j.partition) for j in every.jobs] == [
        (7, 8, 9, 10, 11), (17, 18, 19, 20, 21)]
    some = read_swf(trace, labels=("user", "queue"))
    assert [(j.user, j.group, j.executable, j.queue, j.partition) for j in some.jobs] == [
        (7, -1, -1, 10, -1), (17, -1, -1, 20, -1)]
    assert [j.user for j in read_swf(trace, labels=()).jobs] == [-1, -1]


def test_the_cli_reads_the_labels_its_policy_reads_and_all_for_swf_out(tmp_path,
                                                                          capsys) -> None:
    from schedc.runtime.cli.main import main
    from schedc.runtime.engine.from_ir import to_runtime
    from schedc.runtime.run import RunOptions, compiled, run_policy

    trace = tmp_path / "t.swf"
    trace.write_text("; MaxProcs: 4\n"
                     "1 0 -1 10 4 -1 -1 4 10 -1 1 7 8 9 10 11 -1 -1\n"
                     "2 1 -1 10 2 -1 -1 2 10 -1 1 17 18 19 20 21 -1 -1\n")
    fair = ROOT / "examples" / "user-fairshare.pol"
    policy = to_runtime(compiled(str(fair), RunOptions()), {})
    assert policy.labels_read == ("user",)
    lean = run_policy(str(fair), str(trace), RunOptions(all_labels=False))
    assert [(j.user, j.group) for j in lean.workload.jobs] == [(7, -1), (17, -1)]
    full = run_policy(str(fair), str(trace), RunOptions())  # the library reads them all
    assert [(j.user, j.group) for j in full.workload.jobs] == [(7, 8), (17, 18)]
    out = tmp_path / "out.swf"
    assert main(["run", str(ROOT / "examples" / "easy.pol"), "--workload", str(trace),
                 "--swf-out", str(out)]) == 0  # easy reads no label; the schedule keeps all
    rows = [ln.split() for ln in out.read_text().splitlines() if not ln.startswith(";")]
    assert [r[11:16] for r in rows] == [["7", "8", "9", "10", "11"],
                                        ["17", "18", "19", "20", "21"]]
    capsys.readouterr()
