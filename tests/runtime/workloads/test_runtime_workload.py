"""SWF and CSV readers: errors with line and column, lenient mode, machine size, memory."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from schedc.runtime.engine.policy import RuntimePolicy
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.jobs import Job
from schedc.runtime.results.swf_out import write_swf
from schedc.runtime.workloads.load import load_workload
from schedc.runtime.workloads.workload import WorkloadError

HEADER = "; Version: 2.2\n; MaxNodes: 64\n; MaxProcs: 16\n"


def line(jid, submit, run, procs, req_time=-1, used_mem=-1, req_procs=-1, req_mem=-1):
    f = [jid, submit, -1, run, procs, -1, used_mem, req_procs, req_time, req_mem, 1] + [-1] * 7
    return " ".join(map(str, f)) + "\n"


def write(tmp_path: Path, text: str, name: str = "t.swf") -> Path:
    p = tmp_path / name
    if name.endswith(".gz"):
        p.write_bytes(gzip.compress(text.encode()))
    else:
        p.write_text(text)
    return p


def test_reads_jobs_estimates_and_skips(tmp_path):
    text = HEADER + "".join([
        line(1, 0, 100, 4, req_time=50),   # killed at its estimate: runs 50
        line(2, 5, 30, 2),                 # no requested time: estimate = run time
        line(3, 6, 0, 1),                  # zero run: estimate 1 s
        line(4, 7, -1, 2),                 # skipped: run time < 0
        line(5, 8, 10, -1, req_procs=3),   # field 5 unknown: field 8
        line(6, 9, 10, -1),                # skipped: procs < 1
        line(7, 9, 10, 17),                # skipped: more than MaxProcs 16
    ])
    w = load_workload(write(tmp_path, text))
    assert w.capacities == (16,)
    assert w.jobs == (
        Job(1, 0, 0, 50, 50, (4,)), Job(2, 1, 5, 30, 30, (2,)), Job(3, 2, 6, 0, 1, (1,)),
        Job(5, 3, 8, 10, 10, (3,)))
    assert w.skipped == {"cpus request > capacity": 1, "procs < 1": 1, "run time < 0": 1}
    assert w.header["MaxProcs"] == "16"


def test_gzip_and_machine_size_fallbacks(tmp_path):
    body = line(1, 0, 10, 40)
    w = load_workload(write(tmp_path, "; MaxNodes: 64\n" + body, "a.swf.gz"))
    assert w.capacities == (64,) and len(w.jobs) == 1
    w = load_workload(write(tmp_path, HEADER + body), capacities={"cpus": 100})
    assert w.capacities == (100,) and len(w.jobs) == 1
    with pytest.raises(WorkloadError) as err:
        load_workload(write(tmp_path, body, "b.swf"))
    assert "machine size unknown" in str(err.value)
    assert "--capacity cpus=N" in str(err.value)


def test_malformed_line_reports_line_and_column(tmp_path):
    bad = line(2, 5, 30, 2).replace(" 30 ", " 3x0 ")
    p = write(tmp_path, HEADER + line(1, 0, 10, 1) + bad)
    with pytest.raises(WorkloadError) as err:
        load_workload(p)
    e = err.value
    assert (e.line, e.col) == (5, bad.index("3x0") + 1)
    text = str(e).splitlines()
    assert text[0] == f"{p}:5:{e.col}: field 4 is not an integer: `3x0`"
    assert text[2].index("^") - 4 == bad.index("3x0")  # caret under the field
    assert text[-1].startswith("help:")
    short = write(tmp_path, HEADER + "1 2 3\n" + line(2, 5, 30, 2), "s.swf")
    with pytest.raises(WorkloadError, match=r"s.swf:4:6: expected 18 fields, found 3"):
        load_workload(short)


def test_lenient_skips_and_counts_malformed_lines(tmp_path):
    text = HEADER + line(1, 0, 10, 1) + "1 2 3\n" + line(3, 5, 1.5, 2) + line(4, 6, 10, 2)
    w = load_workload(write(tmp_path, text), lenient=True)
    assert [j.id for j in w.jobs] == [1, 4]
    assert w.skipped == {"malformed line": 2}


def test_memory_resource(tmp_path):
    text = HEADER + line(1, 0, 10, 4, req_mem=100) + line(2, 0, 10, 2, used_mem=50) + \
        line(3, 0, 10, 2) + line(4, 0, 10, 2, req_mem=1000)
    w = load_workload(write(tmp_path, text), ("cpus", "memory"), {"memory": 1000})
    assert [j.request for j in w.jobs] == [(4, 400), (2, 100), (2, 0)]
    assert w.skipped == {"memory request > capacity": 1}
    with pytest.raises(WorkloadError, match="machine size unknown for `memory`"):
        load_workload(write(tmp_path, text), ("cpus", "memory"))


def test_csv_job_table(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("id,submit,run_time,estimate,cpus,memory\n1,0,100,50,4,10\n2,3,7,-1,2,0\n"
                 "3,4,5,5,0,0\n")
    w = load_workload(p, ("cpus", "memory"), {"cpus": 8, "memory": 100})
    assert w.jobs == (Job(1, 0, 0, 50, 50, (4, 10)), Job(2, 1, 3, 7, 7, (2, 0)))
    assert w.skipped == {"procs < 1": 1}
    p.write_text("id,submit,run_time,estimate,cpus\n1,0,1x,5,4\n")
    with pytest.raises(WorkloadError) as err:
        load_workload(p, ("cpus",), {"cpus": 8})
    assert (err.value.line, err.value.col) == (2, 5)
    assert len(load_workload(p, ("cpus",), {"cpus": 8}, lenient=True).jobs) == 0
    with pytest.raises(WorkloadError, match="missing column `memory`"):
        load_workload(p, ("cpus", "memory"), {"cpus": 8, "memory": 1})


def test_write_swf_round_trip(tmp_path):
    text = HEADER + line(1, 0, 100, 4, req_time=50) + line(2, 5, 30, 16)
    w = load_workload(write(tmp_path, text))
    s = simulate(RuntimePolicy("easy", ("cpus",), (None,), 1, "first_fit"), w)
    out = tmp_path / "out.swf"
    write_swf(s, out)
    back = load_workload(out)
    assert back.capacities == (16,)
    assert [(j.id, j.submit, j.run_time, j.procs) for j in back.jobs] == [
        (1, 0, 50, 4), (2, 5, 30, 16)]
    fields = out.read_text().splitlines()[-1].split()
    assert fields[2] == "45"  # wait: job 2 starts when job 1 ends at 50
    assert not list(tmp_path.glob(".*.tmp"))
