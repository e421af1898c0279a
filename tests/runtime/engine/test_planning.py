"""A planning policy's full plan (``planning.py``) against an independent oracle: serial
schedule generation in the policy's order, each job at its earliest fit in a per-second
free-cpus array (running jobs hold their cpus until their estimated ends). Also: the plan
starts what the simulator's own pass starts, leaves the machine untouched, and the plan
metrics give hand-checked values."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings

from schedc.dsl.api import compile_file
from schedc.runtime.engine.from_ir import to_runtime as runtime_policy
from schedc.runtime.engine.plan_metrics import METRICS, PlanContext
from schedc.runtime.engine.planning import NotPlanning, PlannedJob, Planner, plan_once
from schedc.runtime.engine.simulator import machine_at
from schedc.runtime.jobs import Job, RunningJob
from schedc.runtime.workloads.state_file import InitialState
from tests.support.pass_agreement import concrete_decisions
from tests.support.planning_oracle import ORDERS, oracle_plan, states
from tests.support.repo import ROOT

FILES = {"conservative": "conservative.pol", "conservative_sjf": "conservative-sjf.pol",
         "conservative_ljf": "conservative-ljf.pol"}


def compiled(name: str):
    return runtime_policy(compile_file(str(ROOT / "examples" / FILES[name])))


def oracle_starts(state: InitialState, order) -> dict[int, int]:
    return {p.job.index: p.start for p in oracle_plan(state, order)}


@pytest.mark.parametrize("name", sorted(ORDERS))
@settings(max_examples=60, deadline=None)
@given(state=states())
def test_plan_is_serial_earliest_fit(name, state):
    policy = compiled(name)
    machine = machine_at(policy, state)
    before = (list(machine.queue), list(machine.running), list(machine.used))
    plan = plan_once(policy, machine, state.now, state.resources, state.workload.jobs)
    assert plan.starts() == oracle_starts(state, ORDERS[name])
    # the machine planned on is untouched
    assert (list(machine.queue), list(machine.running), list(machine.used)) == before
    # the plan starts now exactly what the simulator's pass starts
    ran = concrete_decisions(policy, state)
    assert {s.job for s in plan.decisions.starts} == {s.job for s in ran.starts}


def test_planner_refuses_a_policy_without_a_full_plan():
    easy = runtime_policy(compile_file(str(ROOT / "examples" / "easy.pol")))
    with pytest.raises(NotPlanning, match="reserve all"):
        Planner([easy], ("cpus",), (4,), [])


def _planned(submit, start, est, procs, index=0) -> PlannedJob:
    job = Job(id=index + 1, index=index, submit=submit, run_time=est, estimate=est,
              request=(procs,))
    return PlannedJob(job, start, est, (procs,))


def test_metrics_by_hand():
    # now 10 on 4 cpus; a running job holds 2 cpus until 20
    running = (RunningJob(Job(id=9, index=9, submit=0, run_time=20, estimate=20,
                              request=(2,)), 0, (2,)),)
    ctx = PlanContext(now=10, cpus=4, running=running)
    # job a: submit 0, starts 10, 10 s on 2 cpus: response 20
    # job b: submit 5, starts 20, 5 s on 4 cpus: response 20
    # job c: submit 10, starts 25, 1 s on 1 cpu: response 16
    jobs = [_planned(0, 10, 10, 2, 0), _planned(5, 20, 5, 4, 1), _planned(10, 25, 1, 1, 2)]
    m = {name: metric(jobs, ctx) for name, metric in METRICS.items()}
    assert m["artww"] == Fraction(2 * 20 + 4 * 20 + 1 * 16, 7)
    assert m["sldwa"] == Fraction(2 * 20 + 4 * 20 + 1 * 16, 2 * 10 + 4 * 5 + 1 * 1)
    assert m["response"] == Fraction(56, 3)
    assert m["slowdown"] == (Fraction(20, 10) + Fraction(20, 5) + Fraction(16, 1)) / 3
    # bounded: max(1, r / max(d, 10)): 20/10, 20/10, 16/10
    assert m["bounded_slowdown"] == (2 + 2 + Fraction(16, 10)) / 3
    assert m["makespan"] == 26 - 10
    # busy: 2*10 + 4*5 + 1*1 waiting, 2*10 running; over 4 cpus * 16 s
    assert m["utilisation"] == Fraction(20 + 20 + 1 + 20, 64)
    assert METRICS["utilisation"].better(Fraction(1), Fraction(1, 2))
    assert METRICS["artww"].better(Fraction(1, 2), Fraction(1))


def test_metrics_of_an_empty_plan_are_zero():
    ctx = PlanContext(now=5, cpus=4)
    assert all(metric([], ctx) == 0 for metric in METRICS.values())


def test_the_language_names_every_metric():
    from schedc.dsl import ir
    assert tuple(METRICS) == ir.TUNING_METRICS
