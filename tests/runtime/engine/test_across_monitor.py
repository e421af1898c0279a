"""The opt-in monitor check across passes, `reservations-kept` (runtime/engine/monitor.py), and the
state file's additions that replay a two-pass story (`arrivals`, `check`)."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedc.dsl import compile_file
from schedc.runtime.cli.main import main
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.monitor import KEPT, MonitorViolation, ReservationsKept
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.jobs import Job
from schedc.runtime.workloads.state_file import state_from_data, state_to_data
from schedc.runtime.workloads.workload import Workload, WorkloadError
from tests.support.repo import EXAMPLES

EASY = to_runtime(compile_file(EXAMPLES / "easy.pol"), {})
CONSERVATIVE = to_runtime(compile_file(EXAMPLES / "conservative.pol"), {})

# The golden two-pass scenario, worked by hand: 10 cpus, five jobs, passes at 3 and 5.
# At t=3 job 1 (4 cpus) runs until its estimated end 9 and job 2 (5 cpus) until 7: 1 cpu is
# free, and job 5 (1 cpu) fits it, so the pass runs and visits every job (the simulator
# skips a pass where nothing fits, and stops its walk after the last job that fits).
# Conservative backfilling, FCFS, reserves each queued job at its earliest fit in the plan:
#   job 3 (8 cpus, 2 s): 6 free at 7 (job 2 ends), 10 at 9         -> reserved at 9, [9, 11)
#   job 4 (6 cpus, 2 s): 1 free now; 6 at 7, and [7, 9) ends before job 3 starts
#                                                                     -> reserved at 7, [7, 9)
#   job 5 (1 cpu, 100 s): now 9 + 1 = 10, but at 7 job 1's 4 + job 4's 6 + 1 = 11; at 9
#                         job 3's 8 + 1 = 9                           -> reserved at 9
# Job 1 ends early, at 5 (run time 5 of its 9 s estimate): a pass at 5, with 5 cpus free
# until 7 (job 5 fits them, so again every job is visited):
#   job 3 (8 cpus): not now (5 free); at 7 all 10 are free           -> reserved at 7, [7, 9)
#   job 4 (6 cpus): not now (6 > 5); at 7 job 3 holds 8 (8 + 6 > 10); at 9 it fits
#                                                                     -> reserved at 9: moved
#                                                                        from 7 to 9
# EASY reserves the head only: job 3 at 9 (t=3; job 5 backfills: 2 cpus are spare at 9).
# At 5 only 4 cpus are free beside jobs 2 and 5 and no queued job fits them: no pass. At 7
# job 3 starts, before its 9: EASY's run does not stop.
GOLDEN = {
    "now": 3, "capacity": {"cpus": 10},
    "running": [
        {"id": 1, "submit": 0, "start": 0, "estimate": 9, "run_time": 5,
         "request": {"cpus": 4}},
        {"id": 2, "submit": 1, "start": 1, "estimate": 6, "run_time": 6,
         "request": {"cpus": 5}}],
    "queue": [
        {"id": 3, "submit": 2, "estimate": 2, "run_time": 2, "request": {"cpus": 8}},
        {"id": 4, "submit": 2, "estimate": 2, "run_time": 2, "request": {"cpus": 6}},
        {"id": 5, "submit": 3, "estimate": 100, "run_time": 100, "request": {"cpus": 1}}],
    "check": [KEPT],
}
GOLDEN_STOP = ("t=5: policy conservative: job 4's reservation moved from 7 to 9 between the "
               "passes at 3 and 5")


def test_golden_conservative_case_stops_at_the_second_pass() -> None:
    state = state_from_data(GOLDEN)
    with pytest.raises(MonitorViolation) as stop:
        simulate(CONSERVATIVE, state.workload, initial=state)
    assert stop.value.kind == KEPT
    assert str(stop.value) == GOLDEN_STOP


def test_golden_case_under_easy_and_without_the_check() -> None:
    state = state_from_data(GOLDEN)
    simulate(EASY, state.workload, initial=state)  # no stop
    plain = state_from_data({k: v for k, v in GOLDEN.items() if k != "check"})
    simulate(CONSERVATIVE, plain.workload, initial=plain)  # the check is opt-in


def test_passes_are_as_worked_by_hand() -> None:
    """The decisions behind the comment above, pass by pass."""
    state = state_from_data({k: v for k, v in GOLDEN.items() if k != "check"})
    passes = []
    simulate(CONSERVATIVE, state.workload, initial=state, on_pass=passes.append)
    first, second = passes[0], passes[1]
    assert (first.now, [(r.job, r.time) for r in first.reservations]) == (
        3, [(3, 9), (4, 7), (5, 9)])
    assert (second.now, [(r.job, r.time) for r in second.reservations][:2]) == (
        5, [(3, 7), (4, 9)])
    easy = []
    simulate(EASY, state.workload, initial=state, on_pass=easy.append)
    assert [(p.now, [(r.job, r.time) for r in p.reservations], [s.job for s in p.starts])
            for p in easy[:2]] == [(3, [(3, 9)], [5]), (7, [], [3])]


def test_schedc_run_state_replays_the_golden_case(tmp_path, capsys) -> None:
    path = tmp_path / "golden.json"
    path.write_text(json.dumps(GOLDEN))
    assert main(["run", str(EXAMPLES / "conservative.pol"), "--state", str(path)]) == 1
    assert GOLDEN_STOP in capsys.readouterr().err


def test_a_start_after_the_held_reservation_stops() -> None:
    from schedc.dsl.semantics.decisions import PassDecisions, Reserved, Started

    check = ReservationsKept("p")
    check(PassDecisions(0, (Reserved(7, 4, (1,)),)))
    check(PassDecisions(2, ()))  # a pass that does not reach job 7: it keeps holding 4
    with pytest.raises(MonitorViolation, match="job 7 started at 5, after its reservation "
                       "at 4 \\(held since the pass at 0\\)"):
        check(PassDecisions(5, (Started(7, (1,)),)))


# -- the differential test: EASY never stops it, conservative sometimes does -----------------

@st.composite
def workloads(draw) -> Workload:
    """Small rigid workloads whose jobs end by their estimates (some early, some at once)."""
    jobs, t = [], 0
    for i in range(draw(st.integers(2, 20))):
        t += draw(st.integers(0, 3))
        est = draw(st.integers(1, 12))
        run = draw(st.integers(0, est))
        jobs.append(Job(i + 1, i, t, run, est, (draw(st.integers(1, 8)),)))
    return Workload(tuple(jobs), ("cpus",), (8,))


@settings(max_examples=150, deadline=None)
@given(workloads(), st.booleans())
def test_easy_keeps_every_reservation(workload: Workload, fast: bool) -> None:
    simulate(EASY, workload, fast=fast, on_pass=ReservationsKept(EASY.name))


def _random_workload(rng: random.Random) -> Workload:
    jobs, t = [], 0
    for i in range(rng.randint(3, 20)):
        t += rng.randint(0, 2)
        est = rng.randint(1, 12)
        jobs.append(Job(i + 1, i, t, rng.randint(0, est), est, (rng.randint(1, 8),)))
    return Workload(tuple(jobs), ("cpus",), (8,))


def test_conservative_sometimes_moves_a_reservation() -> None:
    """The check is not vacuous: of 200 seeded workloads, some stop it under conservative
    backfilling (re-planned at every pass), none under EASY."""
    rng = random.Random(31)
    stops = 0
    for _ in range(200):
        workload = _random_workload(rng)
        simulate(EASY, workload, on_pass=ReservationsKept(EASY.name))
        try:
            simulate(CONSERVATIVE, workload, on_pass=ReservationsKept(CONSERVATIVE.name))
        except MonitorViolation as exc:
            assert exc.kind == KEPT
            stops += 1
    assert stops >= 3


# -- the state file's additions ------------------------------------------------------------

def test_arrivals_and_check_round_trip() -> None:
    data = {**GOLDEN, "arrivals": [{"id": 9, "submit": 4, "estimate": 3, "run_time": 1,
                                    "request": {"cpus": 2}}]}
    state = state_from_data(data)
    assert [j.id for j in state.workload.jobs] == [1, 2, 3, 4, 5, 9]
    assert state.arrivals[0].index == 5 and state.checks == (KEPT,)
    assert state_from_data(state_to_data(state)) == state


@pytest.mark.parametrize(("change", "message", "help_text"), [
    ({"arrivals": [{"id": 9, "submit": 3, "estimate": 3, "run_time": 1,
                    "request": {"cpus": 2}}]},
     "arrivals[0] (job 9): submitted at 3, not after now 3", "belongs in `queue`"),
    ({"arrivals": [{"id": 3, "submit": 4, "estimate": 3, "run_time": 1,
                    "request": {"cpus": 2}}]},
     "job id 3 is given twice", "its own id"),
    ({"check": ["reservation-kept"]}, "check[0]: \"reservation-kept\" is not a check",
     "did you mean `reservations-kept`?"),
    ({"check": "reservations-kept"}, "`check` must be a JSON list", "write e.g."),
])
def test_state_file_mistakes(change, message, help_text) -> None:
    with pytest.raises(WorkloadError) as err:
        state_from_data({**GOLDEN, **change})
    text = str(err.value.diagnostics[0].message) + str(err.value.diagnostics[0].help)
    assert message in text and help_text in text


def test_a_mistake_in_a_state_file_is_located(tmp_path, capsys) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({**GOLDEN, "check": ["kept"]}, indent=1))
    assert main(["run", str(EXAMPLES / "conservative.pol"), "--state", str(path)]) == 2
    err = capsys.readouterr().err
    assert "is not a check" in err and "the checks are: reservations-kept" in err
