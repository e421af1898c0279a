"""Every assumption `schedc verify` makes of its inputs is checked where inputs are read.

The proofs (`_assume_jobs` in `dsl/verify/pass_encoding/assumptions.py`) assume job ids >= 0 and
distinct, submits >= 0, estimates >= 1 s, requests in [0, capacity] with at least 1 cpu,
moldable sizes 1 <= min_size <= procs <= max_size <= cpus with a sequential time >= 1 s,
capacities >= 1 and a machine not overcommitted before the pass. For each reader (SWF, CSV job
table, state file) a bad input is a located error with exit status 2, or under --lenient the job
is skipped and counted; what the readers and the transforms (--load-factor, --range-factor) and
generators let through satisfies every assumption."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedc.runtime.cli.main import bundled_trace, main
from schedc.runtime.jobs import Job
from schedc.runtime.results.provenance import read_csv
from schedc.runtime.workloads import swf
from schedc.runtime.workloads.load import load_workload
from schedc.runtime.workloads.moldable import MoldableSpec, make_moldable
from schedc.runtime.workloads.workload import Workload, WorkloadError
from tests.support.repo import ROOT

EASY = ROOT / "examples" / "easy.pol"
SWF_HEADER = "; Version: 2.2\n; MaxProcs: 16\n"  # data lines start at line 3
CSV_HEADER = "# capacity cpus=8\nid,submit,run_time,estimate,cpus\n"  # rows start at line 3


def swf_line(jid: int, submit: int, run: int = 10, procs: int = 2, req_time: int = 20,
             status: int = 1) -> str:
    fields = [jid, submit, -1, run, procs, -1, -1, procs, req_time, -1, status] + [-1] * 7
    return " ".join(map(str, fields))


def write(tmp_path: Path, name: str, lines: list[str], header: str = "") -> Path:
    path = tmp_path / name
    path.write_text(header + "".join(ln + "\n" for ln in lines))
    return path


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_located(capsys, path: Path, line: int, col: int, message: str,
                   source: str) -> None:
    """`schedc run` stops with exit 2 and the located diagnostic."""
    code, out, err = run_cli(capsys, "run", EASY, "--workload", path)
    assert code == 2, out + err
    assert f"{path}:{line}:{col}" in err
    assert message in err
    assert source in err and "help:" in err and "--lenient" in err
    assert "Traceback" not in err


def lenient_run(capsys, path: Path, *extra) -> dict:
    """The --json result of `schedc run --lenient`."""
    code, out, err = run_cli(capsys, "run", EASY, "--workload", path, "--lenient", "--json",
                             *extra)
    assert code == 0, err
    return json.loads(out)


def violations(w: Workload) -> list[str]:
    """What a workload's jobs break of the proofs' assumptions (the empty list: nothing)."""
    out = []
    ids: set[int] = set()
    caps = w.capacities
    if any(c < 1 for c in caps):
        out.append(f"capacities {caps}")
    for j in w.jobs:
        who = f"job {j.id}"
        if not all(type(v) is int for v in (j.id, j.submit, j.run_time, j.estimate,
                                              *j.request)):
            out.append(f"{who}: a number is not an int")
        if j.id < 0 or j.id in ids:
            out.append(f"{who}: id negative or repeated")
        ids.add(j.id)
        if j.submit < 0:
            out.append(f"{who}: submit {j.submit}")
        if j.estimate < 1 or not 0 <= j.run_time <= j.estimate:
            out.append(f"{who}: estimate {j.estimate}, run time {j.run_time}")
        if j.request[0] < 1 or any(not 0 <= r <= c for r, c in zip(j.request, caps,
                                                                   strict=True)):
            out.append(f"{who}: request {j.request} on {caps}")
        m = j.moldable
        if m is not None:
            if not 1 <= m.min_procs <= j.procs <= m.max_procs <= caps[0]:
                out.append(f"{who}: sizes [{m.min_procs}, {m.max_procs}], procs {j.procs}")
            if j.work < 1 or (j.procs == 1 and j.work != j.estimate):
                out.append(f"{who}: work {j.work}, estimate {j.estimate}")
    return out


# --- SWF ------------------------------------------------------------------------------------

# (data lines, the bad line's number, its 0-based field, message, skip reason)
SWF_CASES = {
    "submit unknown": ([swf_line(1, 0), swf_line(2, -1), swf_line(3, 5)], 4, swf.F_SUBMIT,
                       "job 2 has no submit time (-1: unknown)", "submit < 0"),
    "submit negative": ([swf_line(1, 0), swf_line(2, 3), swf_line(3, -40)], 5, swf.F_SUBMIT,
                        "job 3 is submitted at -40, before time 0", "submit < 0"),
    "id unknown": ([swf_line(-1, 0), swf_line(2, 3), swf_line(3, 4)], 3, swf.F_ID,
                   "job id is -1 (unknown)", "id < 0"),
    "id negative": ([swf_line(1, 0), swf_line(-7, 3), swf_line(3, 4)], 4, swf.F_ID,
                    "job id -7 is negative", "id < 0"),
    "id repeated": ([swf_line(1, 0), swf_line(2, 3), swf_line(1, 4)], 5, swf.F_ID,
                    "job id 1 is repeated: line 3 has it already", "repeated id"),
    # a preemptive system's log: job 2 in two parts (status 2, then 3) of different sizes
    "parts of different sizes": (
        [swf_line(1, 0), swf_line(2, 3, status=2), swf_line(2, 3, procs=4, status=3),
         swf_line(3, 4)], 5, swf.F_PROCS, "job 2: this part has 4 processors, its first part "
        "(line 4) 2", "parts of different sizes"),
}


@pytest.mark.parametrize("case", SWF_CASES)
def test_swf_error_is_located_and_lenient_skips_and_counts(capsys, tmp_path, case) -> None:
    lines, lineno, field, message, reason = SWF_CASES[case]
    path = write(tmp_path, "t.swf", lines, SWF_HEADER)
    # well-formed lines: the fast path reads them, and must hand them to the careful one
    assert swf._columns_fast("\n".join(lines).encode(), False) is not None
    bad = lines[lineno - 3]
    assert_located(capsys, path, lineno, swf._field_col(bad, field), message, bad)
    result = lenient_run(capsys, path)
    assert result["skipped"] == {reason: 1}
    assert result["metrics"]["jobs"] == 2 and result["metrics"]["skipped"] == 1


def test_swf_fast_and_careful_paths_agree_when_lenient(tmp_path, monkeypatch) -> None:
    lines = [swf_line(1, 0), swf_line(2, -1), swf_line(-3, 2), swf_line(1, 3), swf_line(4, 4)]
    path = write(tmp_path, "t.swf", lines, SWF_HEADER)
    fast = load_workload(path, lenient=True)
    monkeypatch.setattr(swf, "_columns_fast", lambda *a: None)
    careful = load_workload(path, lenient=True)
    assert fast == careful
    assert [j.id for j in fast.jobs] == [1, 4]  # the first of a repeated id stays
    assert fast.skipped == {"id < 0": 1, "repeated id": 1, "submit < 0": 1}


def test_a_double_trace_is_read_by_its_summary_lines(capsys, tmp_path) -> None:
    # `Preemption: Double`: a job's summary line (status 1), then its parts (2, then 3 or 4)
    # under the same number: the summary is the job, the parts its history; a job in parts
    # without a summary (3) is read from its parts (`test_swf_partial.py`)
    lines = [swf_line(1, 0, run=100), swf_line(1, 0, run=40, status=2),
             swf_line(1, 0, run=60, status=3), swf_line(2, 10, run=50),
             swf_line(3, 20, run=10, status=2), swf_line(3, 20, run=20, status=4)]
    path = write(tmp_path, "t.swf", lines, SWF_HEADER + "; Preemption: Double\n")
    workload = load_workload(path)
    assert [(j.id, j.run_time) for j in workload.jobs] == [(1, 20), (2, 20), (3, 20)]
    assert workload.recorded_runs == (100, 50, 30)
    assert workload.recorded_status == (1, 1, 0)
    assert workload.skipped == {} and workload.part_counts() == (2, 4, 0)


def test_swf_skip_rules_come_first(capsys, tmp_path) -> None:
    # DESIGN skips a job that cannot run even in strict mode; its other fields are not
    # checked, and its id is not taken (cancelled jobs often have -1 everywhere)
    lines = [swf_line(-1, -1, run=-1), swf_line(1, 0), swf_line(2, 5, procs=99),
             swf_line(2, 6), swf_line(3, -1, procs=-1)]
    path = write(tmp_path, "t.swf", lines, SWF_HEADER)
    code, out, err = run_cli(capsys, "run", EASY, "--workload", path, "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["skipped"] == {"cpus request > capacity": 1, "procs < 1": 1,
                                 "run time < 0": 1}
    assert result["metrics"]["jobs"] == 2


def test_swf_first_problem_in_file_order_is_reported(tmp_path) -> None:
    lines = [swf_line(1, 0), swf_line(1, -1), swf_line(2, -5)]
    with pytest.raises(WorkloadError) as err:
        load_workload(write(tmp_path, "t.swf", lines, SWF_HEADER))
    assert (err.value.line, err.value.col) == (4, 1)
    assert err.value.message == "job id 1 is repeated: line 3 has it already"


def test_swf_machine_must_have_a_size(capsys, tmp_path) -> None:
    path = write(tmp_path, "t.swf", [swf_line(1, 0)], "; MaxProcs: 0\n")
    code, _, err = run_cli(capsys, "run", EASY, "--workload", path)
    assert code == 2 and "machine size unknown for `cpus`" in err and "help:" in err
    code, _, err = run_cli(capsys, "run", EASY, "--workload", path, "--capacity", "cpus=0")
    assert code == 2 and "at least 1" in err


def test_bundled_trace_takes_the_fast_path_and_meets_every_assumption(monkeypatch) -> None:
    calls = []
    real = swf._suspect
    monkeypatch.setattr(swf, "_suspect", lambda cols: calls.append(real(cols)) or calls[-1])
    w = load_workload(bundled_trace())
    assert calls == [False] and len(w.jobs) == 28475 and w.skipped == {"procs < 1": 1}
    assert violations(w) == []


# --- CSV job tables -------------------------------------------------------------------------

CSV_CASES = {
    "submit unknown": (["1,0,10,10,2", "2,-1,10,10,2", "3,5,10,10,2"], 4, 3,
                       "job 2 has no submit time (-1: unknown)", "submit < 0"),
    "submit negative": (["1,0,10,10,2", "22,-12,10,10,2"], 4, 4,
                        "job 22 is submitted at -12, before time 0", "submit < 0"),
    "id negative": (["1,0,10,10,2", "3,1,10,10,2", "-5,2,10,10,2"], 5, 1,
                    "job id -5 is negative", "id < 0"),
    "id repeated": (["7,0,10,10,2", "8,1,10,10,2", "7,2,10,10,2"], 5, 1,
                    "job id 7 is repeated: line 3 has it already", "repeated id"),
    "id repeated, quoted": (["7,0,10,10,2", '"7",1,10,10,2'], 4, 2,
                            "job id 7 is repeated: line 3 has it already", "repeated id"),
}


@pytest.mark.parametrize("case", CSV_CASES)
def test_csv_error_is_located_and_lenient_skips_and_counts(capsys, tmp_path, case) -> None:
    rows, lineno, col, message, reason = CSV_CASES[case]
    path = write(tmp_path, "t.csv", rows, CSV_HEADER)
    assert_located(capsys, path, lineno, col, message, rows[lineno - 3])
    result = lenient_run(capsys, path)
    assert result["skipped"] == {reason: 1}
    assert result["metrics"]["jobs"] == len(rows) - 1


def test_csv_skip_rules_come_first(capsys, tmp_path) -> None:
    rows = ["1,-1,-1,10,2", "1,0,10,10,2", "-2,3,10,10,0", "3,4,10,10,9"]
    result = lenient_run(capsys, write(tmp_path, "t.csv", rows, CSV_HEADER))
    assert result["skipped"] == {"cpus request > capacity": 1, "procs < 1": 1,
                                 "run time < 0": 1}
    code, _, err = run_cli(capsys, "run", EASY, "--workload",
                           write(tmp_path, "t.csv", rows, CSV_HEADER))
    assert code == 0, err


@pytest.mark.parametrize(("header", "col", "word"), [
    ("# capacity cpus=0\n", 12, "cpus=0"),
    ("# capacity cpus=-4\n", 12, "cpus=-4"),
    ("# capacity cpus=²\n", 12, "cpus=²"),
    ("# note\n# capacity memory=5 cpus=1.5\n", 21, "cpus=1.5"),
])
def test_csv_capacity_line_is_checked(capsys, tmp_path, header, col, word) -> None:
    path = tmp_path / "t.csv"
    path.write_text(header + "id,submit,run_time,estimate,cpus\n1,0,10,10,1\n")
    code, _, err = run_cli(capsys, "run", EASY, "--workload", path)
    line = header.count("\n")
    assert code == 2 and f"{path}:{line}:{col}" in err and f"bad capacity `{word}`" in err
    assert "help:" in err and "Traceback" not in err


def test_csv_machine_must_have_a_size(capsys, tmp_path) -> None:
    path = write(tmp_path, "t.csv", ["1,0,10,10,1"], "id,submit,run_time,estimate,cpus\n")
    code, _, err = run_cli(capsys, "run", EASY, "--workload", path)
    assert code == 2 and "machine size unknown for `cpus`" in err and "--capacity" in err


MOLDABLE_HEADER = "# capacity cpus=8\nid,submit,run_time,estimate,cpus,min_size,max_size\n"


@pytest.mark.parametrize(("row", "message"), [
    ("2,1,10,10,2,0,4", "sizes [0, 4] must hold the request 2 and fit the 8 cpus"),
    ("2,1,10,10,2,3,4", "sizes [3, 4] must hold the request 2"),
    ("2,1,10,10,4,1,3", "sizes [1, 3] must hold the request 4"),
    ("2,1,10,10,2,1,9", "sizes [1, 9] must hold the request 2 and fit the 8 cpus"),
])
def test_csv_moldable_sizes_are_checked(capsys, tmp_path, row, message) -> None:
    path = write(tmp_path, "t.csv", ["1,0,10,10,2,1,8", row], MOLDABLE_HEADER)
    assert_located(capsys, path, 4, 1, message, row)
    result = lenient_run(capsys, path)
    assert result["skipped"] == {"malformed line": 1} and result["metrics"]["jobs"] == 1


def test_csv_moldable_jobs_meet_every_assumption(tmp_path) -> None:
    path = tmp_path / "t.csv"
    path.write_text(MOLDABLE_HEADER.replace("max_size", "max_size,speedup") +
                    '1,0,10,10,1,1,8,"downey(4, 1)"\n2,1,7,10,2,1,8,amdahl(0.5)\n'
                    '3,2,1,1,8,1,8,"measured(1:4, 8:1)"\n4,3,0,0,1,1,1,linear\n')
    w = load_workload(path, capacities={"cpus": None})
    assert len(w.jobs) == 4 and violations(w) == []


# --- state files ----------------------------------------------------------------------------

def state_job(jid: int, submit: int, procs: int, est: int, **extra) -> dict:
    return {"id": jid, "submit": submit, "estimate": est, "run_time": est,
            "request": {"cpus": procs}, **extra}


def good_state() -> dict:
    return {"now": 2, "capacity": {"cpus": 10},
            "running": [state_job(1, 0, 6, 100, start=0)],
            "queue": [state_job(2, 1, 10, 100), state_job(3, 2, 4, 1000)]}


# (edit, message, the bad value as it appears in the file: the error points at its last one)
STATE_CASES = [
    (lambda d: d.update(now=-1), "now: -1 is below 0", '"now": -1'),
    (lambda d: d["capacity"].update(cpus=0), "capacity.cpus: 0 is below 1", '"cpus": 0'),
    (lambda d: d["queue"][0].update(id=-1), "queue[0].id: -1 is below 0", '"id": -1'),
    (lambda d: d["running"][0].update(id=-3), "running[0].id: -3 is below 0", '"id": -3'),
    (lambda d: d["queue"][1].update(id=1),
     "queue[1]: job id 1 is given twice (running[0] has it)", '"id": 1'),
    (lambda d: d["queue"][0].update(submit=-1), "queue[0].submit: -1 is below 0",
     '"submit": -1'),
    (lambda d: d["queue"][0].update(submit=3), "submitted at 3, after now 2", '"submit": 3'),
    (lambda d: d["running"][0].update(start=3), "start 3 is not between its submit 0",
     '"start": 3'),
    (lambda d: d["running"][0].update(submit=1, start=0), "start 0 is not between",
     '"start": 0'),
    (lambda d: d["running"][0].update(estimate=2, run_time=2), "killed at its estimated end",
     '"estimate": 2'),
    (lambda d: d["queue"][0].update(estimate=0, run_time=0), "queue[0].estimate: 0 is below 1",
     '"estimate": 0'),
    (lambda d: d["queue"][0].update(request={"cpus": 0}), "asks for 0 cpus", '"cpus": 0'),
    (lambda d: d["queue"][0].update(request={"cpus": 11}), "more than the capacity 10",
     '"cpus": 11'),
    (lambda d: d["queue"][0].update(min_size=0, max_size=10), "min_size: 0 is below 1",
     '"min_size": 0'),
    (lambda d: d["queue"][0].update(min_size=1, max_size=11), "sizes [1, 11] must hold",
     '"max_size": 11'),
    (lambda d: d["running"].append(state_job(9, 0, 5, 100, start=0)), "hold 11 `cpus`",
     '"running": ['),
]


@pytest.mark.parametrize(("edit", "message", "value"), STATE_CASES)
def test_state_file_error_is_located(capsys, tmp_path, edit, message, value) -> None:
    data = good_state()
    edit(data)
    text = json.dumps(data, indent=1)
    path = tmp_path / "state.json"
    path.write_text(text)
    at = text.rindex(value) + value.index(": ") + 2
    line = text.count("\n", 0, at) + 1
    col = at - text.rfind("\n", 0, at)
    code, _, err = run_cli(capsys, "run", EASY, "--state", path)
    assert code == 2
    assert f"{path}:{line}:{col}" in err and message in err
    assert text.splitlines()[line - 1] in err and "help:" in err and "Traceback" not in err


def test_state_location_follows_json_as_read() -> None:
    from schedc.runtime.workloads.state_file import json_offset

    text = '{"a": [1, {"b": 2}], "c": {"d": [3, 4]}, "a": [5, [6, 7], {"b" : "x"}]}'
    # a repeated key: the last one counts, as json.loads reads it
    assert json_offset(text, ("a", 2, "b")) == text.index('"x"')
    assert json_offset(text, ("a", 1, 1)) == text.index("7")
    assert json_offset(text, ("c", "d", 1)) == text.index("4")
    assert json_offset(text, ()) == 0
    assert json_offset(text, ("a", 3)) is None and json_offset(text, ("c", 0)) is None
    assert json_offset(text, ("nope",)) is None and json_offset("[1", (0,)) == 1


# --- transforms and generators --------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 64), st.integers(0, 5000),
                          st.integers(1, 5000)), min_size=1, max_size=20),
       st.sampled_from([None, 1.0, 1.5, 2.0, 4.0, 1000.0]), st.sampled_from([0.0, 0.5, 2.0]),
       st.sampled_from([25.0, 80.0, 100.0, 125.0, 400.0]))
def test_transforms_keep_every_assumption(rows, range_factor, sigma, load_factor) -> None:
    # submits in any order: the first job need not be the earliest
    jobs = tuple(Job(i + 1, i, submit, min(run, est), est, (procs,))
                 for i, (submit, procs, run, est) in enumerate(rows))
    w = Workload(jobs=jobs, resources=("cpus",), capacities=(64,))
    assert violations(w) == []
    out = make_moldable(w, MoldableSpec(range_factor, sigma if range_factor else 0.0,
                                        load_factor))
    assert violations(out) == []
    order = sorted(range(len(jobs)), key=lambda i: jobs[i].submit)
    assert [out.jobs[i].submit for i in order] == sorted(j.submit for j in out.jobs)


def test_load_factor_keeps_an_unsorted_trace_at_or_after_time_0(capsys, tmp_path) -> None:
    path = write(tmp_path, "t.swf", [swf_line(1, 100), swf_line(2, 0), swf_line(3, 300)],
                 SWF_HEADER)
    jobs_csv = tmp_path / "jobs.csv"
    code, _, err = run_cli(capsys, "run", EASY, "--workload", path, "--load-factor", "50",
                           "--range-factor", "2", "--jobs-out", jobs_csv, "--json")
    assert code == 0, err
    submits = [int(r["submit"]) for r in read_csv(jobs_csv)[1]]
    assert sorted(submits) == [0, 200, 600]


def test_generated_workloads_meet_every_assumption(capsys, tmp_path) -> None:
    gen = tmp_path / "gen.csv"
    code, _, err = run_cli(capsys, "workload", "generate", "-o", gen, "--jobs", "300",
                           "--utilisation", "0.9", "--time-scale", "10", "--seed", "5")
    assert code == 0, err
    w = load_workload(gen, capacities={"cpus": 32})
    assert len(w.jobs) == 300 and not w.skipped and violations(w) == []
    k4 = tmp_path / "k4.csv"
    code, _, err = run_cli(capsys, "workload", "kresource", "-o", k4, "--resources", "4",
                           "--jobs", "300", "--mean-interarrival", "50", "--seed", "2")
    assert code == 0, err
    names = ("cpus", "r2", "r3", "r4")
    w = load_workload(k4, names, {n: None for n in names})
    assert len(w.jobs) == 300 and not w.skipped and violations(w) == []
