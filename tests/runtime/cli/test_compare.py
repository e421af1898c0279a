"""`schedc compare`: `FILE.pol:NAME` entries, `--vary` variants, every run checked before
the first simulation, and a table that stays whole on an 80-column terminal."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from schedc.runtime.cli.main import main
from schedc.runtime.results import report
from schedc.runtime.results.provenance import read_csv
from schedc.runtime.run import RunOptions, run_policy
from tests.support.repo import ROOT

EXAMPLES = ROOT / "examples"
DEPTH2 = EXAMPLES / "depth2.pol"
FCFS = EXAMPLES / "fcfs.pol"

MULTI = """\
param depth: int in [0, 8] = 1
param weight: int in [1, 10] = 1
policy easy_like { reserve depth backfill first_fit }
policy sjf { order job.estimate * weight asc reserve 1 backfill first_fit }
policy both { order job.estimate * weight asc reserve depth backfill first_fit }
"""

TWO_RESOURCES = """\
machine m {
  resource cpus
  resource gpus
}
policy two { machine m reserve 1 backfill first_fit }
"""


def run_cli(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_user_error(code: int, err: str, *fragments: str) -> None:
    assert code == 2
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, err


@pytest.fixture
def multi(tmp_path: Path) -> Path:
    path = tmp_path / "multi.pol"
    path.write_text(MULTI)
    return path


def labels_of(out: str) -> list[str]:
    return [p["label"] for p in json.loads(out)["policies"]]


# --- FILE.pol:NAME --------------------------------------------------------------------------


def test_an_entry_names_one_policy_of_a_file(capsys, multi: Path, three_jobs: Path) -> None:
    code, out, err = run_cli(capsys, "compare", f"{multi}:sjf", f"{multi}:easy_like", FCFS,
                             "--workload", three_jobs, "--json")
    assert code == 0, err
    result = json.loads(out)
    assert [p["policy"] for p in result["policies"]] == ["sjf", "easy_like", "fcfs"]
    assert [p["policy_file"] for p in result["policies"]] == [str(multi), str(multi),
                                                            str(FCFS)]


def test_a_file_of_several_policies_suggests_an_entry_not_a_flag(capsys, multi: Path,
                                                                  three_jobs: Path) -> None:
    code, _, err = run_cli(capsys, "compare", multi, "--workload", three_jobs)
    assert_user_error(code, err, "defines 3 policies: `easy_like`, `sjf`, `both`",
                      f"help: compare one of them as {multi}:NAME")
    assert "--policy" not in err


def test_an_unknown_policy_name_gets_did_you_mean(capsys, multi: Path,
                                                  three_jobs: Path) -> None:
    code, _, err = run_cli(capsys, "compare", f"{multi}:sjff", "--workload", three_jobs)
    assert_user_error(code, err, f"no policy `sjff` in {multi}", "help: did you mean `sjf`?")


def test_an_entry_whose_name_is_no_name(capsys, multi: Path, three_jobs: Path) -> None:
    code, _, err = run_cli(capsys, "compare", f"{multi}:2x", "--workload", three_jobs)
    assert_user_error(code, err, f"compare entry '{multi}:2x': `2x` is not a policy name",
                      "help: name a policy of the file as FILE.pol:NAME")


# --- --vary ---------------------------------------------------------------------------------


def test_vary_runs_the_policy_once_per_value(capsys, three_jobs: Path) -> None:
    code, out, err = run_cli(capsys, "compare", DEPTH2, "--vary", "depth=0,1",
                             "--workload", three_jobs, "--json")
    assert code == 0, err
    result = json.loads(out)
    assert labels_of(out) == ["depth2 depth=0", "depth2 depth=1"]
    for value, entry in zip((0, 1), result["policies"], strict=True):
        alone = run_policy(str(DEPTH2), str(three_jobs),
                           RunOptions(params={"depth": str(value)}))
        assert entry["metrics"] == alone.metrics()
        assert entry["provenance"]["params"] == {"depth": {"value": value, "from": "given"}}
    # depth 0 starts the 4-cpu job at 2, so the 10-cpu job waits for it until 1002; depth 1
    # (EASY) reserves the 10-cpu job at 100 and the 4-cpu job waits until 200
    assert [p["metrics"]["max_wait"] for p in result["policies"]] == [1001, 198]


def test_vary_runs_every_combination_and_entries_without_the_params_once(
        capsys, multi: Path, three_jobs: Path) -> None:
    code, out, err = run_cli(capsys, "compare", f"{multi}:both", f"{multi}:sjf", FCFS,
                             "--vary", "depth=0,1", "--vary", "weight=1,2",
                             "--workload", three_jobs, "--json")
    assert code == 0, err
    assert labels_of(out) == [
        "both depth=0 weight=1", "both depth=0 weight=2", "both depth=1 weight=1",
        "both depth=1 weight=2", "sjf weight=1", "sjf weight=2", "fcfs"]
    params = [p["provenance"]["params"] for p in json.loads(out)["policies"]]
    assert params[1] == {"depth": {"value": 0, "from": "given"},
                         "weight": {"value": 2, "from": "given"}}
    assert params[-1] == {}


def test_vary_takes_what_param_takes(capsys, three_jobs: Path, tmp_path: Path) -> None:
    policy = tmp_path / "r.pol"
    policy.write_text("param target: real in [0, 2] = 1\n"
                      "policy r { order job.estimate * target asc reserve 1 "
                      "backfill first_fit }\n")
    code, out, err = run_cli(capsys, "compare", policy, "--vary", "target=0.5,1/3",
                             "--workload", three_jobs, "--json")
    assert code == 0, err
    assert labels_of(out) == ["r target=0.5", "r target=1/3"]
    values = [p["provenance"]["params"]["target"]["value"]
              for p in json.loads(out)["policies"]]
    assert values == ["0.5", "1/3 (about 0.333333)"]


def test_a_varied_param_no_entry_declares_is_an_error(capsys, three_jobs: Path) -> None:
    code, _, err = run_cli(capsys, "compare", DEPTH2, FCFS, "--vary", "dpeth=1,2",
                           "--workload", three_jobs)
    assert_user_error(code, err, "--vary dpeth: no policy compared declares a param `dpeth` "
                      f"({DEPTH2}, {FCFS})", "help: did you mean `depth`?")


@pytest.mark.parametrize(("vary", "extra", "message"), [
    ("depth", [], "--vary 'depth' is not of the form NAME=VALUE"),
    ("depth=1,,2", [], "--vary 'depth=1,,2': an empty value"),
    ("depth=1", ["--vary", "depth=2"], "--vary depth is given twice"),
    ("depth=1,2", ["--param", "depth=4"], "param `depth` is given by both --param and --vary"),
])
def test_a_malformed_vary_is_a_diagnostic(capsys, three_jobs: Path, vary: str,
                                          extra: list[str], message: str) -> None:
    code, _, err = run_cli(capsys, "compare", DEPTH2, "--vary", vary, *extra,
                           "--workload", three_jobs)
    assert_user_error(code, err, message, "help:")


# --- every run checked first ----------------------------------------------------------------


def test_every_run_is_checked_before_the_first_simulation(capsys, monkeypatch,
                                                          three_jobs: Path,
                                                          tmp_path: Path) -> None:
    import schedc.runtime.engine.simulator as simulator

    simulated = []
    monkeypatch.setattr(simulator, "simulate", lambda *a, **k: simulated.append(a))
    two = tmp_path / "two.pol"
    two.write_text(TWO_RESOURCES)
    code, _, err = run_cli(capsys, "compare", FCFS, EXAMPLES / "easy.pol", DEPTH2, two,
                           "--vary", "depth=1,99", "--workload", three_jobs)
    # the second variant and the two-resource policy are wrong, and both are reported
    assert_user_error(code, err, f"{DEPTH2} depth=99: value 99 for param `depth` is outside",
                      f"{two}: SWF has no resource `gpus`", "2 errors")
    assert simulated == []


def test_one_mistake_of_every_run_is_reported_once(capsys, three_jobs: Path) -> None:
    code, _, err = run_cli(capsys, "compare", FCFS, DEPTH2, "--capacity", "gpus=2",
                           "--workload", three_jobs)
    assert_user_error(code, err, f"error: {FCFS}, {DEPTH2}: --capacity gpus: the policy's "
                      "machine has no resource `gpus`")
    assert err.count("error:") == 1


# --- the table ------------------------------------------------------------------------------


BIG_TIMES_SWF = """\
; MaxProcs: 10
1 0 -1 1000000 6 -1 -1 6 1000000 -1 1 1 1 1 1 -1 -1 -1
2 1 -1 1000000 10 -1 -1 10 1000000 -1 1 1 1 1 1 -1 -1 -1
3 2 -1 10000000 4 -1 -1 4 10000000 -1 1 1 1 1 1 -1 -1 -1
"""


def test_the_table_fits_80_columns_and_cuts_nothing(tmp_path: Path, multi: Path) -> None:
    trace = tmp_path / "big.swf"
    trace.write_text(BIG_TIMES_SWF)
    labels, results = [], []
    for depth in (0, 1):
        options = RunOptions(policy_name="both", params={"depth": str(depth), "weight": "10"})
        results.append(run_policy(str(multi), str(trace), options))
        labels.append(f"both depth={depth} weight=10")
    console = Console(width=80, file=io.StringIO(), color_system=None)
    report.print_compare(results, labels, console=console)
    text = console.file.getvalue()
    assert "…" not in text
    assert max(map(len, text.splitlines())) <= 80
    assert text.count("┏") > 1  # the metrics went over more than one table
    for label in labels:
        assert text.count(label) == text.count("┏")  # every table names every run
    for result in results:
        for key, _ in report.compare_columns(results):
            assert report._format(result.metrics()[key], short=True) in text


def test_the_compare_csv_starts_with_the_runs_provenance(capsys, multi: Path,
                                                         three_jobs: Path,
                                                         tmp_path: Path) -> None:
    table = tmp_path / "cmp.csv"
    code, out, err = run_cli(capsys, "compare", f"{multi}:easy_like", FCFS, "--vary",
                             "depth=0,1", "--workload", three_jobs, "--csv", table, "--json")
    assert code == 0, err
    header, rows = read_csv(table)
    result = json.loads(out)
    assert [r["policy"] for r in rows] == ["easy_like depth=0", "easy_like depth=1", "fcfs"]
    assert header == {**result["provenance"],
                      "runs": [p["provenance"] for p in result["policies"]]}
    assert header["workload"]["jobs"] == 3 and header["command"][0] == "compare"
    assert [r["policy"]["name"] for r in header["runs"]] == ["easy_like", "easy_like", "fcfs"]


def test_runs_on_different_machines_each_name_theirs(tmp_path: Path) -> None:
    table = tmp_path / "t.csv"
    table.write_text("# capacity cpus=8 memory=64\nid,submit,run_time,estimate,cpus,memory\n"
                     "1,0,10,10,2,8\n2,1,10,10,8,64\n")
    results = [run_policy(str(EXAMPLES / name), str(table), RunOptions())
               for name in ("easy.pol", "easy-memory.pol")]
    console = Console(width=200, file=io.StringIO(), color_system=None)
    report.print_compare(results, console=console)
    text = console.file.getvalue()
    assert "t.csv (cpus=8)" not in text  # no one machine in the title
    assert "easy (cpus=8) " in text and "easy_memory (cpus=8, memory=" in text
    console = Console(width=200, file=io.StringIO(), color_system=None)
    report.print_compare(results[:1] * 2, ["a", "b"], console=console)
    assert "t.csv (cpus=8)" in console.file.getvalue()  # one machine: in the title
