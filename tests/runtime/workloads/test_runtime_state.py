"""Replaying a machine state (`runtime/workloads/state_file.py`, `simulate(initial=...)`,
`run --state`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedc.dsl import compile_file, compile_source
from schedc.runtime.cli.main import main
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.monitor import MonitorViolation
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.jobs import Job
from schedc.runtime.results.provenance import read_csv
from schedc.runtime.workloads.state_file import (
    load_state,
    merged_params,
    state_from_data,
    state_to_data,
)
from schedc.runtime.workloads.workload import Workload, WorkloadError
from tests.support.repo import ROOT

EASY = ROOT / "examples" / "easy.pol"
BROKEN = ROOT / "examples" / "broken" / "easy-freeprocs.pol"


def job(jid: int, submit: int, procs: int, est: int, **extra) -> dict:
    return {"id": jid, "submit": submit, "estimate": est, "run_time": est,
            "request": {"cpus": procs}, **extra}


def design_state() -> dict:
    """DESIGN's 3-job case at t=2: job 1 runs since 0; jobs 2 and 3 wait."""
    return {"now": 2, "capacity": {"cpus": 10},
            "running": [job(1, 0, 6, 100, start=0)],
            "queue": [job(2, 1, 10, 100), job(3, 2, 4, 1000)]}


def write_state(tmp_path: Path, data: dict | str) -> Path:
    path = tmp_path / "state.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=1))
    return path


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def policy(path: Path):
    return to_runtime(compile_file(path))


# -- the state and the simulator -----------------------------------------------------------

def test_load_builds_jobs_running_first_then_queue(tmp_path: Path) -> None:
    state = load_state(str(write_state(tmp_path, design_state())))
    assert state.now == 2 and state.capacities == (10,)
    assert [rj.job.id for rj in state.running] == [1] and state.running[0].start == 0
    assert [j.id for j in state.queue] == [2, 3]
    assert [j.index for j in state.workload.jobs] == [0, 1, 2]


def test_state_round_trips_through_its_data() -> None:
    data = {**design_state(), "params": {"depth": 2, "alpha": 0.5, "on": True}}
    state = state_from_data(data)
    assert state_from_data(state_to_data(state)) == state
    assert state_to_data(state) == data


def test_a_running_job_may_hold_another_size_than_it_asked() -> None:
    # a rigid job a size rule started on 8 cpus: it holds 8, its request stays 6 (what
    # formulas read), and the state writes it back
    data = design_state()
    data["queue"][1] = job(3, 2, 4, 50)  # short enough to backfill beside 6 busy cpus
    data["running"][0]["size"] = 8
    state = state_from_data(data)
    assert state.running[0].alloc == (8,) and state.running[0].job.request == (6,)
    assert state_to_data(state)["running"][0]["size"] == 8
    assert state_from_data(state_to_data(state)) == state

    def start_of_3(state) -> int:
        run = simulate(policy(EASY), state.workload, initial=state)
        return next(r.start for r in run.records if r.job.id == 3)

    assert start_of_3(state) == 200  # 2 cpus free: it waits for job 2 (100 to 200)
    del data["running"][0]["size"]
    assert start_of_3(state_from_data(data)) == 2  # 4 free: it backfills now


def test_replay_under_easy_starts_job_3_after_the_head() -> None:
    state = state_from_data(design_state())
    sched = simulate(policy(EASY), state.workload, initial=state)
    assert [(r.job.id, r.start) for r in sched.records] == [(1, 0), (2, 100), (3, 200)]


@pytest.mark.parametrize("kw", [dict(), dict(fast=False), dict(incremental=False)])
def test_replay_under_the_broken_policy_is_stopped(kw) -> None:
    state = state_from_data(design_state())
    with pytest.raises(MonitorViolation, match=r"t=2: .*reservation of job 2 .* delayed"):
        simulate(policy(BROKEN), state.workload, initial=state, **kw)


def test_first_pass_is_at_now_even_with_nothing_running() -> None:
    data = {"now": 50, "capacity": {"cpus": 10}, "queue": [job(7, 40, 4, 10)]}
    state = state_from_data(data)
    sched = simulate(policy(EASY), state.workload, initial=state)
    assert sched.records[0].start == 50


def test_a_running_job_ending_at_now_frees_its_cpus_before_the_pass() -> None:
    data = design_state()
    data["running"][0].update(run_time=2)  # ends exactly at now = 2
    state = state_from_data(data)
    sched = simulate(policy(EASY), state.workload, initial=state)
    assert [r.start for r in sched.records] == [0, 2, 102]


def test_later_arrivals_are_simulated_after_the_state() -> None:
    state = state_from_data(design_state())
    extra = Job(4, 3, 5, 10, 10, (1,))
    w = Workload(state.workload.jobs + (extra,), ("cpus",), (10,))
    sched = simulate(policy(EASY), w, initial=state)
    assert sched.records[3].start == 5  # 1 cpu for 10 s fits beside job 3 (4 procs) and 1
    early = Workload(state.workload.jobs + (Job(4, 3, 1, 10, 10, (1,)),), ("cpus",), (10,))
    with pytest.raises(WorkloadError, match="before the state's now"):
        simulate(policy(EASY), early, initial=state)


def test_the_policys_declared_capacity_must_match() -> None:
    pol = to_runtime(compile_source(
        "machine m { resource cpus = 8 }\npolicy p { machine m reserve 1 backfill first_fit }",
        "t.pol"))
    state = state_from_data({"now": 0, "capacity": {"cpus": 10}})
    with pytest.raises(WorkloadError, match="declares 8"):
        simulate(pol, state.workload, initial=state)


def test_params_of_the_state_are_defaults_for_the_command_line() -> None:
    state = state_from_data({**design_state(), "params": {"depth": 0, "on": False}})
    assert merged_params(state, {}) == {"depth": "0", "on": "false"}
    assert merged_params(state, {"depth": "1"}) == {"depth": "1", "on": "false"}


def test_other_resources_default_to_zero() -> None:
    data = {"now": 0, "capacity": {"cpus": 4, "memory": 100},
            "queue": [job(1, 0, 2, 10), {**job(2, 0, 1, 10), "request": {"cpus": 1,
                                                                         "memory": 60}}]}
    state = state_from_data(data, ("cpus", "memory"))
    assert [j.request for j in state.queue] == [(2, 0), (1, 60)]


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["running"][0].update(run_time=1), "already ended at 1"),
    (lambda d: d["running"][0].update(start=3), "start 3 is not between"),
    (lambda d: d.update(now=100), "killed at its estimated end 100"),
    (lambda d: d["queue"][1].update(submit=3), "submitted at 3, after now 2"),
    (lambda d: d["queue"][0].update(request={"cpus": 10, "gpus": 1}), "no resource `gpus`"),
    (lambda d: d["queue"][0].update(request={"cpus": 11}), "more than the capacity 10"),
    (lambda d: d["queue"][0].update(run_time=101), "exceeds its estimate"),
    (lambda d: d["queue"][0].update(id=1), "job id 1 is given twice"),
    (lambda d: d["queue"][0].update(submit=True), "is not an integer"),
    (lambda d: d["queue"][0].pop("estimate"), "missing field `estimate`"),
    (lambda d: d.update(qeue=[]), "did you mean `queue`?"),
    (lambda d: d.update(capacity={}), "missing resource `cpus`"),
    (lambda d: d["running"].append(job(9, 0, 6, 100, start=0)), "hold 12 `cpus`"),
    (lambda d: d.update(params={"x": "fast"}), "not a number or a bool"),
    (lambda d: d["running"][0].update(size=11), "cannot hold 11 cpus"),
    (lambda d: d["running"][0].update(size=0), "running[0].size"),
    (lambda d: d["running"].append(job(9, 0, 1, 100, start=0, size=5)), "hold 11 `cpus`"),
])
def test_field_errors_name_the_field_and_help(edit, message) -> None:
    data = design_state()
    edit(data)
    with pytest.raises(WorkloadError) as info:
        state_from_data(data, source="s.json")
    assert message in str(info.value)  # the message or its help
    assert info.value.help
    assert str(info.value).startswith("s.json: ")


# -- the command line ------------------------------------------------------------------------

def test_cli_broken_policy_exits_1_with_the_monitor_message(capsys, tmp_path: Path) -> None:
    code, _, err = run_cli(capsys, "run", BROKEN, "--state", write_state(tmp_path,
                                                                         design_state()))
    assert code == 1
    assert "runtime monitor" in err and "reservation of job 2" in err and "delayed" in err


def test_cli_easy_exits_0_and_job_3_starts_at_200(capsys, tmp_path: Path) -> None:
    out = tmp_path / "jobs.csv"
    code, _, err = run_cli(capsys, "run", EASY, "--state",
                           write_state(tmp_path, design_state()), "--jobs-out", out)
    assert code == 0, err
    rows = {int(r["job_id"]): int(r["start"]) for r in read_csv(out)[1]}
    assert rows == {1: 0, 2: 100, 3: 200}


def test_cli_param_overrides_the_states_param(capsys, tmp_path: Path) -> None:
    pol = tmp_path / "p.pol"
    pol.write_text("param depth: int in [0, 4] = 1\n"
                   "policy p { reserve depth backfill first_fit }\n")
    state = write_state(tmp_path, {**design_state(), "params": {"depth": 0}})
    out = tmp_path / "jobs.csv"

    def start3(*extra: str) -> int:
        code, _, err = run_cli(capsys, "run", pol, "--state", state, "--jobs-out", out,
                               *extra)
        assert code == 0, err
        return {int(r["job_id"]): int(r["start"]) for r in read_csv(out)[1]}[3]

    assert start3() == 2  # depth 0 from the file: plain first fit
    assert start3("--param", "depth=1") == 200  # EASY


def test_cli_malformed_json_has_line_and_column(capsys, tmp_path: Path) -> None:
    path = write_state(tmp_path, '{"now": 2,\n  "capacity": {"cpus": 10,}\n}\n')
    code, _, err = run_cli(capsys, "run", EASY, "--state", path)
    assert code == 2
    assert f"{path}:2:27" in err and "malformed JSON" in err and "help:" in err


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["running"][0].update(run_time=1), "already ended"),
    (lambda d: d["queue"][1].update(submit=3), "after now 2"),
    (lambda d: d["queue"][0].update(request={"cpu": 4}), "no resource `cpu`"),
])
def test_cli_state_errors_exit_2_with_help(capsys, tmp_path: Path, edit, message) -> None:
    data = design_state()
    edit(data)
    code, _, err = run_cli(capsys, "run", EASY, "--state", write_state(tmp_path, data))
    assert code == 2
    assert message in err and "help:" in err and "Traceback" not in err


@pytest.mark.parametrize("flag", ["--workload", "--capacity"])
def test_cli_state_excludes_workload_and_capacity(capsys, tmp_path: Path, flag: str) -> None:
    path = write_state(tmp_path, design_state())
    value = str(path) if flag == "--workload" else "cpus=10"
    code, _, err = run_cli(capsys, "run", EASY, "--state", path, flag, value)
    assert code == 2 and "--state" in err and "help:" in err


def test_cli_missing_state_file(capsys, tmp_path: Path) -> None:
    code, _, err = run_cli(capsys, "run", EASY, "--state", tmp_path / "nope.json")
    assert code == 2 and "state file not found" in err
