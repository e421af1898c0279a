"""A rigid job that a size rule started on other cpus than it asked holds those cpus while
formulas read its request as `procs` (the simulator's RunningJob keeps the job as
submitted). The verifier's running jobs held their request: the states of a later pass
where the two differ were missing, and an invariant that only such a state breaks was
`proved` while the simulator refuted it (found while building the one-pass fuzzer)."""

from __future__ import annotations

from schedc.dsl import compile_source
from schedc.dsl.verify.pass_encoding.encoder import encode_pass
from schedc.dsl.verify.prover import verify_policy
from schedc.dsl.verify.verdict import Bounds, Limits
from schedc.runtime.replay import replay_stop, replayer

# the invariant holds right after every start that makes the only start of its pass beside
# jobs started before: a job doubled in an earlier pass breaks it in the next one
POLICY = """
machine m { resource cpus = 8 }
policy q {
  machine m
  reserve 1
  backfill first_fit
  size max(1, min(2 * job.procs, machine.free.cpus))
  invariant running.count != count(r in running where r.start < now) + 1
            or sum(r in running where r.start < now: r.procs) + job.size == machine.used.cpus
}
"""


def test_an_earlier_passs_size_is_seen_and_the_counterexample_replays() -> None:
    policy = compile_source(POLICY, "q.pol")
    (verdict,) = verify_policy(policy, Bounds(2, 2), Limits(rlimit=4_000_000),
                               only=["invariant"], replay=replayer(policy))
    assert verdict.status == "violated", verdict.reason
    held = [r for r in verdict.counterexample["running"] if "size" in r]
    assert held and held[0]["size"] != held[0]["request"]["cpus"]
    assert replay_stop(policy, verdict.counterexample).kind.startswith("invariant")


def test_only_policies_that_size_jobs_have_running_jobs_on_other_sizes() -> None:
    rigid = compile_source("policy e { reserve 1 backfill first_fit }", "e.pol")
    sym = encode_pass(rigid, Bounds(1, 1))
    assert sym.running_held[0] is sym.running[0].request
    # a dynP candidate that keeps the requests, beside one that sizes jobs
    sym = encode_pass(rigid, Bounds(1, 1), resized=True)
    assert sym.running_held[0][0] is not sym.running[0].request[0]
