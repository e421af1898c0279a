"""The preemptive event loop (``runtime/engine/preemptive.py``): hand-checked schedules for
suspension, requeue, protection, limits, held memory and resident processes; and, on random
workloads, rules that never preempt give the rigid simulator's schedule job for job, while
rules that preempt keep every job's books (work done once, capacity never exceeded)."""

from __future__ import annotations

from fractions import Fraction

import attrs
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from schedc.runtime.engine import preemptive
from schedc.runtime.engine.lifecycle import JobLife
from schedc.runtime.engine.monitor import MonitorViolation
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


# -- checkpoints, claims and selection by the order -----------------------------------------------

def checkpointing(cost: int, **kw) -> PreemptionRules:
    return PreemptionRules(mechanism=lambda j: "checkpoint",
                           checkpoint=lambda life, state: cost, **kw)


def phases(life: JobLife) -> list[tuple[str, int, int]]:
    return [(s.phase, s.start, s.end) for s in life.segments]


def test_a_checkpointed_job_keeps_its_cpus_busy_and_its_preemptor_claims_them() -> None:
    # B suspends... no: B checkpoints A at 5; A writes itself out until 8, when B starts on
    # the cpus it claimed; A, stopped, restarts at its size when B ends at 18, 95 s left
    run = simulate_preemptive(FIRST_FIT, checkpointing(3, may_preempt=smaller_first),
                              workload(job(1, 0, 100, 4), job(2, 5, 10, 2)))
    assert by_id(run) == {1: (0, 113), 2: (8, 18)}
    a, b = run.lives
    assert phases(a) == [("running", 0, 5), ("checkpointing", 5, 8), ("stopped", 8, 18),
                         ("running", 18, 113)]
    assert b.processors == (0, 1) and a.overhead == 3 * 4 and a.lost == 0
    p = run.schedule.preempted[0]
    assert (p.checkpoints, p.stopped, p.suspensions, p.requeues, p.ran) == (1, 10, 0, 0, 100)
    assert run.schedule.preemption_totals.held_idle == 0  # it claimed cpus A still held
    assert run.schedule.preemption_totals.most_resident == 1


def test_memory_a_checkpoint_releases_goes_to_the_claim_waiting_for_it() -> None:
    # A holds 8 of 10 memory; B (6) checkpoints it at 5 and claims cpus 2-3 and A's memory;
    # C (2 memory) arrives at 6 but nothing is free or unclaimed until B starts at 8, when
    # C takes what is left; A restarts when B ends
    def b_only(cand: JobLife, victim: JobLife, state: PassState) -> bool:
        return cand.job.id == 2
    run = simulate_preemptive(FIRST_FIT, checkpointing(3, may_preempt=b_only), workload(
        job(1, 0, 100, 2, memory=8), job(2, 5, 10, 2, memory=6), job(3, 6, 1, 1, memory=2),
        memory=10))
    assert by_id(run) == {1: (0, 113), 2: (8, 18), 3: (8, 9)}
    assert run.lives[1].processors == (2, 3)
    # cpus 2-3 were free but claimed from 5 to 8: held idle; B claimed busy ones above
    assert run.schedule.preemption_totals.held_idle == 2 * 3


def least_acquired(life: JobLife, state: PassState) -> tuple:
    return (life.acquired_at(state.now),)


LAS = RuntimePolicy("las", ("cpus", "memory"), (None, None), depth=0, backfill="first_fit",
                    order_key=least_acquired)


def test_by_the_order_the_least_served_job_runs_each_quantum() -> None:
    # least attained service with a 10 s quantum, checkpoints free: A and B take turns at
    # 5, 15, 25, 35 and 45; B's 30 s are done at 55, A's last 75 s end at 130
    run = simulate_preemptive(LAS, checkpointing(0, select=True, quantum=10),
                              workload(job(1, 0, 100, 4), job(2, 5, 30, 4)))
    assert by_id(run) == {1: (0, 130), 2: (5, 55)}
    a, b = run.lives
    assert (a.preemptions["checkpoint"], b.preemptions["checkpoint"]) == (3, 2)
    assert [s.start for s in a.segments if s.phase == "running"] == [0, 15, 35, 55]


def test_by_the_order_a_job_waits_for_the_cpus_being_checkpointed() -> None:
    run = simulate_preemptive(LAS, checkpointing(2, select=True),
                              workload(job(1, 0, 100, 4), job(2, 5, 30, 4)))
    assert by_id(run) == {1: (0, 132), 2: (7, 37)}


def test_by_the_order_protected_jobs_stay_and_others_fill_around_them() -> None:
    # A (2 cpus) and B (2 cpus, beside it at 5) are protected for 20 s after each start; C
    # (4 cpus, the least served) waits until the quantum's pass at 26 finds both out of
    # protection: it preempts both and runs 26..36; then B (less served) and A both fit
    keep = lambda life, state: life.since_start(state.now) < 20  # noqa: E731
    run = simulate_preemptive(LAS, checkpointing(0, select=True, keep=keep, quantum=10),
                              workload(job(1, 0, 50, 2), job(2, 5, 30, 2), job(3, 6, 10, 4)))
    assert by_id(run) == {1: (0, 60), 2: (5, 45), 3: (26, 36)}


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
@given(workloads(), st.sampled_from([FIRST_FIT, FCFS, SJF]))
def test_by_the_order_jobs_that_cannot_be_preempted_give_the_rigid_schedule(
        load: Workload, policy: RuntimePolicy) -> None:
    rigid = {r.job.id: (r.start, r.end) for r in simulate(policy, load).records}
    for rules in (PreemptionRules(select=True, mechanism=lambda j: "checkpoint",
                                  keep=lambda life, state: True),
                  PreemptionRules(select=True, mechanism=lambda j: "none", quantum=2)):
        assert by_id(simulate_preemptive(LIVES[policy], rules, load)) == rigid


@settings(max_examples=250, deadline=None)
@given(workloads(), st.sampled_from(["suspend", "requeue", "checkpoint", "mixed"]),
       st.integers(0, 3), st.integers(0, 3), st.sampled_from([None, 1, 2]),
       st.sampled_from([None, 3]), st.booleans(), st.booleans())
def test_preempting_rules_keep_the_books(load: Workload, mechanism: str, cost: int,
                                         save: int, limit: int | None, quantum: int | None,
                                         select: bool, las: bool) -> None:
    # least attained service requeues a job whenever it has more service than another: a
    # livelock (the next test)
    assume(not (select and las and mechanism in ("requeue", "mixed")))
    kinds = ("suspend", "checkpoint", "requeue", "none")

    def mechanism_of(job: Job) -> str:
        return kinds[job.id % 4] if mechanism == "mixed" else mechanism

    rules = PreemptionRules(mechanism=mechanism_of,  # type: ignore[arg-type]
                            may_preempt=lambda c, v, state: c.job.estimate < v.job.estimate,
                            keep=lambda life, state: life.since_start(state.now) < 2,
                            dispatch=lambda life, state: cost,
                            resume=lambda life, state: cost,
                            checkpoint=lambda life, state: save, limit=limit,
                            quantum=quantum, select=select)
    policy = LAS if las else SJF_LIFE
    run = simulate_preemptive(policy, rules, load)  # the monitor checks capacity every pass
    for life in run.lives:
        assert life.phase == "completed" and life.done == Fraction(1)
        job = life.job
        assert life.acquired - life.lost == job.run_time * job.procs  # done once, exactly
        assert life.overhead == job.procs * sum(
            cost if s.phase == "dispatching" else save if s.phase == "checkpointing" else 0
            for s in life.segments)
        if life.mechanism == "suspend":  # resumed only where it ran
            assert {s.processors for s in life.segments} == {life.processors}
        if limit is not None:
            assert life.preemptions.total() <= limit
        record = run.schedule.records[job.index]
        assert record.start >= job.submit and record.end >= record.start + job.run_time
    assert run.preemptions == sum(life.preemptions.total() for life in run.lives)


def test_a_policy_that_livelocks_stops_with_the_reason() -> None:
    # least attained service with requeues: each restart has less service than the other
    # job's, and is requeued a quantum later, its work lost: no job ever ends
    rules = PreemptionRules(mechanism=lambda j: "requeue", select=True, quantum=3)
    with pytest.raises(MonitorViolation, match="50 preemptions and no job completed since "
                       "t=0: the policy livelocks"):
        simulate_preemptive(LAS, rules, workload(job(1, 0, 100, 4), job(2, 1, 100, 4)),
                            stall=50)
    assert preemptive.STALL_PREEMPTIONS == 100_000  # a run's default


def test_by_the_order_strict_stops_starts_but_a_suspended_job_still_resumes() -> None:
    # backfill none, least served first: A (memory 8 of 10) is suspended for B at 2; C
    # (memory 5) heads the order from 3 but A's held memory keeps it out. Starts stop at
    # C, yet A resumes when B ends (else nothing would ever run again); C starts after A
    strict_las = attrs.evolve(LAS, backfill="none")
    rules = PreemptionRules(mechanism=lambda j: "suspend", select=True)
    run = simulate_preemptive(strict_las, rules, workload(
        job(1, 0, 10, 2, memory=8), job(2, 2, 5, 2), job(3, 3, 1, 1, memory=5),
        cpus=2, memory=10))
    assert by_id(run) == {1: (0, 15), 2: (2, 7), 3: (15, 16)}


def test_by_the_order_a_job_starts_only_where_fewer_than_resident_jobs_are() -> None:
    # A holds the 4 cpus; B, less served, arrives at 5. Each processor has A's processes:
    # with `resident 1` B has nowhere to go and A runs on; with `resident 2` A is suspended
    # and B runs beside its processes
    jobs = workload(job(1, 0, 100, 4), job(2, 5, 10, 2))
    alone = simulate_preemptive(LAS, PreemptionRules(mechanism=lambda j: "suspend",
                                                     select=True, resident=1), jobs)
    assert by_id(alone) == {1: (0, 100), 2: (100, 110)}
    shared = simulate_preemptive(LAS, PreemptionRules(mechanism=lambda j: "suspend",
                                                      select=True, resident=2), jobs)
    assert by_id(shared) == {1: (0, 110), 2: (5, 15)}
