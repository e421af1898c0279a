"""The preemptive event loop (``runtime/engine/preemptive.py``): hand-checked schedules for
suspension, requeue, protection, limits, held memory and resident processes; and, on random
workloads, rules that never preempt give the rigid simulator's schedule job for job, while
rules that preempt keep every job's books (work done once, capacity never exceeded)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedc.runtime.engine.lifecycle import JobLife
from schedc.runtime.engine.policy import PassState, PreemptionRules, RuntimePolicy
from schedc.runtime.engine.preemptive import simulate_preemptive
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.jobs import Job
from schedc.runtime.workloads.workload import Workload

FIRST_FIT = RuntimePolicy("ff", ("cpus", "memory"), (None, None), depth=0, backfill="first_fit")
FCFS = RuntimePolicy("fcfs", ("cpus", "memory"), (None, None), depth=0, backfill="none")


def job(i: int, submit: int, run: int, procs: int, memory: int = 0,
        estimate: int | None = None) -> Job:
    return Job(i, i - 1, submit, run, estimate or run or 1, (procs, memory))


def workload(*jobs: Job, cpus: int = 4, memory: int = 100) -> Workload:
    return Workload(tuple(jobs), ("cpus", "memory"), (cpus, memory))


def smaller_first(cand: JobLife, victim: JobLife, state: PassState) -> bool:
    return cand.job.procs < victim.job.procs


def by_id(run) -> dict[int, tuple[int, int]]:
    return {r.job.id: (r.start, r.end) for r in run.schedule.records}


# -- hand-checked schedules ------------------------------------------------------------------------

def test_a_suspended_job_resumes_on_its_processors_when_its_preemptor_ends() -> None:
    # A takes the machine at 0; B (smaller) suspends it at 5 and runs 5..15 on cpus 0-1;
    # A resumes at 15 on its own cpus 0-3 with 95 s left: it ends at 110
    rules = PreemptionRules(mechanism=lambda j: "suspend", may_preempt=smaller_first)
    run = simulate_preemptive(FIRST_FIT, rules, workload(job(1, 0, 100, 4), job(2, 5, 10, 2)))
    assert by_id(run) == {1: (0, 110), 2: (5, 15)}
    a, b = run.lives
    assert [(s.phase, s.start, s.end, s.processors) for s in a.segments] == [
        ("running", 0, 5, (0, 1, 2, 3)), ("suspended", 5, 15, (0, 1, 2, 3)),
        ("running", 15, 110, (0, 1, 2, 3))]
    assert b.processors == (0, 1) and a.preemptions["suspend"] == 1 and run.preemptions == 1
    assert a.acquired == 400 and a.lost == 0


def test_a_requeued_job_starts_again_and_books_its_lost_work() -> None:
    rules = PreemptionRules(mechanism=lambda j: "requeue", may_preempt=smaller_first)
    run = simulate_preemptive(FIRST_FIT, rules, workload(job(1, 0, 100, 4), job(2, 5, 10, 2)))
    assert by_id(run) == {1: (0, 115), 2: (5, 15)}
    a = run.lives[0]
    assert a.lost == 20 and a.acquired == 420 and a.preemptions["requeue"] == 1


def test_a_protected_job_is_preempted_once_its_protection_ends_at_a_quantum() -> None:
    # protected for its first 10 s; without a timer the next pass is A's end, with a 10 s
    # quantum the pass at 15 suspends it (B runs 15..25, A resumes with 85 s left)
    protect = dict(mechanism=lambda j: "suspend", may_preempt=smaller_first,
                   keep=lambda life, state: life.since_start(state.now) < 10)
    jobs = (job(1, 0, 100, 4), job(2, 5, 10, 2))
    assert by_id(simulate_preemptive(FIRST_FIT, PreemptionRules(**protect), workload(*jobs))) \
        == {1: (0, 100), 2: (100, 110)}
    run = simulate_preemptive(FIRST_FIT, PreemptionRules(**protect, quantum=10), workload(*jobs))
    assert by_id(run) == {1: (0, 110), 2: (15, 25)}


def test_the_preemption_limit_holds_for_each_job() -> None:
    # B and C (smaller) each want A's cpus; with a limit of 1 only B suspends it
    jobs = (job(1, 0, 100, 4), job(2, 5, 10, 2), job(3, 30, 10, 2))
    rules = PreemptionRules(mechanism=lambda j: "suspend", may_preempt=smaller_first)
    assert by_id(simulate_preemptive(FIRST_FIT, rules, workload(*jobs))) == {
        1: (0, 120), 2: (5, 15), 3: (30, 40)}
    limited = PreemptionRules(mechanism=lambda j: "suspend", may_preempt=smaller_first,
                              limit=1)
    assert by_id(simulate_preemptive(FIRST_FIT, limited, workload(*jobs))) == {
        1: (0, 110), 2: (5, 15), 3: (110, 120)}


def test_suspension_keeps_memory_held_and_requeue_frees_it() -> None:
    # A holds 80 of 100 memory; B needs 40: suspending A frees its cpus, not its memory
    jobs = (job(1, 0, 100, 4, memory=80), job(2, 5, 10, 2, memory=40))
    suspend = PreemptionRules(mechanism=lambda j: "suspend", may_preempt=smaller_first)
    assert by_id(simulate_preemptive(FIRST_FIT, suspend, workload(*jobs))) == {
        1: (0, 100), 2: (100, 110)}
    requeue = PreemptionRules(mechanism=lambda j: "requeue", may_preempt=smaller_first)
    assert by_id(simulate_preemptive(FIRST_FIT, requeue, workload(*jobs))) == {
        1: (0, 115), 2: (5, 15)}


def test_resident_processes_per_processor_are_limited() -> None:
    # one job per processor: a suspended job's processes stay, so nothing may join them
    jobs = (job(1, 0, 100, 4), job(2, 5, 10, 2))
    rules = PreemptionRules(mechanism=lambda j: "suspend", may_preempt=smaller_first,
                            resident=1)
    assert by_id(simulate_preemptive(FIRST_FIT, rules, workload(*jobs))) == {
        1: (0, 100), 2: (100, 110)}


def test_only_the_victims_a_start_needs_are_preempted_in_the_victims_order() -> None:
    # A and B (2 cpus each) run; C needs 2 cpus: one victim suffices, the youngest (B)
    jobs = (job(1, 0, 100, 2), job(2, 3, 100, 2), job(3, 5, 10, 1, estimate=10))
    rules = PreemptionRules(mechanism=lambda j: "suspend", may_preempt=smaller_first)
    run = simulate_preemptive(FIRST_FIT, rules, workload(*jobs))
    assert by_id(run) == {1: (0, 100), 2: (3, 113), 3: (5, 15)}
    assert run.lives[1].processors == (2, 3) and run.lives[2].processors == (2,)


def test_a_victim_taken_first_but_not_needed_in_the_end_runs_on() -> None:
    # C needs 3 cpus; the youngest victim B frees 1, not enough, then A frees 3: A alone
    # suffices, so B is given back (dropping victims last taken first would keep both)
    jobs = (job(1, 0, 100, 3), job(2, 2, 100, 1), job(3, 5, 10, 3))
    rules = PreemptionRules(mechanism=lambda j: "suspend",
                            may_preempt=lambda c, v, state: c.job.id == 3)
    run = simulate_preemptive(FIRST_FIT, rules, workload(*jobs))
    assert by_id(run) == {1: (0, 110), 2: (2, 102), 3: (5, 15)}
    assert run.preemptions == 1


def test_dispatch_and_resume_costs_hold_the_cpus_without_progress() -> None:
    rules = PreemptionRules(mechanism=lambda j: "suspend", may_preempt=smaller_first,
                            dispatch=lambda life, state: 3, resume=lambda life, state: 2)
    run = simulate_preemptive(FIRST_FIT, rules, workload(job(1, 0, 100, 4), job(2, 10, 10, 2)))
    # A runs 3..10 (7 s), B dispatches 10..13 and runs to 23, A resumes 23..25, ends 25 + 93
    assert by_id(run) == {1: (0, 118), 2: (10, 23)}
    assert run.lives[0].overhead == 4 * 3 + 4 * 2


def test_a_suspended_job_preempts_the_holders_of_its_own_processors() -> None:
    # A (4 cpus) is suspended by B (2 cpus, on 0-1); A may then take its cpus back from B
    def rule(cand: JobLife, victim: JobLife, state: PassState) -> bool:
        if cand.job.id == 2:
            return cand.phase == "pending"  # B, once (else the two take turns each quantum)
        return state.now >= 8
    rules = PreemptionRules(mechanism=lambda j: "suspend", may_preempt=rule, quantum=4)
    run = simulate_preemptive(FIRST_FIT, rules, workload(job(1, 0, 100, 4), job(2, 5, 10, 2)))
    # passes at 5 (B suspends A) and 9 (A suspends B); B resumes when A ends at 9 + 95
    assert by_id(run) == {1: (0, 104), 2: (5, 110)}


def test_a_policy_the_loop_does_not_take_is_refused() -> None:
    easy = RuntimePolicy("easy", ("cpus", "memory"), (None, None), depth=1,
                         backfill="first_fit")
    with pytest.raises(ValueError, match="reserve 0"):
        simulate_preemptive(easy, PreemptionRules(), workload(job(1, 0, 1, 1)))
    with pytest.raises(ValueError, match="mechanism checkpoint is not taken"):
        simulate_preemptive(FIRST_FIT, PreemptionRules(mechanism=lambda j: "checkpoint"),
                            workload(job(1, 0, 1, 1)))


# -- random workloads -----------------------------------------------------------------------------

@st.composite
def workloads(draw: st.DrawFn) -> Workload:
    jobs, t = [], 0
    for i in range(draw(st.integers(1, 12))):
        t += draw(st.integers(0, 6))
        est = draw(st.integers(1, 12))
        run = draw(st.integers(0, est))
        jobs.append(Job(i + 1, i, t, run, est, (draw(st.integers(1, 8)),
                                                draw(st.integers(0, 20)))))
    return Workload(tuple(jobs), ("cpus", "memory"), (8, 20))


SJF = RuntimePolicy("sjf", ("cpus", "memory"), (None, None), depth=0, backfill="first_fit",
                    order_key=lambda job, state: (job.estimate,))
# the same order for the preemptive loop, whose keys read a job's life
SJF_LIFE = RuntimePolicy("sjf", ("cpus", "memory"), (None, None), depth=0,
                         backfill="first_fit", order_key=lambda life, state: (life.job.estimate,))
LIVES = {FIRST_FIT: FIRST_FIT, FCFS: FCFS, SJF: SJF_LIFE}


@settings(max_examples=150, deadline=None)
@given(workloads(), st.sampled_from([FIRST_FIT, FCFS, SJF]))
def test_rules_that_never_preempt_give_the_rigid_schedule(load: Workload,
                                                          policy: RuntimePolicy) -> None:
    rigid = {r.job.id: (r.start, r.end) for r in simulate(policy, load).records}
    assert by_id(simulate_preemptive(LIVES[policy], PreemptionRules(), load)) == rigid


@settings(max_examples=150, deadline=None)
@given(workloads(), st.sampled_from(["suspend", "requeue"]), st.integers(0, 3),
       st.sampled_from([None, 1, 2]), st.sampled_from([None, 3]))
def test_preempting_rules_keep_the_books(load: Workload, mechanism: str, cost: int,
                                         limit: int | None, quantum: int | None) -> None:
    rules = PreemptionRules(mechanism=lambda j: mechanism,  # type: ignore[arg-type,return-value]
                            may_preempt=lambda c, v, state: c.job.estimate < v.job.estimate,
                            keep=lambda life, state: life.since_start(state.now) < 2,
                            dispatch=lambda life, state: cost,
                            resume=lambda life, state: cost, limit=limit,
                            quantum=quantum)
    run = simulate_preemptive(SJF_LIFE, rules, load)  # the monitor checks capacity every pass
    for life in run.lives:
        assert life.phase == "completed" and life.done == Fraction(1)
        job = life.job
        assert life.acquired - life.lost == job.run_time * job.procs  # done once, exactly
        assert life.overhead == cost * job.procs * sum(
            1 for s in life.segments if s.phase == "dispatching")
        if limit is not None:
            assert life.preemptions.total() <= limit
        record = run.schedule.records[job.index]
        assert record.start >= job.submit and record.end >= record.start + job.run_time
    assert run.preemptions == sum(life.preemptions.total() for life in run.lives)
