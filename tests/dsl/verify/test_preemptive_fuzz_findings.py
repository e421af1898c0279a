"""What the fuzz campaigns of issue 44 found (benchmarks/fuzz_verify.py --preemptive-rate 1,
tests/support/policy_fuzz/kinds.py), each minimised to its case. A finding in
dsl/verify/preemption/ (reworked elsewhere) stays here as an xfail naming the bug."""

from __future__ import annotations

from schedc.dsl import compile_source
from schedc.dsl.verify.prover import verify_policy
from schedc.dsl.verify.verdict import Bounds, Limits
from schedc.runtime.replay import replay_stop, replayer

# campaign seed 7 (kinds progress, machine), minimised: a moldable job running on fewer
# cpus than it asked progresses slower than its estimate says, so the sqrt fails
SLOW_MOLDABLE = """machine m {
  resource cpus
  resource memory = 20
}
policy fuzz {
  mechanism suspend
  preempt by order
  keep sqrt(job.progress * job.estimate - job.since_start) < 1
}
"""


def test_a_moldable_job_running_below_its_request_is_a_replayable_counterexample() -> None:
    # a running moldable job at a size other than its request was written without `size`:
    # the state file refused it and well-defined came back unknown instead of violated
    policy = compile_source(SLOW_MOLDABLE, "slow.pol")
    (verdict,) = verify_policy(policy, Bounds(1, 1, 4, preemptive=(1, 1)), Limits(),
                               only=["well-defined"], replay=replayer(policy))
    assert verdict.status == "violated", verdict.reason
    assert replay_stop(policy, verdict.counterexample).kind == "well-defined"


# campaign seed 81 (kinds progress, failing-mechanism), minimised: the same decoding, for
# `progress` (seeds 7, 77, 130 give well-defined's)
SLOW_MOLDABLE_PROGRESS = """machine m {
  resource cpus = 8
  resource memory = 20
}
policy fuzz {
  mechanism requeue when sqrt(job.estimate - 3) > 1
  mechanism suspend
  preempt by order
  resident 3
  keep job.since_start / (job.progress * job.estimate) < 2
}
"""


def test_a_progress_counterexample_with_a_resized_job_replays() -> None:
    # the same decoding for progress: every counterexample Z3 found was refused
    policy = compile_source(SLOW_MOLDABLE_PROGRESS, "seed81.pol")
    (verdict,) = verify_policy(policy, Bounds(2, 2, 4, preemptive=(2, 2)), Limits(),
                               only=["progress"], replay=replayer(policy))
    assert verdict.status == "violated", verdict.reason


def test_the_same_state_with_its_size_replays_to_the_stop() -> None:
    # the state the counterexample should be: with `size` it is valid and the run stops
    # where verify says (so the fix is in the decoding, not in the encoding or the run)
    policy = compile_source(SLOW_MOLDABLE, "slow.pol")
    state = {"now": 2, "capacity": {"cpus": 4}, "params": {},
             "running": [{"id": 0, "submit": 0, "estimate": 4, "run_time": 4,
                          "request": {"cpus": 2}, "min_size": 1, "max_size": 3,
                          "speedup": "measured(1:9, 2:4)", "start": 0, "processors": [0],
                          "acquired": 0, "preemptions": 0, "progress": "1/36"}],
             "queue": [{"id": 1, "submit": 0, "estimate": 2, "run_time": 2,
                        "request": {"cpus": 1}}], "check": ["preemptive-pass"]}
    assert "processors for the 2 cpus" in replay_stop(policy, state).message
    stop = replay_stop(policy, state | {"running": [state["running"][0] | {"size": 1}]})
    assert stop.kind == "well-defined" and "sqrt of a negative number" in stop.message


# campaign seed 200: size-bounds was proved when asked alone, and unknown when capacity was
# asked first (capacity's checks numbered the shared context, and the vacuity check of
# size-bounds, nonlinear here, ran out of its rlimit); the vacuity check now first looks
# for a state of one waiting job, which Z3 finds at once
ASKED_WITH_CAPACITY = """machine m {
  resource cpus = 8
  resource memory = 20
}
policy fuzz {
  machine m
  reserve 0
  backfill first_fit
  mechanism suspend when job.id % 3 == 0
  mechanism suspend when job.estimate % 3 == 0
  mechanism checkpoint
  preempt when now != (now - cand.preemptions)
  victims order victim.progress desc
  keep sqrt(job.progress * job.estimate - job.since_start) < 1
  cost resume 0
  cost checkpoint 2.5
}
"""


def test_size_bounds_does_not_depend_on_capacity_being_asked() -> None:
    policy = compile_source(ASKED_WITH_CAPACITY, "seed200.pol")
    bounds = Bounds(2, 2, 8, preemptive=(2, 2))
    alone = verify_policy(policy, bounds, Limits(), only=["size-bounds"],
                          replay=replayer(policy))
    after = verify_policy(policy, bounds, Limits(), only=["capacity", "size-bounds"],
                          replay=replayer(policy))
    assert alone[0].status == "proved"
    assert after[1].property == "size-bounds" and after[1].status == alone[0].status, \
        after[1].reason
