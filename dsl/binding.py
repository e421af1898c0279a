"""Param values given as text (`--param NAME=VALUE`, a state file's params) read as the
language reads a constant and checked by the rules of `dsl/params.py`: each value (rules 1
to 3), then the preemption settings the values give (rule 4)."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from functools import lru_cache

from schedc.dsl import ir
from schedc.dsl.diagnostics import Diagnostic, DiagnosticError, Reporter, did_you_mean
from schedc.dsl.lowering.policies import Compiler
from schedc.dsl.number_text import RANGE_HELP, number_problem, short
from schedc.dsl.params import (
    ParamValue,
    bound_settings,
    depth_param,
    located,
    value_problem,
)
from schedc.dsl.syntax.loader import load_program

_NAME = "_param_value"
_EXAMPLES = {
    "int": "an integer or a duration, e.g. 4, 30min, 2h, 1d",
    "real": "a number, e.g. 0.5, 1/3, 2e3 or 90s",
    "bool": "true or false",
}


def read_value(p: ir.Param, text: str) -> ParamValue:
    """``text`` read as the language reads a param's default (rule 1); raises
    DiagnosticError located at the param's declaration."""
    problem = number_problem(text)  # before the compiler reads it: 1e999999999 never ends
    if problem is not None:
        raise DiagnosticError([located(p, f"bad value for param `{p.name}`: {problem}",
                                       RANGE_HELP)])
    value = _read(p.type, text)
    if value is None:
        raise DiagnosticError([located(p, f"bad value `{short(text)}` for param `{p.name}`: it is "
                                          f"{p.type}", f"give {_EXAMPLES[p.type]}: "
                                          f"--param {p.name}=...")])
    return Fraction(value) if p.type == "real" else value


@lru_cache(maxsize=256)  # compiling with the prelude takes milliseconds; replays repeat values
def _read(type_: str, text: str) -> ParamValue | None:
    where = "<--param>"
    report = Reporter()
    # a name of its own: the prelude, loaded with it, may declare the param itself
    program = load_program(where, f"param {_NAME}: {type_} = {text}\n", report)
    if not program.ok or len(program.modules[where].module.items) != 1:
        return None
    compiler = Compiler(program, report)
    compiler.check_all()
    if _NAME not in compiler.params or report.diagnostics:
        return None
    return compiler.params[_NAME].default


def bind(policy: ir.Policy, given: Mapping[str, str] | None) -> dict[str, ParamValue]:
    """The policy's param values: the defaults overridden by ``given`` (text, as from the
    command line), each read and checked by the rules; all mistakes reported at once."""
    known = {p.name: p for p in policy.params}
    values: dict[str, ParamValue] = {p.name: p.default for p in policy.params}
    errors: list[Diagnostic] = []
    given = given or {}
    for name, text in given.items():
        if name not in known:
            names = ", ".join(known) or "none"
            errors.append(Diagnostic(f"policy `{policy.name}` has no param `{name}`",
                                     help=did_you_mean(name, known) or f"its params: {names}"))
            continue
        try:
            values[name] = read_value(known[name], text)
        except DiagnosticError as err:
            errors.extend(err.diagnostics)
            values.pop(name)
    depth = depth_param(policy)
    for p in policy.params:
        problem = value_problem(p, values[p.name], p.name == depth) if p.name in values \
            else None
        if problem is not None:
            errors.append(located(p, *problem))
    if errors:
        raise DiagnosticError(errors)
    for p in policy.params:
        if p.type == "real":
            values[p.name] = Fraction(values[p.name])
    errors = bound_settings(policy, values)  # rule 4: the settings these values give
    if errors:
        raise DiagnosticError(errors)
    return values
