"""The grid LP bound is a valid lower bound (never above the exhaustive minimum, for the
LP's duals and for any nonpositive duals), is stronger than the slice bound where widths
must stay together, and leaves CP-SAT's proven optimum unchanged."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from optimal_oracle import exhaustive_minimum, random_instance, serial_plan

from schedc.runtime.jobs import Job, RunningJob
from schedc.runtime.optimal import grid_bound as gb
from schedc.runtime.optimal.bound import slice_bound
from schedc.runtime.optimal.instance import Instance
from schedc.runtime.optimal.model import solve, weighted_starts

# fine grids (the random instances' times are a few seconds) and the default coarse one
GRIDS = st.sampled_from([(0.0, 1), (0.5, 1), (0.25, 2), (gb.GROWTH, gb.MIN_SLOT)])


def _upper(inst: Instance, rng: random.Random, optimum: int) -> int:
    """Either the optimum itself (the tightest latest starts) or some serial plan's sum."""
    if rng.random() < 0.5:
        return optimum
    return weighted_starts(inst, serial_plan(inst, tuple(rng.sample(inst.jobs, len(inst.jobs)))))


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10**6), GRIDS)
def test_the_grid_bound_never_exceeds_the_exhaustive_minimum(seed: int, grid: tuple) -> None:
    rng = random.Random(seed)
    inst = random_instance(rng)
    optimum = exhaustive_minimum(inst)
    growth, min_slot = grid
    low = gb.grid_bound(inst, _upper(inst, rng, optimum), 10.0, growth=growth,
                        min_slot=min_slot)
    assert low is not None and low <= optimum


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10**6), st.lists(st.floats(-50, 0), min_size=1, max_size=200))
def test_the_lagrangian_is_a_bound_for_any_nonpositive_duals(seed: int, draws: list) -> None:
    rng = random.Random(seed)
    inst = random_instance(rng)
    optimum = exhaustive_minimum(inst)
    earliest = gb.earliest_starts(inst)
    latest = gb.latest_starts(inst, earliest, optimum)
    end = max(s + j.estimate for s, j in zip(latest, inst.jobs, strict=True))
    bounds = gb.grid(inst, end, 0.5, 1)
    cols = gb.columns(inst, bounds, earliest, latest)
    room = gb.slot_room(inst, bounds)
    duals = [draws[u % len(draws)] for u in range(len(room))]
    widths = sum(j.request[0] for j in inst.jobs)
    assert inst.now * widths + gb.lagrangian(bounds, room, cols, duals, len(inst.jobs)) \
        <= optimum


def test_the_grid_bound_keeps_a_wide_job_whole_where_the_slice_bound_splits_it() -> None:
    # at now=10, 5 of 10 cpus are held until 20: a 10-wide one-second job cannot start
    # before 20, while its ten slices run two after another on the 5 free cpus from 10
    held = RunningJob(Job(1, 0, 0, 20, 20, (5,)), 0, (5,))
    inst = Instance(10, ("cpus",), (10,), (held,), (Job(2, 1, 5, 1, 1, (10,)),))
    assert exhaustive_minimum(inst) == 200
    assert slice_bound(inst) == 5 * 10 + 5 * 11
    assert gb.grid_bound(inst, 200, 10.0) == 200


@pytest.mark.parametrize("seed", range(200, 230))
def test_a_fine_grid_bound_leaves_the_proven_optimum_unchanged(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gb, "MIN_SLOT", 1)  # the default grid is one slot on these times
    monkeypatch.setattr(gb, "GROWTH", 0.25)
    rng = random.Random(seed)
    inst = random_instance(rng)
    hint = serial_plan(inst, tuple(rng.sample(inst.jobs, len(inst.jobs))))
    solution = solve(inst, time_limit=10, workers=2, hint=hint)
    assert solution.status == "optimal"
    assert solution.weighted == solution.bound == exhaustive_minimum(inst)
