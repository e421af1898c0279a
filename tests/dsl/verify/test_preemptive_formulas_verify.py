"""`schedc verify` of the formulas a preemptive pass evaluates outside the pass itself: a
`mechanism ... when` condition (of each job at its submission) is obliged in every state,
its counterexample replays to the run's `well-defined` stop; a constant clause (params
only) is assumed defined, as `run` refuses the params it fails for."""

from __future__ import annotations

import pytest

from schedc.dsl import compile_source
from schedc.dsl.verify.prover import verify_policy
from schedc.dsl.verify.verdict import Bounds
from schedc.runtime.replay import replay_stop, replayer
from tests.support.failing_formulas import FAILING

SMALL = Bounds(2, 2, 4, preemptive=(2, 2))
HEAD = "policy p {\n  order job.submit asc\n  reserve 0\n  backfill first_fit\n"


def well_defined(text: str):
    policy = compile_source(text, "t.pol")
    (v,) = verify_policy(policy, SMALL, only=["well-defined"], replay=replayer(policy))
    return policy, v


@pytest.mark.parametrize("what", FAILING)
def test_a_formula_that_can_fail_is_violated_and_replays(what: str) -> None:
    """Wherever the pass (or a job's submission) evaluates it, as the run stops there."""
    policy, v = well_defined(FAILING[what])
    assert v.status == "violated", v.reason
    stop = replay_stop(policy, v.counterexample)
    assert stop.kind == "well-defined" and "division by zero" in stop.message


def test_a_mechanism_condition_that_can_fail_is_violated_and_replays() -> None:
    """The issue's crash: `run` and `verify` ended in an internal error (exit 70)."""
    policy, v = well_defined(HEAD + "  mechanism suspend when 10 / (job.procs - 1) > 1\n"
                             "  mechanism none\n  preempt by order\n}\n")
    assert v.status == "violated", v.reason
    stop = replay_stop(policy, v.counterexample)
    assert stop.kind == "well-defined"
    assert "the condition of `mechanism suspend` (t.pol:5:3): division by zero" in stop.message


def test_a_mechanism_condition_that_cannot_fail_is_proved() -> None:
    _, v = well_defined(HEAD + "  mechanism suspend when 10 / job.procs > 1\n"
                        "  mechanism none\n  preempt by order\n}\n")
    assert v.status == "proved", v.reason


@pytest.mark.parametrize("clause", ["limit preemptions 10 div (c - 7) + 10",
                                    "leftover efficient when 10 / (c - 7) > 1"])
def test_a_constant_clause_is_assumed_defined(clause: str) -> None:
    """It fails for c = 7 only, which `run` refuses (located; `check` tries only some values
    of so wide a domain): the proof covers the other values (before, the encoding ended in
    an internal error)."""
    _, v = well_defined("param c: int in [1, 1000000] = 2\n" + HEAD + "  mechanism malleable\n"
                        f"  {clause}\n  preempt by order\n}}\n")
    assert v.status == "proved", v.reason
