"""A pass planned on a copy of the machine (``Machine.copy``) leaves the machine untouched
and decides what the same pass decides on the machine itself."""

from __future__ import annotations

import pytest

from schedc.dsl.semantics.decisions import PassDecisions
from schedc.runtime.engine.machine import Machine
from schedc.runtime.engine.policy import RuntimePolicy
from schedc.runtime.engine.walk import PassWalk
from schedc.runtime.jobs import Job
from schedc.runtime.run import bundled_trace
from schedc.runtime.workloads.load import load_workload


def policy(depth: int | None, backfill: str) -> RuntimePolicy:
    return RuntimePolicy(
        f"{depth}-{backfill}", ("cpus",), (None,), depth=depth, backfill=backfill,
        score=(lambda job, state: (-job.procs, job.estimate)) if backfill == "best" else None)


def busy_machine() -> tuple[Machine, int, tuple[Job, ...]]:
    """The bundled trace's first jobs at the last one's submit: some started then, up to
    70% of the machine, the others queued in FCFS order."""
    w = load_workload(str(bundled_trace()))
    jobs = w.jobs[:80]
    now = jobs[-1].submit
    m = Machine(w.capacities, len(jobs), rigid=True)
    for job in jobs:
        if m.used[0] + job.procs <= 0.7 * m.cap[0] and job.index % 3:
            m.launch(job, job.request, now - job.index)
        else:
            m.enqueue(job, job.submit * m.M + job.index, len(m.queue))
    return m, now, jobs


def snapshot(m: Machine) -> tuple:
    return (tuple(m.used), tuple(m.running), tuple(m.run_keys), tuple(m.heap),
            tuple(m.holder), tuple(m.queue), tuple(m.qkeys), tuple(m.keyof), tuple(m.qprocs),
            tuple(m.starts), tuple(m.allocs), dict(m.fixed_sizes), m.view.now)


def run_pass(p: RuntimePolicy, m: Machine, now: int, jobs: tuple[Job, ...],
             fast: bool) -> PassDecisions:
    walk = PassWalk(p, m, ("cpus",), fast=fast, record=True)
    walk.pack(jobs)
    walk.begin(now)
    walk.walk()
    return walk.decided()


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("p", [policy(0, "none"), policy(0, "first_fit"),
                               policy(1, "first_fit"), policy(None, "first_fit"),
                               policy(2, "best")], ids=lambda p: p.name)
def test_a_pass_on_a_copy_leaves_the_machine_untouched(p: RuntimePolicy, fast: bool) -> None:
    m, now, jobs = busy_machine()
    before = snapshot(m)
    on_copy = run_pass(p, m.copy(), now, jobs, fast)
    assert snapshot(m) == before
    assert on_copy.decisions  # the case decides something
    assert run_pass(p, m, now, jobs, fast) == on_copy
    assert snapshot(m) != before  # the pass on the machine itself did start jobs


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("p", [policy(None, "first_fit"), policy(1, "first_fit"),
                               policy(2, "best")], ids=lambda p: p.name)
def test_a_pass_on_a_plan_copy_is_the_same(p: RuntimePolicy, fast: bool) -> None:
    # ``plan_copy`` keeps only the queued and running jobs' records (dicts, read as the
    # lists are): the same pass decides the same and ends in the same state
    m, now, jobs = busy_machine()
    before = snapshot(m)
    light, full = m.plan_copy(), m.copy()
    assert run_pass(p, light, now, jobs, fast) == run_pass(p, full, now, jobs, fast)
    assert snapshot(m) == before
    assert (light.used, light.running, light.queue, light.qkeys, light.qprocs) == (
        full.used, full.running, full.queue, full.qkeys, full.qprocs)
    for job in jobs:
        i = job.index
        assert (light.holder[i], light.starts[i], light.allocs[i]) == (
            full.holder[i], full.starts[i], full.allocs[i])
