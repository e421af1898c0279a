"""dynP policies whose candidates differ in kind: a `size fixed` candidate beside rigid
ones, and tuned invariants that read a param no candidate reads. Each case is a bug the
verify-and-simulate fuzzer found once it drew dynP policies (``fuzz_verify.py
--tuned-rate``): a crash packing rigid requests, a crash binding the invariant's param,
a counterexample of the `size fixed` candidate that `run --state` refused, and a pass the
run skipped by the first candidate's rigid sizes while a later, sizing one was active."""

from __future__ import annotations

import json

import pytest

from schedc.runtime.cli.main import main
from schedc.runtime.engine.monitor import MonitorViolation
from schedc.runtime.run import RunOptions, run_policy
from tests.support.policy_fuzz import GenConfig, fuzz_seed

MIXED = """\
param cap: int in [1, 100] = 50

policy rigid {
  order job.estimate asc
  reserve all
  backfill first_fit
}

policy sized {
  reserve all
  backfill first_fit
  size fixed job.procs
}

policy sized_first {
  candidates sized, rigid
  metric artww
}

policy rigid_first {
  candidates rigid, sized
  metric artww
}

policy capped {
  candidates sized, rigid
  metric artww
  invariant queue.count <= cap
}
"""


@pytest.fixture
def mixed(tmp_path):
    path = tmp_path / "mixed.pol"
    path.write_text(MIXED)
    return str(path)


def run(path: str, name: str, **params: str):
    return run_policy(path, None, RunOptions(policy_name=name, limit=400,
                                             params=dict(params)))


@pytest.mark.parametrize("name", ["sized_first", "rigid_first"])
def test_a_sized_candidate_beside_a_rigid_one_runs(mixed, name):
    # `size fixed job.procs` sizes every job as it asked: both candidates are conservative
    # planning, in FCFS and SJF order, so the run switches and each pass runs
    result = run(mixed, name)
    tuning = result.schedule.tuning
    assert tuning is not None and tuning.switches
    assert all(0 < share < 1 for _, share in tuning.share)
    assert all(r.alloc[0] == r.job.procs for r in result.schedule.records)


def test_a_tuned_invariant_binds_its_param_in_every_candidate(mixed):
    assert run(mixed, "capped").schedule.tuning is not None  # cap = 50 holds here
    with pytest.raises(MonitorViolation, match=r"queue.count <= cap"):
        run(mixed, "capped", cap="2")


def test_a_sized_candidates_counterexample_replays_from_the_command_line(
        tmp_path, capsys):
    # the first candidate chooses no size: the state's kept sizes are the active one's
    path = tmp_path / "mixed.pol"
    path.write_text(MIXED.replace("  size fixed job.procs\n",
                                  "  size fixed job.procs\n  invariant running.count >= 2\n"))
    cex = tmp_path / "cex"
    assert main(["verify", str(path), "--policy", "rigid_first",
                 "--counterexamples", str(cex)]) == 1
    (state,) = cex.glob("*.json")
    data = json.loads(state.read_text())
    assert data["active"] == "sized" and all("size" in j for j in data["queue"])
    capsys.readouterr()
    assert main(["run", str(path), "--policy", "rigid_first", "--state", str(state)]) == 1
    assert "invariant `running.count >= 2`" in capsys.readouterr().err


@pytest.mark.parametrize("seed", [8, 25, 35])
def test_fuzzed_dynp_policies_agree_with_the_simulator(seed):
    # seed 8: a `size fixed` first candidate (the packing crash); 25 and 35: counterexamples
    # of a `size fixed` candidate (the refused state)
    result = fuzz_seed(seed, GenConfig(tuned_rate=1.0))
    assert result.compile_error is None
    assert result.disagreements == (), [d.category for d in result.disagreements]
    assert result.agreed_stops > 0  # the runs did reach the invariants


def test_the_fuzzed_policy_whose_counterexample_did_not_replay_agrees_now():
    # seed 2030 of `fuzz_verify.py --tuned-rate 0.3`: a size-bounds counterexample of the
    # second candidate that the tuned policy's run passed over (the rigid-size shortcut)
    result = fuzz_seed(2030, GenConfig(tuned_rate=0.3))
    assert result.compile_error is None and result.disagreements == ()
    assert result.agreed_stops > 0


SIZING_LATER = """\
policy rigid {
  reserve all
  backfill first_fit
}

policy fitting {
  reserve all
  backfill first_fit
  size min(job.procs, machine.free.cpus)
}

policy tuned {
  candidates rigid, fitting
  metric artww
}
"""


def _state(tmp_path, running_cpus: int) -> str:
    state = {"now": 0, "capacity": {"cpus": 4}, "active": "fitting",
             "running": [{"id": 1, "submit": 0, "start": 0, "estimate": 100,
                          "run_time": 100, "request": {"cpus": running_cpus}}],
             "queue": [{"id": 2, "submit": 0, "estimate": 10, "run_time": 10,
                        "request": {"cpus": 2}, "min_size": 1, "max_size": 2}]}
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state))
    return str(path)


def test_a_later_candidate_that_sizes_jobs_makes_its_pass_when_no_request_fits(tmp_path):
    """The machine skipped a pass when no queued request fitted the free cpus, by the first
    candidate's rigid sizes; the active one, sizing, starts the job on the 1 cpu free
    (found by fuzz_verify --tuned-rate: its counterexample did not replay)."""
    path = tmp_path / "p.pol"
    path.write_text(SIZING_LATER)
    result = run_policy(str(path), None, RunOptions(policy_name="tuned",
                                                    state=_state(tmp_path, 3)))
    job = next(r for r in result.schedule.records if r.job.id == 2)
    assert (job.start, job.alloc[0]) == (0, 1)
    # with no cpu free the size rule gives 0: the pass runs, and the monitor stops it
    with pytest.raises(MonitorViolation, match="size 0 is outside"):
        run_policy(str(path), None, RunOptions(policy_name="tuned",
                                               state=_state(tmp_path, 4)))

