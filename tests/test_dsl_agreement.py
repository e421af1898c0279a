"""The symbolic pass (``dsl/sympass.py``) decides what the simulator's pass decides.

Random small concrete states: every input of ``encode_pass`` is pinned to the concrete value
(queue slots in policy order, as the encoding assumes), the assumptions must hold (sat), the
model's decisions (which jobs start, with which allocation, which are reserved and when) must
be exactly those of the simulator's first pass at ``now``, and no other decision vector may
satisfy the equations (unsat after excluding the one found).

The simulator's reservations are not in its ``Schedule``: ``_Sim._walk`` is wrapped (in the
test only) to read the pass's ``reservations`` once the walk is over.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import z3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedc.dsl import compile_source, to_runtime
from schedc.dsl.sympass import Bounds, encode_pass
from schedc.runtime import simulator
from schedc.runtime.policy import PassState
from schedc.runtime.simulator import simulate
from schedc.runtime.state import InitialState, state_from_data

RESOURCES = {1: ("cpus",), 2: ("cpus", "memory")}
MAX_QUEUED, MAX_RUNNING = 4, 3
# more examples for a longer hunt: SCHEDC_AGREEMENT_EXAMPLES=500 pytest tests/test_dsl_agreement.py
EXAMPLES = int(os.environ.get("SCHEDC_AGREEMENT_EXAMPLES", "25"))

# name -> policy clauses (the machine clause is added per K)
POLICIES = {
    "fcfs_reserve0": "order job.submit asc reserve 0 backfill first_fit",
    "easy": "order job.submit asc reserve 1 backfill first_fit",
    "depth2": "order job.submit asc reserve 2 backfill first_fit",
    "conservative": "order job.submit asc reserve all backfill first_fit",
    "fcfs_none": "order job.submit asc reserve 1 backfill none",
    "sjf_easy": "order job.estimate asc reserve 1 backfill first_fit",
    "ljf_cons": "order job.procs desc reserve all backfill first_fit",
    "when_short": "reserve 1 backfill when job.estimate <= 20",
    "when_deep": "order job.procs desc reserve 2 backfill when job.estimate <= 20",
    "size_free": "reserve 1 backfill first_fit size min(job.procs, max(1, machine.free.cpus))",
    "size_half": "reserve all backfill first_fit size max(1, job.procs div 2)",
    "size_half_none": "order job.estimate asc backfill none size max(1, job.procs div 2)",
}


def source(name: str, K: int) -> str:
    machine = "machine m { " + " ".join(f"resource {r}" for r in RESOURCES[K]) + " }"
    return f"{machine} policy {name} {{ machine m {POLICIES[name]} }}"


@functools.cache
def compiled(name: str, K: int):
    policy = compile_source(source(name, K), f"<{name}>")
    return policy, to_runtime(policy)


@functools.cache
def encoded(name: str, K: int, N: int, R: int):
    """The encoded pass and a solver holding its assumptions and definitions."""
    sym = encode_pass(compiled(name, K)[0], Bounds(queued=N, running=R))
    solver = z3.Solver()
    solver.add(*(a.formula for a in sym.assumptions))
    solver.add(*sym.definitions.all())
    return sym, solver


# -- the concrete side ------------------------------------------------------------------------


@contextmanager
def recording_walks() -> Iterator[list[tuple[int, dict[int, int]]]]:
    """Yield a list that gets (pass time, {job id: reservation start}) for every walk."""
    walks: list[tuple[int, dict[int, int]]] = []
    original = simulator._Sim._walk

    def walk(self, run, first):
        original(self, run, first)
        walks.append((run.now, {r.job.id: r.start for r in run.reservations}))

    simulator._Sim._walk = walk
    try:
        yield walks
    finally:
        simulator._Sim._walk = original


def concrete_decisions(rpolicy, state: InitialState, **options):
    """({job id: alloc} started at now, {job id: reservation start}) of the first pass."""
    with recording_walks() as walks:
        schedule = simulate(rpolicy, state.workload, initial=state, monitor=False, **options)
    first = [res for t, res in walks if t == state.now]
    # the pass at now either ran once or was skipped (nothing could start)
    assert len(first) <= 1
    queued = {j.index for j in state.queue}
    started = {r.job.id: r.alloc for r in schedule.records
               if r.job.index in queued and r.start == state.now}
    return started, (first[0] if first else {})


def policy_order(rpolicy, state: InitialState) -> list:
    """The queue in the simulator's order: key, then submit, then file order."""
    pass_state = PassState(now=state.now, queue=list(state.queue), running=list(state.running),
                           capacity=state.capacities, used=[0] * len(state.capacities))

    def key(job):
        head = () if rpolicy.order_key is None else tuple(rpolicy.order_key(job, pass_state))
        return head + (job.submit, job.index)

    return sorted(state.queue, key=key)


# -- the symbolic side ------------------------------------------------------------------------


def symbolic_decisions(sym, solver: z3.Solver, state: InitialState, ordered):
    """Pin every input of ``sym`` to ``state`` (queue slots hold ``ordered``); return the
    model's (started, reserved) after checking they are the only solution."""
    pins = [sym.now == state.now]
    pins += [c == v for c, v in zip(sym.capacity, state.capacities, strict=True)]
    assert len(state.running) <= len(sym.running) and len(ordered) <= len(sym.queue)
    # a running slot's request is what the job holds
    slots = [(sym.running[r], rj.job, rj.alloc, rj.start) for r, rj in enumerate(state.running)]
    slots += [(sym.queue[q], job, job.request, None) for q, job in enumerate(ordered)]
    for slot, job, request, start in slots:
        pins += [slot.present, slot.id == job.id, slot.submit == job.submit,
                 slot.estimate == job.estimate]
        pins += [x == v for x, v in zip(slot.request, request, strict=True)]
        if start is not None:
            pins.append(slot.start == start)
    pins += [z3.Not(s.present) for s in sym.running[len(state.running):]]
    pins += [z3.Not(s.present) for s in sym.queue[len(ordered):]]
    solver.push()
    try:
        solver.add(*pins)
        verdict = solver.check()
        assert verdict == z3.sat, f"the concrete state violates the assumptions ({verdict})"
        m = solver.model()
        started, reserved, same = {}, {}, []
        for q, job in enumerate(ordered):
            d = sym.decisions[q]
            if z3.is_true(m.eval(d.started, model_completion=True)):
                alloc = tuple(m.eval(a, model_completion=True).as_long() for a in d.alloc)
                started[job.id] = alloc
                same += [d.started] + [a == v for a, v in zip(d.alloc, alloc, strict=True)]
            else:
                same.append(z3.Not(d.started))
            if z3.is_true(m.eval(d.reserved, model_completion=True)):
                t = m.eval(d.reservation, model_completion=True).as_long()
                reserved[job.id] = t
                same += [d.reserved, d.reservation == t]
            else:
                same.append(z3.Not(d.reserved))
        # the equations have one solution: no other decision vector satisfies them
        solver.add(z3.Not(z3.And(same)))
        assert solver.check() == z3.unsat, "the symbolic pass's decisions are not unique"
    finally:
        solver.pop()
    return started, reserved


def check_agreement(name: str, state: InitialState, exact_bounds: bool = False) -> None:
    _, rpolicy = compiled(name, len(state.capacities))
    ordered = policy_order(rpolicy, state)
    N, R = ((max(1, len(ordered)), max(1, len(state.running))) if exact_bounds
            else (MAX_QUEUED, MAX_RUNNING))
    concrete = concrete_decisions(rpolicy, state)
    # the simulator's optimisations (shadow plan, one-resource profile) change nothing
    assert concrete_decisions(rpolicy, state, fast=False, incremental=False) == concrete
    symbolic = symbolic_decisions(*encoded(name, len(state.capacities), N, R), state, ordered)
    assert symbolic == concrete, (
        f"policy {name}: {POLICIES[name]}\nstate: now={state.now} cap={state.capacities}\n"
        f"running: {[(r.job.id, r.start, r.job.estimate, r.alloc) for r in state.running]}\n"
        f"queue (policy order): "
        f"{[(j.id, j.submit, j.estimate, j.request) for j in ordered]}\n"
        f"symbolic (started, reserved) {symbolic}\nconcrete (started, reserved) {concrete}")


# -- random states ----------------------------------------------------------------------------


def small(lo: int, hi: int) -> st.SearchStrategy[int]:
    """An integer in [lo, hi], often in its lower third (else most passes start nothing)."""
    return st.integers(lo, hi) | st.integers(lo, max(lo, hi // 3))


# a few common values make equal ends (ties in the profile) and hit `<= 20` at its edge
ESTIMATES = st.integers(1, 60) | st.sampled_from([10, 20, 21, 30])


@st.composite
def states(draw) -> InitialState:
    K = draw(st.sampled_from([1, 2]))
    res = RESOURCES[K]
    caps = [draw(st.integers(1, 12)) for _ in range(K)]
    now = draw(st.integers(0, 50))
    ids = iter(draw(st.permutations(range(1, MAX_QUEUED + MAX_RUNNING + 4))))
    left = list(caps)
    running = []
    for _ in range(draw(st.integers(0, MAX_RUNNING))):
        if left[0] < 1:
            break
        request = [draw(small(1, left[0]))] + [draw(small(0, c)) for c in left[1:]]
        left = [c - r for c, r in zip(left, request, strict=True)]
        estimate = draw(ESTIMATES)
        start = draw(st.integers(max(0, now - estimate + 1), now))
        running.append({"id": next(ids), "submit": draw(st.integers(0, start)), "start": start,
                        "estimate": estimate, "run_time": estimate,
                        "request": dict(zip(res, request, strict=True))})
    queue = []
    for _ in range(draw(st.integers(1, MAX_QUEUED) | st.just(MAX_QUEUED))):
        estimate = draw(ESTIMATES)
        request = [draw(small(1, caps[0]))] + [draw(small(0, c)) for c in caps[1:]]
        queue.append({"id": next(ids), "submit": draw(st.integers(0, now)),
                      "estimate": estimate, "run_time": estimate,
                      "request": dict(zip(res, request, strict=True))})
    data = {"now": now, "capacity": dict(zip(res, caps, strict=True)), "running": running,
            "queue": queue}
    return state_from_data(data, res)


@pytest.mark.parametrize("name", sorted(POLICIES))
@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(state=states(), exact=st.booleans())
def test_symbolic_pass_decides_what_the_simulator_decides(name: str, state: InitialState,
                                                          exact: bool) -> None:
    check_agreement(name, state, exact_bounds=exact)


# -- hand-written states ----------------------------------------------------------------------


def design_state() -> InitialState:
    """DESIGN's 3-job case at t = 2 on 10 cpus."""
    return state_from_data({
        "now": 2, "capacity": {"cpus": 10},
        "running": [{"id": 1, "submit": 0, "start": 0, "estimate": 100, "run_time": 100,
                     "request": {"cpus": 6}}],
        "queue": [{"id": 2, "submit": 1, "estimate": 100, "run_time": 100,
                   "request": {"cpus": 10}},
                  {"id": 3, "submit": 2, "estimate": 1000, "run_time": 1000,
                   "request": {"cpus": 4}}]})


def both_sides(clauses: str, state: InitialState):
    """(concrete, symbolic) decisions of a one-resource policy on ``state``."""
    policy = compile_source(f"policy p {{ {clauses} }}", "<hand>")
    rpolicy = to_runtime(policy)
    ordered = policy_order(rpolicy, state)
    sym = encode_pass(policy, Bounds(queued=len(ordered), running=max(1, len(state.running))))
    solver = z3.Solver()
    solver.add(*(a.formula for a in sym.assumptions), *sym.definitions.all())
    return concrete_decisions(rpolicy, state), symbolic_decisions(sym, solver, state, ordered)


def test_design_case_easy_reserves_job_2_at_100_and_holds_job_3() -> None:
    concrete, symbolic = both_sides("order job.submit asc reserve 1 backfill first_fit",
                                    design_state())
    assert concrete == ({}, {2: 100})
    assert symbolic == concrete


def test_design_case_backfill_when_true_starts_job_3() -> None:
    concrete, symbolic = both_sides("reserve 1 backfill when true", design_state())
    assert concrete == ({3: (4,)}, {2: 100})
    assert symbolic == concrete


def test_design_case_conservative_and_none() -> None:
    state = design_state()
    for clauses, expected in [("reserve all backfill first_fit", ({}, {2: 100, 3: 200})),
                              ("backfill none", ({}, {})),
                              ("order job.procs asc reserve 1 backfill first_fit",
                               ({3: (4,)}, {})),
                              ("reserve 0 backfill first_fit", ({3: (4,)}, {}))]:
        concrete, symbolic = both_sides(clauses, state)
        assert concrete == expected, clauses
        assert symbolic == concrete, clauses


def test_a_wrong_decision_is_caught() -> None:
    """The comparison can fail: a symbolic pass pinned to another reservation is unsat."""
    state = design_state()
    policy = compile_source("policy p { reserve 1 backfill first_fit }", "<hand>")
    sym = encode_pass(policy, Bounds(queued=2, running=1))
    solver = z3.Solver()
    solver.add(*(a.formula for a in sym.assumptions), *sym.definitions.all())
    assert symbolic_decisions(sym, solver, state, list(state.queue)) == ({}, {2: 100})
    solver.add(sym.now == 2, sym.capacity[0] == 10, sym.running[0].present,
               sym.running[0].start == 0, sym.running[0].estimate == 100,
               sym.running[0].request[0] == 6, sym.running[0].submit == 0)
    for slot, job in zip(sym.queue, state.queue, strict=True):
        solver.add(slot.present, slot.id == job.id, slot.submit == job.submit,
                   slot.estimate == job.estimate, slot.request[0] == job.request[0])
    assert solver.check() == z3.sat
    solver.add(sym.decisions[0].reserved, sym.decisions[0].reservation == 99)
    assert solver.check() == z3.unsat
