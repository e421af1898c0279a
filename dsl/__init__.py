"""The policy language: parser, checks and diagnostics, the policy IR and its interpreters.

The public names live in ``schedc.dsl.api`` and are loaded on first use: importing a light
module of the package (``schedc.dsl.diagnostics``, as the CLI does at start-up) must not load
the parser and the compiler."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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


def __getattr__(name: str) -> Any:
    if name in __all__:
        from schedc.dsl import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
