"""The event search (runtime/optimal/search.py) against the exhaustive oracle written apart
from it: every rule that drops plans (left shift, short jobs, identical jobs as one type,
the memo, the slice bound) must keep an optimum, on one resource and on two."""

from __future__ import annotations

import random
import time

import pytest
from attrs import evolve
from optimal_oracle import exhaustive_minimum, random_instance, serial_plan

from schedc.runtime.jobs import Job
from schedc.runtime.optimal.check import plan_errors
from schedc.runtime.optimal.instance import Instance
from schedc.runtime.optimal.model import solve, weighted_starts
from schedc.runtime.optimal.search import event_search

LONG = 60.0  # seconds: the small instances here end in milliseconds


def _deadline() -> float:
    return time.perf_counter() + LONG


def with_twins(rng: random.Random, inst: Instance) -> Instance:
    """The instance with its jobs drawn again from two or three (request, estimate) pairs,
    so identical jobs (one type with a count) are the rule."""
    shapes = [(j.request, j.estimate) for j in rng.sample(inst.jobs, min(3, len(inst.jobs)))]
    jobs = tuple(evolve(j, request=req, estimate=est, run_time=est)
                 for j, (req, est) in zip(inst.jobs, (rng.choice(shapes) for _ in inst.jobs),
                                          strict=True))
    return evolve(inst, jobs=jobs)


@pytest.mark.parametrize("seed", range(150))
def test_the_search_finds_the_exhaustive_minimum(seed: int) -> None:
    rng = random.Random(seed)
    inst = random_instance(rng)
    if seed % 2:
        inst = with_twins(rng, inst)
    found = event_search(inst, None, _deadline())
    assert found.complete
    assert found.weighted == exhaustive_minimum(inst)
    assert plan_errors(inst, found.starts) == []
    assert weighted_starts(inst, found.starts) == found.weighted


@pytest.mark.parametrize("seed", range(40))
def test_nothing_is_found_below_the_optimum_and_the_optimum_is_found_below_one_more(
        seed: int) -> None:
    inst = random_instance(random.Random(1000 + seed))
    best = exhaustive_minimum(inst)
    none = event_search(inst, best, _deadline())
    assert none.complete and none.starts is None
    one = event_search(inst, best + 1, _deadline())
    assert one.complete and one.weighted == best


def test_a_search_out_of_time_says_so() -> None:
    inst = random_instance(random.Random(3))
    found = event_search(inst, None, time.perf_counter() - 1)
    assert not found.complete


def test_a_job_that_fits_beside_the_running_one_is_not_held_back() -> None:
    # 10 cpus, 6 held until t=10: the 4-cpu job starts now, the 5-cpu one at 10
    running_job = Job(1, 0, 0, 10, 10, (6,))
    from schedc.runtime.jobs import RunningJob

    inst = Instance(0, ("cpus",), (10,), (RunningJob(running_job, 0, (6,)),),
                    (Job(2, 1, 0, 5, 5, (4,)), Job(3, 2, 0, 5, 5, (5,))))
    found = event_search(inst, None, _deadline())
    assert found.starts == {1: 0, 2: 10}


@pytest.mark.parametrize("seed", range(12))
def test_solve_gives_the_same_optimum_with_and_without_the_search(seed: int) -> None:
    rng = random.Random(2000 + seed)
    inst = random_instance(rng)
    hint = serial_plan(inst, tuple(rng.sample(inst.jobs, len(inst.jobs))))
    by_search = solve(inst, time_limit=10, workers=2, hint=hint)
    by_cp_sat = solve(inst, time_limit=10, workers=2, hint=hint, search=False)
    assert by_search.status == by_cp_sat.status == "optimal"
    assert by_search.solver == "event search" and by_cp_sat.solver == "cp-sat"
    assert by_search.weighted == by_cp_sat.weighted == exhaustive_minimum(inst)
    assert plan_errors(inst, by_search.starts) == []
