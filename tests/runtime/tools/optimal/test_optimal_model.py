"""CP-SAT's proven optimum against an exhaustive search written apart from the model: for a
regular objective the serial schedules (each job in turn at its earliest fit) over all job
orders contain an optimum; and the plan monitor that checks every plan can fail."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from schedc.runtime.engine.policy import RuntimeTuning
from schedc.runtime.jobs import Job, RunningJob
from schedc.runtime.tools.optimal.bound import slice_bound
from schedc.runtime.tools.optimal.check import plan_errors
from schedc.runtime.tools.optimal.instance import Instance
from schedc.runtime.tools.optimal.model import artww_of, solve, weighted_starts
from schedc.runtime.tools.optimal.outcome import candidates
from tests.support.optimal_oracle import exhaustive_minimum, random_instance, serial_plan


@pytest.mark.parametrize("seed", range(30))
def test_proven_optimum_is_the_exhaustive_minimum(seed: int) -> None:
    """CP-SAT's model alone (the event search, which runs first, has its own tests)."""
    rng = random.Random(seed)
    inst = random_instance(rng)
    some_order = serial_plan(inst, tuple(rng.sample(inst.jobs, len(inst.jobs))))
    hint = some_order if seed % 2 else None  # with and without the upper bound
    solution = solve(inst, time_limit=10, workers=2, hint=hint, search=False)
    assert solution.status == "optimal" and solution.solver == "cp-sat"
    assert solution.weighted == exhaustive_minimum(inst)
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
    inst = random_instance(random.Random(seed))
    assert slice_bound(inst) <= exhaustive_minimum(inst)


@pytest.mark.parametrize("enabled", [True, False])
def test_solve_pauses_the_cycle_collector_and_restores_it(enabled: bool, monkeypatch) -> None:
    import gc

    from schedc.runtime.tools.optimal import model

    seen = []
    real = model._solve

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(model, "_solve", spy)
    inst = random_instance(random.Random(3))
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        solve(inst, time_limit=10.0, workers=1)
        assert seen == [False] and gc.isenabled() == enabled
        monkeypatch.setattr(model, "_solve", lambda *a, **k: 1 / 0)
        with pytest.raises(ZeroDivisionError):
            solve(inst, time_limit=10.0, workers=1)
        assert gc.isenabled() == enabled
    finally:
        (gc.enable if was else gc.disable)()
