"""The annealing over job orders (runtime/tools/optimal/local_search.py): its decoder is the
serial schedule of the oracle written apart from it, every plan it offers passes the
monitor, it reaches the exhaustive minimum on small instances, and `solve` still proves
CP-SAT's optimum when the annealing has planned first."""

from __future__ import annotations

import random
import threading
import time

import pytest
from attrs import evolve

from schedc.runtime.tools.optimal import model
from schedc.runtime.tools.optimal.check import plan_errors
from schedc.runtime.tools.optimal.instance import Instance, weighted_starts
from schedc.runtime.tools.optimal.local_search import SerialDecoder, anneal
from schedc.runtime.tools.optimal.search import Incumbent
from tests.support.optimal_oracle import exhaustive_minimum, random_instance, serial_plan

LONG = 60.0


def relative(inst: Instance, starts: dict[int, int]) -> int:
    return weighted_starts(inst, starts) - inst.now * sum(j.request[0] for j in inst.jobs)


@pytest.mark.parametrize("seed", range(40))
def test_decoder_is_the_serial_schedule(seed):
    rng = random.Random(seed)
    for _ in range(10):
        inst = random_instance(rng)
        order = list(inst.jobs)
        rng.shuffle(order)
        starts, value = SerialDecoder(inst).starts([j.index for j in order])
        assert starts == serial_plan(inst, tuple(order))
        assert value == relative(inst, starts)


def test_decoder_waits_for_a_later_submission():
    """A job submitted after now (never in a replayed state, but allowed by the monitor)
    starts at its submission at the earliest, splitting the free segment it falls in."""
    inst = random_instance(random.Random(7))
    late = evolve(inst.jobs[0], submit=inst.now + 5)
    inst = evolve(inst, jobs=(late, *inst.jobs[1:]))
    starts, _ = SerialDecoder(inst).starts([j.index for j in inst.jobs])
    assert starts[late.index] >= inst.now + 5
    assert plan_errors(inst, starts) == []


class Recording(Incumbent):
    """An incumbent that keeps every plan offered."""

    def __init__(self, instance: Instance) -> None:
        super().__init__(instance)
        self.offered: list[dict[int, int]] = []

    def offer(self, starts):
        self.offered.append(dict(starts))
        super().offer(starts)


@pytest.mark.parametrize("seed", range(60))
def test_anneal_reaches_the_exhaustive_minimum(seed):
    """Some order's serial plan is optimal (regular objective): on up to 6 jobs, 3,000
    moves from the shortest-first order find it, and every plan offered is valid."""
    inst = random_instance(random.Random(1000 + seed))
    best = Recording(inst)
    anneal(inst, best, time.perf_counter() + LONG, seed=seed, max_moves=3000)
    _, weighted = best.plan()
    assert weighted == exhaustive_minimum(inst)
    assert best.offered
    for plan in best.offered:
        assert plan_errors(inst, plan) == []


def test_anneal_starts_from_the_incumbent_and_never_worsens_it():
    rng = random.Random(3)
    for _ in range(30):
        inst = random_instance(rng)
        order = list(inst.jobs)
        rng.shuffle(order)
        first = serial_plan(inst, tuple(order))
        best = Incumbent(inst)
        best.offer(first)
        anneal(inst, best, time.perf_counter() + LONG, max_moves=200)
        assert best.plan()[1] <= weighted_starts(inst, first)


def test_anneal_stops_when_told():
    inst = random_instance(random.Random(11))
    stop = threading.Event()
    stop.set()
    best = Incumbent(inst)
    assert anneal(inst, best, time.perf_counter() + LONG, stop=stop.is_set) == 0
    assert best.plan()[0] is not None  # the first plan is offered all the same


def test_solve_with_the_annealing_first_proves_the_optimum(monkeypatch):
    """The search held back for the whole solo share, so the annealing plans alone, then
    CP-SAT starts from its plan: the optimum is still the exhaustive one."""
    calls: list[int] = []
    real_search, real_anneal = model.event_search, model.anneal

    def slow_search(instance, best, deadline, stop=None):
        time.sleep(0.3)
        return real_search(instance, best, deadline, stop)

    def counted(*args, **kwargs):
        calls.append(real_anneal(*args, **kwargs))
        return calls[-1]

    monkeypatch.setattr(model, "event_search", slow_search)
    monkeypatch.setattr(model, "anneal", counted)
    monkeypatch.setattr(model, "ANNEAL_AFTER", 0.0)
    rng = random.Random(5)
    for _ in range(4):
        inst = random_instance(rng)
        solution = model.solve(inst, time_limit=3.0, workers=1)
        assert solution.status == "optimal"
        assert solution.weighted == exhaustive_minimum(inst)
        assert plan_errors(inst, solution.starts) == []
    assert len(calls) == 4
