"""Proving a policy's properties with Z3, one scheduling pass over bounded symbolic states.

Each property is checked as "assumptions and pass and not property" being unsatisfiable:
unsat is a proof (for every state within the bounds), sat gives a counterexample state,
anything else is unknown with Z3's reason. Assumptions are tracked by name, so a proof
reports which of them it used (the unsat core). Z3's ``rlimit`` bounds the work, so a verdict
does not depend on the machine's speed; a wall-clock timeout is a second guard.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

import attrs
import z3
from attrs import frozen

from schedc.dsl import ir
from schedc.dsl.diagnostics import Span
from schedc.dsl.sympass import Bounds, SymbolicPass, Unsupported, encode_pass

PROPERTIES = ("capacity", "size-bounds", "well-defined", "reservation-safety", "progress")


@frozen
class Limits:
    rlimit: int = 50_000_000  # Z3 resource units per property (deterministic)
    timeout_ms: int = 60_000  # wall clock per property


@frozen
class Verdict:
    property: str  # one of PROPERTIES, or "invariant `TEXT`"
    status: str  # proved | violated | unknown
    seconds: float
    bound: str  # e.g. "N=8 queued, R=8 running, K=1"
    location: Span | None = None  # of the invariant or the failing operation
    reason: str | None = None  # unknown: why; violated: what failed
    core: tuple[str, ...] = ()  # proved: the assumptions the proof used
    counterexample: dict[str, Any] | None = None  # violated: a state `schedc run --state` replays


def verify_policy(policy: ir.Policy, bounds: Bounds | None = None, limits: Limits | None = None,
                  only: Iterable[str] | None = None) -> list[Verdict]:
    """Every property of ``policy`` (or those named in ``only``), in a fixed order."""
    bounds = bounds or Bounds()
    limits = limits or Limits()
    wanted = set(only) if only is not None else None
    bound = (f"N={bounds.queued} queued, R={bounds.running} running, "
             f"K={len(policy.machine.resources)}")
    verdicts: list[Verdict] = []
    try:
        sym = encode_pass(policy, bounds)
    except Unsupported as exc:
        names = [*PROPERTIES, *(f"invariant `{i.text}`" for i in policy.invariants)]
        return [Verdict(name, "unknown", 0.0, bound, reason=str(exc)) for name in names
                if wanted is None or _base(name) in wanted]

    def want(name: str) -> bool:
        return wanted is None or name in wanted

    if want("capacity"):
        prop = z3.And([u <= c for u, c in zip(sym.used_after, sym.capacity, strict=True)])
        verdicts.append(_check(sym, "capacity", prop, bound, limits))
    if want("size-bounds"):
        conditions = [z3.Implies(sym.decisions[q].visited,
                                 z3.And(size >= 1, size <= sym.capacity[0]))
                      for q, size in sym.size_results]
        verdicts.append(_check(sym, "size-bounds", z3.And(conditions), bound, limits,
                               note=None if conditions else "rigid sizes: the requests"))
    invariant_props = []
    for inv in policy.invariants:
        # Evaluate before well-defined is checked: invariants bring their own obligations.
        holds = []
        for d in sym.decisions:
            state = sym.state_at(d.slot, including=True)
            value = sym.evaluate(inv.expr, sym.queue[d.slot], state, d.started,
                                 size=d.alloc[0])
            holds.append(z3.Implies(d.started, value))
        invariant_props.append((inv, z3.And(holds)))
    if want("well-defined"):
        verdicts.append(_well_defined(sym, bound, limits))
    if want("reservation-safety"):
        verdicts.append(_reservation_safety(sym, bound, limits))
    if want("progress"):
        idle = encode_pass(policy, bounds, idle=True)
        verdicts.append(_check(idle, "progress", z3.Or([d.started for d in idle.decisions]),
                               bound, limits, location=policy.backfill.span))
    for inv, prop in invariant_props:
        name = f"invariant `{inv.text}`"
        if wanted is None or "invariant" in wanted:
            verdicts.append(_check(sym, name, prop, bound, limits, location=inv.span))
    return verdicts


def with_resources(policy: ir.Policy, k: int) -> ir.Policy:
    """The policy on a machine of ``k`` resources: its own, then generic ones (`r2`, ...)
    with capacities left symbolic, so that a proof covers every such machine."""
    own = policy.machine.resources
    if k < len(own):
        raise ValueError(f"the machine `{policy.machine.name}` already has {len(own)} "
                         f"resources: {', '.join(r.name for r in own)}")
    names = {r.name for r in own}
    extra = []
    i = len(own) + 1
    while len(own) + len(extra) < k:
        if f"r{i}" not in names:
            extra.append(ir.Resource(f"r{i}", None))
        i += 1
    machine = attrs.evolve(policy.machine, name=f"{policy.machine.name}+{len(extra)}",
                           resources=(*own, *extra))
    return attrs.evolve(policy, machine=machine)


def _base(name: str) -> str:
    return "invariant" if name.startswith("invariant") else name


def _reservation_safety(sym: SymbolicPass, bound: str, limits: Limits) -> Verdict:
    where = sym.policy.backfill.span  # the rule that decides what may start beside them
    """By induction over the walk, one small lemma a job: if the plan of the first c jobs
    never overcommits, neither does the plan of the first c + 1 (each start and each
    reservation was fitted into a plan holding every earlier reservation). The final plan
    then keeps every reservation: a failed lemma is a real state whose plan overcommits."""
    started = time.perf_counter()
    cores: set[str] = set()
    n = len(sym.decisions)
    steps = [(f"the plan of the first {c + 1} jobs", c,
              z3.Implies(sym.profile_ok(c), sym.profile_ok(c + 1))) for c in range(n)]
    # The first and last steps need no decision at all (slot -1: shared equations only).
    steps.insert(0, ("the plan before the pass", -1, sym.profile_ok(0)))
    steps.append(("every reservation after the pass", -1,
                  z3.Implies(sym.profile_ok(n), z3.And(list(sym.reservations_hold)))))
    for what, step, lemma in steps:
        verdict = _check(sym, "reservation-safety", lemma, bound, limits, step=step,
                         location=where,
                         failure=f"{what} delays a reservation or overcommits")
        if verdict.status != "proved":
            return verdict
        cores.update(verdict.core)
    return Verdict("reservation-safety", "proved", time.perf_counter() - started, bound,
                   location=where, core=tuple(sorted(cores)))


def _well_defined(sym: SymbolicPass, bound: str, limits: Limits) -> Verdict:
    """Each partial operation separately: its guard implies its safety condition."""
    started = time.perf_counter()
    cores: set[str] = set()
    for ob in sym.obligations:
        verdict = _check(sym, "well-defined", z3.Implies(ob.guard, ob.safe), bound, limits,
                         location=ob.span, failure=f"{ob.kind}: {ob.text}")
        if verdict.status != "proved":
            return verdict
        cores.update(verdict.core)
    note = None if sym.obligations else "no partial operation in any formula"
    return Verdict("well-defined", "proved", time.perf_counter() - started, bound,
                   core=tuple(sorted(cores)), reason=note)


def _check(sym: SymbolicPass, name: str, prop: z3.BoolRef, bound: str, limits: Limits,
           location: Span | None = None, failure: str | None = None,
           note: str | None = None, step: int | None = None) -> Verdict:
    """``step``: only that job's equations (a lemma); a counterexample found so is checked
    again with the whole pass, so that only real states are reported."""
    solver = z3.Solver()
    solver.set("rlimit", limits.rlimit)
    solver.set("timeout", limits.timeout_ms)
    trackers: dict[str, str] = {}
    for i, assumption in enumerate(sym.assumptions):
        tracker = z3.Bool(f"assumption_{i}")
        trackers[str(tracker)] = assumption.name
        solver.assert_and_track(assumption.formula, tracker)
    solver.add(sym.definitions.all() if step is None else sym.definitions.for_step(step))
    solver.add(z3.Not(prop))
    started = time.perf_counter()
    result = solver.check()
    seconds = time.perf_counter() - started
    if result == z3.unsat:
        core = tuple(sorted({trackers[str(t)] for t in solver.unsat_core()}))
        return Verdict(name, "proved", seconds, bound, location=location, core=core,
                       reason=note)
    if result == z3.sat and step is not None:
        whole = _check(sym, name, prop, bound, limits, location, failure, note)
        return attrs.evolve(whole, seconds=seconds + whole.seconds)
    if result == z3.sat:
        if sym.uses_log():
            return Verdict(name, "unknown", seconds, bound, location=location,
                           reason="a counterexample was found with `log` left "
                           "uninterpreted; it may not be real")
        first = solver.model()  # before the search for a smaller one re-checks
        model = _small_model(solver, sym) or first
        return Verdict(name, "violated", time.perf_counter() - started, bound,
                       location=location, reason=failure or f"{name} does not hold",
                       counterexample=counterexample(sym, model))
    return Verdict(name, "unknown", seconds, bound, location=location,
                   reason=f"Z3 gave up: {solver.reason_unknown()}")


def _small_model(solver: z3.Solver, sym: SymbolicPass) -> z3.ModelRef | None:
    """A counterexample a person can read: first with few jobs and small numbers, then with
    small numbers; None if neither exists (the caller keeps Z3's first model)."""
    jobs = [*sym.running, *sym.queue]
    small = [c <= 16 for c in sym.capacity if not z3.is_int_value(c)]
    small += [sym.now <= 100_000]
    for j in jobs:
        small += [z3.Implies(j.present, z3.And(j.id <= 99, j.estimate <= 100_000,
                                               j.submit <= 100_000))]
        small += [z3.Implies(j.present, r <= 64) for r in j.request]
    few = _sum_present(jobs) <= 3
    for extra in ([few, *small], small):
        solver.push()
        solver.add(extra)
        found = solver.check() == z3.sat
        model = solver.model() if found else None
        solver.pop()
        if model is not None:
            return model
    return None


def _sum_present(jobs) -> z3.ArithRef:
    return z3.Sum([z3.If(j.present, 1, 0) for j in jobs])


def _value(model: z3.ModelRef, term: z3.ExprRef) -> int | float | bool:
    v = model.eval(term, model_completion=True)
    if z3.is_true(v) or z3.is_false(v):
        return z3.is_true(v)
    if z3.is_int_value(v):
        return v.as_long()
    if z3.is_rational_value(v):
        return float(Fraction(v.numerator_as_long(), v.denominator_as_long()))
    if z3.is_algebraic_value(v):  # an irrational root: print it as a decimal
        return float(v.approx(20).as_decimal(20).rstrip("?"))
    raise ValueError(f"unexpected model value {v}")


def counterexample(sym: SymbolicPass, model: z3.ModelRef) -> dict[str, Any]:
    """The model as a state file for `schedc run --state` (runtime/state.py's format), plus
    what the pass decided in it."""
    names = [r.name for r in sym.policy.machine.resources]

    def request(job) -> dict[str, int]:
        return {n: _value(model, job.request[k]) for k, n in enumerate(names)}

    running = []
    for r in sym.running:
        if not _value(model, r.present):
            continue
        estimate = _value(model, r.estimate)
        running.append({"id": _value(model, r.id), "submit": _value(model, r.submit),
                        "start": _value(model, r.start), "estimate": estimate,
                        "run_time": estimate, "request": request(r)})
    queue, started, reservations = [], [], {}
    for q, d in zip(sym.queue, sym.decisions, strict=True):
        if not _value(model, q.present):
            continue
        estimate = _value(model, q.estimate)
        job_id = _value(model, q.id)
        queue.append({"id": job_id, "submit": _value(model, q.submit), "estimate": estimate,
                      "run_time": estimate, "request": request(q)})
        if _value(model, d.started):
            started.append(job_id)
        if _value(model, d.reserved):
            reservations[str(job_id)] = _value(model, d.reservation)
    return {
        "now": _value(model, sym.now),
        "capacity": {n: _value(model, sym.capacity[k]) for k, n in enumerate(names)},
        "params": {name: _value(model, var) for name, var in sym.params.items()},
        "running": running,
        "queue": queue,
        "pass": {"started": started, "reservations": reservations},
    }
