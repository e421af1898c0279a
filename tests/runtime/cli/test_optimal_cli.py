"""`schedc optimal`: its table and --json on a state, sampled instants of a run, and a
located error (exit 2, no traceback) for each mistake."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from schedc.runtime.cli.main import main
from tests.support.repo import ROOT

EXAMPLES = ROOT / "examples"
PLANNING = [EXAMPLES / f"{n}.pol" for n in ("conservative", "conservative-sjf",
                                            "conservative-ljf")]
STATE = {
    "now": 2, "capacity": {"cpus": 10},
    "running": [{"id": 1, "submit": 0, "start": 0, "estimate": 100, "run_time": 100,
                 "request": {"cpus": 6}}],
    "queue": [{"id": 2, "submit": 1, "estimate": 100, "run_time": 100, "request": {"cpus": 10}},
              {"id": 3, "submit": 2, "estimate": 1000, "run_time": 1000,
               "request": {"cpus": 4}},
              {"id": 4, "submit": 2, "estimate": 50, "run_time": 50, "request": {"cpus": 5}}],
}


@pytest.fixture
def state(tmp_path: Path) -> Path:
    path = tmp_path / "state.json"
    path.write_text(json.dumps(STATE))
    return path


def run_cli(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_state_prints_the_optimum_the_policies_and_the_plan(capsys, state: Path) -> None:
    code, out, _ = run_cli(capsys, "optimal", *PLANNING, "--state", state, "--workers", 1)
    assert code == 0
    for text in ("optimal", "422.210526", "conservative_sjf", "0.9757", "0.5093",
                 "optimal plan"):
        assert text in out, out


def test_json_of_a_state(capsys, state: Path) -> None:
    code, out, _ = run_cli(capsys, "optimal", *PLANNING, "--state", state, "--json",
                           "--metric", "sldwa", "--workers", 1)
    assert code == 0
    (inst,) = json.loads(out)["instances"]
    # FCFS planning is optimal here: job 2 at 100 (when job 1 ends), then 3 and 4 together
    assert inst["starts"] == {"2": 100, "3": 200, "4": 200}
    assert inst["status"] == "optimal" and inst["gap"] == 0
    assert inst["objective"] == inst["bound"] == round((10 * 199 + 4 * 1198 + 5 * 248) / 19, 6)
    assert inst["policies"]["conservative"]["quality"] == 1
    assert inst["policies"]["conservative_ljf"]["quality"] < 1
    assert json.loads(out)["provenance"]["schedc"]


def test_sampled_instants_of_the_bundled_trace(capsys) -> None:
    code, out, _ = run_cli(capsys, "optimal", PLANNING[0], "--workload",
                           ROOT / "runtime" / "data" / "KTH-SP2-1996-2.1-cln.swf.gz",
                           "--steps", 2, "--max-jobs", 6, "--time-limit", 2, "--workers", 2,
                           "--json")
    assert code == 0
    instances = json.loads(out)["instances"]
    assert len(instances) == 2 and instances[0]["now"] < instances[1]["now"]
    for inst in instances:
        assert 2 <= inst["jobs"] <= 6 and inst["status"] in ("optimal", "feasible")
        assert inst["policies"]["conservative"]["quality"] <= 1


@pytest.mark.parametrize(("args", "fragments"), [
    ([], ["give either --state or --workload"]),
    (["--state", "S", "--workload", "W"], ["not both"]),
    (["--state", "S", "--steps", "2"], ["--steps and --at apply to --workload"]),
    (["--workload", "W"], ["either --steps N or --at"]),
    (["--workload", "W", "--at", "1,x"], ["--at '1,x'"]),
    (["--workload", "W", "--at", "-3"], ["not a list of instants"]),
    (["--state", "S", "--time-limit", "0"], ["--time-limit 0: must be positive"]),
    (["--state", "S", "--workers", "0"], ["--workers 0"]),
    (["--workload", "W", "--steps", "0"], ["--steps 0"]),
    (["--workload", "W", "--steps", "2", "--min-jobs", "5", "--max-jobs", "3"],
     ["1 <= min <= max"]),
])
def test_option_mistakes(capsys, state: Path, args: list[str], fragments: list[str]) -> None:
    args = [str(state) if a == "S" else a for a in args]
    code, _, err = run_cli(capsys, "optimal", PLANNING[0], *args)
    assert code == 2 and "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, err


def test_a_policy_without_a_full_plan(capsys, state: Path) -> None:
    code, _, err = run_cli(capsys, "optimal", EXAMPLES / "easy.pol", "--state", state)
    assert code == 2 and "policy easy has no full plan" in err and "reserve all" in err


def test_a_bad_entry_and_a_missing_file(capsys, state: Path) -> None:
    code, _, err = run_cli(capsys, "optimal", f"{PLANNING[0]}:no-name", "--state", state)
    assert code == 2 and "is not a policy name" in err
    code, _, err = run_cli(capsys, "optimal", PLANNING[0], "--state", "missing.json")
    assert code == 2 and "missing.json" in err and "Traceback" not in err


def test_a_state_of_other_resources(capsys, tmp_path: Path) -> None:
    path = tmp_path / "gpus.json"
    path.write_text(json.dumps({**STATE, "capacity": {"cpus": 10, "gpus": 2}}))
    code, _, err = run_cli(capsys, "optimal", PLANNING[0], "--state", path)
    assert code == 2 and "Traceback" not in err and "gpus" in err, err


def test_no_instant_in_the_range(capsys) -> None:
    code, _, err = run_cli(capsys, "optimal", PLANNING[0], "--workload",
                           ROOT / "runtime" / "data" / "KTH-SP2-1996-2.1-cln.swf.gz",
                           "--steps", 1, "--min-jobs", 100000, "--max-jobs", 100000)
    assert code == 2 and "no submission of the run has" in err


def test_run_does_not_import_ortools() -> None:
    code = ("import sys; from schedc.runtime.cli.main import main; "
            "main(['run', 'examples/conservative.pol', '--no-progress', '--json']); "
            "assert 'ortools' not in sys.modules, 'ortools imported'")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
