"""The one-resource kernel (``one_resource.py``) against the general engine, pass by pass:
the same passes at the same times, the same starts in the same order, and every
reservation the general walk makes made by the kernel too (it may make one more: see its
docstring)."""

from __future__ import annotations

from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st

from schedc.dsl.semantics.decisions import PassDecisions, Reserved, Started
from schedc.runtime.engine import one_resource
from schedc.runtime.engine.policy import RuntimePolicy
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.jobs import Job
from schedc.runtime.run import bundled_trace
from schedc.runtime.workloads.load import load_workload
from schedc.runtime.workloads.workload import Workload


def make(depth: int, backfill: str, order: str) -> RuntimePolicy:
    return RuntimePolicy(
        f"{depth}-{backfill}-{order}", ("cpus",), (None,), depth=depth, backfill=backfill,
        order_key=None if order == "fcfs" else (lambda job, state: (job.estimate,)))


# Every kernel-eligible shape: FCFS, first fit and EASY, in FCFS and SJF order.
POLICIES = [make(d, b, o) for d, b in ((0, "none"), (0, "first_fit"), (1, "first_fit"))
            for o in ("fcfs", "sjf")]


@cache
def trace_head(n: int = 3000) -> Workload:
    full = load_workload(str(bundled_trace()))
    return Workload(full.jobs[:n], full.resources, full.capacities)


def general(policy: RuntimePolicy, w: Workload, incremental: bool) -> list[PassDecisions]:
    out: list[PassDecisions] = []
    simulate(policy, w, incremental=incremental, on_pass=out.append)  # fast, not the kernel
    return out


def kernel(policy: RuntimePolicy, w: Workload, incremental: bool) -> list[PassDecisions]:
    assert one_resource.eligible(policy, len(w.capacities))
    out: list[PassDecisions] = []
    one_resource.run_one_resource(policy, w.jobs, w.capacities[0], None, incremental, True,
                                  on_pass=out.append)
    return out


def assert_same(policy: RuntimePolicy, w: Workload, incremental: bool) -> None:
    ours, theirs = general(policy, w, incremental), kernel(policy, w, incremental)
    assert [p.now for p in ours] == [p.now for p in theirs]
    for g, k in zip(ours, theirs, strict=True):
        assert ([d for d in g.decisions if isinstance(d, Started)]
                == [d for d in k.decisions if isinstance(d, Started)]), g.now
        reserved = [d for d in k.decisions if isinstance(d, Reserved)]
        assert all(d in reserved for d in g.decisions if isinstance(d, Reserved)), g.now
        assert len(reserved) <= policy.depth


def test_the_kernel_decides_as_the_general_walk_on_the_bundled_trace() -> None:
    w = trace_head()
    for policy in POLICIES:
        for incremental in (True, False):
            assert_same(policy, w, incremental)


@st.composite
def workloads(draw) -> Workload:
    n = draw(st.integers(1, 16))
    jobs, t = [], 0
    for i in range(n):
        t += draw(st.integers(0, 5))  # clustered submits: many jobs share an instant
        est = draw(st.integers(1, 12))
        run = draw(st.integers(0, est + 3))
        jobs.append(Job(i + 1, i, t, min(run, est), est, (draw(st.integers(1, 8)),)))
    return Workload(tuple(jobs), ("cpus",), (8,))


@settings(max_examples=150, deadline=None)
@given(workloads(), st.sampled_from(POLICIES), st.booleans())
def test_the_kernel_decides_as_the_general_walk_on_random_workloads(
        w: Workload, policy: RuntimePolicy, incremental: bool) -> None:
    assert_same(policy, w, incremental)
