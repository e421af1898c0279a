"""`schedc.runtime.run.run_policy`, the one way to run a policy: what `schedc run` prints is
its result, and a compiled policy or a loaded workload runs the same as their files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedc.dsl import DiagnosticError, compile_file
from schedc.runtime.cli.main import main
from schedc.runtime.results import report
from schedc.runtime.run import OptionError, RunOptions, load_for, prepared_policy, run_policy
from schedc.runtime.workloads.load import load_workload
from schedc.runtime.workloads.moldable import MoldableSpec
from tests.support.repo import ROOT

EASY = ROOT / "examples" / "easy.pol"
def test_the_cli_prints_run_policys_result(capsys, three_jobs: Path) -> None:
    argv = ("run", str(EASY), "--workload", str(three_jobs), "--range-factor", "2",
            "--sigma", "1", "--load-factor", "125", "--json")
    options = RunOptions(moldable=MoldableSpec(2.0, 1.0, 125.0), command=argv)
    result = run_policy(str(EASY), str(three_jobs), options)
    assert main(list(argv)) == 0
    assert json.loads(capsys.readouterr().out) == report.run_json(result)
    assert result.wall >= 0 and result.metrics()["jobs"] == 3


def test_a_compiled_policy_and_a_loaded_workload_run_as_their_files(three_jobs: Path) -> None:
    by_files = run_policy(str(EASY), str(three_jobs))
    policy = compile_file(str(EASY))
    workload = load_workload(three_jobs)
    loaded = run_policy(policy, workload)
    assert loaded.metrics() == by_files.metrics()
    assert loaded.policy_file == "" and by_files.policy_file == str(EASY)


def test_runs_on_one_machine_share_the_workload_read(three_jobs: Path) -> None:
    cache: dict = {}
    options = RunOptions(limit=2)
    first = run_policy(str(EASY), str(three_jobs), options, cache)
    again = run_policy(str(ROOT / "examples" / "conservative.pol"), str(three_jobs), options,
                       cache)
    assert len(cache) == 1 and first.workload is again.workload
    assert len(first.workload.jobs) == 2
    policy = prepared_policy(str(EASY), options)
    assert load_for(policy, str(three_jobs), options, cache) is first.workload


def test_an_option_that_does_not_fit_is_a_diagnostic(three_jobs: Path) -> None:
    with pytest.raises(OptionError) as caught:
        run_policy(str(EASY), str(three_jobs), RunOptions(capacities={"memroy": 4}))
    assert isinstance(caught.value, DiagnosticError)
    (d,) = caught.value.diagnostics
    assert d.message == "--capacity memroy: the policy's machine has no resource `memroy`"
    assert d.help is not None and d.file is None
    with pytest.raises(OptionError, match="workload file not found"):
        run_policy(str(EASY), str(three_jobs) + ".missing")
