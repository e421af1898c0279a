"""The policies' plans against the optimum on states: quality <= 1 when proven optimal, and
the plans of a simulated run's instants are checked by the monitor."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from schedc.runtime.run import RunOptions, prepare_run
from schedc.runtime.tools.optimal.instance import queue_sizes, sample_steps, state_at
from schedc.runtime.tools.optimal.outcome import optimise
from schedc.runtime.workloads.state_file import load_state
from tests.support.repo import ROOT


def _state(tmp_path: Path, seed: int) -> Path:
    rng = random.Random(seed)
    cap = 16
    running = [{"id": 1, "submit": 0, "start": 0, "estimate": rng.randint(20, 60),
                "run_time": 10, "request": {"cpus": rng.randint(1, 8)}}]
    queue = [{"id": 10 + i, "submit": rng.randint(0, 10), "estimate": e, "run_time": e,
              "request": {"cpus": rng.randint(1, cap)}}
             for i in range(rng.randint(3, 7)) for e in [rng.randint(1, 40)]]
    path = tmp_path / f"s{seed}.json"
    path.write_text(json.dumps({"now": 10, "capacity": {"cpus": cap}, "running": running,
                                "queue": queue}))
    return path


@pytest.mark.parametrize("seed", range(8))
def test_no_policy_beats_a_proven_optimum(tmp_path: Path, planning_policies: list,
                                          seed: int) -> None:
    state = load_state(str(_state(tmp_path, seed)))
    outcome = optimise(planning_policies, state, time_limit=10, workers=2)
    assert outcome.solution.status == "optimal"
    for plan in outcome.plans:
        for metric in ("artww", "sldwa"):
            quality = outcome.quality(metric, plan)
            assert quality is not None and 0 < quality <= 1
    # the best policy's plan bounds the optimum: at least one policy may equal it
    assert outcome.solution.weighted <= min(p.weighted for p in outcome.plans)


def test_states_of_a_run_are_its_machine_at_those_instants(planning_policies: list) -> None:
    prepared = prepare_run(ROOT / "examples" / "conservative.pol", None, RunOptions())
    schedule = prepared.run().schedule
    sizes = queue_sizes(schedule)
    times = sample_steps(schedule, 3, 0, 3, 8)
    assert times == sample_steps(schedule, 3, 0, 3, 8) and len(times) == 3
    for t in times:
        state = state_at(schedule, t, "kth")
        assert len(state.queue) == sizes[t] and 3 <= sizes[t] <= 8
        assert all(rj.start < t < rj.end for rj in state.running)
        outcome = optimise(planning_policies, state, time_limit=5, workers=2)
        assert outcome.solution.status in ("optimal", "feasible")
        # FCFS planning is what the run did: its plan starts now the jobs the run started at t
        fcfs = outcome.plans[0].starts
        ran = {r.job.id: r.start for r in schedule.records}
        for job in state.queue:
            if ran[job.id] == t:
                assert fcfs[job.index] == t
