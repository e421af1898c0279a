"""Binding param values and building the simulator's `RuntimePolicy` from the IR."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from attrs import evolve

from schedc.dsl import ir
from schedc.dsl.binding import bind as bind_params
from schedc.dsl.diagnostics import Diagnostic, DiagnosticError, read_line
from schedc.dsl.number_text import show
from schedc.dsl.semantics.evaluate import Env, EvaluationError, evaluate
from schedc.dsl.semantics.pass_state import CONSTANT_STATE
from schedc.dsl.semantics.python_code import compile_functions
from schedc.dsl.tuning import candidate_policies, params_for
from schedc.runtime.engine.lifecycle import Mechanism
from schedc.runtime.engine.policy import (
    PreemptionRules,
    RuntimeInvariant,
    RuntimePolicy,
    RuntimeTuning,
    SplitRule,
)
from schedc.runtime.engine.rule_split import split_rule
from schedc.runtime.jobs import Job


def to_runtime(policy: ir.Policy, params: Mapping[str, str] | None = None) -> RuntimePolicy:
    """Bind params and generate the simulator's callables from the IR.

    A self-tuning dynP policy (``policy.tuning``) becomes its first candidate's fields with
    its own name and invariants, and a ``RuntimeTuning`` of its candidates, each with the
    tuned invariants added (``dsl/tuning.py``) and bound to the params it reads."""
    if policy.tuning is not None:
        bind_params(policy, params)  # the tuned policy's params: the union of its candidates'
        t = policy.tuning
        candidates = tuple(to_runtime(c, params_for(c, params))
                           for c in candidate_policies(policy))
        own = to_runtime(evolve(policy, tuning=None), params)
        # the labels any candidate reads: a run loads them all, whichever candidate decides
        read = {a for p in (own, *candidates) for a in p.labels_read or ()}
        return evolve(own, tuning=RuntimeTuning(candidates, t.metric, t.decider, t.step),
                      labels_read=tuple(a for a in ir.LABEL_ATTRS if a in read))
    values = bind_params(policy, params)  # the language's rules (dsl/params.py)
    depth = policy.depth
    if isinstance(depth, ir.ParamRef):
        depth = values[depth.name]
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
    if policy.slack is not None:
        bodies["slack"] = policy.slack
    if policy.size_low is not None:
        bodies["size_low"] = policy.size_low
    if policy.size is not None:
        bodies["size"] = policy.size
        # `choose`: each candidate is checked instead; a preemptive pass checks its sizes
        if policy.size_choices is None and policy.preemption is None:
            wrap["size"] = "_check_size"
    for i, inv in enumerate(policy.invariants):
        bodies[f"invariant_{i}"] = inv.expr
    args: dict[str, tuple[tuple[str, str], ...]] = {}
    if policy.preemption is not None:
        args = _preemption_bodies(policy.preemption, bodies, values)
    fns, _ = compile_functions(bodies, values, rigid=policy.size is None, wrap=wrap, args=args)
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
        slack=fns.get("slack"),
        invariants=invariants,
        state_free=ir.state_free(policy),
        labels_read=ir.labels_read(policy),
        preemption=(None if policy.preemption is None
                    else _rules(policy.preemption, fns, values, _reads_jobs(policy))),
    )


def _reads_jobs(policy: ir.Policy) -> bool:
    """Some formula of a preemptive policy reads the queue or the running jobs (`job.size`
    reads the running ones), so its passes must show them."""
    exprs = ir.decision_exprs(policy) + [i.expr for i in policy.invariants]
    if policy.preemption is not None:
        exprs += policy.preemption.exprs()
    return any(ir.dependencies(e) & {"queue", "running"}
               or any(isinstance(n, ir.JobAttr) and n.attr == "size" for n in ir.walk(e))
               for e in exprs)


_ACTIVE = (("job", "active"),)  # a preemptive policy's job is a ``JobLife``
_COSTS_AND_KEEP = ("keep", "dispatch", "resume", "checkpoint")  # functions of one ``JobLife``


def _preemption_bodies(p: ir.Preemption, bodies: dict[str, ir.Expr | tuple[ir.Expr, ...]],
                       values: Mapping[str, object]) -> dict[str, tuple[tuple[str, str], ...]]:
    """Add a preemptive policy's formulas to ``bodies``; the arguments of each function."""
    args = {"order_key": _ACTIVE, "size": _ACTIVE}
    if p.rule is not None:
        bodies["may_preempt"] = p.rule
        args["may_preempt"] = (("cand", "active"), ("victim", "active"))
        split = split_rule(p.rule, values)
        if split is not None:
            for side in ("cand", "victim"):
                exprs = split[side]
                if exprs:
                    bodies[f"rule_{side}"] = exprs
                    args[f"rule_{side}"] = ((side, "active"),)
    for i, m in enumerate(p.mechanisms):
        if m.when is not None:
            bodies[f"mechanism_{i}"] = m.when  # of the queued job, at its submission
    if p.victims:
        bodies["victim_key"] = tuple(_negate(k.expr) if k.descending else k.expr
                                     for k in p.victims)
        args["victim_key"] = (("victim", "active"),)
    for name in _COSTS_AND_KEEP:
        e = getattr(p, name)
        if e is not None:
            bodies[name] = e
            args[name] = _ACTIVE
    return args


def _rules(p: ir.Preemption, fns: Mapping[str, Callable], values: Mapping[str, object],
           reads_jobs: bool = True) -> PreemptionRules:
    def fixed(e: ir.Expr, what: str) -> Any:
        """A constant clause's value (params only); params it has no value for are refused
        here, located, as out-of-domain ones are (``verify`` assumes it has one)."""
        try:
            return evaluate(e, Env(CONSTANT_STATE, params=values))
        except EvaluationError as err:
            span = e.span or p.span
            read = sorted({n.name for n in ir.walk(e) if isinstance(n, ir.ParamRef)})
            given = ", ".join(f"{n}={show(values[n])}" for n in read)
            raise DiagnosticError([Diagnostic.at(
                span, f"{what} has no value with {given or 'no params'}: {err}",
                help="give the params values it is defined for (or declare their domains "
                     "so that it is)", source=read_line(span))]) from None

    def constant(e: ir.Expr | None, what: str) -> int | None:
        return None if e is None else int(fixed(e, what))

    rules = [(m.kind, fns.get(f"mechanism_{i}"), m.span) for i, m in enumerate(p.mechanisms)]

    def mechanism(job: Job) -> Mechanism:
        """The first clause whose condition holds for ``job`` (of the job and params only:
        the same at any instant); a condition that fails names its clause."""
        for kind, when, span in rules:
            try:
                holds = when is None or when(job, CONSTANT_STATE)
            except EvaluationError as err:
                where = f" ({span.location()})" if span is not None else ""
                raise EvaluationError(f"the condition of `mechanism {kind}`{where}: "
                                      f"{err}") from err
            if holds:
                return kind  # type: ignore[return-value]
        return "none"

    extra = {name: fns[name] for name in ("victim_key", "may_preempt", *_COSTS_AND_KEEP)
             if name in fns}
    split = None if p.rule is None else split_rule(p.rule, values)
    if split is not None:
        extra["split"] = SplitRule(fns.get("rule_cand"), fns.get("rule_victim"),
                                   split["checks"])
    leftover = p.leftover
    if leftover == "efficient" and p.leftover_when is not None and not fixed(
            p.leftover_when, "`leftover efficient when`"):
        leftover = "equal"
    subset = constant(p.subset, "`subset`")
    # each constant setting lies in its range (`subset` >= 1...): rule 4 of dsl/params.py,
    # checked when the params were bound
    return PreemptionRules(mechanism=mechanism, select=p.rule is None,
                           limit=constant(p.limit, "`limit preemptions`"),
                           resident=constant(p.resident, "`resident`"),
                           quantum=constant(p.quantum, "`quantum`"), size=fns.get("size"),
                           leftover=leftover, subset=subset, reads_jobs=reads_jobs,
                           **extra)


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
