"""The further queued jobs an aggregate over `queue` ranges over (``QueueTail``) come after
the slots in the policy's order. Each aggregate's template job was asserted valid even with
no further job: where none can come after the slots (ordered by id descending, the last
slot has id 0, ids are distinct and >= 0) the state had no pass, and every property was
proved of it (found by benchmarks/fuzz_pass.py, seed 3095)."""

from __future__ import annotations

from schedc.dsl import compile_source
from schedc.dsl.verify.prover import verify_policy
from schedc.dsl.verify.verdict import Bounds, Limits
from schedc.runtime.replay import replay_stop, replayer

POLICY = """policy p {
  order job.id desc
  reserve 1
  backfill first_fit
  invariant job.id != 0 or count(y in queue where y.procs > 1) >= 0
  invariant job.id != 0
}"""


def test_no_further_job_leaves_the_state_its_pass() -> None:
    policy = compile_source(POLICY, "t.pol")
    verdicts = verify_policy(policy, Bounds(2, 2), Limits(rlimit=4_000_000),
                             only=["invariant"], replay=replayer(policy))
    assert [v.status for v in verdicts] == ["proved", "violated"]
    assert replay_stop(policy, verdicts[1].counterexample).kind == "invariant `job.id != 0`"
