"""The agreement test that covers the switch: on random small states, a dynP policy's first
pass (a self-tuning step happens at the state's instant) decides exactly what the symbolic
pass (``PassEncoder``) of the candidate chosen by an independent oracle decides. The oracle
plans each candidate by serial earliest fit in its order, second by second
(tests/support/planning_oracle.py, shared with test_planning.py), measures each plan with
``plan_metrics`` and applies the deciders' rules written out again here. Also: the pass that
runs decides what the chosen candidate's plan (``Planner``) decides now: the same starts,
and its reservations are the plan's."""

from __future__ import annotations

import functools

import attrs
import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from schedc.dsl.verify.pass_encoding.encoder import encode_pass
from schedc.dsl.verify.verdict import Bounds
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.plan_metrics import METRICS, PlanContext
from schedc.runtime.engine.planning import Planner
from schedc.runtime.engine.simulator import machine_at, simulate
from schedc.runtime.engine.tuning import queue_order, serial_plan, serial_plannable
from schedc.runtime.workloads.state_file import InitialState
from tests.support.pass_agreement import (
    EXAMPLES,
    concrete_decisions,
    policy_order,
    symbolic_decisions,
)
from tests.support.planning_oracle import ORDERS, oracle_plan, states
from tests.support.tuned import planning, tuned
from tests.support.z3_isolation import own_z3_context

NAMES = ("conservative", "conservative_sjf", "conservative_ljf")
SMALL_STATES = states(max_running=2, max_queue=4)  # the symbolic pass stays quick
def oracle_choice(state: InitialState, metric: str, decider: str) -> int:
    """The candidate the first step chooses: the first candidate is active before it."""
    m = METRICS[metric]
    context = PlanContext(state.now, state.capacities[0], state.running)
    values = [m(oracle_plan(state, ORDERS[n]), context) for n in NAMES]
    best = min(values) if not m.higher_is_better else max(values)
    if decider == "advanced" and values[0] == best:
        return 0
    return values.index(best)  # simple: the first of the best, in the written order


@functools.cache
def encoded(name: str, N: int, R: int):
    sym = encode_pass(planning(name), Bounds(queued=N, running=R))
    solver = z3.Solver()
    solver.add(*(a.formula for a in sym.assumptions), *sym.definitions.all())
    return sym, solver


@pytest.fixture(autouse=True)
def _own_z3_context():
    """Each test with a Z3 context and encoded passes of its own (tests/support/z3_isolation)."""
    with own_z3_context(encoded):
        yield


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(state=SMALL_STATES, metric=st.sampled_from(["artww", "sldwa", "makespan", "utilisation"]),
       decider=st.sampled_from(["simple", "advanced"]))
def test_tuned_pass_is_the_chosen_candidates_symbolic_pass(state, metric, decider):
    rp = to_runtime(tuned(metric=metric, decider=decider))
    concrete = concrete_decisions(rp, state)
    chosen = NAMES[oracle_choice(state, metric, decider)]
    candidate = to_runtime(planning(chosen))
    ordered = policy_order(candidate, state)
    sym, solver = encoded(chosen, 4, 2)
    symbolic, _ = symbolic_decisions(sym, solver, state, ordered)
    assert symbolic == concrete, (chosen, state, symbolic, concrete)


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(state=SMALL_STATES, decider=st.sampled_from(["simple", "advanced"]))
def test_the_pass_decides_what_the_chosen_plan_decides(state, decider):
    rp = to_runtime(tuned(decider=decider))
    assert rp.tuning is not None
    concrete = concrete_decisions(rp, state)
    k = oracle_choice(state, "artww", decider)
    planner = Planner(rp.tuning.candidates, state.resources, state.capacities,
                      state.workload.jobs)
    plan, _ = planner.plan(k, machine_at(rp.tuning.candidates[k], state), state.now)
    # the plan's engine and the oracle agree on the chosen candidate's plan
    assert plan.starts() == {p.job.index: p.start
                             for p in oracle_plan(state, ORDERS[NAMES[k]])}
    assert [s.job for s in concrete.starts] == [s.job for s in plan.decisions.starts]
    assert [s.alloc for s in concrete.starts] == [s.alloc for s in plan.decisions.starts]
    # the pass reserves only jobs it may still start, each where the full plan puts it
    planned = {r.job: r.time for r in plan.decisions.reservations}
    assert all(planned[r.job] == r.time for r in concrete.reservations)


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(state=SMALL_STATES)
def test_serial_plan_is_the_planners_plan(state):
    rp = to_runtime(tuned())
    assert rp.tuning is not None
    planner = Planner(rp.tuning.candidates, state.resources, state.capacities,
                      state.workload.jobs)
    for k, candidate in enumerate(rp.tuning.candidates):
        assert serial_plannable(candidate)
        machine = machine_at(candidate, state)
        plan, _ = planner.plan(k, machine, state.now)
        fast = serial_plan(queue_order(candidate, machine), machine, state.now)
        assert sorted(fast, key=lambda p: p.job.index) == sorted(
            plan.jobs, key=lambda p: p.job.index)


def test_fast_and_general_planning_make_the_same_run():
    from tests.support.shared_traces import any_real_workload

    workload = any_real_workload("KTH-SP2-1996-2.1-cln.swf.gz")
    workload = attrs.evolve(workload, jobs=workload.jobs[:1500])
    rp = to_runtime(tuned())
    fast, general = simulate(rp, workload), simulate(rp, workload, fast=False)
    assert fast.tuning.switches and fast.tuning == general.tuning
    assert [r.start for r in fast.records] == [r.start for r in general.records]
