"""A workload mistake is a located diagnostic like a policy one (`DiagnosticError`), and keeps
its constructor, attributes and short `str`."""

from __future__ import annotations

import pickle

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
