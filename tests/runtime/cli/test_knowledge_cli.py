"""`--knowledge none|demand|speedup|both` (papers/003's knowledge cases) from the command
line: a policy that reads what the run withholds is refused before the run, every read a
located diagnostic, exit status 2 and no traceback; `both`, the default, runs as before;
the knowledge is in the run's provenance."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from schedc.dsl import DiagnosticError
from schedc.runtime.cli.errors import EXIT_USER_ERROR
from schedc.runtime.cli.main import main
from schedc.runtime.run import OptionError, RunOptions, prepare_run
from tests.support.repo import EXAMPLES, ROOT

LSF_MIG = EXAMPLES / "preemption" / "lsf-mig.pol"
CLI = [sys.executable, "-m", "schedc.runtime.cli.main"]


def jobs(tmp_path: Path) -> Path:
    path = tmp_path / "jobs.csv"
    path.write_text("# capacity cpus=4\nid,submit,run_time,estimate,cpus\n"
                    "1,0,1000,1000,4\n2,100,10,10,2\n3,200,50,60,2\n")
    return path


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_withheld_read_refuses_the_run_located_and_without_a_traceback(tmp_path):
    done = subprocess.run([*CLI, "run", str(LSF_MIG), "--workload", str(jobs(tmp_path)),
                           "--param", "demand=true", "--knowledge", "none"],
                          cwd=ROOT, capture_output=True, text=True, env={"NO_COLOR": "1"})
    assert done.returncode == EXIT_USER_ERROR and done.stdout == ""
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == ("error: policy lsf_mig reads `job.estimate` in its order, the jobs' "
                        "service demand, which this run withholds (--knowledge none)")
    assert lines[1].endswith("lsf-mig.pol:19:29")
    assert lines[3].startswith("19 |   order     (if demand then job.estimate")
    assert lines[4] == "   |                             ^^^^^^^^^^^^"
    assert lines[5] == ("help: run with --knowledge demand (or both), or with "
                        "--param demand=false")


def test_the_param_that_guards_the_read_lets_the_run_go(capsys, tmp_path):
    code, out, err = run_cli(capsys, "run", LSF_MIG, "--workload", jobs(tmp_path),
                             "--knowledge", "none", "--json")
    assert code == 0, err
    assert json.loads(out)["provenance"]["options"]["knowledge"] == "none"


def test_every_read_is_reported_at_once(capsys, tmp_path):
    code, out, err = run_cli(capsys, "run", EXAMPLES / "easy-sjf.pol", "--workload",
                             jobs(tmp_path), "--knowledge", "speedup")
    assert code == EXIT_USER_ERROR and out == ""
    assert err.count("error: policy easy_sjf reads") == 2 and "2 errors" in err
    assert "easy-sjf.pol:6:9" in err and "easy.pol:8:3" in err


def test_both_is_the_default_and_changes_nothing(capsys, tmp_path):
    runs = []
    for extra in ((), ("--knowledge", "both")):
        code, out, err = run_cli(capsys, "run", EXAMPLES / "easy-sjf.pol", "--workload",
                                 jobs(tmp_path), "--json", *extra)
        assert code == 0, err
        runs.append(json.loads(out))
    first, second = runs
    assert first["provenance"]["options"]["knowledge"] == "both"
    del first["provenance"]["command"], second["provenance"]["command"]
    assert first == second


def test_a_policy_that_reads_nothing_runs_the_same_under_any_knowledge(capsys, tmp_path):
    metrics = set()
    for knowledge in ("none", "demand", "speedup", "both"):
        code, out, err = run_cli(capsys, "run", EXAMPLES / "firstfit.pol", "--workload",
                                 jobs(tmp_path), "--json", "--knowledge", knowledge)
        assert code == 0, err
        metrics.add(json.dumps(json.loads(out)["metrics"], sort_keys=True))
    assert len(metrics) == 1


def test_compare_refuses_an_entry_that_reads_what_is_withheld(capsys, tmp_path):
    code, out, err = run_cli(capsys, "compare", EXAMPLES / "firstfit.pol",
                             EXAMPLES / "easy.pol", "--workload", jobs(tmp_path),
                             "--knowledge", "none")
    assert code == EXIT_USER_ERROR and out == ""
    assert "policy easy reads the jobs' estimates to plan its reservations (`reserve 1`)" in err


def test_an_unknown_knowledge_is_refused(capsys, tmp_path):
    assert main(["run", str(EXAMPLES / "fcfs.pol"), "--knowledge", "all"]) == EXIT_USER_ERROR
    assert "--knowledge: invalid choice: 'all'" in capsys.readouterr().err
    with pytest.raises(OptionError, match="--knowledge all: no such knowledge"):
        prepare_run(EXAMPLES / "fcfs.pol", jobs(tmp_path), RunOptions(knowledge="all"))


def test_a_state_replayed_is_checked_with_its_params(tmp_path):
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"now": 0, "capacity": {"cpus": 4}, "running": [],
                                 "queue": [{"id": 1, "submit": 0, "estimate": 10,
                                            "run_time": 5, "request": {"cpus": 4}}]}))
    with pytest.raises(DiagnosticError, match="reads the jobs' estimates"):
        prepare_run(EXAMPLES / "easy.pol", None, RunOptions(state=str(state),
                                                            knowledge="speedup"))
    prepare_run(EXAMPLES / "fcfs.pol", None, RunOptions(state=str(state), knowledge="none"))
