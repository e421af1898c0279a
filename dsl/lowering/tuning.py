"""Lowering a self-tuning dynP policy (papers/001, section 2): its candidates are resolved
among the visible policies and checked (each must plan every waiting job, on one machine),
and the tuned ``ir.Policy`` takes its first candidate's fields, its own name, file and
invariants, the union of the candidates' params, and ``ir.Tuning``."""

from __future__ import annotations

from typing import Any

from attrs import evolve

from schedc.dsl import ir
from schedc.dsl.diagnostics import did_you_mean
from schedc.dsl.syntax import ast

# `Compiler` and its located clauses (dsl/lowering/policies.py, which calls this module): not
# imported, not even for type checking, so that the two modules make no import cycle
Compiler = Any
_Located = Any

TUNING_KINDS = ("candidates", "metric", "decider", "step")
# the clauses of a planning policy: a dynP policy's passes are its candidates'
PASS_KINDS = ("machine", "order", "reserve", "backfill", "size", "slack", "preempt",
              "mechanism", "victims", "keep", "dispatch", "resume", "checkpoint", "limit",
              "quantum", "resident", "leftover", "subset")
_CHOICES = {"metric": ir.TUNING_METRICS, "decider": ir.DECIDERS, "step": ir.TUNING_STEPS}
_DEFAULTS = {"decider": "advanced", "step": "submit"}


def is_tuned(eff: dict[str, list[_Located]]) -> bool:
    return any(k in eff for k in TUNING_KINDS)


def why_not_planning(p: ir.Policy) -> str | None:
    """Why ``p`` has no full plan (the IR side of runtime/engine/planning.why_not_planning)."""
    if p.depth is not None:
        return "it does not reserve every waiting job that does not fit"
    if p.backfill.kind == "none":
        return "with `backfill none` a pass stops at the first job that does not fit"
    if p.slack is not None:  # the self-tuning step plans reservations at their earliest fits
        return "its `slack` holds reservations after their earliest fits"
    return None


def lower_tuned(c: Compiler, p: ast.Policy, file: str, eff: dict[str, list[_Located]]
                ) -> ir.Policy | None:
    """The tuned policy's IR, or None after reporting every problem found."""
    report = c.report
    n_errors = len(report.diagnostics)
    inherited = []
    for kind in PASS_KINDS:
        for loc in eff.get(kind, []):
            if any(x is loc.clause for x in p.clauses):
                report.error(loc.clause.span, f"dynP policy `{p.name}` cannot have a `{kind}` "
                             "clause", f"`{kind}` belongs to its candidates: write it in one "
                             "of them (a dynP policy's passes are its candidates')")
            else:
                inherited.append((kind, loc))
    for kind, loc in inherited[:1]:  # one mistake (the `extends`), said once
        report.error(p.name_span, f"dynP policy `{p.name}` inherits a `{kind}` clause "
                             f"(at {loc.clause.span.location()})",
                             "a dynP policy may extend only another dynP policy (to change "
                             "its candidates, metric, decider or step), and a planning "
                             "policy may not extend a dynP policy")
    if "candidates" not in eff:
        report.error(p.name_span, f"dynP policy `{p.name}` has no `candidates` clause",
                     "name two or more planning policies: `candidates conservative, "
                     "conservative_sjf`")
    if "metric" not in eff:
        report.error(p.name_span, f"dynP policy `{p.name}` has no `metric` clause",
                     "add one of: `metric " + "`, `metric ".join(ir.TUNING_METRICS) + "`")
    words = dict(_DEFAULTS)
    for kind in ("metric", "decider", "step"):
        for loc in eff.get(kind, []):
            cl: ast.TuningClause = loc.clause
            if cl.value in _CHOICES[kind]:
                words[kind] = cl.value
                continue
            choices = ", ".join(_CHOICES[kind])
            hint = did_you_mean(cl.value, _CHOICES[kind])
            report.error(cl.value_span, f"unknown {kind} `{cl.value}`",
                         (f"{hint} " if hint else "") + f"the {kind}s are: {choices}")
    candidates = _candidates(c, p, file, eff.get("candidates", []))
    if candidates is None or len(report.diagnostics) > n_errors:
        return None
    first = candidates[0]
    invariants = []
    for loc in eff.get("invariant", []):
        cl = loc.clause
        e = c.lowerer.expect(cl.expr, c.scope(loc, first.machine, size_ok=True), ("bool",),
                             "an invariant")
        invariants.append(None if e is None else ir.Invariant(e, cl.text, cl.span))
    # its own, not its first candidate's: a candidate's `waive` covers that candidate's verdicts
    waivers = c.waivers(eff, "tuned")
    if len(report.diagnostics) > n_errors:
        return None
    warnings = tuple(c.promise_warnings(eff))
    used = {q.name: q for cand in candidates for q in cand.params}
    used |= {n.name: c.params[n.name] for i in invariants for n in ir.walk(i.expr)
             if isinstance(n, ir.ParamRef) and n.name in c.params}
    params = tuple(sorted(used.values(), key=lambda q: c.symbols.order[q.name]))
    span = eff["candidates"][0].clause.span
    tuning = ir.Tuning(candidates, words["metric"], words["decider"], words["step"], span=span)
    return evolve(first, name=p.name, file=file, params=params, invariants=tuple(invariants),
                  tuning=tuning, warnings=warnings, waivers=waivers)


def _candidates(c: Compiler, p: ast.Policy, file: str, locs: list[_Located]
                ) -> tuple[ir.Policy, ...] | None:
    """The candidates' IR in the order written, or None after reporting."""
    if not locs:
        return None
    loc = locs[0]
    cl: ast.CandidatesClause = loc.clause
    report = c.report
    out: list[ir.Policy] = []
    seen: set[str] = set()
    ok = True
    for name, span in zip(cl.names, cl.name_spans or (cl.span,) * len(cl.names), strict=True):
        if name in seen:
            report.error(span, f"candidate `{name}` is named twice", "name each policy once")
            ok = False
            continue
        seen.add(name)
        sym = c.symbols.lookup("policy", name, loc.file)
        if sym is None:
            c.symbols.not_found("policy", name, loc.file, span, "policy")
            ok = False
            continue
        if sym.item is p:
            report.error(span, f"dynP policy `{p.name}` names itself as a candidate",
                         "its candidates are the planning policies it picks among")
            ok = False
            continue
        if id(sym.item) in c.compiling:  # a dynP policy whose candidates lead back here
            report.error(span, f"candidate `{name}` is itself a dynP policy",
                         "name planning policies only")
            ok = False
            continue
        cand = c.compiled(sym.item, sym.file)
        if cand is None:
            ok = False  # its own problems are reported at its declaration
            continue
        if cand.tuning is not None:
            report.error(span, f"candidate `{name}` is itself a dynP policy",
                         f"name its candidates ({', '.join(q.name for q in cand.tuning.candidates)}"
                         ") here instead")
            ok = False
            continue
        why = why_not_planning(cand)
        if why is not None:
            report.error(span, f"candidate `{name}` does not plan every waiting job: {why}",
                         "a self-tuning step compares full plans: give it `reserve all` and "
                         "`backfill first_fit` (see examples/conservative.pol)")
            ok = False
            continue
        if out and _resources(cand) != _resources(out[0]):
            report.error(span, f"candidate `{name}` runs on machine `{cand.machine.name}` "
                         f"({', '.join(_resources(cand))}), but `{out[0].name}` on "
                         f"`{out[0].machine.name}` ({', '.join(_resources(out[0]))})",
                         "the candidates plan the same machine: give them one machine")
            ok = False
            continue
        out.append(cand)
    if ok and len(cl.names) < 2:
        report.error(cl.span, f"dynP policy `{p.name}` needs at least two candidates, "
                     f"but names {len(cl.names)}", "with one candidate, use that policy")
        ok = False
    return tuple(out) if ok else None


def _resources(p: ir.Policy) -> tuple[str, ...]:
    return tuple(r.name for r in p.machine.resources)
