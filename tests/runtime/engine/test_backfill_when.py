"""`backfill when COND`: a user-written backfill test, from syntax to the runtime monitor.

The DESIGN 3-job case (10 procs; 6 procs/100 s, 10/100 s, 4/1000 s at t = 0, 1, 2) tells
the correct EASY rule from the popular "fits the free processors now" one.
"""

from __future__ import annotations

import pytest

from schedc.dsl import (
    DiagnosticError,
    check_source,
    compile_file,
    compile_source,
    ir,
)
from schedc.dsl.ir_json import policy_to_json
from schedc.dsl.syntax import ast
from schedc.dsl.syntax.parser import parse
from schedc.dsl.syntax.printer import module
from schedc.runtime.engine import one_resource
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.monitor import MonitorViolation
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.jobs import Job
from schedc.runtime.run import bundled_trace
from schedc.runtime.workloads.load import load_workload
from schedc.runtime.workloads.workload import Workload
from tests.support.repo import ROOT
from tests.support.variants import VARIANTS


def wl(*specs: tuple[int, int, int]) -> Workload:
    """specs: (submit, procs, run time = estimate) on 10 procs, ids 1.. in order."""
    return Workload(tuple(Job(i + 1, i, s, r, r, (p,)) for i, (s, p, r) in enumerate(specs)),
                    ("cpus",), (10,))


DESIGN_CASE = wl((0, 6, 100), (1, 10, 100), (2, 4, 1000))


def policy(clauses: str):
    return to_runtime(compile_source(f"policy p {{ {clauses} }}", "<test>"))


def starts(pol, w: Workload, **kw) -> list[int]:
    return [r.start for r in simulate(pol, w, **kw).records]


# -- syntax, types, IR -----------------------------------------------------------------------

def test_parses_prints_and_round_trips() -> None:
    m = parse("policy p { reserve 1 backfill when job.estimate <= 50 and true }", "x.pol")
    clause = m.items[0].clauses[1]
    assert clause.kind == "when" and isinstance(clause.condition, ast.Binary)
    assert "backfill when" in module(m)
    assert parse(module(m), "y.pol") == m


def test_compiles_to_a_bool_condition_in_the_ir_and_json() -> None:
    p = compile_source("policy p { reserve 1 backfill when job.estimate <= 50 }", "t.pol")
    assert p.backfill.kind == "when" and p.backfill.score is None
    assert p.backfill.condition is not None and p.backfill.condition.type == "bool"
    data = policy_to_json(p)["backfill"]
    assert data["kind"] == "when" and data["condition"]["node"] == "Binary"
    assert policy_to_json(compile_source("policy q {}", "t.pol"))["backfill"]["condition"] is None


def test_condition_must_be_bool() -> None:
    result = check_source("policy p { reserve 1 backfill when job.estimate }", "t.pol")
    assert not result.ok
    (d,) = result.diagnostics
    assert "a backfill condition must be bool, but this is int" in d.message
    assert d.help and "job.estimate <= 3600" in d.help


def test_when_needs_a_condition_and_is_reserved() -> None:
    assert not check_source("policy p { backfill when }", "t.pol").ok
    with pytest.raises(DiagnosticError):
        compile_source("def when = 1\npolicy p { order when }", "t.pol")


def test_condition_reading_state_makes_the_policy_state_full() -> None:
    assert policy("reserve 1 backfill when job.estimate <= 50").state_free
    p = compile_source("policy p { reserve 1 backfill when job.wait >= 10 }", "t.pol")
    assert not ir.state_free(p)
    assert not to_runtime(p).state_free


def test_the_one_resource_kernel_never_runs_it() -> None:
    assert not one_resource.eligible(policy("reserve 1 backfill when true"), 1)
    assert one_resource.eligible(policy("reserve 1 backfill first_fit"), 1)


# -- the pass ----------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", VARIANTS)
def test_free_procs_rule_delays_the_reservation_and_the_monitor_stops_it(kw) -> None:
    with pytest.raises(MonitorViolation, match=r"reservation of job 2 at t=100 delayed"):
        simulate(policy("reserve 1 backfill when true"), DESIGN_CASE, **kw)


@pytest.mark.parametrize("kw", VARIANTS)
def test_without_monitor_the_head_waits_for_the_backfilled_job(kw) -> None:
    assert starts(policy("reserve 1 backfill when true"), DESIGN_CASE, monitor=False,
                  **kw) == [0, 1002, 2]


@pytest.mark.parametrize("kw", VARIANTS)
def test_a_condition_that_excludes_the_long_job_gives_easy(kw) -> None:
    easy = starts(policy("reserve 1 backfill first_fit"), DESIGN_CASE, **kw)
    assert easy == [0, 100, 200]
    assert starts(policy("reserve 1 backfill when job.estimate <= 50"), DESIGN_CASE,
                  **kw) == easy
    short = wl((0, 6, 100), (1, 10, 100), (2, 4, 50))  # ends at 52, before the shadow
    assert starts(policy("reserve 1 backfill when job.estimate <= 50"), short, **kw) == \
        [0, 100, 2]


def test_the_physical_constraint_holds_even_when_the_condition_is_true() -> None:
    # Job 3 (6 procs) does not fit the 4 free procs: `when true` must not start it.
    w = wl((0, 6, 100), (1, 10, 100), (2, 6, 10))
    assert starts(policy("reserve 1 backfill when true"), w) == [0, 100, 200]


def test_depth_zero_when_true_is_first_fit() -> None:
    assert starts(policy("reserve 0 backfill when true"), DESIGN_CASE) == \
        starts(policy("reserve 0 backfill first_fit"), DESIGN_CASE) == [0, 1002, 2]


def test_the_broken_example_is_stopped_on_the_design_case() -> None:
    broken = to_runtime(compile_file(ROOT / "examples" / "broken" / "easy-freeprocs.pol"))
    assert broken.backfill == "when" and broken.depth == 1
    with pytest.raises(MonitorViolation, match="delayed"):
        simulate(broken, DESIGN_CASE)


@pytest.mark.parametrize("clauses", ["reserve 1 backfill when job.procs <= 8",
                                     "reserve 2 backfill when job.procs <= 8",
                                     "reserve 3 backfill when true"])
def test_optimisations_agree_on_a_real_trace(clauses: str) -> None:
    # Continuations and the shadow plan must not change the schedule. With depth 2 a
    # continuation once resumed a stale end state (the starts had delayed a reservation).
    full = load_workload(str(bundled_trace()))
    jobs = full.jobs[:3000]
    w = Workload(jobs, full.resources, full.capacities)
    pol = policy(clauses)
    runs = [starts(pol, w, monitor=False, **kw) for kw in VARIANTS]
    assert all(r == runs[0] for r in runs)
    assert all(s >= j.submit for s, j in zip(runs[0], jobs, strict=True))
