"""What a preemptive verdict assumes of a run, each stated in the verdict: the `--overrun`
mode (a running job that has run less than its estimate), the processor bound P, and the
scope (no dispatch or checkpoint in flight, no claim waiting). Each policy here is proved
within its assumptions and refuted outside them (dsl/verify/preemption/prover.py,
``caveats``)."""

from __future__ import annotations

import json

import attrs
import pytest

from schedc.dsl import compile_source
from schedc.dsl.verify import reports as vr
from schedc.dsl.verify.preemption.prover import SCOPE, WITHIN_ESTIMATES
from schedc.dsl.verify.prover import verify_policy
from schedc.dsl.verify.verdict import Bounds
from schedc.runtime.replay import replay_stop, replayer
from tests.support.processor_bound import BOUND, BY_EIGHT, SMALL_ONLY, TOO_SMALL

SMALL = Bounds(2, 2, 4, preemptive=(2, 2))

# a protection that divides by the time a job has left before its estimate: defined while
# every running job has run less than its estimate (`--overrun estimate`, `kill`), not under
# `extend` (a moldable job may run longer than its estimate on fewer cpus: left out here)
OUTRUN = """
policy outrun {
  order     job.acquired asc
  reserve   0
  mechanism suspend
  keep      job.max_size > job.min_size or 1 / (job.estimate - job.since_start) > 0
  preempt   by order
}
"""
def verdict(text: str, name: str, prop: str, bounds: Bounds = SMALL):
    policy = compile_source(text, f"{name}.pol")
    (v,) = verify_policy(policy, bounds, only=[prop], replay=replayer(policy))
    return policy, v


def test_a_verdict_states_the_overrun_modes_it_covers() -> None:
    """Under `--overrun estimate` (the default) the protection is proved, and the verdict
    says for which runs; under `extend` it is not proved, and the reason says why."""
    _, v = verdict(OUTRUN, "outrun", "well-defined")
    assert v.status == "proved", v.reason
    assert f"proved for {WITHIN_ESTIMATES}" in v.caveats
    assert f"proved for {SCOPE}" in v.caveats
    _, v = verdict(OUTRUN, "outrun", "well-defined", attrs.evolve(SMALL, overrun="extend"))
    assert v.status == "unknown", v.status
    assert "run as long as its estimate or longer" in v.reason


def test_extend_proves_what_holds_whatever_a_job_runs() -> None:
    """A proof under `--overrun extend` covers every mode: it states no overrun caveat."""
    _, v = verdict(OUTRUN.replace("job.estimate - job.since_start", "1 + job.since_start"),
                   "outrun", "well-defined", attrs.evolve(SMALL, overrun="extend"))
    assert v.status == "proved", v.reason
    assert not any("estimate" in c for c in v.caveats)


@pytest.mark.parametrize(("text", "name", "prop"), [
    (BY_EIGHT, "by_eight", "well-defined"),
    (SMALL_ONLY, "small_only", "progress"),
    (TOO_SMALL, "too_small", "size-bounds"),
])
def test_a_proof_within_the_processor_bound_says_so_in_every_format(
        text: str, name: str, prop: str) -> None:
    _, v = verdict(text, name, prop)
    assert v.status == "proved", v.reason
    assert BOUND in v.caveats
    report = vr.PolicyReport(f"{name}.pol", name, (v,))
    assert BOUND in json.loads(vr.to_json([report]))[0]["verdicts"][0]["caveats"]
    assert f"Bounded: {BOUND}." in vr.to_markdown([report])
    (result,) = json.loads(vr.to_sarif([report], "0"))["runs"][0]["results"]
    assert BOUND in result["message"]["text"]


def test_a_machine_of_fixed_size_within_the_bound_needs_no_caveat() -> None:
    text = "machine m {\n  resource cpus = 4\n}\n" + BY_EIGHT.replace(
        "policy by_eight {", "policy by_eight {\n  machine   m")
    _, v = verdict(text, "by_eight", "well-defined")
    assert v.status == "proved", v.reason
    assert BOUND not in v.caveats and not any("processors" in c for c in v.caveats)


@pytest.mark.parametrize(("text", "name", "prop"), [
    (BY_EIGHT, "by_eight", "well-defined"),
    (SMALL_ONLY, "small_only", "progress"),
    (TOO_SMALL, "too_small", "size-bounds"),
])
def test_a_larger_bound_finds_the_counterexample(text: str, name: str, prop: str) -> None:
    """At P = 8 each is refuted by a job of 5 to 8 cpus (about a second each, the one
    property asked), and the replay agrees."""
    policy, v = verdict(text, name, prop, Bounds(2, 2, 8, preemptive=(2, 2)))
    assert v.status == "violated", v.reason
    assert replay_stop(policy, v.counterexample).kind == prop
    cex = v.counterexample
    jobs = [job for phase in ("running", "queue", "suspended", "stopped")
            for job in cex.get(phase, ())]
    assert max(job["request"]["cpus"] for job in jobs) >= 5, cex
