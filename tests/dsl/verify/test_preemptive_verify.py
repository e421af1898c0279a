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
    assert "any number of processors" in got["capacity"].bound  # groups of processors


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


@pytest.mark.parametrize("name", ["rtc-ad", "mig-ad", "mall-ad"])
def test_adaptive_examples_prove_every_property(name: str) -> None:
    """The adaptive disciplines of papers/003 (`leftover`; `job.progress` in their order
    with `demand` and `speedup`): every property proved, for every value of their params."""
    got = verdicts(compile_file(EXAMPLES / f"{name}.pol"))
    assert {p: v.status for p, v in got.items()} == dict.fromkeys(PREEMPTIVE_PROPERTIES,
                                                                   "proved")


def test_the_subset_variant_may_leave_the_head_waiting() -> None:
    """LSF-RTC-ADSUBSET commits to fewer first-fit jobs the more jobs are in the system, and
    the subset sum may prefer jobs behind the head that fill the machine: `progress` is
    violated, and the counterexample replays."""
    policy = compile_file(EXAMPLES / "rtc-adsubset.pol")
    v = verdicts(policy, only=["progress"])["progress"]
    assert v.status == "violated", v.reason
    assert replay_stop(policy, v.counterexample).kind == "progress"
    started = [a for a in v.counterexample["pass"]["actions"] if a["action"] == "start"]
    assert started, v.counterexample


def test_a_progress_that_divides_by_zero_is_found_and_replayed() -> None:
    """`job.progress` of a running job is its progress at its start and its run since:
    the counterexample's state file gives both, and the replay computes the same."""
    policy = compile_source("""
policy half {
  order     1 / (2 * job.progress - 1) asc
  reserve   0
  mechanism checkpoint
  preempt   by order
}
""", "half.pol")
    v = verdicts(policy, only=["well-defined"])["well-defined"]
    assert v.status == "violated", v.reason
    assert replay_stop(policy, v.counterexample).kind == "well-defined"


def test_a_running_jobs_running_progress_is_decoded_from_its_progress_now() -> None:
    """At a size off the speedup table a moldable job's run time is free: the least whole
    one that keeps its progress at start >= 0 is added to the table."""
    from fractions import Fraction
    from types import SimpleNamespace

    from schedc.dsl.verify.preemption.prover import _running_progress

    job = SimpleNamespace(active=SimpleNamespace(since_start="elapsed"), estimate="estimate")
    slot = SimpleNamespace(progress_now="now", size="size", job=job)
    values = {"now": Fraction(1, 2), "elapsed": 3, "size": 3, "estimate": 10}
    got = _running_progress(values.__getitem__, slot, {1: 40, 2: 10}, reads=True)
    assert got == (Fraction(0), {3: 6})  # 1/2 - 3/6
    # where no formula reads it: no progress, and a run time one second beyond its run
    assert _running_progress(values.__getitem__, slot, {1: 40, 2: 10}, reads=False) == (
        Fraction(0), {3: 4})
    values["size"] = 2  # at its request: its estimate
    assert _running_progress(values.__getitem__, slot, {1: 40, 2: 10}, reads=True) == (
        Fraction(1, 2) - Fraction(3, 10), {})


def test_what_the_encoding_does_not_cover_is_unknown_with_its_reason() -> None:
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


# seed 5: a moldable job running at its request past its estimate, a state file refuses
@pytest.mark.parametrize("seed", [0, 1, 2, 5])
def test_proofs_hold_on_replayed_states(seed: int) -> None:
    """A random policy verified, then random states within its bounds replayed with the
    first pass's checks: no proved property stops a replay, every violation replays."""
    result = verify_one(seed, states=6)
    assert result == "skip" or result == [], result


@pytest.mark.parametrize("name", ["selective-suspension", "mall-adsubset"])
def test_a_property_alone_gets_the_verdict_it_gets_among_all(name: str) -> None:
    """Each property is verified in a Z3 context of its own: asked alone, it meets the same
    search (the same resource units to the unit), and so the same verdict and
    counterexample, as among all seven. In one context, the checks made before it moved
    the numbering its search follows."""
    policy = compile_file(EXAMPLES / f"{name}.pol")
    everything = verdicts(policy)
    for prop in reversed(PREEMPTIVE_PROPERTIES):
        alone = verdicts(policy, only=[prop])[prop]
        among = everything[prop]
        assert (alone.status, alone.reason, alone.counterexample, alone.work) == \
            (among.status, among.reason, among.counterexample, among.work), prop
