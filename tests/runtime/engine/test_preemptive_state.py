"""A preemptive policy replayed from a machine state (``simulate_preemptive(initial=...)``):
jobs restored in their phases (``JobLife.restore``), the first pass's actions (``on_pass``)
hand-checked, the state's checks against the policy (``state_problem``), `run --state` and
``replay_stop``."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import pytest

from schedc.dsl import compile_source
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.lifecycle import JobLife, LifecycleError
from schedc.runtime.engine.policy import RuntimePolicy
from schedc.runtime.engine.preemptive import (
    Action,
    PreemptiveRun,
    simulate_preemptive,
    state_problem,
)
from schedc.runtime.jobs import Job
from schedc.runtime.replay import replay_stop
from schedc.runtime.run import RunOptions, run_policy
from schedc.runtime.workloads.state_file import InitialState, state_from_data
from schedc.runtime.workloads.workload import WorkloadError
from tests.support.repo import ROOT

# first fit in submit order; a job suspends running ones that ask for more cpus than it
SUSPEND = """policy smaller_suspends {
  reserve 0 backfill first_fit
  mechanism suspend
  preempt when cand.procs < victim.procs
}"""
# the least attained service runs; the others are checkpointed
LAS = """policy las {
  order job.acquired asc
  reserve 0 backfill first_fit
  mechanism checkpoint
  preempt by order
}"""


def policy(source: str) -> RuntimePolicy:
    return to_runtime(compile_source(source, "<test>"))


def job(jid: int, submit: int, cpus: int, run: int, **extra) -> dict:
    return {"id": jid, "submit": submit, "estimate": run, "run_time": run,
            "request": {"cpus": cpus}, **extra}


def replay(source: str, data: dict, resources: tuple[str, ...] = ("cpus",)
           ) -> tuple[PreemptiveRun, list[tuple[int, tuple[Action, ...]]]]:
    """The run from the state, and every pass's (instant, actions)."""
    runtime = policy(source)
    state = state_from_data(data, resources)
    passes: list[tuple[int, tuple[Action, ...]]] = []
    assert runtime.preemption is not None
    run = simulate_preemptive(runtime, runtime.preemption, state.workload, initial=state,
                              on_pass=lambda now, actions: passes.append((now, actions)))
    return run, passes


def ends(run: PreemptiveRun) -> dict[int, tuple[int, int]]:
    return {r.job.id: (r.start, r.end) for r in run.schedule.records}


def three_jobs() -> dict:
    """At 10 on 4 cpus: job 1 runs on cpus 0-1 since 5, job 2 is suspended on 2-3 with a
    fifth of its work done, job 3 (2 cpus) waits."""
    return {"now": 10, "capacity": {"cpus": 4},
            "running": [job(1, 0, 2, 100, start=5, processors=[0, 1])],
            "queue": [job(3, 8, 2, 20)],
            "suspended": [job(2, 0, 2, 50, processors=[2, 3], progress="1/5",
                              last_start=1)]}


# -- the first pass, hand-checked ---------------------------------------------------------------

def test_the_suspended_job_resumes_on_its_free_processors() -> None:
    # job 2's cpus 2-3 are free: it resumes there at 10 with 40 s of work left (ends at 50);
    # job 3 finds no free cpu and suspends no one (2 cpus is not fewer than 2), so it
    # starts where job 2 was, at 50
    run, passes = replay(SUSPEND, three_jobs())
    assert passes[0] == (10, (Action("resume", 2, (2, 3)),))
    assert passes[1] == (50, (Action("start", 3, (2, 3)),))
    assert ends(run) == {1: (5, 105), 2: (10, 50), 3: (50, 70)}
    life = {life.job.id: life for life in run.lives}
    assert life[2].preemptions["suspend"] == 1 and life[2].acquired == 80  # 40 s x 2 cpus
    assert life[1].segments[0].start == 5  # running since its start


def test_a_pending_job_suspends_a_running_one_when_the_rule_holds() -> None:
    # job 3 (1 cpu) asks for fewer cpus than job 1 (4): it suspends it and starts on cpu 0;
    # job 1 resumes on its own cpus when job 3 ends, with 90 s of work left
    data = {"now": 10, "capacity": {"cpus": 4},
            "running": [job(1, 0, 4, 100, start=0)], "queue": [job(3, 5, 1, 20)]}
    run, passes = replay(SUSPEND, data)
    assert passes[0] == (10, (Action("suspend", 1, (0, 1, 2, 3)), Action("start", 3, (0,))))
    assert passes[1] == (30, (Action("resume", 1, (0, 1, 2, 3)),))
    assert ends(run) == {1: (0, 120), 3: (10, 30)}


def test_a_suspended_job_suspends_the_job_on_its_processors() -> None:
    # job 2 (2 cpus, on 0-1) is first in order and may suspend job 1 (4 cpus) holding them
    data = {"now": 10, "capacity": {"cpus": 4},
            "running": [job(1, 0, 4, 100, start=5, processors=[0, 1, 2, 3])],
            "queue": [job(3, 8, 2, 20)], "suspended": [job(2, 0, 2, 50, processors=[0, 1])]}
    _, passes = replay(SUSPEND, data)
    assert passes[0] == (10, (Action("suspend", 1, (0, 1, 2, 3)),
                              Action("resume", 2, (0, 1))))


def test_the_least_served_job_runs_and_the_other_is_checkpointed() -> None:
    # by the order: job 3 has acquired nothing, job 1 400 cpu-s: job 1 is checkpointed (cost
    # 0: stopped at once) and job 3 starts on its cpus; job 1 restarts at 30 with half its
    # work done, job 4 (stopped, size 2) waits for it: it acquired more
    data = {"now": 10, "capacity": {"cpus": 4},
            "running": [job(1, 0, 4, 100, start=5, acquired=380, progress="9/20",
                            preemptions=2)],
            "queue": [job(3, 8, 4, 20)],
            "stopped": [job(4, 0, 2, 10, size=2, acquired=1000)]}
    run, passes = replay(LAS, data)
    assert passes[0] == (10, (Action("checkpoint", 1, (0, 1, 2, 3)),
                              Action("start", 3, (0, 1, 2, 3))))
    assert passes[1] == (30, (Action("start", 1, (0, 1, 2, 3)),))
    life = {life.job.id: life for life in run.lives}
    assert life[1].preemptions["checkpoint"] == 3 and life[1].acquired == 400 + 4 * 50
    assert ends(run)[1][1] == 80 and ends(run)[4] == (10, 90)  # its stopped segment at 10


def test_a_claim_is_made_then_started_at_step_0() -> None:
    # the checkpoint keeps cpus 0-3 busy for 10 s: job 3 claims them, and starts at 20
    source = LAS.replace("preempt by order", "preempt by order\n  cost checkpoint 10")
    data = {"now": 10, "capacity": {"cpus": 4},
            "running": [job(1, 0, 4, 100, start=5, acquired=20)], "queue": [job(3, 8, 4, 20)]}
    _, passes = replay(source, data)
    assert passes[0] == (10, (Action("checkpoint", 1, (0, 1, 2, 3)),
                              Action("claim", 3, (0, 1, 2, 3))))
    assert passes[1] == (20, (Action("start", 3, (0, 1, 2, 3)),))


def test_a_suspended_job_keeps_its_memory() -> None:
    # job 2 (suspended on cpu 0, job 1's) holds 60 of the 100 memory: job 3 (60) cannot
    # start on the free cpus 1-3 until job 2 has resumed and ended; the monitor checks the
    # books at every pass
    data = {"now": 10, "capacity": {"cpus": 4, "memory": 100},
            "running": [job(1, 0, 1, 100, start=0, processors=[0])],
            "queue": [{**job(3, 5, 2, 10), "request": {"cpus": 2, "memory": 60}}],
            "suspended": [{**job(2, 0, 1, 30, processors=[0]),
                           "request": {"cpus": 1, "memory": 60}}]}
    source = "machine m { resource cpus resource memory }\n" + SUSPEND.replace(
        "reserve 0", "machine m reserve 0")
    run, passes = replay(source, data, ("cpus", "memory"))
    assert passes[0] == (10, ())  # job 2's cpu 0 is job 1's; job 3 lacks memory
    assert passes[1] == (100, (Action("resume", 2, (0,)),))
    assert ends(run) == {1: (0, 100), 2: (10, 130), 3: (130, 140)}


def test_a_requeued_job_keeps_its_history() -> None:
    source = SUSPEND.replace("mechanism suspend", "mechanism requeue")
    data = {"now": 10, "capacity": {"cpus": 4},
            "queue": [job(3, 0, 2, 20, acquired=30, preemptions=2, last_start=4,
                          progress="1/4")]}
    run, passes = replay(source, data)
    assert passes[0] == (10, (Action("start", 3, (0, 1)),))
    (life,) = run.lives
    assert life.preemptions["requeue"] == 2 and life.acquired == 30 + 2 * 15
    assert ends(run) == {3: (10, 25)}  # three quarters of 20 s left


def test_a_running_job_whose_work_ends_at_now_frees_its_processors_first() -> None:
    data = {"now": 10, "capacity": {"cpus": 2},
            "running": [job(1, 0, 2, 20, start=0, progress="1/2")], "queue": [job(3, 5, 2, 5)]}
    run, passes = replay(SUSPEND, data)
    assert passes == [(10, (Action("start", 3, (0, 1)),))]
    assert ends(run) == {1: (0, 10), 3: (10, 15)}


def test_without_on_pass_nothing_is_recorded() -> None:
    runtime = policy(SUSPEND)
    state = state_from_data(three_jobs())
    assert runtime.preemption is not None
    run = simulate_preemptive(runtime, runtime.preemption, state.workload, initial=state)
    assert ends(run) == {1: (5, 105), 2: (10, 50), 3: (50, 70)}


# -- JobLife.restore ----------------------------------------------------------------------------

def test_restore_puts_a_job_in_its_phase() -> None:
    j = Job(7, 0, 0, 100, 100, (4,))
    running = JobLife.restore(j, "suspend", "running", 50, processors=(0, 1, 2, 3),
                              acquired=40, preemptions=1, progress=Fraction(1, 10),
                              last_start=40)
    assert running.since == 40 and running.completion_time() == 40 + 90
    assert running.progress_at(50) == Fraction(2, 10) and running.acquired_at(50) == 80
    assert running.preemptions["suspend"] == 1 and running.since_start(50) == 10
    stopped = JobLife.restore(j, "checkpoint", "stopped", 50, size=4, preemptions=1)
    assert stopped.size == 4 and stopped.processors == () and stopped.alloc() == (0,)
    stopped.start(60, (4, 5, 6, 7))
    assert stopped.size == 4 and stopped.processors == (4, 5, 6, 7)
    with pytest.raises(LifecycleError, match="suspended under mechanism checkpoint"):
        JobLife.restore(j, "checkpoint", "suspended", 50, processors=(0, 1, 2, 3))
    with pytest.raises(LifecycleError, match="never preempted"):
        JobLife.restore(j, "none", "pending", 50, preemptions=1)


# -- the state against the policy ---------------------------------------------------------------

def write(tmp_path: Path, data: dict) -> str:
    path = tmp_path / "state.json"
    path.write_text(json.dumps(data, indent=1))
    return str(path)


EASY = "policy easy { reserve 1 backfill first_fit }"


@pytest.mark.parametrize("source, data, message, help", [
    (EASY, three_jobs(), "the rigid simulator has no suspended or stopped jobs",
     "`preempt when` or `preempt by order`"),
    (EASY, {"now": 0, "capacity": {"cpus": 4},
            "running": [job(1, 0, 2, 10, start=0, processors=[2, 3])]},
     "the rigid simulator has no", "remove `suspended`"),
    (LAS, three_jobs(), "job 2 is suspended in the state, but policy las gives it mechanism "
     "checkpoint", "a suspended job: `mechanism suspend`"),
    (SUSPEND, {"now": 0, "capacity": {"cpus": 4}, "stopped": [job(4, 0, 2, 10, size=2)]},
     "only a job of mechanism checkpoint or malleable is stopped", "a stopped one"),
    (SUSPEND.replace("mechanism suspend", "mechanism suspend when job.procs > 2\n"
                                          "  mechanism none"),
     {"now": 5, "capacity": {"cpus": 4}, "running": [job(1, 0, 2, 10, start=0,
                                                         preemptions=1)]},
     "job 1 was preempted 1 times, but policy smaller_suspends gives it mechanism none",
     "`preemptions: 0`"),
    (SUSPEND.replace("mechanism suspend", "mechanism suspend\n  resident 1"), three_jobs()
     | {"suspended": [job(2, 0, 2, 50, processors=[1, 2])]},
     "processor 1 holds the processes of 2 jobs", "other processors"),
    (SUSPEND, {"now": 0, "capacity": {"cpus": 4}, "queue": [job(1, 0, 1, 5, size=2)]},
     "its passes keep no size", "remove the `size` fields"),
    (SUSPEND, {"now": 0, "capacity": {"cpus": 4}, "queue": [job(1, 0, 1, 5)],
               "check": ["reservations-kept"]}, "reserve nothing to keep", "remove `check`"),
    (SUSPEND, {"now": 0, "capacity": {"cpus": 4}, "queue": [job(1, 0, 1, 5)],
               "active": "easy"}, "does not tune itself", "remove `active`"),
])
def test_a_state_the_policy_cannot_replay(tmp_path: Path, source: str, data: dict,
                                          message: str, help: str) -> None:
    file = tmp_path / "p.pol"
    file.write_text(source)
    with pytest.raises(WorkloadError) as info:  # located in the state file
        run_policy(file, options=RunOptions(state=write(tmp_path, data)))
    assert message in info.value.message and help in (info.value.help or "")
    assert info.value.line is not None and info.value.col is not None
    ir = compile_source(source, "<test>")
    stop = replay_stop(ir, data)
    assert stop.kind is None and message in stop.message
    runtime = to_runtime(ir)
    if runtime.preemption is not None:  # the simulator refuses it too, before the run
        state = state_from_data(data)
        with pytest.raises(ValueError, match=re.escape(message)):
            simulate_preemptive(runtime, runtime.preemption, state.workload, initial=state)


def test_the_rigid_simulator_refuses_preempted_jobs() -> None:
    from schedc.runtime.engine.simulator import simulate

    state = state_from_data(three_jobs())
    with pytest.raises(ValueError, match="the rigid simulator has no suspended"):
        simulate(policy(EASY), state.workload, initial=state)


def test_a_rigid_state_still_replays_under_a_rigid_policy() -> None:
    state = state_from_data({"now": 0, "capacity": {"cpus": 4},
                             "running": [job(1, 0, 2, 10, start=0, processors=[0, 1])]})
    assert not state.has_history  # processors as file order gives them
    assert state_problem(policy(EASY), state) is None


def test_replay_stop_of_a_preemptive_state_that_breaks_nothing() -> None:
    ir = compile_source(SUSPEND, "<test>")
    stop = replay_stop(ir, three_jobs())
    assert stop.kind is None and stop.message == "the run ended without a monitor stop"


def test_replay_stop_reports_a_monitor_stop_of_a_preemptive_state() -> None:
    # every job protected and none fitting: the run deadlocks, which no property covers
    ir = compile_source(SUSPEND.replace("mechanism suspend", "mechanism suspend\n  keep true"),
                        "<test>")
    data = {"now": 0, "capacity": {"cpus": 4, "memory": 10},
            "queue": [{**job(3, 0, 1, 5), "request": {"cpus": 1, "memory": 10}}],
            "suspended": [{**job(2, 0, 2, 5, processors=[0, 1]),
                           "request": {"cpus": 2, "memory": 10}}]}
    # job 2 resumes (its cpus are free) and job 3 waits for the memory: no stop
    assert replay_stop(ir, data).kind is None
    data["suspended"][0]["processors"] = [4, 5]  # no such cpus: not valid input
    stop = replay_stop(ir, data)
    assert stop.kind is None and "not valid input" in stop.message


def test_run_state_replays_a_preemptive_example(tmp_path: Path) -> None:
    example = ROOT / "examples" / "preemption" / "selective-suspension.pol"
    result = run_policy(example, options=RunOptions(state=write(tmp_path, three_jobs())))
    records = {r.job.id: (r.start, r.end) for r in result.schedule.records}
    assert records[1] == (5, 105) and records[2][0] == 10
    assert result.schedule.preempted is not None


def test_an_initial_state_built_in_code_takes_processors_in_file_order() -> None:
    # no histories: the running job gets cpus 0-1, the suspended one 2-3
    j1, j2 = Job(1, 0, 0, 100, 100, (2,)), Job(2, 1, 0, 50, 50, (2,))
    from schedc.runtime.jobs import RunningJob

    state = InitialState(now=10, resources=("cpus",), capacities=(4,),
                         running=(RunningJob(j1, 5, (2,)),), queue=(), suspended=(j2,))
    runtime = policy(SUSPEND)
    assert runtime.preemption is not None
    passes: list = []
    simulate_preemptive(runtime, runtime.preemption, state.workload, initial=state,
                        on_pass=lambda now, actions: passes.append((now, actions)))
    assert passes[0] == (10, (Action("resume", 2, (2, 3)),))
