"""Proofs for every queue length: a job's place in the queue (`count(j in queue where
j.submit < job.submit)`) is not bounded by the N slots of the encoded pass.

The step lemmas let the further jobs of the queue wait before the job a step visits, so a
lemma covers a job with any number of jobs ahead of it; where a lemma fails and the exact
pass holds up to N, the search goes past N, and a proof it cannot refute says what it covers
in its verdict (every report format). These were proved with no caveat, and KTH-SP2 stopped
the runtime monitor for the very property proved."""

from __future__ import annotations

import json

import pytest

from schedc.dsl import compile_source
from schedc.dsl.verify import reports as vr
from schedc.dsl.verify.checker import BEYOND
from schedc.dsl.verify.prover import verify_policy
from schedc.dsl.verify.verdict import Bounds, Limits
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.monitor import MonitorViolation
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.replay import replay_stop, replayer
from schedc.runtime.run import bundled_trace
from schedc.runtime.workloads.load import load_workload

SMALL = Bounds(queued=3, running=3)
NO_CLOCK = Limits(timeout_ms=3_600_000)


def rank_invariant(limit: int) -> str:
    return f"""
policy rank_inv {{
  order    job.submit asc
  reserve  1
  backfill first_fit
  invariant count(j in queue where j.submit < job.submit) <= {limit}
}}"""


def rank_backfill(rank: int) -> str:
    # EASY, except that a job with at least `rank` older jobs waiting backfills anywhere
    return f"""
policy rank_easy {{
  order    job.submit asc
  reserve  1
  backfill when count(j in queue where j.submit < job.submit) >= {rank}
}}"""


def verdict(text: str, prop: str, bounds: Bounds = SMALL):
    policy = compile_source(text, "<test>")
    verdicts = verify_policy(policy, bounds, NO_CLOCK, only=[prop], replay=replayer(policy))
    (v,) = verdicts
    return policy, v


def test_an_invariant_only_the_next_job_breaks_is_violated_past_the_slots() -> None:
    # 3 slots: the third job has 2 older ones, the fourth 3; the counterexample has 4
    policy, v = verdict(rank_invariant(2), "invariant")
    assert v.status == "violated", v
    assert "only with more than 3 queued jobs: the counterexample has 4" in v.reason
    assert len(v.counterexample["queue"]) == 4
    assert replay_stop(policy, v.counterexample).kind == v.property


def test_a_backfill_rule_only_a_later_job_meets_is_violated_past_the_slots() -> None:
    policy, v = verdict(rank_backfill(3), "reservation-safety")
    assert v.status == "violated", v
    assert len(v.counterexample["queue"]) > 3
    assert replay_stop(policy, v.counterexample).kind == "reservation-safety"


def test_the_invariant_within_the_slots_stays_proved_for_every_queue_length() -> None:
    # the rank of a job is any number: `>= 0` holds of every one, from the step lemmas alone
    _, v = verdict("""
policy p { order job.submit asc  reserve 1  backfill first_fit
  invariant count(j in queue where j.submit < job.submit) >= 0 }""", "invariant")
    assert v.status == "proved" and v.caveats == (), v


def test_a_proof_the_search_cannot_refute_states_its_bound() -> None:
    # the ninth job breaks it: past 3 slots, the search reaches 3 + BEYOND = 7 queued jobs
    assert 3 + BEYOND < 9
    _, v = verdict(rank_invariant(7), "invariant")
    assert v.status == "proved"
    (caveat,) = v.caveats
    assert "proved only for passes whose starts and reservations are among the first 3 " \
           "queued jobs" in caveat
    assert f"no counterexample with up to {3 + BEYOND} queued jobs" in caveat
    assert "raise --queued" in caveat
    # in every report format
    report = vr.PolicyReport("<test>", "rank_inv", (v,))
    assert json.loads(vr.to_json([report]))[0]["verdicts"][0]["caveats"] == [caveat]
    assert caveat in vr.to_markdown([report])
    sarif = vr.to_sarif([report], "test")
    assert "first 3 queued jobs" in sarif


def test_the_default_bounds_refute_what_kth_sp2_refutes() -> None:
    # the two policies (`<= 7`, `>= 8`): proved before, and the bundled KTH-SP2
    # stops the monitor for the very property; at the default bounds both are violated
    workload = load_workload(bundled_trace())
    for text, prop in ((rank_invariant(7), "invariant"), (rank_backfill(8),
                                                          "reservation-safety")):
        policy, v = verdict(text, prop, Bounds())
        assert v.status == "violated", v
        assert len(v.counterexample["queue"]) == 9
        with pytest.raises(MonitorViolation) as stop:
            simulate(to_runtime(policy, {}), workload)
        assert stop.value.kind == v.property


def test_a_formula_that_fails_only_for_a_later_job_states_its_bound_when_proved() -> None:
    # a division by zero at rank 7: beyond the 3 + BEYOND queued jobs searched
    _, v = verdict("""
policy p { order job.submit asc  reserve 1
  backfill when 1 / (7 - count(j in queue where j.submit < job.submit)) > 0 }""",
                   "well-defined")
    assert v.status == "proved"
    assert any("among the first 3 queued jobs" in c for c in v.caveats), v
