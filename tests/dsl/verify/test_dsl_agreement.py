"""The symbolic pass (``dsl/verify/pass_encoding/``) decides what the simulator's pass decides.

Random small concrete states: every input of ``encode_pass`` is pinned to the concrete value
(queue slots in policy order, as the encoding assumes), the assumptions must hold (sat), the
model's decisions record (``SymbolicPass.decisions_in``: which jobs start, with which
allocation, which are reserved, when and on what, in the pass's order) must be exactly the
simulator's record of its first pass at ``now`` (``simulate(on_pass=...)``), and no other
decision vector may satisfy the equations (unsat after excluding the one found).

Policies whose order reads the state (``job.wait``, ``job.xfactor``, ``now``, the counts,
``machine.free``) are ordered as the simulator's ``_resort`` does at the pass: with the state
at the pass start. Params are drawn in their domains, passed to the simulator through the
state's ``params`` and pinned on the symbolic side. Invariants: the concrete side evaluates
each one (``RuntimeInvariant.check``) on the state right after each start of the record, rebuilt
from it (the started jobs moved from the queue to the running set); the symbolic side evaluates
it in the model with the state right after the start.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import pytest
import z3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedc.dsl import compile_source
from schedc.dsl.verify.pass_encoding.encoder import encode_pass
from schedc.dsl.verify.properties import completes
from schedc.dsl.verify.verdict import Bounds
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.workloads.state_file import InitialState, param_text, state_from_data
from tests.support.pass_agreement import (
    EXAMPLES,
    concrete_decisions,
    design_data,
    first_pass,
    invariant_values,
    pass_solver,
    policy_order,
    small,
    state_pins,
    summary,
    symbolic_decisions,
    symbolic_invariants,
)
from tests.support.z3_isolation import own_z3_context

RESOURCES = {1: ("cpus",), 2: ("cpus", "memory")}
MAX_QUEUED, MAX_RUNNING = 4, 3
# a longer hunt: SCHEDC_AGREEMENT_EXAMPLES=500 pytest tests/dsl/verify/test_dsl_agreement.py

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
    "best_short": "reserve 1 backfill best by job.estimate",
    "best_wide_d2": "order job.estimate desc reserve 2 backfill best by job.procs desc",
    "best_d0": "reserve 0 backfill best by job.estimate * 2 - job.procs desc",
    # papers/004's K-resource rules, from the prelude (scores read every resource)
    "bb_easy": "order job.submit asc reserve 1 backfill best by bb_score(job)",
    "bl_easy": "order job.submit asc reserve 1 backfill best by bl_score(job)",
    # selective reservations: per key (bool and int keys), state-free
    "per_wide": "order job.submit asc reserve 1 per job.procs > 2 backfill first_fit",
    "per_decade": "order job.estimate desc reserve 1 per job.estimate div 10 "
                  "backfill first_fit",
}
# the new coverage, fewer examples each (time budget)
POLICIES_STATE = {
    # state-dependent order keys (re-sorted at the pass with the state at its start)
    "wait_desc": "order job.wait desc reserve 1 backfill first_fit",
    "xfactor_cons": "order job.xfactor desc reserve all backfill first_fit",
    "counts_key": "order job.wait * queue.count - job.estimate * running.count desc, "
                  "job.estimate - now asc reserve 2 backfill first_fit",
    "free_key": "order job.procs <= machine.free.cpus desc, job.xfactor desc "
                "reserve 1 backfill when job.estimate <= 20",
    # selective reservations by a condition that reads the time (and per key)
    "when_res": "reserve 0 or when job.wait >= 5 backfill first_fit",
    "per_when": "order job.estimate asc reserve 1 per job.procs div 2 "
                "or when job.xfactor > 2 backfill first_fit",
    "per_when_param": "order job.wait desc reserve d per job.procs > 1 "
                      "or when job.wait > w * 10 backfill first_fit",
    # params
    "depth_param": "order job.wait desc reserve d backfill first_fit",
    "real_key": "order job.estimate - w * job.wait asc reserve d backfill first_fit",
    "real_size": "reserve 1 backfill first_fit "
                 "size min(job.procs, max(1, floor(job.procs * f)))",
    # invariants that read the state right after each start (some often false)
    # (a state-free order: the simulator's queue is not exact then, so no invariant here
    # reads the queue; see test_invariant_sees_the_started_job_in_a_state_free_queue)
    "inv_easy": "order job.submit asc reserve 1 backfill first_fit "
                "invariant machine.used.cpus <= machine.capacity.cpus "
                "invariant job.wait <= 30 invariant machine.free.cpus >= 2 "
                "invariant running.count <= 2 invariant job.xfactor <= 3.5",
    "inv_queue": "order job.wait desc reserve 2 backfill first_fit "
                 "invariant queue.count + running.count <= 4 "
                 "invariant machine.used.cpus <= machine.capacity.cpus "
                 "invariant job.wait <= 30",
    # backfill best: scores and sizes read the state of their round
    "best_fill": "reserve 1 backfill best by machine.free.cpus - job.procs asc",
    "best_sized": "order job.wait desc reserve 1 backfill best by job.estimate "
                  "size max(1, min(job.procs, machine.free.cpus)) "
                  "invariant machine.used.cpus <= machine.capacity.cpus "
                  "invariant queue.count + running.count <= 5",
    # moldable jobs (drawn only for these): sizes within their range, estimates by speedup
    "mold_max": "reserve 1 backfill first_fit size job.max_size",
    "mold_fit": "reserve all backfill first_fit "
                "size max(job.min_size, min(job.max_size, machine.free.cpus))",
    "mold_best": "order job.max_size desc reserve 1 backfill best by job.estimate "
                 "size max(job.min_size, min(job.max_size, machine.free.cpus)) "
                 "invariant job.size >= job.min_size",
    # `size choose`: the candidate that completes first in the plan (estimates by speedup)
    "mold_choose": "reserve 1 backfill first_fit "
                   "size choose 3 in [job.min_size, job.max_size]",
    "mold_choose_cons": "order job.max_size desc reserve all backfill first_fit "
                        "size choose 2 in [job.min_size, min(job.max_size, machine.free.cpus)]",
    "mold_choose_none": "backfill none size choose 4 in [job.min_size, job.max_size]",
    # `size fixed` (papers/000's submit-time schemes): sizes kept from the first visit
    "mold_fixed_choose": "reserve all backfill first_fit "
                         "size fixed choose 3 in [job.min_size, job.max_size]",
    "mold_fixed_free": "order job.estimate asc reserve 1 backfill first_fit size fixed "
                       "max(job.min_size, min(job.max_size, machine.free.cpus))",
    # papers/002's IHAP shape: the partition reads the machine's power
    "mold_power": "reserve 0 backfill first_fit size max(job.min_size, min(job.max_size, "
                  "ceil(machine.power.cpus / (queue.count + 0.5 * running.count + 1) + 0.5)))",
    # labels (who submitted a job) and powers: the fair-share and WFP examples' shapes
    "user_share": "order sum(r in running where r.user == job.user: r.procs) asc "
                  "reserve 1 backfill first_fit",
    "per_user": "order job.estimate asc reserve 1 per job.user backfill first_fit",
    "wfp": "order (job.wait / job.estimate) ^ 3 * job.procs desc reserve 1 backfill first_fit",
    "label_mix": "order job.group * 2 + job.partition ^ 2 desc, -job.executable ^ 3 asc "
                 "reserve 1 per job.queue or when count(j in queue where j.user == job.user) > 1 "
                 "backfill first_fit invariant job.user >= -1",
    "inv_when_size": "order job.xfactor desc reserve 1 backfill when job.estimate <= 20 "
                     "size max(1, job.procs div 2) "
                     "invariant machine.used.cpus <= machine.capacity.cpus "
                     "invariant job.size * 2 >= job.procs invariant running.count <= 2 "
                     "invariant machine.used.cpus + job.procs <= machine.capacity.cpus",
}
POLICIES.update(POLICIES_STATE)
# name -> param declarations (module level)
PARAMS = {
    "depth_param": "param d: int in [0, 3] = 1",
    "real_key": "param w: real in [0, 2] = 0.5 param d: int in [0, 3] = 1",
    "real_size": "param f: real in [0.1, 1] = 0.5",
    "per_when_param": "param d: int in [0, 2] = 1 param w: real in [0, 2] = 0.5",
}


# Policies whose sizes may fall out of range, or whose size formula may fail: on some states
# the simulator stops in its pass at now (see test_the_pass_stops_where_the_simulator_stops)
STOPPING = {
    "stop_double": "reserve 1 backfill first_fit size 2 * job.procs",
    "stop_minus": "order job.estimate asc reserve all backfill first_fit size job.procs - 1",
    "stop_choose": "reserve 1 backfill first_fit "
                   "size choose 3 in [job.min_size, 2 * job.procs]",
    "stop_choose_low": "reserve 0 backfill first_fit size choose 2 in [2, job.procs + 3]",
    "stop_choose_none": "backfill none size choose 2 in [job.min_size, job.max_size + 1]",
    "stop_fixed": "reserve all backfill first_fit "
                  "size fixed choose 2 in [job.min_size, 3 * job.procs]",
    "stop_best": "reserve 1 backfill best by job.estimate size job.procs + 2",
    "stop_when": "reserve 1 backfill when job.estimate <= 20 size job.procs + 1",
    "stop_div": "reserve 1 backfill first_fit size max(1, 12 div machine.free.cpus)",
    # `choose`'s HIGH is evaluated only once the choice is made: with no cpu free and no
    # reservation to make, it is not, and its division by zero stops nothing (fuzz_pass
    # seed 1000)
    "stop_choose_high": "backfill none size choose 2 in [1, 12 div machine.free.cpus]",
    "stop_choose_high_d0": "reserve 0 backfill first_fit "
                           "size choose 2 in [job.min_size, 12 div machine.free.cpus]",
}


def source(name: str, K: int) -> str:
    machine = "machine m { " + " ".join(f"resource {r}" for r in RESOURCES[K]) + " }"
    clauses = POLICIES[name] if name in POLICIES else STOPPING[name]
    return f"{PARAMS.get(name, '')} {machine} policy {name} {{ machine m {clauses} }}"


@functools.cache
def compiled(name: str, K: int, params: tuple = ()):
    """(IR, runtime policy bound to ``params``: (name, value) pairs as in a state)."""
    policy = compile_source(source(name, K), f"<{name}>")
    return policy, to_runtime(policy, {k: param_text(v) for k, v in params})


@functools.cache
def encoded(name: str, K: int, N: int, R: int):
    """The encoded pass and a solver holding its assumptions and definitions."""
    sym = encode_pass(compiled(name, K)[0], Bounds(queued=N, running=R))
    invariants = symbolic_invariants(sym)
    return sym, pass_solver(sym), invariants


@pytest.fixture(autouse=True)
def _own_z3_context():
    """Each test with a Z3 context and encoded passes of its own (tests/support/z3_isolation)."""
    with own_z3_context(encoded):
        yield


def check_agreement(name: str, state: InitialState, exact_bounds: bool = False) -> None:
    _, rpolicy = compiled(name, len(state.capacities), tuple(sorted(state.params.items())))
    ordered = policy_order(rpolicy, state)
    N, R = ((max(1, len(ordered)), max(1, len(state.running))) if exact_bounds
            else (MAX_QUEUED, MAX_RUNNING))
    record = concrete_decisions(rpolicy, state)
    # the simulator's optimisations (shadow plan, one-resource profile) change nothing
    assert concrete_decisions(rpolicy, state, fast=False, incremental=False) == record
    concrete = record, invariant_values(rpolicy, state, ordered, record)
    sym, solver, invariants = encoded(name, len(state.capacities), N, R)
    symbolic = symbolic_decisions(sym, solver, state, ordered, invariants)
    assert symbolic == concrete, (
        f"policy {name}: {POLICIES[name]}\nstate: now={state.now} cap={state.capacities}\n"
        f"running: {[(r.job.id, r.start, r.job.estimate, r.alloc) for r in state.running]}\n"
        f"params: {state.params}\nqueue (policy order): "
        f"{[(j.id, j.submit, j.estimate, j.request) for j in ordered]}\n"
        f"symbolic (decisions, invariants) {symbolic}\n"
        f"concrete (decisions, invariants) {concrete}")


# -- random states ----------------------------------------------------------------------------


# a few common values make equal ends (ties in the profile) and hit `<= 20` at its edge
ESTIMATES = st.integers(1, 60) | st.sampled_from([10, 20, 21, 30])


def param_values(name: str) -> st.SearchStrategy[dict]:
    """Values for the params of policy ``name`` (through K = 1: the same for every K)."""
    fields = {}
    for p in compiled(name, 1)[0].params:
        if p.type == "int":
            fields[p.name] = st.integers(p.lo, p.hi)
        elif p.type == "real":
            lo, hi = p.lo, p.hi
            common = [v for v in map(Fraction, ("0.1", "0.25", "1/3", "0.5", "0.7", "1", "1.5"))
                      if lo <= v <= hi]
            fields[p.name] = st.sampled_from([lo, hi, *common]) | st.fractions(
                lo, hi, max_denominator=1000)
        else:
            fields[p.name] = st.booleans()
    return st.fixed_dictionaries(fields)


NO_PARAMS: st.SearchStrategy[dict] = st.just({})


MOLDABLE = ("mold_max", "mold_fit", "mold_best", "mold_choose", "mold_choose_cons",
            "mold_choose_none", "mold_power", "mold_fixed_choose", "mold_fixed_free")


def labels() -> st.SearchStrategy[dict]:
    """A job's labels: few values (-1 unknown, 0, 1), so that two jobs often share one."""
    value = st.integers(-1, 1)
    return st.fixed_dictionaries({}, optional={a: value for a in
                                               ("user", "group", "executable", "queue",
                                                "partition")})


@st.composite
def states(draw, params: st.SearchStrategy[dict] = NO_PARAMS,
           moldable: bool = False) -> InitialState:
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
                        "request": dict(zip(res, request, strict=True)), **draw(labels())})
    queue = []
    for _ in range(draw(st.integers(1, MAX_QUEUED) | st.just(MAX_QUEUED))):
        estimate = draw(ESTIMATES)
        request = [draw(small(1, caps[0]))] + [draw(small(0, c)) for c in caps[1:]]
        job = {"id": next(ids), "submit": draw(st.integers(0, now)),
               "estimate": estimate, "run_time": estimate,
               "request": dict(zip(res, request, strict=True)), **draw(labels())}
        if moldable and draw(st.booleans()):
            # a range around the request and measured times on every size of the machine
            lo = draw(st.integers(1, request[0]))
            hi = draw(st.integers(request[0], caps[0]))
            times = [draw(st.integers(1, 80)) for _ in range(caps[0])]
            job |= {"min_size": lo, "max_size": hi, "speedup": "measured(" + ", ".join(
                f"{n}:{t}" for n, t in enumerate(times, 1)) + ")"}
        if moldable and draw(st.booleans()):  # a size kept by `size fixed` from before
            job["size"] = draw(st.integers(job.get("min_size", 1),
                                           job.get("max_size", caps[0])))
        queue.append(job)
    data = {"now": now, "capacity": dict(zip(res, caps, strict=True)), "running": running,
            "queue": queue, "params": draw(params)}
    return state_from_data(data, res)


@pytest.mark.parametrize("name", sorted(set(POLICIES) - set(POLICIES_STATE)))
@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(state=states(), exact=st.booleans())
def test_symbolic_pass_decides_what_the_simulator_decides(name: str, state: InitialState,
                                                          exact: bool) -> None:
    check_agreement(name, state, exact_bounds=exact)


@pytest.mark.parametrize("name", MOLDABLE)
@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_moldable_sizes_and_estimates_agree(name: str, data) -> None:
    check_agreement(name, data.draw(states(moldable=True)))


@pytest.mark.parametrize("name", sorted(set(POLICIES_STATE) - set(MOLDABLE)))
@settings(max_examples=max(1, EXAMPLES // 2), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_state_keys_params_and_invariants_agree(name: str, data) -> None:
    # fixed bounds only (each exact bound is another encoding to build: the time budget;
    # the bounds are covered by the test above)
    state = data.draw(states(param_values(name)))
    check_agreement(name, state)  # exact: `floor(procs * f)` at 10 * 0.7 is 7 on both sides


@pytest.mark.parametrize("name", sorted(STOPPING))
@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_pass_stops_where_the_simulator_stops(name: str, data) -> None:
    # Every state has a pass in the encoding, a stopping one too (a state with none vanished
    # from every proof: a size above the capacity did, and every property was `proved`), and
    # the pass stops (a formula fails or a size is out of range) where the simulator's does,
    # and only there (an excused state the simulator runs through would hide its faults)
    state = data.draw(states(moldable=True))
    K = len(state.capacities)
    _, rpolicy = compiled(name, K)
    stop, record, _ = first_pass(rpolicy, state)
    sym, solver, _ = encoded(name, K, MAX_QUEUED, MAX_RUNNING)
    ordered = policy_order(rpolicy, state)
    fine = completes(sym)
    solver.push()
    try:
        solver.add(*state_pins(sym, state, ordered))
        assert solver.check() == z3.sat, f"no pass in the encoding; the simulator: {stop}"
        solver.add(fine if stop else z3.Not(fine))
        assert solver.check() == z3.unsat, (
            f"{name}: the simulator {'stops (' + stop + ')' if stop else 'completes'}, the "
            f"encoding {'completes' if stop else 'stops'}")
    finally:
        solver.pop()
    if record is not None:
        symbolic, _ = symbolic_decisions(sym, solver, state, ordered)
        assert symbolic == record


# -- hand-written states ----------------------------------------------------------------------


def design_state() -> InitialState:
    """DESIGN's 3-job case at t = 2 on 10 cpus."""
    return state_from_data(design_data())


def hand_encoded(clauses: str, state: InitialState, with_invariants: bool = False):
    """A one-resource policy, compiled and encoded at the bounds of ``state``: (runtime
    policy, queue in policy order, encoded pass, solver holding it, invariant values)."""
    policy = compile_source(f"policy p {{ {clauses} }}", "<hand>")
    rpolicy = to_runtime(policy)
    ordered = policy_order(rpolicy, state)
    sym = encode_pass(policy, Bounds(queued=len(ordered), running=max(1, len(state.running))))
    # invariants first: evaluating them adds to the definitions the solver must hold
    invariants = symbolic_invariants(sym) if with_invariants else None
    return rpolicy, ordered, sym, pass_solver(sym), invariants


def both_sides(clauses: str, state: InitialState):
    """(concrete, symbolic) decisions of a one-resource policy on ``state``."""
    rpolicy, ordered, sym, solver, _ = hand_encoded(clauses, state)
    concrete, (symbolic, _) = (concrete_decisions(rpolicy, state),
                               symbolic_decisions(sym, solver, state, ordered))
    # the records themselves agree (order and allocs too); the tests read their summaries
    assert symbolic == concrete
    return summary(concrete), summary(symbolic)


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


def test_design_case_slack_lets_job_3_delay_the_reservation_by_at_most_the_slack() -> None:
    # relaxed EASY: job 2 (earliest fit 100) is held from 100 plus its slack, if it fits
    # there; job 3 runs to 1002, so it starts once the slack reaches 902 s. A negative slack
    # counts as 0, a real one is floored.
    for slack, expected in [("901", ({}, {2: 1001})), ("902", ({3: (4,)}, {2: 1002})),
                            ("job.estimate * 9.025", ({3: (4,)}, {2: 1002})),
                            ("job.estimate * 9.015", ({}, {2: 1001})),
                            ("-5", ({}, {2: 100}))]:
        concrete, symbolic = both_sides(f"reserve 1 backfill first_fit slack {slack}",
                                        design_state())
        assert concrete == expected, slack
        assert symbolic == concrete, slack


def test_design_case_slack_with_conservative_holds_each_reservation_late() -> None:
    # reserve all: job 2 held from 100 + 50; job 3 fits from 150 + 100 (its earliest fit)
    # and is held 50 later
    concrete, symbolic = both_sides("reserve all backfill first_fit slack 50", design_state())
    assert concrete == symbolic == ({}, {2: 150, 3: 300})


def one_job_state() -> InitialState:
    return state_from_data({
        "now": 0, "capacity": {"cpus": 1}, "running": [],
        "queue": [{"id": 1, "submit": 0, "estimate": 1, "run_time": 1,
                   "request": {"cpus": 1}}]})


def hand_invariant_values(clauses: str, state: InitialState):
    """(concrete, symbolic) {job id: invariant values} of a one-resource policy."""
    rpolicy, ordered, sym, solver, invariants = hand_encoded(clauses, state,
                                                            with_invariants=True)
    record = concrete_decisions(rpolicy, state)
    return (invariant_values(rpolicy, state, ordered, record),
            symbolic_decisions(sym, solver, state, ordered, invariants)[1])


def test_invariant_sees_the_queue_without_the_started_job() -> None:
    # a state-reading order: the simulator keeps its queue exact during the pass
    concrete, symbolic = hand_invariant_values(
        "order job.wait desc reserve 1 backfill first_fit invariant queue.count == 0",
        one_job_state())
    assert concrete == symbolic == {1: (True,)}


def test_invariant_sees_the_started_job_in_a_state_free_queue() -> None:
    # Found by these tests: the simulator kept its queue exact during a pass only for
    # policies whose decisions read the state, so an invariant reading `queue` still saw the
    # job just started. Invariants that read the state now make the queue exact too.
    concrete, symbolic = hand_invariant_values(
        "order job.submit asc reserve 1 backfill first_fit invariant queue.count == 0",
        one_job_state())
    assert symbolic == {1: (True,)}
    assert concrete == symbolic


def test_a_wrong_decision_is_caught() -> None:
    """The comparison can fail: a symbolic pass pinned to another reservation is unsat."""
    state = design_state()
    policy = compile_source("policy p { reserve 1 backfill first_fit }", "<hand>")
    sym = encode_pass(policy, Bounds(queued=2, running=1))
    solver = pass_solver(sym)
    record, holds = symbolic_decisions(sym, solver, state, list(state.queue))
    assert (summary(record), holds) == (({}, {2: 100}), {})
    solver.add(sym.now == 2, sym.capacity[0] == 10, sym.running[0].present,
               sym.running[0].start == 0, sym.running[0].estimate == 100,
               sym.running[0].request[0] == 6, sym.running[0].submit == 0)
    for slot, job in zip(sym.queue, state.queue, strict=True):
        solver.add(slot.present, slot.id == job.id, slot.submit == job.submit,
                   slot.estimate == job.estimate, slot.request[0] == job.request[0])
    assert solver.check() == z3.sat
    solver.add(sym.decisions[0].reserved, sym.decisions[0].reservation == 99)
    assert solver.check() == z3.unsat
