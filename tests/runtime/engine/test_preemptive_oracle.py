"""The preemptive loop against an exact reference (``tests/support/preemptive_oracle.py``) on
one processor, every job asking for the whole machine, costs 0: least attained service, SRPT
(``examples/preemption/srpt.pol`` with ``min_run=0``) and round robin, each written in the
language as a user would, give the reference's stretches of every job, its preemptions and
the number of passes. A pass comes only where something happens: the completion of a job
preempted since is no event (issue 44: it once made a pass that changed the schedule)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from schedc.dsl import compile_file, compile_source
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.policy import RuntimePolicy
from schedc.runtime.engine.preemptive import PreemptiveRun, simulate_preemptive
from schedc.runtime.jobs import Job
from schedc.runtime.workloads.workload import Workload
from tests.support import preemptive_oracle as oracle

ROOT = Path(__file__).resolve().parents[3]

LAS = """
policy las {
  order     job.acquired asc
  reserve   0
  backfill  first_fit
  mechanism suspend
  preempt   by order
}
"""
# Round robin: every `q` seconds while a job waits, the running job gives the processor to
# the job that has begun the fewest turns (a preemption ends a turn, and the running job is
# having one); among equals the earliest submitted. With jobs submitted together that is
# round robin exactly: each job in turn, in submission order, runs until the quantum expires
# (or it completes), then waits for every other job's turn. A job that arrives later has
# begun no turn, so it runs at its arrival and joins the rotation from there.
ROUND_ROBIN = """
param q: int in [1, 86400] = 10
def turns(j) = j.preemptions + (if j.suspended or j.acquired == 0 then 0 else 1)

policy round_robin {
  order     turns(job) asc
  reserve   0
  backfill  first_fit
  mechanism suspend
  preempt   by order
  quantum   q
}
"""


@cache
def las() -> RuntimePolicy:
    return to_runtime(compile_source(LAS))


@cache
def srpt() -> RuntimePolicy:
    return to_runtime(compile_file(ROOT / "examples" / "preemption" / "srpt.pol"),
                      {"min_run": "0"})


@cache
def round_robin(q: int) -> RuntimePolicy:
    return to_runtime(compile_source(ROUND_ROBIN), {"q": str(q)})


def run(policy: RuntimePolicy, jobs: list[oracle.OracleJob]) -> PreemptiveRun:
    assert policy.preemption is not None
    load = Workload(tuple(Job(j.id, i, j.submit, j.run, j.estimate, (1,))
                          for i, j in enumerate(jobs)), ("cpus",), (1,))
    return simulate_preemptive(policy, policy.preemption, load)


def history(result: PreemptiveRun) -> oracle.OracleRun:
    """The loop's run in the reference's terms."""
    return oracle.OracleRun(
        {life.job.id: tuple((s.start, s.end) for s in life.segments if s.phase == "running")
         for life in result.lives},
        {life.job.id: life.preemptions.total() for life in result.lives},
        result.schedule.passes)


def test_least_attained_service_runs_the_newcomer_to_its_end() -> None:
    # job 2 (less served) preempts job 1 at 10 and runs its 100 s to 110: job 1's completion,
    # due at 100 before the preemption, is no event (a pass there once ran job 1 again)
    jobs = [oracle.OracleJob(1, 0, 100, 100), oracle.OracleJob(2, 10, 100, 100)]
    got = history(run(las(), jobs))
    assert got.runs == {1: ((0, 10), (110, 200)), 2: ((10, 110),)}
    assert got.preemptions == {1: 1, 2: 0}
    # at the arrivals (0, 10) and job 2's completion (110); none at 100, nor at 200, where
    # no job waits
    assert got.passes == 3
    assert got == oracle.simulate(jobs, oracle.least_attained)


def test_round_robin_takes_turns_in_submission_order() -> None:
    # three jobs at 0, quantum 10: 1, 2, 3, 1 (done at 35), then 2 to the next expiry at
    # 40, 3, 2, 3 (done at 70), 2 (done at 75)
    jobs = [oracle.OracleJob(1, 0, 15, 15), oracle.OracleJob(2, 0, 30, 30),
            oracle.OracleJob(3, 0, 30, 30)]
    got = history(run(round_robin(10), jobs))
    assert got.runs == {1: ((0, 10), (30, 35)), 2: ((10, 20), (35, 40), (50, 60), (70, 75)),
                        3: ((20, 30), (40, 50), (60, 70))}
    assert got == oracle.simulate(jobs, oracle.turns, quantum=10)


@st.composite
def workloads(draw: st.DrawFn) -> list[oracle.OracleJob]:
    """Up to 8 jobs, submit times and run times small, so that they tie often."""
    jobs, t = [], 0
    for i in range(draw(st.integers(1, 8))):
        t += draw(st.sampled_from((0, 0, 1, 3, 10, 25)))
        run_time = draw(st.integers(1, 40))
        estimate = run_time + draw(st.sampled_from((0, 0, 5, 30)))
        jobs.append(oracle.OracleJob(i + 1, t, run_time, estimate))
    return jobs


@settings(max_examples=150, deadline=None)
@given(workloads())
def test_least_attained_service_equals_the_reference(jobs: list[oracle.OracleJob]) -> None:
    assert history(run(las(), jobs)) == oracle.simulate(jobs, oracle.least_attained)


@settings(max_examples=150, deadline=None)
@given(workloads())
def test_srpt_equals_the_reference(jobs: list[oracle.OracleJob]) -> None:
    assert history(run(srpt(), jobs)) == oracle.simulate(jobs, oracle.shortest_remaining)


@settings(max_examples=150, deadline=None)
@given(workloads(), st.sampled_from((1, 3, 10)))
def test_round_robin_equals_the_reference(jobs: list[oracle.OracleJob], q: int) -> None:
    assert history(run(round_robin(q), jobs)) == oracle.simulate(jobs, oracle.turns, q)
