"""The policy language: parser, checks and diagnostics, the policy IR and its interpreters."""

from schedc.dsl.api import (
    CheckResult,
    Diagnostic,
    DiagnosticError,
    check_file,
    check_source,
    compile_file,
    compile_source,
    policy_to_json,
    render_diagnostics,
)

__all__ = [
    "CheckResult", "Diagnostic", "DiagnosticError", "check_file", "check_source",
    "compile_file", "compile_source", "policy_to_json", "render_diagnostics",
]
