"""Bad input on the preemption surfaces (issue 44): settings out of range, costs past the
times schedc holds exactly, and states a policy cannot replay each end in a located
diagnostic (exit 2) or a located monitor stop (exit 1), never exit 70 or a hang."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedc.runtime.cli.main import main

JOBS = "# capacity cpus=1\nid,submit,run_time,estimate,cpus\n1,0,100,100,1\n2,10,100,100,1\n"


def policy(tmp_path: Path, *settings: str, params: str = "", mechanism: str = "suspend"
           ) -> Path:
    """Least attained service on the machine, with ``settings`` added."""
    path = tmp_path / "p.pol"
    path.write_text(params + "policy las {\n  order job.acquired asc\n  reserve 0\n"
                    f"  backfill first_fit\n  mechanism {mechanism}\n  preempt by order\n"
                    + "".join(f"  {s}\n" for s in settings) + "}\n")
    return path


def jobs(tmp_path: Path) -> Path:
    path = tmp_path / "jobs.csv"
    path.write_text(JOBS)
    return path


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("setting", "params", "col", "words"), [
    ("limit preemptions -lim", "param lim: int in [1, 10] = 3\n", 21,
     "`limit preemptions` is -3 with `lim` = 3"),
    ("resident -rows", "param rows: int = 2\n", 12, "`resident` is -2 with `rows` = 2"),
    ("resident 0", "", 12, "`resident` is 0: it must be at least 1"),
    ("resident -1", "", 12, "`resident` is -1: it must be at least 1"),
    ("limit preemptions -3", "", 21, "`limit preemptions` is -3: it must be at least 0"),
    ("quantum -5", "", 11, "`quantum` is -5: it must be from 0 to 10^15"),
    ("subset 0", "", 10, "`subset` is 0: it must be at least 1"),
    ("cost dispatch 1e308", "", 17, "`cost dispatch` is 1e+308: it must be from 0 to 10^15"),
    ("cost checkpoint 1e308", "", 19, "`cost checkpoint` is 1e+308"),
    ("cost dispatch 1e16", "", 17, "`cost dispatch` is 1e+16: it must be from 0 to 10^15"),
])
def test_a_setting_out_of_range_stops_check_run_and_verify(
        tmp_path: Path, capsys, setting: str, params: str, col: int, words: str) -> None:
    extra = ("leftover equal",) if setting.startswith("subset") else ()
    pol = policy(tmp_path, setting, *extra, params=params,
                 mechanism="checkpoint" if "checkpoint" in setting else "suspend")
    line = params.count("\n") + 7
    for argv in (["check", pol], ["run", pol, "--workload", jobs(tmp_path)],
                 ["verify", pol, "--queued", "1", "--running", "1"]):
        code, out, err = run_cli(capsys, *argv)
        assert code == 2, (argv, err)
        assert f"--> {pol}:{line}:{col}" in err and words in err and "help:" in err
        assert "Traceback" not in err and "internal error" not in err


def test_a_param_bound_out_of_a_settings_range_is_located_at_the_setting(
        tmp_path: Path, capsys) -> None:
    pol = policy(tmp_path, "limit preemptions lim", "cost resume c",
                 params="param lim: int = 3\nparam c: real = 5\n")
    code, _, err = run_cli(capsys, "check", pol)
    assert code == 0, err
    code, out, err = run_cli(capsys, "run", pol, "--workload", jobs(tmp_path), "--param",
                             "lim=-1", "--param", "c=1e300")
    assert code == 2 and out == ""
    assert f"--> {pol}:9:21" in err and "`limit preemptions` is -1 with `lim` = -1" in err
    assert f"--> {pol}:10:15" in err and "`cost resume` is 1e+300 with `c` = 1e+300" in err
    assert "2 errors" in err


def test_a_job_cost_past_the_exact_range_is_a_monitor_stop(tmp_path: Path, capsys) -> None:
    pol = policy(tmp_path, "cost dispatch job.estimate * 1e300", mechanism="checkpoint")
    code, _, err = run_cli(capsys, "check", pol)
    assert code == 0  # it reads the job: checked where the run evaluates it
    code, out, err = run_cli(capsys, "run", pol, "--workload", jobs(tmp_path))
    assert code == 1, err
    assert ("t=0: policy las: `cost dispatch` is at least 10^302 s for job 1: its dispatch "
            "would end past 10^15 s") in err


def test_a_dispatch_may_end_at_the_exact_range_not_past_it(tmp_path: Path, capsys) -> None:
    pol = policy(tmp_path, "cost dispatch 1e15 - job.submit")
    code, out, err = run_cli(capsys, "run", pol, "--workload", jobs(tmp_path))
    # job 1's dispatch ends at 10^15 exactly; job 2 starts when job 1 ends, 100 s later
    assert code == 1, err
    assert ("t=1000000000000100: policy las: `cost dispatch` is 999,999,999,999,990 s for "
            "job 2: its dispatch would end past 10^15 s") in err


def test_limit_0_preempts_no_job_and_quantum_0_is_no_quantum(tmp_path: Path, capsys) -> None:
    def preemptions(*settings: str) -> tuple[int, dict]:
        code, out, err = run_cli(capsys, "run", policy(tmp_path, *settings), "--workload",
                                 jobs(tmp_path), "--json")
        assert code == 0, err
        result = json.loads(out)
        return result["preemption"]["suspensions"], result

    assert preemptions()[0] >= 1  # job 2 suspends job 1 at 10
    assert preemptions("limit preemptions 0")[0] == 0
    # `quantum 0`: no timed pass, the same run as without the clause
    _, without = preemptions()
    _, zero = preemptions("quantum 0")
    assert zero["passes"] == without["passes"] and zero["metrics"] == without["metrics"]
    _, timed = preemptions("quantum 5")
    assert timed["passes"] > without["passes"]


STATE = """{
  "now": 10,
  "capacity": {"cpus": 4},
  "running": [{"id": 1, "submit": 0, "start": 0, "estimate": 100, "run_time": 100,
               "request": {"cpus": 2}, "processors": [0, 1]}],
  "suspended": [{"id": 2, "submit": 0, "estimate": 50, "run_time": 50,
                 "request": {"cpus": 2}, "processors": [1, 2]}]
}
"""


@pytest.mark.parametrize(("mechanism", "setting", "where", "words"), [
    ("checkpoint", "resident 4", (6, 24), "job 2 is suspended in the state, but policy las "
                                          "gives it mechanism checkpoint"),
    ("suspend", "resident 1", (7, 56), "processor 1 holds the processes of 2 jobs in the "
                                       "state, more than policy las's `resident` 1"),
])
def test_a_state_the_policy_cannot_replay_is_located_in_the_state(
        tmp_path: Path, capsys, mechanism: str, setting: str, where: tuple[int, int],
        words: str) -> None:
    state = tmp_path / "s.json"
    state.write_text(STATE)
    code, out, err = run_cli(capsys, "run", policy(tmp_path, setting, mechanism=mechanism),
                             "--state", state)
    assert code == 2 and out == ""
    line, col = where  # job 2's id; the processors that put a second job on processor 1
    assert f"--> {state}:{line}:{col}" in err, err
    assert words in err and "help:" in err and "Traceback" not in err
