"""Random small workloads: schedules are feasible, and the optimisations change nothing."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from schedc.runtime.engine.policy import RuntimePolicy
from schedc.runtime.engine.schedule import Schedule
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.jobs import Job
from schedc.runtime.workloads.workload import Workload
from tests.support.classic_conservative import classic_conservative_starts
from tests.support.classic_easy import classic_easy_starts

CAPS = (8, 20, 1000)  # different field widths for the packed K-resource profile
NAMES = ("cpus", "memory", "disk")


@st.composite
def workloads(draw, k: int, overrun: bool = False) -> Workload:
    """Jobs killed at their estimate; ``overrun``: jobs of `--overrun extend`, which may run
    past it (up to 4 times it)."""
    n = draw(st.integers(1, 14))
    jobs = []
    t = 0
    for i in range(n):
        t += draw(st.integers(0, 6))  # clustered submits: many jobs share an instant
        est = draw(st.integers(1, 12))
        run = draw(st.integers(0, 4 * est if overrun else est + 3))
        run = run if overrun else min(run, est)
        req = tuple(draw(st.integers(1 if r == 0 else 0, CAPS[r])) for r in range(k))
        jobs.append(Job(i + 1, i, t, run, est, req))
    return Workload(tuple(jobs), NAMES[:k], CAPS[:k], overrun="extend" if overrun else "kill")


policies = st.builds(
    lambda depth, backfill, order: (depth, backfill, order),
    st.sampled_from([0, 1, 2, 3, None]),
    st.sampled_from(["first_fit", "none", "best"]),
    st.sampled_from(["fcfs", "sjf"]),
)


def make(k: int, depth, backfill, order) -> RuntimePolicy:
    return RuntimePolicy(
        f"{depth}-{backfill}-{order}", NAMES[:k], (None,) * k, depth=depth,
        backfill=backfill,
        order_key=None if order == "fcfs" else (lambda job, state: (job.estimate,)),
        score=(lambda job, state: (-job.procs, job.estimate)) if backfill == "best" else None)


def replay_check(s: Schedule) -> None:
    """Independent feasibility: starts after submit, ends = start + run time, and at no
    instant the running jobs hold more than the machine."""
    events = []
    for r in s.records:
        assert r.start >= r.job.submit
        assert r.end == r.start + r.job.run_time
        if r.end > r.start:
            events.append((r.start, 1, r.alloc))
            events.append((r.end, 0, r.alloc))
    events.sort(key=lambda e: (e[0], e[1]))  # releases before starts at the same time
    use = [0] * len(s.capacities)
    for _, is_start, alloc in events:
        for k, a in enumerate(alloc):
            use[k] += a if is_start else -a
            assert use[k] <= s.capacities[k]


def check_optimisations(policy: RuntimePolicy, w: Workload) -> None:
    """The reference run is feasible, and the optimisations change no start."""
    ref = simulate(policy, w, incremental=False, fast=False)
    replay_check(ref)
    for kw in (dict(), dict(incremental=False), dict(fast=False)):
        assert starts(simulate(policy, w, **kw)) == starts(ref), kw


def starts(s: Schedule) -> list[int]:
    return [r.start for r in s.records]


@settings(max_examples=300, deadline=None)
@given(st.data(), policies, st.sampled_from([1, 2, 3]))
def test_feasible_and_optimisations_do_not_change_the_schedule(data, p, k):
    check_optimisations(make(k, *p), data.draw(workloads(k)))


@settings(max_examples=200, deadline=None)
@given(st.data(), st.sampled_from([1, 2, 3]))
def test_easy_equals_the_classic_shadow_and_extra_rule(data, k):
    w = data.draw(workloads(k))
    assert starts(simulate(make(k, 1, "first_fit", "fcfs"), w)) == classic_easy_starts(w)


@settings(max_examples=200, deadline=None)
@given(st.data(), st.sampled_from([1, 2, 3]))
def test_conservative_equals_the_brute_force_oracle(data, k):
    w = data.draw(workloads(k))
    assert starts(simulate(make(k, None, "first_fit", "fcfs"), w)) == \
        classic_conservative_starts(w)


@settings(max_examples=200, deadline=None)
@given(workloads(1))
def test_no_backfill_starts_in_queue_order(w):
    s = simulate(make(1, None, "none", "fcfs"), w)
    order = sorted(s.records, key=lambda r: (r.job.submit, r.job.index))
    assert [r.start for r in order] == sorted(r.start for r in order)


@settings(max_examples=200, deadline=None)
@given(workloads(1))
def test_easy_head_never_waits_on_an_idle_machine(w):
    # Whenever the machine is empty at some start time, the queue head starts then (no
    # dead lock): every job starts no later than the time the machine drains after it.
    s = simulate(make(1, 1, "first_fit", "fcfs"), w)
    ends = sorted(r.end for r in s.records)
    for r in s.records:
        drained = max([e for e in ends if e <= r.start] + [r.job.submit])
        assert r.start >= r.job.submit
        assert drained <= r.start



@settings(max_examples=300, deadline=None)
@given(st.data(), policies, st.sampled_from([1, 2, 3]))
def test_extend_feasible_monitored_and_optimisations_agree(data, p, k):
    """Jobs past their estimate: every schedule is feasible, the monitor (on) never stops
    (each pass plans overdue jobs to end after now), and the optimisations change nothing."""
    check_optimisations(make(k, *p), data.draw(workloads(k, overrun=True)))


@settings(max_examples=200, deadline=None)
@given(st.data(), st.sampled_from([1, 2, 3]))
def test_extend_easy_and_conservative_equal_the_oracles(data, k):
    w = data.draw(workloads(k, overrun=True))
    assert starts(simulate(make(k, 1, "first_fit", "fcfs"), w)) == classic_easy_starts(w)
    assert starts(simulate(make(k, None, "first_fit", "fcfs"), w)) == \
        classic_conservative_starts(w)
