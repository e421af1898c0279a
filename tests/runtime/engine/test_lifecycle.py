"""A job's life under preemption (``runtime/engine/lifecycle.py``): hand-checked histories,
every refused transition, and random histories against an accounting written apart."""

from __future__ import annotations

from fractions import Fraction
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedc.runtime.engine.lifecycle import (
    HOLDS_CPUS,
    HOLDS_OTHERS,
    MECHANISMS,
    JobLife,
    LifecycleError,
    Mechanism,
)
from schedc.runtime.jobs import Job, Moldable
from schedc.runtime.speedup import parse_speedup


def rigid(run_time: int = 100, procs: int = 4, memory: int = 8, submit: int = 0) -> Job:
    return Job(id=1, index=0, submit=submit, run_time=run_time, estimate=max(1, run_time),
               request=(procs, memory))


def malleable(run_time: int = 100, procs: int = 4) -> Job:
    return Job(id=2, index=0, submit=0, run_time=run_time, estimate=run_time,
               request=(procs, 8),
               moldable=Moldable(1, 8, parse_speedup("linear")))


# -- hand-checked histories ---------------------------------------------------------------------

def test_a_job_run_to_completion_ends_its_run_time_after_its_dispatch() -> None:
    life = JobLife(rigid(100))
    life.start(10, (0, 1, 2, 3), dispatch=30)
    assert life.phase == "dispatching" and life.phase_end == 40
    assert life.alloc() == (4, 8)
    life.dispatched(40)
    assert life.completion_time() == 140
    life.finish(140)
    assert life.phase == "completed" and life.done == 1
    assert life.acquired == 400 and life.overhead == 120 and life.lost == 0
    assert [(s.phase, s.start, s.end) for s in life.segments] == [
        ("dispatching", 10, 40), ("running", 40, 140)]
    assert life.alloc() == (0, 0)


def test_a_suspended_job_keeps_its_memory_and_resumes_where_it_stopped() -> None:
    life = JobLife(rigid(100), "suspend")
    life.start(0, (4, 5, 6, 7))
    life.suspend(30)
    assert life.phase == "suspended" and life.done == Fraction(30, 100)
    assert life.alloc() == (0, 8)  # cpus lent to others, memory held
    assert life.preemptions["suspend"] == 1 and life.since_start(50) == 50
    life.resume(200, dispatch=5)
    assert life.processors == (4, 5, 6, 7) and life.phase == "dispatching"
    life.dispatched(205)
    assert life.since_start(215) == 10
    assert life.completion_time() == 205 + 70
    life.finish(275)
    assert life.acquired == 400 and life.overhead == 20


def test_a_checkpointed_job_restarts_from_its_checkpoint_and_a_malleable_one_at_any_size() -> None:
    life = JobLife(malleable(100, procs=4), "malleable")
    life.start(0, (0, 1, 2, 3))
    life.checkpoint(50, cost=60)
    assert life.phase == "checkpointing" and life.alloc() == (4, 8)
    assert life.saved == Fraction(1, 2)
    life.checkpointed(110)
    assert life.phase == "stopped" and life.alloc() == (0, 0)
    life.start(200, tuple(range(8)))  # twice the cpus, linear speedup: half the time left
    assert life.completion_time() == 200 + 25
    life.finish(225)
    assert life.acquired == 4 * 50 + 8 * 25 and life.overhead == 4 * 60


def test_a_migratable_job_restarts_at_its_size_only() -> None:
    life = JobLife(rigid(100), "checkpoint")
    life.start(0, (0, 1, 2, 3))
    life.checkpoint(10)
    assert life.phase == "stopped"
    with pytest.raises(LifecycleError, match="restarts at its size 4"):
        life.start(20, (0, 1))
    life.start(20, (8, 9, 10, 11))  # anywhere, at its size
    assert life.completion_time() == 20 + 90


def test_a_requeued_job_starts_again_from_scratch_and_its_work_is_booked_as_lost() -> None:
    life = JobLife(rigid(100), "requeue")
    life.start(0, (0, 1, 2, 3))
    life.requeue(40)
    assert life.phase == "pending" and life.done == 0
    assert life.lost == 160 and life.acquired == 160 and life.preemptions["requeue"] == 1
    life.start(50, (0, 1, 2, 3))
    life.finish(150)
    assert life.acquired == 560 and life.lost == 160


def test_a_fractional_remainder_completes_at_the_next_whole_second() -> None:
    life = JobLife(malleable(10, procs=3), "malleable")
    life.start(0, (0, 1, 2))
    life.checkpoint(1)  # 1/10 done
    # on 7 cpus the whole job takes 30/7 = 4.29 s, 5 s as a moldable job started there runs
    life.start(1, (0, 1, 2, 3, 4, 5, 6))
    assert life.time_at(7) == 5
    assert life.completion_time() == 1 + 5  # 9/10 of 5 s = 4.5 s, up to 5 s
    life.finish(6)
    assert life.done == 1


def test_a_job_of_no_run_time_completes_as_it_starts() -> None:
    life = JobLife(rigid(0))
    life.start(5, (0, 1, 2, 3))
    assert life.completion_time() == 5
    life.finish(5)
    assert life.phase == "completed"


# -- refused transitions -------------------------------------------------------------------------

@pytest.mark.parametrize(("mechanism", "action"), [
    ("none", "suspend"), ("none", "checkpoint"), ("none", "requeue"),
    ("suspend", "checkpoint"), ("suspend", "requeue"), ("checkpoint", "suspend"),
    ("malleable", "suspend"), ("requeue", "suspend"), ("requeue", "checkpoint"),
])
def test_a_mechanism_allows_only_its_own_preemption(mechanism: Mechanism, action: str) -> None:
    life = JobLife(rigid(), mechanism)
    life.start(0, (0, 1, 2, 3))
    with pytest.raises(LifecycleError, match="needs mechanism"):
        getattr(life, action)(10)


def test_transitions_from_the_wrong_phase_are_refused() -> None:
    life = JobLife(rigid(), "suspend")
    with pytest.raises(LifecycleError, match="resume from pending"):
        life.resume(0)
    with pytest.raises(LifecycleError, match="suspend from pending"):
        life.suspend(0)
    with pytest.raises(LifecycleError, match="completion_time from pending"):
        life.completion_time()
    life.start(0, (0, 1, 2, 3), dispatch=10)
    with pytest.raises(LifecycleError, match="dispatching ends at 10, not 5"):
        life.dispatched(5)
    with pytest.raises(LifecycleError, match="start from dispatching"):
        life.start(5, (0, 1, 2, 3))


def test_a_start_is_refused_at_a_wrong_size_or_on_repeated_processors() -> None:
    with pytest.raises(LifecycleError, match=r"size 2 outside \[4, 4\]"):
        JobLife(rigid()).start(0, (0, 1))
    with pytest.raises(LifecycleError, match="distinct processors"):
        JobLife(rigid()).start(0, (0, 0, 1, 2))
    with pytest.raises(LifecycleError, match=r"size 9 outside \[1, 8\]"):
        JobLife(malleable()).start(0, tuple(range(9)))


def test_time_never_goes_back_and_a_finish_is_exact() -> None:
    life = JobLife(rigid(100, submit=50), "suspend")
    with pytest.raises(LifecycleError, match="time 10 before"):
        life.start(10, (0, 1, 2, 3))
    life.start(50, (0, 1, 2, 3))
    with pytest.raises(LifecycleError, match="finishes at 150, not 149"):
        life.finish(149)
    with pytest.raises(LifecycleError, match="when its work is done"):
        life.suspend(150)


def test_an_unknown_mechanism_is_refused() -> None:
    with pytest.raises(LifecycleError, match="unknown mechanism"):
        JobLife(rigid(), "migrate")  # type: ignore[arg-type]


# -- random histories against an accounting written apart ----------------------------------------

ACTIONS = ("start", "resume", "dispatched", "suspend", "checkpoint", "checkpointed", "requeue",
           "finish")
PREEMPTION = {"suspend": "suspend", "checkpoint": "checkpoint", "malleable": "checkpoint",
              "requeue": "requeue", "none": None}


def allowed(life: JobLife) -> list[str]:
    """The transitions the module's doc allows now (the driver mostly takes these)."""
    mine = PREEMPTION[life.mechanism]
    return {
        "pending": ["start"],
        "dispatching": ["dispatched"] + (["requeue"] if mine == "requeue" else []),
        "running": ["finish"] + ([mine] * 3 if mine else []),  # a finish ends the history
        "suspended": ["resume"] + (["requeue"] if mine == "requeue" else []),
        "checkpointing": ["checkpointed"],
        "stopped": ["start"],
    }[life.phase]


@st.composite
def histories(draw: st.DrawFn) -> tuple[Job, Mechanism, list[tuple[int, int, int, bool]]]:
    """A job, its mechanism and the driver's steps: (which action, delay, argument, any
    action rather than an allowed one)."""
    mechanism = draw(st.sampled_from(MECHANISMS))
    run_time = draw(st.integers(0, 60))
    if draw(st.booleans()):
        job = malleable(run_time, procs=draw(st.integers(1, 8)))
    else:
        job = rigid(run_time, procs=draw(st.integers(1, 4)))
    steps = draw(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 12), st.integers(0, 8),
                                    st.integers(0, 9).map(lambda k: k == 0)), max_size=25))
    return job, mechanism, steps


class Ledger:
    """The accounting of the module's doc, kept by the test from the actions alone."""

    def __init__(self) -> None:
        self.done = Fraction(0)
        self.saved = Fraction(0)
        self.acquired = self.lost = self.overhead = self.unsaved = 0


@settings(max_examples=300, deadline=None)
@given(histories())
def test_random_histories_keep_the_books(history: tuple[Job, Mechanism, list]) -> None:
    """Every transition the driver takes (and every one refused) against ``Ledger``."""
    job, mechanism, steps = history
    life, ledger = JobLife(job, mechanism), Ledger()
    now = job.submit
    for choice, delay, arg, anything in steps:
        if life.phase == "completed":
            break
        options = ACTIONS if anything else allowed(life)
        action = options[choice % len(options)]
        now += delay
        if life.phase == "running":  # the event loop ends it first
            end = life.completion_time()
            now = end if action == "finish" else min(now, end)
            if now == end and not anything:
                action = "finish"  # its work is done: nothing else is allowed
        if life.phase in ("dispatching", "checkpointing"):
            now = min(now, life.phase_end)
            if action in ("dispatched", "checkpointed"):
                now = life.phase_end
        phase, size, before = life.phase, life.size, life.progress_at(now)
        ran = now - life.since if phase == "running" else 0
        held = now - life.since if phase in ("dispatching", "checkpointing") else 0
        if phase in HOLDS_CPUS:
            assert life.alloc()[0] == size
        try:
            if action == "start":
                n = life.size if (phase == "stopped" and mechanism == "checkpoint") else (
                    min(max(arg, job.min_procs), job.max_procs))
                life.start(now, tuple(range(10, 10 + n)), dispatch=arg % 3)
            elif action in ("resume",):
                life.resume(now, dispatch=arg % 2)
            elif action == "checkpoint":
                life.checkpoint(now, cost=arg % 3)
            else:
                getattr(life, action)(now)
        except LifecycleError:
            assert anything, f"{action} refused from {phase}"
            assert life.phase == phase  # a refused transition changes nothing
            continue
        # what the ledger says this transition did
        ledger.acquired += ran * size
        ledger.unsaved += ran * size
        ledger.overhead += held * size
        if phase == "running":
            ledger.done = before
        if action == "checkpoint":
            ledger.saved, ledger.unsaved = ledger.done, 0
        if action == "requeue":
            ledger.lost += ledger.unsaved
            ledger.unsaved = 0
            ledger.done = ledger.saved
            assert life.phase == "pending"
        if action == "resume":
            assert life.processors == tuple(range(10, 10 + size))  # the same processors
        if action == "finish":
            ledger.done = Fraction(1)
        assert (life.done, life.saved) == (ledger.done, ledger.saved)
        assert (life.acquired, life.lost, life.overhead) == (
            ledger.acquired, ledger.lost, ledger.overhead)
        assert 0 <= life.done <= 1
        held_now = life.alloc()
        assert (held_now[0] > 0) == (life.phase in HOLDS_CPUS)
        assert (held_now[1] > 0) == (life.phase in HOLDS_OTHERS)
    # the segments tile its active time, and the running ones add up to its service
    for a, b in pairwise(life.segments):
        assert a.end <= b.start  # (a gap: pending after a requeue)
    assert sum((s.end - s.start) * len(s.processors) for s in life.segments
               if s.phase == "running") == life.acquired
    if life.phase == "completed":
        assert life.done == 1
        # the work of the last run from its last save adds up to the whole job (rigid:
        # exactly its run time on its size, no more)
        if job.moldable is None and life.preemptions["requeue"] == 0:
            running = sum(s.end - s.start for s in life.segments if s.phase == "running")
            assert running == job.run_time
