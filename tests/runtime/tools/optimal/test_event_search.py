"""The event search (runtime/tools/optimal/search.py) against the exhaustive oracle written apart
from it: every rule that drops plans (left shift, short jobs, identical jobs as one type,
the dominance of states, the slice and wide-job bounds, the bound of partial sets) must keep
an optimum,
on one resource and on two; and `solve`, which runs it beside CP-SAT, agrees with CP-SAT
alone."""

from __future__ import annotations

import random
import time

import pytest
from attrs import evolve

from schedc.runtime.jobs import Job, RunningJob
from schedc.runtime.tools.optimal.check import plan_errors
from schedc.runtime.tools.optimal.instance import Instance
from schedc.runtime.tools.optimal.model import solve, weighted_starts
from schedc.runtime.tools.optimal.search import Incumbent, _Search, event_search
from tests.support.optimal_oracle import (
    crowded_instance,
    exhaustive_minimum,
    random_instance,
    serial_plan,
)

LONG = 60.0  # seconds: the small instances here end in milliseconds


def searched(inst: Instance, hint: dict[int, int] | None = None,
             deadline: float | None = None) -> tuple[bool, dict[int, int] | None, int | None]:
    best = Incumbent(inst)
    if hint is not None:
        best.offer(hint)
    found = event_search(inst, best, time.perf_counter() + LONG if deadline is None
                         else deadline)
    plan, weighted = best.plan()
    return found.complete, plan, weighted


def with_twins(rng: random.Random, inst: Instance) -> Instance:
    """The instance with its jobs drawn again from two or three (request, estimate) pairs,
    so identical jobs (one type with a count) are the rule."""
    shapes = [(j.request, j.estimate) for j in rng.sample(inst.jobs, min(3, len(inst.jobs)))]
    jobs = tuple(evolve(j, request=req, estimate=est, run_time=est)
                 for j, (req, est) in zip(inst.jobs, (rng.choice(shapes) for _ in inst.jobs),
                                          strict=True))
    return evolve(inst, jobs=jobs)


def with_a_wide_pair(rng: random.Random, inst: Instance) -> Instance:
    """Two of its jobs made wider than half the first resource (they never run together)."""
    cap = inst.capacities[0]
    jobs = list(inst.jobs)
    for k in rng.sample(range(len(jobs)), 2):
        jobs[k] = evolve(jobs[k], request=(rng.randint(cap // 2 + 1, cap), *jobs[k].request[1:]))
    return evolve(inst, jobs=tuple(jobs))


@pytest.mark.parametrize("seed", range(150))
def test_the_search_finds_the_exhaustive_minimum(seed: int) -> None:
    rng = random.Random(seed)
    inst = random_instance(rng)
    if seed % 3 == 1:
        inst = with_twins(rng, inst)
    elif seed % 3 == 2:
        inst = with_a_wide_pair(rng, inst)
    complete, plan, weighted = searched(inst)
    assert complete
    assert weighted == exhaustive_minimum(inst)
    assert plan_errors(inst, plan) == []
    assert weighted_starts(inst, plan) == weighted


@pytest.mark.parametrize("seed", range(150))
def test_states_dropped_as_dominated_never_hide_the_optimum(seed: int) -> None:
    # without the hold in the test of dominance (any state met before at no higher cost
    # drops the new one), 8 of these 150 seeds fail
    rng = random.Random(5000 + seed)
    inst = crowded_instance(rng, 2 if seed % 3 == 2 else 1)
    complete, plan, weighted = searched(inst)
    assert complete
    assert weighted == exhaustive_minimum(inst)
    assert plan_errors(inst, plan) == []


def _hold(active: list[tuple[int, tuple[int, ...]]], x: int) -> tuple[int, ...]:
    """What jobs (end, request) hold of each resource at instant ``x``."""
    held = [0] * len(active[0][1]) if active else [0]
    for end, request in active:
        if end > x:
            held = [h + q for h, q in zip(held, request, strict=True)]
    return tuple(held)


@pytest.mark.parametrize("seed", range(300))
def test_one_hold_below_another_exactly_when_it_is_so_at_every_instant(seed: int) -> None:
    rng = random.Random(seed)
    k = 1 + seed % 2
    inst = crowded_instance(rng, k)
    search = _Search(inst, Incumbent(inst), time.perf_counter() + LONG, None)
    t = rng.randint(0, 5)

    def draw() -> tuple[tuple[int, int], ...]:
        return tuple(sorted((t + rng.randint(1, 8), rng.randrange(len(search.types)))
                            for _ in range(rng.randint(0, 4))))

    a, b = draw(), draw()
    if rng.random() < 0.3:  # b: a with one more job, or one ending later
        b = tuple(sorted(a + ((t + rng.randint(1, 8), rng.randrange(len(search.types))),)))
    requests = search.requests

    def held(active: tuple[tuple[int, int], ...], x: int) -> tuple[int, ...]:
        return _hold([(e, requests[i]) for e, i in active], x) if active else (0,) * k

    truth = all(all(p <= q for p, q in zip(held(a, x), held(b, x), strict=True))
                for x in range(t, t + 10))
    sa, sb = search._steps(t, a), search._steps(t, b)
    assert search._below(sa, sb) == truth
    if truth and all(w > 0 for w in search.width):  # the quick test never refuses it
        assert all(p <= q for p, q in zip(sa[0], sb[0], strict=True))


@pytest.mark.parametrize("seed", range(40))
def test_from_any_plan_the_search_ends_at_the_optimum_and_keeps_an_optimal_plan(
        seed: int) -> None:
    rng = random.Random(1000 + seed)
    inst = random_instance(rng)
    if seed % 2:
        inst = with_a_wide_pair(rng, inst)
    some = serial_plan(inst, tuple(rng.sample(inst.jobs, len(inst.jobs))))
    complete, plan, weighted = searched(inst, some)
    assert complete and weighted == exhaustive_minimum(inst)
    again = searched(inst, plan)  # nothing better than an optimum: it stays
    assert again == (True, plan, weighted)


def test_a_search_out_of_time_says_so() -> None:
    inst = random_instance(random.Random(3))
    complete, _, _ = searched(inst, deadline=time.perf_counter() - 1)
    assert not complete


def test_a_job_that_fits_beside_the_running_one_starts_now() -> None:
    # 10 cpus, 6 held until t=10: the 4-cpu job starts now, the 5-cpu one at 10
    running = RunningJob(Job(1, 0, 0, 10, 10, (6,)), 0, (6,))
    inst = Instance(0, ("cpus",), (10,), (running,),
                    (Job(2, 1, 0, 5, 5, (4,)), Job(3, 2, 0, 5, 5, (5,))))
    assert searched(inst)[1] == {1: 0, 2: 10}


@pytest.mark.parametrize("seed", range(12))
def test_solve_gives_the_same_optimum_with_and_without_the_search(seed: int) -> None:
    rng = random.Random(2000 + seed)
    inst = random_instance(rng)
    hint = serial_plan(inst, tuple(rng.sample(inst.jobs, len(inst.jobs))))
    both = solve(inst, time_limit=10, workers=2, hint=hint)
    alone = solve(inst, time_limit=10, workers=2, hint=hint, search=False)
    assert both.status == alone.status == "optimal"
    # whichever ends first gives the verdict
    assert both.solver in ("event search", "cp-sat") and alone.solver == "cp-sat"
    assert both.weighted == alone.weighted == both.bound == exhaustive_minimum(inst)
    assert plan_errors(inst, both.starts) == []


def test_where_the_search_ends_in_its_tenth_cp_sat_never_starts(monkeypatch) -> None:
    from schedc.runtime.tools.optimal import model

    def no_cp_sat(*args: object, **kwargs: object) -> None:
        raise AssertionError("CP-SAT started")

    monkeypatch.setattr(model, "_cp_sat", no_cp_sat)
    inst = random_instance(random.Random(5))
    solution = solve(inst, time_limit=10, workers=2)
    assert solution.status == "optimal" and solution.solver == "event search"
    assert solution.weighted == exhaustive_minimum(inst)


def test_an_error_in_the_search_thread_reaches_the_caller(monkeypatch) -> None:
    from schedc.runtime.tools.optimal import model

    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError("broken search")

    monkeypatch.setattr(model, "event_search", broken)
    with pytest.raises(ValueError, match="broken search"):
        solve(random_instance(random.Random(5)), time_limit=10, workers=2)


def test_the_fuzz_campaign_finds_the_two_solvers_agreeing_on_its_first_seeds() -> None:
    """benchmarks/fuzz_optimal.py, the campaign beyond the oracle's sizes, on a few quick
    seeds: it runs, and the search and CP-SAT prove the same optimum."""
    from benchmarks import fuzz_optimal as campaign

    assert [campaign.check(seed, 8, 10) for seed in (0, 1, 2, 3, 5)] == ["same"] * 5
