"""The two sides of the concrete/symbolic agreement tests (``tests/dsl/verify/
test_dsl_agreement.py``, ``tests/runtime/engine/test_bl_window.py``): the simulator's record of
its first pass on a state, the model's record of the encoded pass pinned to the same state, and
the invariants' values on each side."""

from __future__ import annotations

import os
from fractions import Fraction

import z3
from attrs import evolve
from hypothesis import strategies as st

from schedc.dsl.semantics.decisions import PassDecisions
from schedc.runtime.engine.monitor import MonitorViolation
from schedc.runtime.engine.policy import PassState
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.jobs import RunningJob
from schedc.runtime.workloads.state_file import InitialState

# hypothesis examples per agreement test (SCHEDC_AGREEMENT_EXAMPLES=500 for a longer hunt)
EXAMPLES = int(os.environ.get("SCHEDC_AGREEMENT_EXAMPLES", "25"))


def symbolic_invariants(sym) -> list[list[z3.ExprRef]]:
    """Per queue slot, each invariant's value right after that slot's job started (at most
    one of its possible starts happens; evaluated once: ``evaluate`` appends the definitions
    it needs to ``sym.definitions``)."""
    values: list[list[z3.ExprRef]] = []
    for q in range(len(sym.queue)):
        starts = [s for s in sym.starts if s.slot == q]
        values.append([
            z3.Or([z3.And(s.guard, sym.evaluate(inv.expr, sym.queue[q], s.state, s.guard,
                                                size=s.size)) for s in starts])
            for inv in sym.policy.invariants])
    return values


# -- the concrete side ------------------------------------------------------------------------


def without_invariants(rpolicy):
    """The runtime policy without its invariants, nor its dynP candidates' (each has the
    tuned policy's added): the comparisons leave them out of the run."""
    if rpolicy.tuning is not None:
        rpolicy = evolve(rpolicy, tuning=evolve(rpolicy.tuning, candidates=tuple(
            evolve(c, invariants=()) for c in rpolicy.tuning.candidates)))
    return evolve(rpolicy, invariants=())


def concrete_decisions(rpolicy, state: InitialState, **options) -> PassDecisions:
    """The simulator's record of its first pass (at ``now``); an empty one if that pass was
    skipped (nothing could start: no decision). The invariants are left out of the run (a
    false one would stop it): ``invariant_values`` evaluates them on the record."""
    records: list[PassDecisions] = []
    simulate(without_invariants(rpolicy), state.workload, initial=state, monitor=False,
             on_pass=records.append, **options)
    first = [r for r in records if r.now == state.now]
    # the pass at now either ran once or was skipped (nothing could start)
    assert len(first) <= 1
    return first[0] if first else PassDecisions(state.now)


def first_pass(rpolicy, state: InitialState) -> tuple[str | None, PassDecisions | None, str]:
    """How the simulator's pass at now ends: (the property it stops for, or None; its record
    if it completes, empty if skipped: nothing could start; the monitor's message). The
    invariants are left out (``invariant_values`` evaluates them on the record)."""
    records: list[PassDecisions] = []
    try:
        simulate(without_invariants(rpolicy), state.workload, initial=state, monitor=False,
                 on_pass=records.append)
    except MonitorViolation as stop:
        if str(stop).startswith(f"t={state.now}:"):
            return stop.kind, None, str(stop)
    first = [r for r in records if r.now == state.now]
    return None, first[0] if first else PassDecisions(state.now), ""


def by_end(rj) -> tuple[int, int]:
    """The simulator's order of its running set: by estimated end, then file order."""
    return rj.start + rj.job.estimate, rj.job.index


def invariant_values(rpolicy, state: InitialState, ordered: list,
                     record: PassDecisions) -> dict[int, tuple[bool, ...]]:
    """{job id: each invariant's truth value} right after each start of ``record``, on the
    state rebuilt from it: the jobs started so far moved from the queue (policy order) to
    the running set on their allocs, the use updated."""
    by_id = {j.id: j for j in ordered}
    pass_state = pass_start(state)
    queue, running, used = list(ordered), sorted(pass_state.running, key=by_end), list(
        pass_state.used)
    values: dict[int, tuple[bool, ...]] = {}
    for d in record.starts:
        job = by_id[d.job]
        queue.remove(job)
        # a moldable job runs with its speedup's times on its size (the simulator's _timed)
        timed = job if job.moldable is None else job.at_size(d.alloc[0])
        running = sorted([*running, RunningJob(timed, state.now, d.alloc)], key=by_end)
        used = [u + a for u, a in zip(used, d.alloc, strict=True)]
        view = PassState(now=state.now, queue=list(queue), running=list(running),
                         capacity=state.capacities, used=list(used))
        values[d.job] = tuple(bool(inv.check(job, view)) for inv in rpolicy.invariants)
    return values


def pass_start(state: InitialState) -> PassState:
    """The state a pass at ``now`` starts from (what ``_resort`` computes keys with)."""
    used = [sum(rj.alloc[k] for rj in state.running) for k in range(len(state.capacities))]
    return PassState(now=state.now, queue=list(state.queue), running=list(state.running),
                     capacity=state.capacities, used=used)


def policy_order(rpolicy, state: InitialState) -> list:
    """The queue in the simulator's order: key, then submit, then file order, the key
    computed with the state at the pass start."""
    pass_state = pass_start(state)

    def key(job):
        head = () if rpolicy.order_key is None else tuple(rpolicy.order_key(job, pass_state))
        return head + (job.submit, job.index)

    keys = [key(j) for j in state.queue]  # exact: real keys are rationals on both sides
    return [j for _, j in sorted(zip(keys, state.queue, strict=True), key=lambda p: p[0])]


# -- the symbolic side ------------------------------------------------------------------------


def z3_value(value):
    if isinstance(value, bool):
        return z3.BoolVal(value)
    if isinstance(value, int):
        return z3.IntVal(value)
    exact = Fraction(value)
    return z3.Q(exact.numerator, exact.denominator)


def design_data() -> dict:
    """DESIGN's 3-job case at t = 2 on 10 cpus, as a state file's data."""
    return {"now": 2, "capacity": {"cpus": 10},
            "running": [{"id": 1, "submit": 0, "start": 0, "estimate": 100, "run_time": 100,
                         "request": {"cpus": 6}}],
            "queue": [{"id": 2, "submit": 1, "estimate": 100, "run_time": 100,
                       "request": {"cpus": 10}},
                      {"id": 3, "submit": 2, "estimate": 1000, "run_time": 1000,
                       "request": {"cpus": 4}}]}


def pass_solver(sym) -> z3.Solver:
    """A solver holding the encoded pass: its assumptions and every definition."""
    solver = z3.Solver()
    solver.add(*(a.formula for a in sym.assumptions), *sym.definitions.all())
    return solver


def state_pins(sym, state: InitialState, ordered) -> list[z3.BoolRef]:
    """Every input of ``sym`` pinned to ``state`` (queue slots hold ``ordered``)."""
    pins = [sym.now == state.now]
    pins += [sym.params[name] == z3_value(v) for name, v in state.params.items()]
    pins += [c == v for c, v in zip(sym.capacity, state.capacities, strict=True)]
    # a dedicated homogeneous machine: speed and power are the capacity (runtime/engine/cluster.py)
    for speeds in (sym.bpu, sym.power):
        if speeds is not None:
            pins += [s == c for s, c in zip(speeds, state.capacities, strict=True)]
    assert len(state.running) <= len(sym.running) and len(ordered) <= len(sym.queue)
    # a running slot's request is the job's, and it holds its alloc (another size than its
    # request where a size rule gave a rigid job one)
    slots = [(sym.running[r], rj.job, rj.job.request, rj.start)
             for r, rj in enumerate(state.running)]
    for held, rj in zip(sym.running_held, state.running, strict=False):
        pins += [x == v for x, v in zip(held, rj.alloc, strict=True)]
    slots += [(sym.queue[q], job, job.request, None) for q, job in enumerate(ordered)]
    for slot, job, request, start in slots:
        pins += [slot.present, slot.id == job.id, slot.submit == job.submit,
                 slot.estimate == job.estimate]
        m = job.moldable
        pins += ([slot.moldable, slot.min_size == m.min_procs, slot.max_size == m.max_procs,
                  slot.work == job.work]
                 if m is not None else [z3.Not(slot.moldable)])
        pins += [x == v for x, v in zip(slot.request, request, strict=True)]
        pins += [x == getattr(job, a) for a, x in slot.labels.items()]  # those the policy reads
        if start is not None:
            pins.append(slot.start == start)
    # a moldable job's estimate on each size it may get: its speedup's
    for e in sym.sized_estimates:
        q = e.slot
        if q < len(ordered) and ordered[q].moldable is not None:
            pins += [z3.Implies(e.size == n, e.estimate == ordered[q].at_size(n).estimate)
                     for n in range(1, state.capacities[0] + 1)]
    # `size fixed`: the sizes kept from earlier passes
    for q, kept in enumerate(sym.kept_size):
        if q < len(ordered) and not z3.is_false(kept):
            size = state.sizes.get(ordered[q].index)
            pins.append(kept if size is not None else z3.Not(kept))
            if size is not None:
                pins.append(z3.Int(f"q{q}_size") == size)
    pins += [z3.Not(s.present) for s in sym.running[len(state.running):]]
    pins += [z3.Not(s.present) for s in sym.queue[len(ordered):]]
    if sym.queue_tail is not None:  # the slots hold the whole queue
        pins.append(sym.queue_tail.count == 0)
    return pins


def symbolic_decisions(sym, solver: z3.Solver, state: InitialState, ordered,
                       invariants: list[list[z3.ExprRef]] | None = None):
    """Pin every input of ``sym`` to ``state`` (queue slots hold ``ordered``); return the
    model's (decisions record, {job id: invariant values} of the started) after checking
    the decisions are the only solution."""
    pins = state_pins(sym, state, ordered)
    solver.push()
    try:
        solver.add(*pins)
        verdict = solver.check()
        assert verdict == z3.sat, f"the concrete state violates the assumptions ({verdict})"
        m = solver.model()
        record = sym.decisions_in(m)
        same, holds = [], {}
        for q, job in enumerate(ordered):
            d = sym.decisions[q]
            if z3.is_true(m.eval(d.started, model_completion=True)):
                alloc = tuple(m.eval(a, model_completion=True).as_long() for a in d.alloc)
                holds[job.id] = tuple(z3.is_true(m.eval(v, model_completion=True))
                                      for v in (invariants[q] if invariants else ()))
                same += [d.started] + [a == v for a, v in zip(d.alloc, alloc, strict=True)]
            else:
                same.append(z3.Not(d.started))
            if z3.is_true(m.eval(d.reserved, model_completion=True)):
                t = m.eval(d.reservation, model_completion=True).as_long()
                same += [d.reserved, d.reservation == t]
            else:
                same.append(z3.Not(d.reserved))
        # the equations have one solution: no other decision vector satisfies them
        solver.add(z3.Not(z3.And(same)))
        unique = solver.check()
        assert unique == z3.unsat, f"the symbolic pass's decisions are not unique ({unique})"
    finally:
        solver.pop()
    return record, holds


def small(lo: int, hi: int) -> st.SearchStrategy[int]:
    """An integer in [lo, hi], often in its lower third (else most passes start nothing)."""
    return st.integers(lo, hi) | st.integers(lo, max(lo, hi // 3))


def summary(record: PassDecisions) -> tuple[dict[int, tuple[int, ...]], dict[int, int]]:
    """({job id: alloc} started, {job id: reservation start}) of a record."""
    return ({d.job: d.alloc for d in record.starts},
            {d.job: d.time for d in record.reservations})
