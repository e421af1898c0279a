"""A preemptive run checked at every pass against what `schedc verify`'s proofs assume of
the state a pass starts from (runtime/engine/preemptive_checks.py, ``Assumptions``): a run
that leaves an assumption says so once, with the time, the job and the assumption, as a
run warning; a stop after it says so too."""

from __future__ import annotations

import pytest

from schedc.dsl import compile_source
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.monitor import MonitorViolation
from schedc.runtime.engine.preemptive import simulate_preemptive
from schedc.runtime.engine.preemptive_checks import reads_progress
from schedc.runtime.jobs import Job
from schedc.runtime.run import RunOptions, run_policy
from schedc.runtime.run_warnings import run_warnings
from schedc.runtime.workloads.workload import Workload

NO_PREEMPTION = """
policy fcfs {
  order     job.submit asc
  reserve   0
  mechanism suspend
  preempt   when cand.procs > 1000
}
"""


def policy(text: str):
    return compile_source(text, "p.pol")


def run(text: str, *jobs: Job, overrun: str = "extend", cpus: int = 4):
    ir = policy(text)
    rt = to_runtime(ir, {})
    load = Workload(tuple(jobs), ("cpus",), (cpus,), overrun=overrun)
    return simulate_preemptive(rt, rt.preemption, load)  # type: ignore[arg-type]


def job(i: int, submit: int, run: int, estimate: int, procs: int) -> Job:
    return Job(i, i - 1, submit, run, estimate, (procs,))


def test_a_job_past_its_estimate_is_said_once_at_the_first_pass_after() -> None:
    """Job 1 runs 100 s on an estimate of 50 (`--overrun extend`); job 2 waits from t=70,
    and t=90: the passes there start with job 1 past its estimate, said once (t=70)."""
    got = run(NO_PREEMPTION, job(1, 0, 100, 50, 4), job(2, 70, 10, 10, 4),
              job(3, 90, 10, 10, 4))
    (d,) = got.schedule.departures
    assert (d.kind, d.time, d.job) == ("overrun", 70, 1)
    assert "job 1 has run 70 s since its last start, past its estimate 50 s" in d.message
    assert "--overrun extend" in d.message and "every verdict" in d.message


def test_a_job_within_its_estimate_is_no_departure() -> None:
    got = run(NO_PREEMPTION, job(1, 0, 50, 50, 4), job(2, 30, 10, 10, 4), overrun="kill")
    assert got.schedule.departures == ()


def test_a_policy_that_reads_progress_assumes_its_rate_from_the_start() -> None:
    """Where formulas read `job.progress`, the proofs assume a running job's progress grows
    at the rate its estimate gives: a job running longer than its estimate leaves that at
    its first pass after it started, here t=10, long before its estimate ends."""
    text = NO_PREEMPTION.replace("job.submit asc", "job.progress asc")
    assert reads_progress(to_runtime(policy(text), {}))
    assert not reads_progress(to_runtime(policy(NO_PREEMPTION), {}))
    got = run(text, job(1, 0, 100, 50, 4), job(2, 10, 10, 10, 4))
    (d,) = got.schedule.departures
    assert (d.kind, d.time, d.job) == ("overrun", 10, 1)
    assert "reads job.progress" in d.message


def test_a_dispatch_in_flight_is_out_of_the_proofs_scope() -> None:
    """Job 1 dispatches for 20 s from t=0; job 2 arrives at t=5 and waits: the pass at 5
    starts with a dispatch in flight, which no proof covers."""
    text = NO_PREEMPTION.replace("  preempt", "  cost      dispatch 20\n  preempt")
    got = run(text, job(1, 0, 100, 100, 2), job(2, 5, 10, 10, 4), overrun="kill")
    (d,) = got.schedule.departures
    assert (d.kind, d.time, d.job) == ("scope", 5, 1)
    assert "job 1 is dispatching until t=20" in d.message
    assert "no dispatch or checkpoint in flight" in d.message


def test_a_stop_after_a_departure_says_so() -> None:
    """`keep` divides by the time job 1 has left before its estimate: under extend it is 0
    at t=50, the pass that leaves the assumption; the stop names it."""
    text = NO_PREEMPTION.replace("  preempt", "  keep      1 / (job.estimate - "
                                 "job.since_start) > 0\n  preempt")
    with pytest.raises(MonitorViolation) as exc:
        run(text, job(1, 0, 100, 50, 4), job(2, 50, 10, 10, 4))
    assert exc.value.kind == "well-defined"
    assert "(note: t=50: job 1 has run 50 s" in str(exc.value)


def test_a_run_warns_of_its_departures_and_of_a_machine_larger_than_the_bound() -> None:
    ir = policy(NO_PREEMPTION)
    jobs = (job(1, 0, 100, 50, 4), job(2, 70, 10, 10, 4))
    small = Workload(jobs, ("cpus",), (4,), overrun="extend")
    messages = [w.message for w in run_policy(ir, small, RunOptions()).warnings]
    assert any(m.startswith("t=70: job 1 has run 70 s") for m in messages), messages
    assert not any("processors" in m for m in messages)
    large = Workload(jobs, ("cpus",), (100,), overrun="kill")
    (machine,) = [w for w in run_warnings(ir, large) if "cpus" in w.message]
    assert "the machine has 100 cpus" in machine.message
    assert "at most P processors" in machine.message and "P >= 100" in machine.message
    assert "--processors takes at most 32" in (machine.help or "")
