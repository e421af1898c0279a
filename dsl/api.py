"""The public API of the policy language (re-exported by `schedc.dsl`)."""

from __future__ import annotations

import os

from attrs import frozen

from schedc.dsl import ir
from schedc.dsl.diagnostics import (
    Diagnostic,
    DiagnosticError,
    Reporter,
    dedupe,
    did_you_mean,
    read_source,
    render_diagnostics,
)
from schedc.dsl.ir_json import policy_to_json
from schedc.dsl.lowering.policies import Compiler
from schedc.dsl.syntax import ast
from schedc.dsl.syntax.loader import PRELUDE, load_program

__all__ = [
    "CheckResult", "Diagnostic", "DiagnosticError", "check_file", "check_source",
    "compile_file", "compile_source", "policy_to_json", "render_diagnostics",
]


@frozen
class CheckResult:
    diagnostics: tuple[Diagnostic, ...]
    policies: tuple[str, ...]  # defined in the checked file itself, in source order

    @property
    def ok(self) -> bool:
        return not any(d.severity == "error" for d in self.diagnostics)


def _check(text: str, filename: str, loaded: dict[str, str] | None = None
           ) -> tuple[CheckResult, dict[str, ir.Policy]]:
    report = Reporter()
    program = load_program(filename, text, report)
    if loaded is not None:  # the texts read, for a run's provenance (the prelude is ours)
        loaded.update((f, m.text) for f, m in program.modules.items() if f != PRELUDE)
    compiled: dict[str, ir.Policy] = {}
    own: tuple[str, ...] = ()
    if program.ok:
        compiled = Compiler(program, report).check_all()
    if filename in program.modules:
        own = tuple(
            it.name for it in program.modules[filename].module.items
            if isinstance(it, ast.Policy)
        )
    return CheckResult(dedupe(report.diagnostics), own), compiled


def _read(path: str | os.PathLike) -> tuple[str, str]:
    name = os.fspath(path)
    try:
        return name, read_source(name)
    except OSError as err:
        raise DiagnosticError([Diagnostic(
            f"cannot read `{name}`: {err.strerror}", help="check the path of the policy file"
        )]) from None


def check_source(text: str, filename: str = "<string>") -> CheckResult:
    return _check(text, filename)[0]


def check_file(path: str | os.PathLike) -> CheckResult:
    """All diagnostics of the file and of the files it imports."""
    try:
        name, text = _read(path)
    except DiagnosticError as err:
        return CheckResult(err.diagnostics, ())
    return check_source(text, name)


def compile_source(text: str, filename: str = "<string>", policy_name: str | None = None,
                   *, loaded: dict[str, str] | None = None,
                   select_help: str = "pass --policy NAME") -> ir.Policy:
    """The policy ``policy_name`` (or the file's only one). ``loaded``, if given, gets the text
    of every file read (this one and its imports); ``select_help`` says how the caller's
    user names one policy of a file that defines several."""
    result, compiled = _check(text, filename, loaded)
    if not result.ok:
        raise DiagnosticError(result.diagnostics)
    if policy_name is None:
        if len(result.policies) != 1:
            names = ", ".join(f"`{n}`" for n in result.policies)
            msg = (f"{filename} defines no policy" if not result.policies
                   else f"{filename} defines {len(result.policies)} policies: {names}")
            help_ = (f"{select_help} (an imported policy counts only when named)"
                     if not result.policies else select_help)
            raise DiagnosticError([Diagnostic(msg, help=help_)])
        policy_name = result.policies[0]
    if policy_name not in compiled:
        raise DiagnosticError([Diagnostic(
            f"no policy `{policy_name}` in {filename} or its imports",
            help=did_you_mean(policy_name, compiled) or
            f"policies: {', '.join(sorted(compiled)) or 'none'}",
        )])
    return compiled[policy_name]


def compile_file(path: str | os.PathLike, policy_name: str | None = None, *,
                 loaded: dict[str, str] | None = None,
                 select_help: str = "pass --policy NAME") -> ir.Policy:
    name, text = _read(path)
    return compile_source(text, name, policy_name, loaded=loaded, select_help=select_help)
