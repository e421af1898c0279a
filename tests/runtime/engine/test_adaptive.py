"""papers/003's adaptive disciplines: the SUBSET commitment and subset sum, the leftover
processors given equally or by efficiency (``runtime/engine/adaptive.py``, by hand and
against brute force), and in the preemptive loop, sizes chosen by the policy at a start,
leftovers, SUBSET and malleable restarts at another size (hand-checked schedules)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedc.runtime.engine.adaptive import committed, fill, give_leftover
from schedc.runtime.engine.lifecycle import JobLife
from schedc.runtime.engine.monitor import MonitorViolation
from schedc.runtime.engine.policy import PassState, PreemptionRules, RuntimePolicy
from schedc.runtime.engine.preemptive import simulate_preemptive
from schedc.runtime.jobs import Job, Moldable
from schedc.runtime.speedup import Amdahl, Linear
from schedc.runtime.workloads.workload import Workload

# -- the steps, by hand ---------------------------------------------------------------------------


def test_the_subset_variant_commits_to_fewer_jobs_as_more_wait() -> None:
    # N' = floor(N_ff max(1 - L / (delta N_ff), 0))
    assert committed(4, 0, 5) == 4
    assert committed(4, 10, 5) == 2  # 4 (1 - 10/20)
    assert committed(4, 11, 5) == 1  # 4 (1 - 11/20) = 1.8
    assert committed(4, 20, 5) == 0
    assert committed(4, 99, 5) == 0
    assert committed(0, 3, 5) == 0
    with pytest.raises(ValueError):
        committed(3, 1, 0)


def test_the_subset_sum_fills_the_processors_with_the_earliest_jobs() -> None:
    assert fill([4, 3, 5, 2], 7) == [0, 1]  # 4 + 3; 5 + 2 also makes 7, later jobs
    assert fill([8, 8], 7) == []
    assert fill([3, 3, 3], 10) == [0, 1, 2]  # 9: one surplus processor
    assert fill([], 5) == [] and fill([1], 0) == []


def test_the_subset_sum_prefers_the_full_fill() -> None:
    assert fill([6, 2, 2, 3], 7) != [0]
    assert sum([6, 2, 2, 3][i] for i in fill([6, 2, 2, 3], 7)) == 7


@given(st.lists(st.integers(1, 9), max_size=8), st.integers(0, 30))
def test_the_subset_sum_is_the_best_subset(sizes: list[int], capacity: int) -> None:
    best = max((sum(c) for r in range(len(sizes) + 1)
                for c in itertools.combinations(sizes, r) if sum(c) <= capacity), default=0)
    chosen = fill(sizes, capacity)
    assert chosen == sorted(set(chosen)) and sum(sizes[i] for i in chosen) == best


def test_leftover_processors_go_to_the_smallest_allocation_then_the_earlier_job() -> None:
    sizes = [2, 4, 1]
    give_leftover(sizes, [16, 16, 2], 8)
    # 1 -> 2 (its max), then 2,4,2: the first 2 -> 3, the third is at its max: 3 -> 4,
    # then 4,4: the earlier first ... 15 processors in all
    assert sizes == [7, 6, 2] and sum(sizes) == 15


def test_leftover_processors_go_where_the_efficiency_after_is_highest() -> None:
    models = [Amdahl(0.5), Linear()]
    sizes = [1, 1]
    give_leftover(sizes, [8, 8], 3, lambda j, n: models[j].speedup(n))
    assert sizes == [1, 4]  # a linear job stays fully efficient
    sizes = [1, 1]
    give_leftover(sizes, [8, 2], 3, lambda j, n: models[j].speedup(n))
    assert sizes == [3, 2]  # ... up to its maximum, then the other one


# -- in the loop ----------------------------------------------------------------------------------

FIRST_FIT = RuntimePolicy("ff", ("cpus",), (None,), depth=0, backfill="first_fit")


def moldable(i: int, submit: int, run: int, procs: int, low: int, high: int,
             speedup=None) -> Job:
    return Job(i, i - 1, submit, run, run, (procs,),
               moldable=Moldable(low, high, speedup or Linear()))


def at_minimum(life: JobLife, state: PassState) -> int:
    return life.job.min_procs


def rules(**kw) -> PreemptionRules:
    return PreemptionRules(mechanism=kw.pop("mechanism", lambda j: "none"), select=True,
                           size=at_minimum, **kw)


def sizes_run(run) -> dict[int, list[tuple[int, int, int]]]:
    return {life.job.id: [(s.start, s.end, len(s.processors)) for s in life.segments
                          if s.phase == "running"] for life in run.lives}


def test_jobs_start_at_their_size_and_leftovers_are_equalised() -> None:
    # 16 cpus; A (min 2) and B (min 4) arrive at 0: 2 + 4, then 10 left, equalised: 8 and 8.
    # A's run of 80 s recorded on 4 cpus takes 40 s on 8, B's 160 s on 8 takes 160 s
    load = Workload((moldable(1, 0, 80, 4, 2, 16), moldable(2, 0, 160, 8, 4, 16)),
                    ("cpus",), (16,))
    run = simulate_preemptive(FIRST_FIT, rules(leftover="equal"), load)
    assert sizes_run(run) == {1: [(0, 40, 8)], 2: [(0, 160, 8)]}
    assert run.schedule.records[0].alloc == (8,)
    assert run.schedule.preempted[1].cpu_time == 160 * 8
    plain = simulate_preemptive(FIRST_FIT, rules(), load)  # no leftover: minimum sizes
    assert sizes_run(plain) == {1: [(0, 160, 2)], 2: [(0, 320, 4)]}


def test_leftovers_by_efficiency_go_to_the_job_that_uses_them() -> None:
    load = Workload((moldable(1, 0, 100, 1, 1, 8, Amdahl(0.5)),
                     moldable(2, 0, 100, 1, 1, 8, Linear())), ("cpus",), (8,))
    run = simulate_preemptive(FIRST_FIT, rules(leftover="efficient"), load)
    assert [life.size for life in run.lives] == [1, 7]


def test_the_subset_variant_fills_the_machine_with_the_jobs_that_fit_it() -> None:
    # 10 cpus, FCFS: A (min 6) runs from 0. At 1, B (3), C (2) and D (2) arrive: first fit
    # takes B (3 of the 4 free), N_ff = 1 with L = 4 jobs in the system and delta 1: N' = 0,
    # so the subset sum fills the 4 free cpus with C and D, and B waits
    load = Workload((moldable(1, 0, 100, 6, 6, 6), moldable(2, 1, 10, 3, 3, 3),
                     moldable(3, 1, 10, 2, 2, 2), moldable(4, 1, 10, 2, 2, 2)),
                    ("cpus",), (10,))
    first_fit = simulate_preemptive(FIRST_FIT, rules(), load)
    assert [r.start for r in first_fit.schedule.records] == [0, 1, 11, 11]
    subset = simulate_preemptive(FIRST_FIT, rules(subset=1), load)
    assert [r.start for r in subset.schedule.records] == [0, 11, 1, 1]
    generous = simulate_preemptive(FIRST_FIT, rules(subset=5), load)  # N' = floor(1 - 4/5)
    assert [r.start for r in generous.schedule.records] == [0, 11, 1, 1]
    assert committed(1, 4, 100) == 0 and committed(2, 4, 5) == 1


def least_acquired(life: JobLife, state: PassState) -> tuple:
    return (life.acquired_at(state.now),)


LAS = RuntimePolicy("las", ("cpus",), (None,), depth=0, backfill="first_fit",
                    order_key=least_acquired)


def test_a_malleable_job_restarts_at_another_size() -> None:
    # 8 cpus, least acquired service first. A (malleable, min 2, max 8) runs alone on 8 from
    # 0. At 10 B (6 cpus, never preempted) arrives, less served: A is checkpointed (cost 0),
    # B starts; 2 cpus stay free. At 20 C (4) arrives, less served than A, but only 2 cpus are
    # free: A, at its minimum 2, restarts there with 7/8 of its work left, 280 s on 2 cpus
    jobs = (moldable(1, 0, 80, 8, 2, 8), moldable(2, 10, 20, 6, 6, 6),
            moldable(3, 20, 100, 4, 4, 4))
    load = Workload(jobs, ("cpus",), (8,))

    def mechanism(kind: str):
        return lambda job: kind if job.id == 1 else "none"

    run = simulate_preemptive(LAS, rules(mechanism=mechanism("malleable"), leftover="equal"),
                              load)
    assert sizes_run(run) == {1: [(0, 10, 8), (20, 300, 2)], 2: [(10, 30, 6)],
                              3: [(30, 130, 4)]}
    assert run.lives[0].preemptions["checkpoint"] == 1
    # migratable, A waits for its 8 cpus: C takes 4 at 30, A restarts at 130 for 70 s
    migratable = simulate_preemptive(
        LAS, rules(mechanism=mechanism("checkpoint"), leftover="equal"), load)
    assert sizes_run(migratable)[1] == [(0, 10, 8), (130, 200, 8)]


def test_a_size_outside_the_job_s_range_stops_the_run() -> None:
    load = Workload((moldable(1, 0, 10, 4, 2, 4),), ("cpus",), (8,))
    too_big = PreemptionRules(select=True, size=lambda life, state: 5)
    with pytest.raises(MonitorViolation, match=r"size 5 of job 1 outside its range \[2, 4\]"):
        simulate_preemptive(FIRST_FIT, too_big, load)
