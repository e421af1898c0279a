"""`schedc verify` of preemptive policies (dsl/verify/preemption/): proofs, counterexamples
that the simulator replays, what the encoding refuses, and the encoding against the
simulator on random policies and states (tests/support/preemptive_agreement.py)."""

from __future__ import annotations

import json

import pytest

from schedc.dsl import compile_file, compile_source
from schedc.dsl.verify.prover import verify_policy
from schedc.dsl.verify.verdict import Bounds
from schedc.dsl.verify.vocabulary import PREEMPTIVE_PROPERTIES
from schedc.runtime.replay import replay_stop, replayer
from tests.support.preemptive_agreement import agree_one, verify_one
from tests.support.repo import EXAMPLES as ALL_EXAMPLES

SMALL = Bounds(2, 2, 4, preemptive=(2, 2))
EXAMPLES = ALL_EXAMPLES / "preemption"


def verdicts(policy, bounds: Bounds = SMALL, only=None) -> dict:
    return {v.property: v for v in verify_policy(policy, bounds, only=only,
                                                  replay=replayer(policy))}


@pytest.mark.parametrize("name", ["selective-suspension", "lsf-mig", "slurm-suspend", "gang"])
def test_examples_prove_the_pass_properties(name: str) -> None:
    policy = compile_file(EXAMPLES / f"{name}.pol")
    got = verdicts(policy)
    assert list(got) == list(PREEMPTIVE_PROPERTIES)
    for prop in ("capacity", "size-bounds", "well-defined", "protected", "mechanism",
                 "no-superfluous-preemption"):
        assert got[prop].status == "proved", (prop, got[prop].reason)
        assert "no dispatch or checkpoint is in flight" in got[prop].caveats[0]
    assert "P=4 processors" in got["capacity"].bound


def test_order_policies_place_the_head() -> None:
    """By the order, the head of the order is selected whenever the jobs that may be
    preempted make room: proved."""
    got = verdicts(compile_file(EXAMPLES / "lsf-mig.pol"), only=["progress"])
    assert got["progress"].status == "proved"


def test_selective_suspension_may_leave_the_head_waiting() -> None:
    """A rule decides pair by pair: the head waits when the rule does not let it preempt
    what holds its processors. The counterexample replays under the simulator's monitor."""
    policy = compile_file(EXAMPLES / "selective-suspension.pol")
    v = verdicts(policy, only=["progress"])["progress"]
    assert v.status == "violated", v.reason
    cex = v.counterexample
    assert cex is not None and "the replay" in v.reason
    assert replay_stop(policy, cex).kind == "progress"
    # a state file `schedc run --state` reads
    json.dumps({k: val for k, val in cex.items() if k != "pass"})


def test_a_size_out_of_range_is_found_and_replayed() -> None:
    policy = compile_source("""
policy wide {
  order     job.acquired asc
  reserve   0
  mechanism checkpoint
  preempt   by order
  size      job.max_size + 1
}
""", "wide.pol")
    v = verdicts(policy, only=["size-bounds"])["size-bounds"]
    assert v.status == "violated", v.reason
    assert replay_stop(policy, v.counterexample).kind == "size-bounds"


def test_a_rule_that_divides_by_zero_is_found_and_replayed() -> None:
    policy = compile_source("""
policy ratio {
  reserve   0
  mechanism suspend
  preempt   when cand.estimate / (victim.procs - 1) > 1
}
""", "ratio.pol")
    v = verdicts(policy, only=["well-defined"])["well-defined"]
    assert v.status == "violated", v.reason
    assert replay_stop(policy, v.counterexample).kind == "well-defined"


def test_what_the_encoding_does_not_cover_is_unknown_with_its_reason() -> None:
    got = verdicts(compile_file(EXAMPLES / "mig-ad.pol"))
    assert {v.status for v in got.values()} == {"unknown"}
    assert "`leftover`" in got["capacity"].reason
    reads_queue = compile_source("""
policy crowd {
  reserve   0
  mechanism suspend
  preempt   when count(j in queue where j.procs > 1) > 2
}
""", "crowd.pol")
    v = verdicts(reads_queue, only=["capacity"])["capacity"]
    assert v.status == "unknown" and "read the queue" in v.reason


@pytest.mark.parametrize("seed", range(12))
def test_the_encoded_pass_is_the_simulators(seed: int) -> None:
    """Random encodable policies and states: the encoding admits the state, and its only
    outcome is the simulator's first pass, job by job (or both stop)."""
    result = agree_one(seed, states=3)
    assert result is None or result == "skip", result


@pytest.mark.parametrize("seed", range(3))
def test_proofs_hold_on_replayed_states(seed: int) -> None:
    """A random policy verified, then random states within its bounds replayed with the
    first pass's checks: no proved property stops a replay, every violation replays."""
    result = verify_one(seed, states=6)
    assert result == "skip" or result == [], result
