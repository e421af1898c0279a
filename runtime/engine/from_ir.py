"""Binding param values and building the simulator's `RuntimePolicy` from the IR."""

from __future__ import annotations

import re
from collections.abc import Mapping
from fractions import Fraction

from schedc.dsl import ir
from schedc.dsl.diagnostics import Diagnostic, DiagnosticError, did_you_mean
from schedc.dsl.exact import parse_real, show
from schedc.dsl.semantics.python_code import compile_functions
from schedc.runtime.engine.policy import RuntimeInvariant, RuntimePolicy

_INT = re.compile(r"[+-]?[0-9]+")


def parse_value(p: ir.Param, text: str) -> int | Fraction | bool:
    """A CLI value for ``p``; raises DiagnosticError with a clear message."""
    t = text.strip()
    value: int | Fraction | bool | None = None
    if p.type == "int" and _INT.fullmatch(t):
        value = int(t)
    elif p.type == "real":
        value = parse_real(t)  # exact: `--param target=0.9` is 9/10, as the bound 0.9
    elif p.type == "bool" and t in ("true", "false"):
        value = t == "true"
    if value is None:
        example = {"int": "an integer like 4", "real": "a number like 0.5 or 1/3",
                   "bool": "true or false"}[p.type]
        raise DiagnosticError([Diagnostic(
            f"bad value `{text}` for param `{p.name}`: it is {p.type}",
            help=f"give {example}: --param {p.name}=...",
        )])
    if p.lo is not None and not p.lo <= value <= p.hi:
        raise DiagnosticError([Diagnostic(
            f"value {show(value)} for param `{p.name}` is outside its domain "
            f"[{show(p.lo)}, {show(p.hi)}]",
            help=f"choose a value between {show(p.lo)} and {show(p.hi)}",
        )])
    return value


def bind_params(policy: ir.Policy, given: Mapping[str, str] | None) -> dict[str, object]:
    """Param values: the defaults overridden by ``given`` (text, as from the CLI)."""
    known = {p.name: p for p in policy.params}
    values: dict[str, object] = {p.name: p.default for p in policy.params}
    errors = []
    for name, text in (given or {}).items():
        if name not in known:
            names = ", ".join(known) or "none"
            errors.append(Diagnostic(
                f"policy `{policy.name}` has no param `{name}`",
                help=did_you_mean(name, known) or f"its params: {names}",
            ))
            continue
        try:
            values[name] = parse_value(known[name], text)
        except DiagnosticError as err:
            errors.extend(err.diagnostics)
    if errors:
        raise DiagnosticError(errors)
    for p in policy.params:
        if p.type == "real":
            values[p.name] = Fraction(values[p.name])
    return values


def to_runtime(policy: ir.Policy, params: Mapping[str, str] | None = None) -> RuntimePolicy:
    """Bind params and generate the simulator's callables from the IR."""
    values = bind_params(policy, params)
    depth = policy.depth
    if isinstance(depth, ir.ParamRef):
        depth = values[depth.name]
        if depth < 0:
            raise DiagnosticError([Diagnostic(
                f"reservation depth `{policy.depth.name}` = {depth} is negative",
                help="give a value of at least 0",
            )])
    bodies: dict[str, ir.Expr | tuple[ir.Expr, ...]] = {}
    wrap = {}
    order = _without_redundant_tail(policy.order)
    if order:
        # Descending keys are negated so that the simulator always sorts ascending.
        bodies["order_key"] = tuple(_negate(k.expr) if k.descending else k.expr for k in order)
    if policy.backfill.score is not None:
        s = policy.backfill.score
        bodies["score"] = _negate(s) if policy.backfill.descending else s
    if policy.backfill.condition is not None:
        bodies["backfill_when"] = policy.backfill.condition
    if policy.reserve_per is not None:
        bodies["reserve_key"] = policy.reserve_per
    if policy.reserve_when is not None:
        bodies["reserve_when"] = policy.reserve_when
    if policy.size_low is not None:
        bodies["size_low"] = policy.size_low
    if policy.size is not None:
        bodies["size"] = policy.size
        if policy.size_choices is None:  # `choose`: each candidate is checked instead
            wrap["size"] = "_check_size"
    for i, inv in enumerate(policy.invariants):
        bodies[f"invariant_{i}"] = inv.expr
    fns, _ = compile_functions(bodies, values, rigid=policy.size is None, wrap=wrap)
    invariants = tuple(
        RuntimeInvariant(inv.text, inv.span.location() if inv.span else policy.file,
                         fns[f"invariant_{i}"], reads_state=ir.reads_state(inv.expr))
        for i, inv in enumerate(policy.invariants)
    )
    return RuntimePolicy(
        name=policy.name,
        resources=tuple(r.name for r in policy.machine.resources),
        capacities=tuple(r.capacity for r in policy.machine.resources),
        depth=depth,
        backfill=policy.backfill.kind,
        order_key=fns.get("order_key"),
        order_static=ir.order_static(policy),
        score=fns.get("score"),
        size=fns.get("size"),
        size_low=fns.get("size_low"),
        size_choices=policy.size_choices,
        size_fixed=policy.size_fixed,
        backfill_when=fns.get("backfill_when"),
        reserve_key=fns.get("reserve_key"),
        reserve_when=fns.get("reserve_when"),
        invariants=invariants,
        state_free=ir.state_free(policy),
    )


def _without_redundant_tail(order: tuple[ir.OrderKey, ...]) -> tuple[ir.OrderKey, ...]:
    """Drop trailing `job.submit asc` keys: the simulator appends (submit, file order) to
    every key, so they change no order, and an empty key lets it use its FCFS fast path."""
    keys = list(order)
    while keys and not keys[-1].descending and keys[-1].expr == _SUBMIT:
        keys.pop()
    return tuple(keys)


_SUBMIT = ir.JobAttr("job", "submit", "int")


def _negate(e: ir.Expr) -> ir.Expr:
    # A bool key becomes an int so that `desc` puts true first.
    typ = "int" if e.type == "bool" else e.type
    return ir.Unary("-", e, typ, span=e.span)
