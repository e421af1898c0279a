"""Damaged inputs of every kind end in a located diagnostic (or a run), never a crash.

A short campaign of tests/support/input_fuzz.py's mutations (benchmarks/fuzz_inputs.py runs
long ones), and the inputs such campaigns found, pinned one by one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.input_fuzz import (
    SWF,
    parts_campaign,
    plot_campaign,
    policy_campaign,
    preemptive_campaign,
    run_cli,
    state_campaign,
    sweep_campaign,
    workload_campaign,
)
from tests.support.repo import ROOT

EXAMPLES = sorted((ROOT / "examples").glob("*.pol"))
RUNNABLE = [ROOT / "examples" / f"{name}.pol"
            for name in ("easy", "conservative", "easy-memory", "map", "fairshare", "depth2")]


def no_crash(outcomes) -> int:
    count = 0
    for outcome in outcomes:
        assert not outcome.bad, f"{outcome.argv}: exit {outcome.code}\n{outcome.error or ''}" \
                                f"{outcome.stderr[-2000:]}"
        count += 1
    return count


@pytest.mark.parametrize("seed", [1, 2])
def test_damaged_policies(tmp_path: Path, seed: int) -> None:
    assert no_crash(policy_campaign(EXAMPLES, tmp_path, runs=25, seed=seed)) >= 25


@pytest.mark.parametrize("seed", [1, 2])
def test_damaged_workloads(tmp_path: Path, seed: int) -> None:
    assert no_crash(workload_campaign(RUNNABLE, tmp_path, runs=30, seed=seed)) == 30


PREEMPTIVE = sorted((ROOT / "examples" / "preemption").glob("*.pol"))


@pytest.mark.parametrize("seed", [1, 2])
def test_preemptive_settings_out_of_range(tmp_path: Path, seed: int) -> None:
    assert no_crash(preemptive_campaign(PREEMPTIVE, tmp_path, runs=20, seed=seed)) >= 20


@pytest.mark.parametrize("seed", [1, 2])
def test_damaged_partial_executions(tmp_path: Path, seed: int) -> None:
    assert no_crash(parts_campaign(RUNNABLE, tmp_path, runs=25, seed=seed)) == 25


def test_damaged_state_files(tmp_path: Path) -> None:
    assert no_crash(state_campaign(RUNNABLE, tmp_path, runs=30, seed=1)) == 30


@pytest.mark.parametrize("seed", [1, 2])
def test_damaged_sweep_specs(tmp_path: Path, seed: int) -> None:
    assert no_crash(sweep_campaign(ROOT / "examples" / "depth2.pol",
                                   ROOT / "examples" / "firstfit.pol", tmp_path, runs=30,
                                   seed=seed)) == 30


def test_damaged_plot_options_and_summaries(tmp_path: Path) -> None:
    assert no_crash(plot_campaign(ROOT / "examples" / "depth2.pol", tmp_path, runs=20,
                                  seed=1)) == 21


def test_the_campaign_sees_an_internal_error(tmp_path: Path, monkeypatch) -> None:
    """The check itself can fail: an exception inside a command is reported as bad."""
    from schedc.runtime.cli import main

    def broken(args):
        raise ZeroDivisionError("planted")

    monkeypatch.setitem(main.COMMANDS, "check", broken)
    outcome = run_cli(["check", str(EXAMPLES[0])])
    assert outcome.bad and "planted" in (outcome.error or "")


# --- inputs found by the campaigns --------------------------------------------------------

def test_an_import_path_with_a_nul_character(tmp_path: Path) -> None:
    policy = tmp_path / "p.pol"
    policy.write_text('import "a\0b.pol"\npolicy p { order job.submit asc }\n')
    outcome = run_cli(["check", str(policy)])
    assert outcome.code == 2 and outcome.error is None
    assert f"{policy}:1:1" in outcome.stderr
    assert "cannot contain a NUL character" in outcome.stderr and "help:" in outcome.stderr


def test_a_state_file_nested_too_deep(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    state.write_text('{"now": ' + "[" * 100_000 + "]" * 100_000 + "}")
    outcome = run_cli(["run", str(RUNNABLE[0]), "--state", str(state)])
    assert outcome.code == 2 and outcome.error is None
    assert f"{state}:1:" in outcome.stderr and "nests more than 32 levels" in outcome.stderr
    # the 200,000-character line is shown as a window around the caret, not whole
    assert max(len(line) for line in outcome.stderr.splitlines()) < 200


def test_a_long_source_line_is_shown_around_the_caret(tmp_path: Path) -> None:
    policy = tmp_path / "p.pol"
    policy.write_text("policy p { order " + " + ".join(["job.procs"] * 40) + " + job.sumbit }\n")
    outcome = run_cli(["check", str(policy)])
    assert outcome.code == 2
    lines = outcome.stderr.splitlines()
    shown = next(line for line in lines if line.startswith("1 | "))
    caret = lines[lines.index(shown) + 1]
    assert len(shown) < 120 and shown.startswith("1 | …")
    start = caret.index("^")
    assert shown[start:start + len("sumbit")] == "sumbit" and caret.count("^") == len("sumbit")


def test_tabs_and_control_characters_keep_the_caret_under_its_column(tmp_path: Path) -> None:
    policy = tmp_path / "p.pol"
    policy.write_text("policy p {\n\torder\tjob.sumbit asc\n}\n")
    outcome = run_cli(["check", str(policy)])
    lines = outcome.stderr.splitlines()
    shown = next(line for line in lines if line.startswith("2 | "))
    caret = lines[lines.index(shown) + 1]
    assert "\t" not in shown
    assert shown[caret.index("^"):].startswith("sumbit")


@pytest.mark.parametrize("value", ["1e400", "nan", "inf"])
@pytest.mark.parametrize("option", ["--range-factor", "--sigma", "--load-factor",
                                    "--background-load"])
def test_a_number_option_must_be_finite(tmp_path: Path, option: str, value: str) -> None:
    trace = tmp_path / "t.swf"
    trace.write_text(SWF)
    outcome = run_cli(["run", str(RUNNABLE[0]), "--workload", str(trace), option, value])
    assert outcome.code == 2 and outcome.error is None
    assert f"argument {option}: '{value}' is not a finite number" in outcome.stderr


def test_an_argument_with_a_nul_character(tmp_path: Path) -> None:
    outcome = run_cli(["compile", str(RUNNABLE[0]), "-o", "a\0b"])
    assert outcome.code == 2 and outcome.error is None
    assert "contains a NUL character" in outcome.stderr


def test_a_trace_given_as_the_policy() -> None:
    trace = ROOT / "runtime" / "data" / "KTH-SP2-1996-2.1-cln.swf.gz"
    for command in ("check", "run", "verify"):
        outcome = run_cli([command, str(trace)])
        assert outcome.code == 2 and outcome.error is None
        assert "is a gzip-compressed file, not a policy" in outcome.stderr
        assert "--workload" in outcome.stderr


def test_an_swf_or_csv_file_given_as_the_policy(tmp_path: Path) -> None:
    for name, kind in (("t.swf", "an SWF trace"), ("t.CSV", "a job table")):
        (tmp_path / name).write_text(SWF)
        outcome = run_cli(["run", str(tmp_path / name)])
        assert outcome.code == 2 and outcome.error is None
        assert f"is a workload ({kind}), not a policy" in outcome.stderr
        assert "--workload" in outcome.stderr and "`workloads`" in outcome.stderr


def test_a_policy_given_as_the_workload() -> None:
    outcome = run_cli(["run", str(RUNNABLE[0]), "--workload", str(RUNNABLE[1])])
    assert outcome.code == 2 and outcome.error is None
    assert "a policy file where a workload belongs" in outcome.stderr


@pytest.mark.parametrize(("row", "message"), [
    ("easy\n", "1 cells where the table has 2 columns"),
    ("easy,100,3.5,x\n", "4 cells where the table has 2 columns"),
])
def test_a_damaged_summary_row_is_located(tmp_path: Path, row: str, message: str) -> None:
    """Found by the plot campaign: `plot sweep` on a summary.csv edited since crashed."""
    (tmp_path / "summary.csv").write_text('# schedc: "0"\npolicy,load_factor\n' + row)
    outcome = run_cli(["plot", "sweep", str(tmp_path), "--x", "load_factor", "--y",
                       "mean_wait", "-o", str(tmp_path / "f.png")])
    assert outcome.code == 2 and outcome.error is None
    assert message in outcome.stderr and "summary.csv:3:1" in outcome.stderr
    assert "make it again" in outcome.stderr


def test_a_damaged_summary_header_is_located(tmp_path: Path) -> None:
    (tmp_path / "summary.csv").write_text("# schedc: 0.1.0\npolicy,load_factor\n")
    outcome = run_cli(["plot", "sweep", str(tmp_path), "--x", "load_factor", "--y",
                       "mean_wait", "-o", str(tmp_path / "f.png")])
    assert outcome.code == 2 and outcome.error is None
    assert "a header line is `# KEY: VALUE`, its value JSON" in outcome.stderr
    assert "summary.csv:1:1" in outcome.stderr
