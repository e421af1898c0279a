"""The SWF reader's column-wise fast path and its per-line careful path agree exactly."""

from __future__ import annotations

import pytest

from schedc.runtime.jobs import Job
from schedc.runtime.workloads import swf
from schedc.runtime.workloads.load import load_workload
from schedc.runtime.workloads.workload import WorkloadError
from tests.support.shared_traces import shared_trace

HEADER = "; Version: 2.2\n; MaxProcs: 16\n"


def line(jid, submit, run, procs, req_time=-1, used_mem=-1, req_procs=-1, req_mem=-1):
    f = [jid, submit, -1, run, procs, -1, used_mem, req_procs, req_time, req_mem, 1] + [-1] * 7
    return " ".join(map(str, f)) + "\n"


def both(monkeypatch, path, **kw):
    """(fast, careful) reads of ``path``; the careful one with the fast path switched off."""
    calls = []
    real = swf._columns_fast

    def spy(*a):
        calls.append(real(*a))
        return calls[-1]

    monkeypatch.setattr(swf, "_columns_fast", spy)
    fast = load_workload(path, **kw)
    assert calls and calls[-1] is not None, "the fast path was not taken"
    monkeypatch.setattr(swf, "_columns_fast", lambda *a: None)
    careful = load_workload(path, **kw)
    return fast, careful


@pytest.mark.parametrize("name", ["NASA-iPSC-1993-3.1-cln.swf.gz", "lublin_256.swf.gz",
                                  "KTH-SP2-1996-2.1-cln.swf.gz"])
@pytest.mark.parametrize("resources", [("cpus",), ("cpus", "memory")])
def test_fast_and_careful_paths_agree_on_traces(monkeypatch, name, resources):
    path = shared_trace(name)
    caps = {"memory": 10**5} if "memory" in resources else None
    fast, careful = both(monkeypatch, path, resources=resources, capacities=caps)
    assert fast == careful
    assert all(type(j) is Job for j in fast.jobs)
    assert [j.index for j in fast.jobs] == list(range(len(fast.jobs)))


def test_fast_and_careful_paths_agree_on_skips(tmp_path, monkeypatch):
    # run < 0, procs < 1 with and without requested procs, too wide, no estimate
    text = HEADER + "".join([
        line(1, 0, 10, 1, 5), line(2, 1, -1, 2), line(3, 2, 10, -1, req_procs=4),
        line(4, 3, 10, 0), line(5, 4, 10, 99, 20), line(6, 5, 0, 3),
        line(7, 6, 50, 2, 20, req_mem=7),
    ])
    p = tmp_path / "t.swf"
    p.write_text(text)
    fast, careful = both(monkeypatch, p, resources=("cpus", "memory"),
                         capacities={"memory": 12})
    assert fast == careful
    assert fast.skipped == {"cpus request > capacity": 1, "memory request > capacity": 1,
                            "procs < 1": 1, "run time < 0": 1}
    assert [j.id for j in fast.jobs] == [1, 3, 6]
    assert fast.jobs[1] == Job(3, 1, 2, 10, 10, (4, 0))
    assert hash(fast.jobs[1]) == hash(Job(3, 1, 2, 10, 10, (4, 0)))


def test_malformed_line_is_reported_by_the_careful_path(tmp_path):
    bad = line(2, 5, 30, 2).replace(" 30 ", " 3x0 ")
    body = line(1, 0, 10, 1) + bad
    assert swf._columns_fast(body.encode(), False) is None  # the fast path declines it
    p = tmp_path / "t.swf"
    p.write_text(HEADER + body)
    with pytest.raises(WorkloadError) as err:
        load_workload(p)
    assert (err.value.line, err.value.col) == (4, bad.index("3x0") + 1)
    assert err.value.message == "field 4 is not an integer: `3x0`"
    w = load_workload(p, lenient=True)
    assert [j.id for j in w.jobs] == [1] and w.skipped == {"malformed line": 1}
