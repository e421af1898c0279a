"""Golden schedules, checked by hand, for the rigid-job pass (DESIGN's exact semantics)."""

from __future__ import annotations

import pytest

from schedc.runtime.engine.monitor import MonitorViolation
from schedc.runtime.engine.policy import RuntimeInvariant, RuntimePolicy
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.jobs import Job
from schedc.runtime.workloads.workload import Workload, WorkloadError
from tests.support.variants import VARIANTS


def wl(cap: tuple[int, ...], *specs: tuple[int, tuple[int, ...], int, int],
       resources: tuple[str, ...] = ("cpus",)) -> Workload:
    """specs: (submit, request, run_time, estimate), ids 1.. in order."""
    jobs = tuple(Job(i + 1, i, sub, min(run, est), est, req)
                 for i, (sub, req, run, est) in enumerate(specs))
    return Workload(jobs, resources, cap)


def pol(depth: int | None, backfill: str = "first_fit", k: int = 1, **kw) -> RuntimePolicy:
    res = ("cpus", "memory")[:k]
    return RuntimePolicy(f"d{depth}-{backfill}", res, (None,) * k, depth=depth,
                         backfill=backfill, **kw)  # type: ignore[arg-type]


def starts(policy: RuntimePolicy, w: Workload, **kw) -> list[int]:
    return [r.start for r in simulate(policy, w, **kw).records]


DESIGN_CASE = wl((10,), (0, (6,), 100, 100), (1, (10,), 100, 100), (2, (4,), 1000, 1000))


@pytest.mark.parametrize("kw", VARIANTS)
def test_design_case_easy_never_delays_the_head(kw):
    # The 4-proc job fits at t=2 but would hold 4 procs past t=100, when the 10-proc head
    # is reserved with 0 extra: it must wait until the head is done.
    assert starts(pol(1), DESIGN_CASE, **kw) == [0, 100, 200]


@pytest.mark.parametrize("kw", VARIANTS)
def test_design_case_first_fit_starves_the_head(kw):
    # Depth 0: no reservation, the 4-proc job starts at 2 and the head waits for it.
    assert starts(pol(0), DESIGN_CASE, **kw) == [0, 1002, 2]


SHORT = wl((10,), (0, (6,), 100, 100), (1, (10,), 100, 100), (2, (4,), 50, 50))


@pytest.mark.parametrize("kw", VARIANTS)
def test_fcfs_without_backfill_keeps_order(kw):
    assert starts(pol(None, "none"), SHORT, **kw) == [0, 100, 200]
    assert starts(pol(1), SHORT, **kw) == [0, 100, 2]  # ends at 52 <= shadow 100


# j2 is reserved at 100 with 2 extra procs; j3 (9 procs) gets a reservation only when the
# depth allows it; j4 (2 procs, 250 s) fits EASY's extra but crosses j3's reservation.
DEPTH = wl((10,), (0, (6,), 100, 100), (1, (8,), 100, 100), (2, (9,), 100, 100),
           (3, (2,), 250, 250))


@pytest.mark.parametrize("kw", VARIANTS)
def test_easy_depth2_conservative(kw):
    assert starts(pol(1), DEPTH, **kw) == [0, 100, 253, 3]
    assert starts(pol(2), DEPTH, **kw) == [0, 100, 200, 300]
    assert starts(pol(None), DEPTH, **kw) == [0, 100, 200, 300]


# j1 holds the machine until 100; then the queue is j2 5p/500, j3 5p/50, j4 6p/60.
BEST = wl((10,), (0, (10,), 100, 100), (1, (5,), 500, 500), (1, (5,), 50, 50),
          (1, (6,), 60, 60))


@pytest.mark.parametrize("kw", VARIANTS)
def test_backfill_best_by_score(kw):
    assert starts(pol(0), BEST, **kw) == [0, 100, 100, 600]  # 6p waits for j2 (600)
    widest = pol(0, "best", score=lambda job, state: -job.procs)
    # the 6-proc job wins at 100 and blocks the two 5-proc jobs until it ends at 160
    assert starts(widest, BEST, **kw) == [0, 160, 160, 100]
    # score = queue position (submit, index) is first fit, as simulator.py argues
    by_order = pol(0, "best", score=lambda job, state: job.submit * 1000 + job.index)
    assert starts(by_order, BEST, **kw) == starts(pol(0), BEST, **kw)


@pytest.mark.parametrize("kw", VARIANTS)
def test_two_resources_memory_blocks(kw):
    # cpus 10, memory 100. j2 fits in cpus but not memory: reserved at 100 (j1's end).
    # j3 fits both and ends by 100: backfills at 2. j4 holds 5 memory past the shadow time,
    # where the extra memory is 100 - 20 = 80 minus j3 (ended) = 80: fine at t=52.
    w = wl((10, 100), (0, (2, 90), 100, 100), (1, (2, 20), 50, 50), (2, (2, 10), 50, 50),
           (3, (1, 5), 500, 500), resources=("cpus", "memory"))
    assert starts(pol(1, k=2), w, **kw) == [0, 100, 2, 52]
    # without backfilling, j3 and j4 wait behind j2
    assert starts(pol(None, "none", k=2), w, **kw) == [0, 100, 100, 100]


@pytest.mark.parametrize("kw", VARIANTS)
def test_zero_run_time_job_makes_another_pass(kw):
    # j1 ends the instant it starts: a second pass at t=0 starts j2 at once.
    w = wl((10,), (0, (10,), 0, 10), (0, (10,), 5, 5), (0, (10,), 5, 5))
    s = simulate(pol(1), w, **kw)
    assert [(r.start, r.end) for r in s.records] == [(0, 0), (0, 5), (5, 10)]


@pytest.mark.parametrize("kw", VARIANTS)
def test_killed_at_estimate(kw):
    # run time 500 but estimate 100: it runs 100 s (the reader caps; so does wl()).
    w = wl((10,), (0, (10,), 500, 100), (1, (10,), 10, 10))
    s = simulate(pol(1), w, **kw)
    assert [(r.start, r.end) for r in s.records] == [(0, 100), (100, 110)]


def test_early_finish_reschedules():
    # j1 estimates 1000 but runs 10: the head j2 starts at 10, not 1000.
    w = wl((10,), (0, (6,), 10, 1000), (1, (10,), 10, 10))
    assert starts(pol(1), w) == [0, 10]


def test_order_key_and_dynamic_order():
    # Shortest estimate first, static and recomputed every pass: both give the same.
    w = wl((10,), (0, (10,), 100, 100), (1, (10,), 300, 300), (2, (10,), 50, 50))
    sjf = pol(1, order_key=lambda job, state: (job.estimate,))
    assert starts(sjf, w) == [0, 150, 100]
    dyn = pol(1, order_key=lambda job, state: (job.estimate,), order_static=False,
              state_free=False)
    assert starts(dyn, w) == [0, 150, 100]


def test_size_rule_changes_allocation_not_run_time():
    w = wl((10,), (0, (8,), 100, 100), (0, (8,), 100, 100))
    half = pol(1, size=lambda job, state: job.procs // 2)
    s = simulate(half, w)
    assert [(r.start, r.end, r.alloc) for r in s.records] == [(0, 100, (4,)), (0, 100, (4,))]


def test_state_used_is_current_during_the_pass():
    seen: list[list[int]] = []
    w = wl((10,), (0, (3,), 100, 100), (0, (3,), 100, 100), (0, (3,), 100, 100))

    def size(job, state):
        seen.append(list(state.used))
        return job.procs

    simulate(pol(1, size=size, state_free=False), w)
    assert seen == [[0], [3], [6]]


def test_invariant_violation_and_callable_errors_are_reported():
    w = wl((10,), (0, (3,), 100, 100), (5, (3,), 100, 100))
    inv = RuntimeInvariant("job.submit < 5", "x.pol:3:13", lambda job, state: job.submit < 5)
    with pytest.raises(MonitorViolation, match=r"t=5: .*invariant `job.submit < 5`.* job 2"):
        simulate(pol(1, invariants=(inv,)), w)
    boom = pol(1, order_key=lambda job, state: (1 // (job.submit - 5),))
    with pytest.raises(MonitorViolation, match=r"order key failed for job 2: ZeroDivision"):
        simulate(boom, w)
    too_big = pol(1, size=lambda job, state: 11)
    with pytest.raises(MonitorViolation, match=r"size 11 for job 1"):
        simulate(too_big, w)


def test_job_larger_than_policy_machine_is_an_error():
    w = wl((10,), (0, (8,), 100, 100))
    small = RuntimePolicy("small", ("cpus",), (4,), depth=1, backfill="first_fit")
    with pytest.raises(WorkloadError, match="more than the machine"):
        simulate(small, w)


def test_progress_is_called_at_most_about_100_times():
    w = wl((10,), *[(i, (1,), 5, 5) for i in range(1000)])
    calls: list[tuple[int, int]] = []
    simulate(pol(1), w, progress=lambda d, t: calls.append((d, t)))
    assert 1 <= len(calls) <= 101
    assert calls[-1] == (1000, 1000)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
