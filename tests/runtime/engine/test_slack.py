"""`slack EXPR`: relaxed (slack-based) backfilling, from syntax to the runtime monitor.

A reservation is held from its earliest fit plus the reserved job's slack (when it fits
there), so later starts of the pass may delay it by that much and no more; the monitor checks
that window. The DESIGN 3-job case (10 procs; 6 procs/100 s, 10/100 s, 4/1000 s at t = 0, 1,
2): job 3 runs to 1002, past job 2's earliest start 100, so it may start only with a slack of
at least 902 s.
"""

from __future__ import annotations

import pytest

from schedc.dsl import DiagnosticError, check_source, compile_file, compile_source
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

EXAMPLE = ROOT / "examples" / "slack-backfill.pol"
SHORT = ROOT / "examples" / "broken" / "slack-when-short.pol"


def wl(*specs: tuple[int, int, int]) -> Workload:
    """specs: (submit, procs, run time = estimate) on 10 procs, ids 1.. in order."""
    return Workload(tuple(Job(i + 1, i, s, r, r, (p,)) for i, (s, p, r) in enumerate(specs)),
                    ("cpus",), (10,))


DESIGN_CASE = wl((0, 6, 100), (1, 10, 100), (2, 4, 1000))


def starts(text: str, workload: Workload, **kw) -> dict[int, int]:
    schedule = simulate(to_runtime(compile_source(text, "<test>")), workload, **kw)
    return {r.job.id: r.start for r in schedule.records}


@pytest.mark.parametrize("slack", ["901", "902", "10 * job.estimate", "-1h"])
def test_job_3_backfills_only_within_job_2s_slack(slack: str) -> None:
    got = starts(f"policy p {{ reserve 1 backfill first_fit slack {slack} }}", DESIGN_CASE)
    if slack in ("902", "10 * job.estimate"):
        assert (got[2], got[3]) == (1002, 2)  # job 2 delayed by job 3, within its slack
    else:
        assert (got[2], got[3]) == (100, 200)  # EASY's schedule


def test_slack_0_is_easy_on_the_bundled_trace() -> None:
    # the general walk (a slack policy never takes the shadow plan, the one-resource kernel
    # or a continuation) makes EASY's schedule when the slack is 0
    load = load_workload(str(bundled_trace()), resources=("cpus",), capacities={})
    easy = starts("policy p { reserve 1 backfill first_fit }", load)
    assert starts("policy p { reserve 1 backfill first_fit slack 0 }", load) == easy
    relaxed = starts("policy p { reserve 1 backfill first_fit slack job.estimate / 10 }",
                     load)
    assert relaxed != easy


def test_the_example_runs_unstopped_with_and_without_the_fast_paths() -> None:
    policy = to_runtime(compile_file(EXAMPLE))
    assert policy.slack is not None and not one_resource.eligible(policy, 1)
    load = load_workload(str(bundled_trace()), resources=("cpus",), capacities={})
    fast = simulate(policy, load)  # the monitor is on: no reservation held past its slack
    plain = simulate(policy, load, fast=False, incremental=False)
    assert [(r.job.id, r.start) for r in fast.records] == [
        (r.job.id, r.start) for r in plain.records]


def test_monitor_stops_a_start_beyond_the_slack_and_names_it() -> None:
    # `backfill when` ignores the plan: job 3 (1000 s <= 20 min) starts and delays job 2
    # from 100 to 1002, beyond 100 + 5 min
    text = "policy p { reserve 1 backfill when job.estimate <= 20min slack 5min }"
    with pytest.raises(MonitorViolation) as stop:
        starts(text, DESIGN_CASE)
    assert stop.value.kind == "reservation-safety"
    assert "reservation of job 2 at t=400 (its earliest fit t=100 plus its slack of 300 s) " \
           "delayed" in str(stop.value)
    # a slack that covers job 3's run: no stop
    assert starts(text.replace("5min", "15min + 2s"), DESIGN_CASE)[3] == 2


def test_the_planted_bug_is_stopped_on_a_trace() -> None:
    load = load_workload(str(bundled_trace()), resources=("cpus",), capacities={})
    with pytest.raises(MonitorViolation, match="plus its slack of 300 s"):
        simulate(to_runtime(compile_file(SHORT)), load)


def test_syntax_round_trip_and_slack_stays_a_name() -> None:
    text = "param slack: int = 3\npolicy p { reserve 1 backfill first_fit slack " \
           "job.estimate / 10 + slack }\n"
    tree = parse(text, "<t>")
    assert parse(module(tree), "<t>") == tree
    policy = compile_source(text, "<t>")
    assert policy.slack is not None and [p.name for p in policy.params] == ["slack"]


@pytest.mark.parametrize(("text", "message"), [
    ("policy p { reserve 1 backfill best by job.estimate slack 10 }",
     "`slack` needs `backfill first_fit` or `when`"),
    ("policy p { reserve 1 slack 10 }", "`slack` needs `backfill first_fit` or `when`"),
    ("policy p { backfill first_fit slack 10 }", "`slack` needs reservations"),
    ("policy p { reserve 1 backfill first_fit slack job.wait > 1 }", "`slack`"),
    ("policy p { reserve 1 backfill first_fit slack 1 slack 2 }", "`slack` is given twice"),
    ("policy c { reserve all backfill first_fit slack 5 }\n"
     "policy d { reserve all backfill first_fit }\n"
     "policy t { candidates c, d metric artww }", "does not plan every waiting job"),
])
def test_misuse_is_a_located_error(text: str, message: str) -> None:
    result = check_source(text, "t.pol")
    assert not result.ok
    assert any(message in d.message and d.line is not None for d in result.diagnostics), [
        d.message for d in result.diagnostics]
    with pytest.raises(DiagnosticError):
        compile_source(text, "t.pol", "t" if "candidates" in text else None)
