"""Every formula of a preemptive policy is evaluated under the monitor: one that fails stops
the run with a `well-defined` stop (exit 1), never an internal error; a constant clause
(params only) that fails for the params given is refused, located (exit 2); and a formula's
value is the exact one the verifier reasons about (`job.progress`)."""

from __future__ import annotations

import pytest

from schedc.dsl import DiagnosticError, compile_source
from schedc.runtime.cli.main import main
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.monitor import MonitorViolation
from schedc.runtime.engine.preemptive import simulate_preemptive
from schedc.runtime.jobs import Job
from schedc.runtime.replay import replay_stop
from schedc.runtime.workloads.workload import Workload
from tests.support.failing_formulas import FAILING, policy


def workload(*jobs: tuple[int, int, int, int], cpus: int = 2) -> Workload:
    """(submit, run, estimate, procs) per job."""
    return Workload(tuple(Job(i + 1, i, s, r, e, (p,)) for i, (s, r, e, p) in enumerate(jobs)),
                    ("cpus",), (cpus,))


def run(text: str, load: Workload, params: dict[str, str] | None = None):
    runtime = to_runtime(compile_source(text, "t.pol"), params)
    assert runtime.preemption is not None
    return simulate_preemptive(runtime, runtime.preemption, load)


# Job 1 (1 cpu) starts at 0; job 2 (2 cpus) arrives at 10 and waits for it (or, first in
# the order, preempts it until 15): every formula is evaluated for job 1 by then
TWO = workload((0, 100, 100, 1), (10, 5, 5, 2))
STOPS = {
    "mechanism": "t=0: policy p: mechanism failed for job 1",
    "keep": "t=10: policy p: keep failed for job 1",
    "order key": "t=0: policy p: order key failed for job 1",
    "cost dispatch": "t=0: policy p: cost dispatch failed for job 1",
    "cost resume": "t=15: policy p: cost resume failed for job 1",
    "cost checkpoint": "t=10: policy p: cost checkpoint failed for job 1",
    "victims order": "t=10: policy p: victims order failed for job 1",
    "the preemption rule": "t=10: policy p: the preemption rule failed for jobs 2 and 1",
    "size": "t=0: policy p: size failed for job 1",
}


def test_every_place_a_formula_is_evaluated_is_covered() -> None:
    assert set(STOPS) == set(FAILING)


@pytest.mark.parametrize("what", STOPS)
def test_a_formula_that_fails_stops_the_run_where_it_is_evaluated(what: str) -> None:
    with pytest.raises(MonitorViolation) as stop:
        run(FAILING[what], TWO)
    assert stop.value.kind == "well-defined"
    assert str(stop.value).startswith(STOPS[what]), str(stop.value)


def test_a_mechanism_names_its_clause() -> None:
    with pytest.raises(MonitorViolation) as stop:
        run(FAILING["mechanism"], TWO)
    assert "the condition of `mechanism suspend` (t.pol:5:3): division by zero" in str(
        stop.value)


def test_a_mechanism_that_fails_in_a_state_stops_its_replay() -> None:
    """A state's job has its mechanism chosen where the state meets it: the replay stops
    (`well-defined`, as the verifier's counterexample says) instead of refusing the state."""
    state = {"now": 0, "capacity": {"cpus": 2},
             "queue": [{"id": 1, "submit": 0, "estimate": 5, "run_time": 5,
                        "request": {"cpus": 1}}]}
    stop = replay_stop(compile_source(FAILING["mechanism"], "t.pol"), state)
    assert stop.kind == "well-defined" and "t=0" in stop.message


@pytest.mark.parametrize("clause", ["limit preemptions 10 div (c - 1)", "resident 10 div (c - 1)",
                                    "quantum 10 div (c - 1)", "subset 10 div (c - 1)",
                                    "leftover efficient when 10 / (c - 1) > 1"])
def test_a_constant_clause_without_a_value_is_refused_located(clause: str) -> None:
    text = policy("mechanism checkpoint", "preempt by order", clause,
                  params="param c: int = 2\n")
    assert run(text, TWO).schedule.records  # defined at the default
    with pytest.raises(DiagnosticError) as err:
        run(text, TWO, {"c": "1"})
    d = err.value.diagnostics[0]
    assert (d.line, d.col) == (8, text.splitlines()[7].index("10") + 1)
    assert "has no value with" in d.message and "1" in d.message and "by zero" in d.message


def test_progress_is_exact_for_a_job_at_its_request() -> None:
    """The issue's case: at t=13 job 1 (23 s, its estimate) has done exactly 13/23 of its
    work, `progress * estimate - since_start` is 0 and its `sqrt` defined (a float made it
    -1.8e-15 and stopped the run)."""
    text = policy("mechanism suspend",
                  "keep sqrt(job.progress * job.estimate - job.since_start) >= 0",
                  "preempt by order")
    done = run(text, workload((0, 23, 23, 1), (13, 5, 5, 1), cpus=1))
    assert {r.job.id: (r.start, r.end) for r in done.schedule.records} == {1: (0, 23),
                                                                          2: (23, 28)}


def test_the_cli_stops_a_failing_mechanism_with_exit_1(tmp_path, capsys) -> None:
    pol = tmp_path / "crash.pol"
    pol.write_text(FAILING["mechanism"])
    jobs = tmp_path / "jobs.csv"
    jobs.write_text("# capacity cpus=2\nid,submit,run_time,estimate,cpus\n1,0,100,100,2\n"
                    "2,10,5,5,1\n")
    assert main(["run", str(pol), "--workload", str(jobs)]) == 1
    err = capsys.readouterr().err
    assert "t=10: policy p: mechanism failed for job 2" in err and "internal" not in err
