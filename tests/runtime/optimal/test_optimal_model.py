"""CP-SAT's proven optimum against an exhaustive search written apart from the model: for a
regular objective the serial schedules (each job in turn at its earliest fit) over all job
orders contain an optimum; and the plan monitor that checks every plan can fail."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import pytest

from schedc.runtime.engine.policy import RuntimeTuning
from schedc.runtime.jobs import Job, RunningJob
from schedc.runtime.optimal.bound import slice_bound
from schedc.runtime.optimal.check import plan_errors
from schedc.runtime.optimal.instance import Instance
from schedc.runtime.optimal.model import artww_of, solve, weighted_starts
from schedc.runtime.optimal.outcome import candidates


def _instance(rng: random.Random) -> Instance:
    k = rng.choice((1, 1, 2))
    caps = tuple(rng.randint(3, 8) for _ in range(k))
    now = rng.randint(0, 20)
    running, used = [], [0] * k
    for i in range(rng.randint(0, 2)):
        alloc = tuple(rng.randint(0, c - u) for c, u in zip(caps, used, strict=True))
        if alloc[0] == 0:
            continue
        used = [u + a for u, a in zip(used, alloc, strict=True)]
        est = rng.randint(1, 15)
        start = now - rng.randint(0, est - 1)
        job = Job(id=100 + i, index=len(running), submit=max(0, start - 3), run_time=est,
                  estimate=est, request=alloc)
        running.append(RunningJob(job, start, alloc))
    jobs = []
    for i in range(rng.randint(2, 6)):
        req = (rng.randint(1, caps[0]), *(rng.randint(0, c) for c in caps[1:]))
        est = rng.randint(1, 10)
        jobs.append(Job(id=i, index=len(running) + i, submit=rng.randint(0, now),
                        run_time=est, estimate=est, request=req))
    return Instance(now, ("cpus", "mem")[:k], caps, tuple(running), tuple(jobs))


def _serial(inst: Instance, order: tuple[Job, ...]) -> dict[int, int]:
    """Each job at the earliest instant from which it fits for its whole estimate."""
    held = [(inst.now, rj.expected_end, rj.alloc) for rj in inst.running
            if rj.expected_end > inst.now]
    starts = {}
    for job in order:
        for t in sorted({inst.now, *(e for _, e, _ in held)}):
            if t < inst.now:
                continue
            points = {t, *(b for b, _, _ in held if t < b < t + job.estimate)}
            if all(sum(a[k] for b, e, a in held if b <= p < e) + job.request[k] <= cap
                   for p in points for k, cap in enumerate(inst.capacities)):
                starts[job.index] = t
                held.append((t, t + job.estimate, job.request))
                break
    return starts


def _brute_force(inst: Instance) -> int:
    return min(weighted_starts(inst, _serial(inst, order))
               for order in itertools.permutations(inst.jobs))


@pytest.mark.parametrize("seed", range(30))
def test_proven_optimum_is_the_exhaustive_minimum(seed: int) -> None:
    rng = random.Random(seed)
    inst = _instance(rng)
    some_order = _serial(inst, tuple(rng.sample(inst.jobs, len(inst.jobs))))
    hint = some_order if seed % 2 else None  # with and without the upper bound
    solution = solve(inst, time_limit=10, workers=2, hint=hint)
    assert solution.status == "optimal"
    assert solution.weighted == _brute_force(inst)
    assert solution.bound == solution.weighted
    assert plan_errors(inst, solution.starts) == []


def _small() -> Instance:
    running = RunningJob(Job(1, 0, 0, 10, 10, (6,)), 0, (6,))
    jobs = (Job(2, 1, 1, 5, 5, (4,)), Job(3, 2, 2, 5, 5, (5,)))
    return Instance(2, ("cpus",), (10,), (running,), jobs)


def test_the_checker_accepts_a_good_plan_and_catches_overcommit_and_early_starts() -> None:
    inst = _small()
    assert plan_errors(inst, {1: 2, 2: 10}) == []
    assert any("capacity" in e for e in plan_errors(inst, {1: 2, 2: 9}))  # 6 + 5 > 10
    assert any("before" in e for e in plan_errors(inst, {1: 1, 2: 10}))  # before now
    assert any("differ" in e for e in plan_errors(inst, {1: 2}))  # a job left out


def test_artww_of_a_plan() -> None:
    inst = _small()
    # responses: job 2: 2 + 5 - 1 = 6 on 4 cpus; job 3: 10 + 5 - 2 = 13 on 5 cpus
    assert artww_of(inst, weighted_starts(inst, {1: 2, 2: 10})) == Fraction(4 * 6 + 5 * 13, 9)


def test_a_self_tuning_policy_stands_for_its_candidates(planning_policies: list) -> None:
    import attrs

    fcfs, sjf, ljf = planning_policies
    tuned = attrs.evolve(fcfs, name="tuned",
                         tuning=RuntimeTuning(candidates=(fcfs, sjf, ljf), metric="artww",
                                              decider="advanced", step="submit"))
    assert [p.name for p in candidates([tuned, sjf])] == [fcfs.name, sjf.name, ljf.name]


@pytest.mark.parametrize("seed", range(100, 160))
def test_the_slice_bound_never_exceeds_the_exhaustive_minimum(seed: int) -> None:
    inst = _instance(random.Random(seed))
    assert slice_bound(inst) <= _brute_force(inst)
