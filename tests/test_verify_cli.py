"""`schedc verify` as a user meets it: Ctrl-C stops it at once, an unknown verdict says which
limit ran out and what to raise, and the text report never cuts a location or a reason."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from schedc.dsl import compile_file, compile_source
from schedc.dsl.sympass import Bounds
from schedc.dsl.verify import Limits, _unknown_reason, verify_policy

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
CLI = [sys.executable, "-m", "schedc.runtime.cli"]


# --- unknown verdicts: which limit, what to raise ---------------------------------------


def test_an_exhausted_rlimit_says_so_and_what_to_raise() -> None:
    (verdict,) = verify_policy(compile_file(EXAMPLES / "conservative.pol"), Bounds(3, 3),
                               Limits(rlimit=1_000), only=["reservation-safety"])
    assert verdict.status == "unknown"
    assert verdict.reason is not None
    assert verdict.reason.startswith("Z3's resource limit (--rlimit 1000) ran out while "
                                     "searching for a counterexample at N=")
    assert "raise --rlimit (e.g. --rlimit 8000)" in verdict.reason


def test_an_exhausted_time_limit_says_so_and_what_to_raise() -> None:
    (verdict,) = verify_policy(compile_file(EXAMPLES / "conservative.pol"), Bounds(4, 4),
                               Limits(rlimit=10**9, timeout_ms=1), only=["reservation-safety"])
    assert verdict.status == "unknown"
    assert verdict.reason is not None
    assert verdict.reason.startswith("the time limit (--timeout 0.001 s) ran out")
    assert "raise --timeout" in verdict.reason and "rlimit" not in verdict.reason


def test_a_counterexample_through_log_is_unknown_and_says_why() -> None:
    policy = compile_source("policy p { reserve 1 invariant log(job.estimate) <= 1000 }",
                            "<log>")
    (verdict,) = verify_policy(policy, Bounds(2, 2), only=["invariant"])
    assert verdict.status == "unknown"
    assert "applies `log`" in (verdict.reason or "")
    assert "no limit changes that" in (verdict.reason or "")


@pytest.mark.parametrize(("why", "seconds", "spent", "want"), [
    ("canceled", 0.5, 60_000_000, "Z3's resource limit (--rlimit 50000000) ran out while "
     "searching for a counterexample at N=3, R=3: raise --rlimit (e.g. --rlimit 400000000) "
     "or lower --queued/--running"),
    ("max. resource limit exceeded", 0.5, 0, "Z3's resource limit (--rlimit 50000000)"),
    ("timeout", 60.0, 1_000, "the time limit (--timeout 60 s) ran out while searching for a "
     "counterexample at N=3, R=3: raise --timeout (e.g. --timeout 240) or lower "
     "--queued/--running"),
    ("canceled", 60.0, 1_000, "the time limit (--timeout 60 s) ran out"),  # an Optimize's
    ("(incomplete (theory arithmetic))", 0.1, 1_000, "Z3 cannot decide the pass at N=3, "
     "R=3 ((incomplete (theory arithmetic))): its arithmetic is incomplete here"),
    ("smt tactic failed to show goal to be sat/unsat", 0.1, 1_000, "raising the limits will "
     "not help"),
    ("something new", 0.1, 1_000, "Z3 gave up while searching for a counterexample at N=3, "
     "R=3: something new"),
])
def test_unknown_reasons(why: str, seconds: float, spent: int, want: str) -> None:
    assert want in _unknown_reason(why, (3, 3), Limits(), seconds, spent)


def test_at_the_least_bounds_there_is_nothing_to_lower() -> None:
    reason = _unknown_reason("canceled", (1, 1), Limits(rlimit=1_000), 0.1, 2_000)
    assert reason.endswith("raise --rlimit (e.g. --rlimit 8000)")
