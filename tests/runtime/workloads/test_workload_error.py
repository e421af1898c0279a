"""A workload mistake is a located diagnostic like a policy one (`DiagnosticError`), and keeps
its constructor, attributes and short `str`."""

from __future__ import annotations

import pickle

import pytest

from schedc.dsl import DiagnosticError, render_diagnostics
from schedc.runtime.workloads.workload import WorkloadError


def test_a_workload_error_is_a_located_diagnostic() -> None:
    error = WorkloadError("t.swf", 2, 3, "field 2 is not an integer: `zz`", help="fix it",
                          source_line="2 zz 1")
    assert isinstance(error, DiagnosticError)
    d = error.diagnostic
    assert (d.file, d.line, d.col, d.end_line, d.end_col) == ("t.swf", 2, 3, 2, 5)
    assert (d.message, d.help, d.source) == ("field 2 is not an integer: `zz`", "fix it",
                                             "2 zz 1")
    assert "2 | 2 zz 1\n  |   ^^\n" in render_diagnostics(error.diagnostics)
    assert str(error) == ("t.swf:2:3: field 2 is not an integer: `zz`\n  | 2 zz 1\n"
                          "  |   ^\nhelp: fix it")


def test_without_a_location_it_names_the_file() -> None:
    error = WorkloadError("t.csv", None, None, "unknown workload format")
    assert str(error) == "t.csv: unknown workload format"
    d = error.diagnostic
    assert (d.file, d.line, d.end_col) == ("t.csv", None, None)


def test_it_crosses_processes() -> None:
    error = WorkloadError("t.swf", 1, None, "bad", help="h")
    back = pickle.loads(pickle.dumps(error))
    assert (back.path, back.line, back.col, back.message, back.help) == ("t.swf", 1, None,
                                                                         "bad", "h")
    assert back.diagnostics == error.diagnostics


def test_a_byte_order_mark_does_not_hide_the_first_column(tmp_path) -> None:
    from schedc.runtime.workloads.load import load_workload

    table = tmp_path / "jobs.csv"
    table.write_bytes("\ufeffid,submit,run_time,estimate,cpus\n7,0,10,20,2\n".encode())
    w = load_workload(str(table), capacities={"cpus": 4})
    assert [(j.id, j.run_time, j.estimate) for j in w.jobs] == [(7, 10, 20)]


@pytest.mark.parametrize("content", [b"not gzip", b"\x1f\x8b\x08\x00\x00"])
def test_a_damaged_gz_is_a_diagnostic_with_help(tmp_path, content) -> None:
    from schedc.runtime.workloads.load import load_workload
    from schedc.runtime.workloads.workload import WorkloadError

    trace = tmp_path / "trace.swf.gz"
    trace.write_bytes(content)
    with pytest.raises(WorkloadError) as caught:
        load_workload(str(trace))
    assert caught.value.diagnostic.file == str(trace)
    assert "gzip -t" in caught.value.diagnostic.help
