"""The time limit of a verification (dsl/verify/budget.py): CPU time of the process, not the
wall clock; all of a property's verification, its encoding included; Z3 stopped within its
checks. Bounds on seconds here are CPU seconds the verifier itself reports, with a generous
margin (the measured one is in docs/reference/limits.md); no test times the machine."""

from __future__ import annotations

import time

import pytest
import z3

from schedc.dsl import compile_file
from schedc.dsl.verify.across import verify_across
from schedc.dsl.verify.budget import Budget, OutOfTime, check, running
from schedc.dsl.verify.prover import verify_policy
from schedc.dsl.verify.verdict import Bounds, Limits
from schedc.dsl.verify.vocabulary import PREEMPTIVE_PROPERTIES
from tests.support.repo import ROOT

EXAMPLES = ROOT / "examples"
MARGIN = 1.5  # CPU seconds past the limit a test tolerates (measured: well below 0.1 s)
CPU_TIME = "of CPU time) ran out"


def _pigeons(ctx: z3.Context, holes: int = 11) -> z3.Solver:
    """holes + 1 pigeons in ``holes`` holes: unsat, and minutes of Z3 work at 11 holes."""
    p = [[z3.Bool(f"p{i}_{j}", ctx) for j in range(holes)] for i in range(holes + 1)]
    solver = z3.Solver(ctx=ctx)
    for row in p:
        solver.add(z3.Or(row))
    for j in range(holes):
        for i in range(holes + 1):
            for k in range(i + 1, holes + 1):
                solver.add(z3.Or(z3.Not(p[i][j]), z3.Not(p[k][j])))
    return solver


def _busy(budget: Budget) -> None:
    """Work (CPU time) until the watchdog marks ``budget`` spent."""
    with pytest.raises(OutOfTime):
        while True:
            sum(range(1000))
            check()


def test_waiting_spends_none_of_it() -> None:
    # the wall clock runs, the process does nothing: a busy machine's case, where the
    # verification waits for a processor
    with Budget(0.2) as budget:
        time.sleep(0.5)
        assert not budget.expired()
        check()
    assert budget.spent() < 0.2


def test_work_spends_it_and_the_steps_between_checks_stop() -> None:
    with Budget(0.05) as budget:
        assert running() is budget
        _busy(budget)
    assert running() is None
    assert budget.expired() and 0.05 <= budget.spent() < 0.05 + MARGIN
    assert budget.reason().startswith(f"the time limit (--timeout 0.05 s {CPU_TIME}")


def test_the_watchdog_stops_a_z3_check_in_c() -> None:
    ctx = z3.Context()
    solver = _pigeons(ctx)
    with Budget(0.3, ctx.interrupt) as budget:
        assert solver.check() == z3.unknown
    assert budget.interrupts >= 1
    assert budget.spent() < 0.3 + MARGIN
    # the context is fine afterwards: an interrupt stops the check at hand only
    again = z3.Solver(ctx=ctx)
    again.add(z3.Int("x", ctx) > 1)
    assert again.check() == z3.sat


def test_a_z3_call_the_watchdog_cancelled_is_out_of_time() -> None:
    # Z3 raises on any call an interrupt cancels (a push, a simplify), not only a check
    with pytest.raises(OutOfTime), Budget(0.01) as budget:
        _busy(budget)
        raise z3.Z3Exception("push canceled")
    with pytest.raises(z3.Z3Exception), Budget(60):  # in time: Z3's own error stands
        raise z3.Z3Exception("something else")


def test_an_encoding_of_minutes_stops_at_the_limit() -> None:
    # N = R = 64: encoding the pass every property reads takes seconds of Python, the exact
    # passes minutes
    verdicts = verify_policy(compile_file(EXAMPLES / "easy.pol"), Bounds(64, 64),
                             Limits(timeout_ms=300))
    assert len(verdicts) == 6
    for v in verdicts:
        assert v.status == "unknown"
        assert v.reason == (
            f"the time limit (--timeout 0.3 s {CPU_TIME} while encoding the pass that every "
            "property reads: raise --timeout (e.g. --timeout 1.2) or lower --queued/--running "
            "(a verdict this limit decides may differ on another machine)")
        assert 0.3 <= v.seconds < 0.3 + MARGIN


def test_a_formula_of_nested_aggregates_is_cut_between_its_elements() -> None:
    # robust-moldable's `size` nests aggregates over the running slots: at N = R = 12 one
    # evaluation took 0.45 s of Python without a look at the clock (1.4 s in a loaded test
    # worker, past the CLI test's margin); the limit is now read between elements
    (v,) = verify_policy(compile_file(EXAMPLES / "robust-moldable.pol"), Bounds(12, 12),
                         Limits(rlimit=10**9, timeout_ms=100), only=["size-bounds"])
    assert v.status == "unknown" and "while encoding the pass" in v.reason
    assert 0.1 <= v.seconds < 0.1 + 0.3


def test_a_preemptive_encoding_of_minutes_stops_at_the_limit() -> None:
    # each property encodes its pass in a context of its own: once an encoding runs out,
    # the others (the same pass) are not tried again, and the whole stops at one limit
    first, *others = verify_policy(compile_file(EXAMPLES / "preemption" / "srpt.pol"),
                                   Bounds.checked(32, 32, 32), Limits(timeout_ms=400))
    assert first.status == "unknown" and first.reason == (
        f"the time limit (--timeout 0.4 s {CPU_TIME} while encoding the pass: raise --timeout "
        "(e.g. --timeout 1.6) or lower --queued/--running (a verdict this limit decides may "
        "differ on another machine)")
    assert 0.4 <= first.seconds < 0.4 + MARGIN
    assert [v.property for v in others] == list(PREEMPTIVE_PROPERTIES[1:])
    for v in others:
        assert v.status == "unknown" and v.seconds == 0.0 and v.work == 0
        assert v.reason == first.reason + " (not tried again for this property: its pass is " \
            "the same)"


def test_the_property_across_passes_stops_at_the_limit() -> None:
    (v,) = verify_across(compile_file(EXAMPLES / "easy.pol"), Bounds(64, 64),
                         Limits(timeout_ms=300))
    assert v.status == "unknown" and CPU_TIME in v.reason
    assert 0.3 <= v.seconds < 0.3 + MARGIN


def test_a_z3_check_of_minutes_stops_at_the_limit() -> None:
    # the pass at P=8 encodes in a fraction of a second; its mechanism checks take Z3
    # minutes, and the rlimit given does not stop them first
    (v,) = verify_policy(compile_file(EXAMPLES / "preemption" / "lsf-mig.pol"),
                         Bounds.checked(None, None, 8), Limits(rlimit=2**32 - 1,
                                                               timeout_ms=1000),
                         only=["mechanism"])
    assert v.status == "unknown"
    # on a part of the property, or in the symmetric encoding's proof attempt before them
    assert v.reason.startswith(f"the time limit (--timeout 1 s {CPU_TIME}")
    assert 1.0 <= v.seconds < 1.0 + MARGIN


def test_the_rlimit_decides_the_same_verdict_twice() -> None:
    # no time limit that could decide: Z3's resource count is the same on any machine
    limits = Limits(rlimit=2_000_000, timeout_ms=3_600_000)
    policy = compile_file(EXAMPLES / "preemption" / "lsf-mig.pol")
    runs = [verify_policy(policy, Bounds.checked(None, None, 8), limits, only=["mechanism"])
            for _ in range(2)]
    (first,), (second,) = runs
    assert first.status == "unknown" and "resource limit" in first.reason
    # the reason names no time (the machine's), so the reports are the same bytes
    assert (first.status, first.reason, first.work) == (second.status, second.reason,
                                                        second.work)
    rigid = compile_file(EXAMPLES / "conservative.pol")
    a, b = (verify_policy(rigid, Bounds(3, 3), Limits(rlimit=1_000, timeout_ms=3_600_000))
            for _ in range(2))
    assert [(v.property, v.status, v.reason, v.work) for v in a] == \
        [(v.property, v.status, v.reason, v.work) for v in b]
    assert any("--rlimit 1000" in (v.reason or "") for v in a)
