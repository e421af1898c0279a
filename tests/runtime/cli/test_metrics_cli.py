"""The metrics papers report, from the command line: --bsld-tau, --warmup, --cooldown on
`run`, `compare` and `plot`; the new keys in --json and compare --csv; the terminal tables
and the HTML pages."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from schedc.runtime.cli.main import build_parser, main
from schedc.runtime.results.metrics import Cut
from schedc.runtime.results.provenance import read_csv
from tests.support.repo import ROOT

EXAMPLES = ROOT / "examples"

# The 3-job trace (tiny_traces.THREE_JOBS_SWF, all jobs of user 1) under easy: starts 0, 100,
# 200; waits 0, 99, 198; responses 100, 199, 1198; run times 100, 100, 1000; 6, 10, 4 procs.

NEW_KEYS = [
    "measured", "warmup_jobs", "cooldown_jobs", "bsld_tau",
    "median_wait", "p90_wait", "p95_wait", "p99_wait",
    "median_response", "p90_response", "p95_response", "p99_response",
    "median_bounded_slowdown", "p90_bounded_slowdown", "p95_bounded_slowdown",
    "p99_bounded_slowdown",
    "users", "user_bsld_std", "user_bsld_min", "user_bsld_max", "user_bsld_max_over_min",
    "class_jobs", "class_mean_response", "class_mean_bounded_slowdown",
]
OLD_KEYS = [
    "jobs", "skipped", "mean_wait", "max_wait", "mean_response", "mean_slowdown",
    "mean_bounded_slowdown", "utilisation", "makespan", "artww", "sldwa", "mean_queue",
    "weighted_response", "category_jobs", "category_mean_response",
]


def run_cli(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, three_jobs: Path, *flags: str) -> dict:
    code, out, err = run_cli(capsys, "run", EXAMPLES / "easy.pol", "--workload", three_jobs,
                             "--json", *flags)
    assert code == 0, err
    return json.loads(out)["metrics"]


def test_json_keeps_the_old_keys_first_and_appends_the_new(capsys, three_jobs: Path) -> None:
    m = run_json(capsys, three_jobs)
    assert list(m) == OLD_KEYS + NEW_KEYS
    assert (m["measured"], m["warmup_jobs"], m["cooldown_jobs"], m["bsld_tau"]) == (3, 0, 0, 10)
    # nearest rank of 3 values: the median is the 2nd, the others the 3rd
    assert (m["median_wait"], m["p90_wait"], m["p99_response"]) == (99, 198, 1198)
    # bounded slowdowns 100/100 = 1, 199/100 = 1.99, 1198/1000 = 1.198
    assert (m["median_bounded_slowdown"], m["p95_bounded_slowdown"]) == (1.198, 1.99)
    # the policy reads no label, yet the user is read: one user, no spread
    assert (m["users"], m["user_bsld_std"]) == (1, 0.0)
    assert m["user_bsld_min"] == m["user_bsld_max"] == pytest.approx((1 + 1.99 + 1.198) / 3)
    # all short (<= 1 h); 6 and 4 procs narrow, 10 wide
    assert m["class_jobs"] == [2, 1, 0, 0]
    assert m["class_mean_response"] == [(100 + 1198) / 2, 199, None, None]


def test_bsld_tau_changes_the_metric_and_its_label(capsys, three_jobs: Path) -> None:
    m = run_json(capsys, three_jobs, "--bsld-tau", "200")
    # 100/200 and 199/200 are bounded to 1; 1198/1000 stays
    assert m["mean_bounded_slowdown"] == pytest.approx((1 + 1 + 1.198) / 3)
    assert m["bsld_tau"] == 200
    assert run_json(capsys, three_jobs, "--bsld-tau", "2.5min")["bsld_tau"] == 150
    assert run_json(capsys, three_jobs, "--bsld-tau", "0.5")["bsld_tau"] == 0.5
    code, out, _ = run_cli(capsys, "run", EXAMPLES / "easy.pol", "--workload", three_jobs,
                           "--bsld-tau", "200")
    assert code == 0
    assert "mean bounded slowdown (200 s)" in out and "(10 s)" not in out
    assert "bounded slowdown (200 s)" in out.split("percentiles")[1]


def test_warmup_and_cooldown_by_jobs_and_by_time(capsys, three_jobs: Path) -> None:
    m = run_json(capsys, three_jobs, "--warmup", "1")
    assert (m["jobs"], m["measured"], m["warmup_jobs"], m["cooldown_jobs"]) == (3, 2, 1, 0)
    assert m["mean_wait"] == (99 + 198) / 2
    # submitted less than 1 s after the first (job 1), less than 1 s before the last (job 3)
    m = run_json(capsys, three_jobs, "--warmup", "1s", "--cooldown", "1s")
    assert (m["measured"], m["warmup_jobs"], m["cooldown_jobs"]) == (1, 1, 1)
    assert m["mean_wait"] == 99 and m["class_jobs"] == [0, 1, 0, 0]
    code, out, _ = run_cli(capsys, "run", EXAMPLES / "easy.pol", "--workload", three_jobs,
                           "--cooldown", "2")
    assert code == 0
    assert "jobs measured" in out and "jobs left out: cool-down" in out
    # nothing left out: no such rows
    code, out, _ = run_cli(capsys, "run", EXAMPLES / "easy.pol", "--workload", three_jobs)
    assert "jobs measured" not in out and "short narrow" in out


def test_the_terminal_table_shows_percentiles_and_categories(capsys, three_jobs: Path) -> None:
    code, out, _ = run_cli(capsys, "run", EXAMPLES / "easy.pol", "--workload", three_jobs)
    assert code == 0
    assert "percentiles (nearest rank)" in out
    assert "per width x length category (short: run <= 1 h, narrow: <= 8 procs)" in out
    assert "per-user mean bsld: std dev" in out
    assert "median_wait" not in out and "bsld_tau" not in out  # labels, not keys


@pytest.mark.parametrize(("flag", "value", "message"), [
    ("--bsld-tau", "0", "'0' is not more than 0 seconds"),
    ("--bsld-tau", "-5", "'-5' is not a number of seconds"),
    ("--bsld-tau", "ten", "'ten' is not a number of seconds"),
    ("--bsld-tau", "nan", "'nan' is not a number of seconds"),
    ("--warmup", "2x", "'2x' is neither a number of jobs"),
    ("--warmup", "-1", "'-1' is neither a number of jobs"),
    ("--cooldown", "1.5h", "'1.5h' is neither a number of jobs"),
    ("--cooldown", "2 days", "'2 days' is neither a number of jobs"),
])
def test_a_bad_value_is_a_user_error(capsys, three_jobs: Path, flag: str, value: str,
                                     message: str) -> None:
    code, _, err = run_cli(capsys, "run", EXAMPLES / "easy.pol", "--workload", three_jobs,
                           flag, value)
    assert code == 2
    assert f"argument {flag}: {message}" in err
    assert "Traceback" not in err


def test_leaving_out_every_job_is_refused_before_the_run(capsys, three_jobs: Path) -> None:
    code, _, err = run_cli(capsys, "run", EXAMPLES / "easy.pol", "--workload", three_jobs,
                           "--warmup", "2", "--cooldown", "1d")
    assert code == 2
    assert ("--warmup 2 jobs and --cooldown 86400 s leave out all 3 jobs of the workload "
            "(2 warm-up, 1 cool-down): no job is left to measure") in err
    code, _, err = run_cli(capsys, "compare", EXAMPLES / "easy.pol", EXAMPLES / "fcfs.pol",
                           "--workload", three_jobs, "--warmup", "3")
    assert code == 2 and "--warmup 3 jobs leaves out all 3 jobs" in err


def test_compare_csv_carries_every_scalar_metric(capsys, three_jobs: Path,
                                                 tmp_path: Path) -> None:
    table = tmp_path / "cmp.csv"
    code, out, err = run_cli(capsys, "compare", EXAMPLES / "fcfs.pol", EXAMPLES / "easy.pol",
                             "--workload", three_jobs, "--csv", table, "--json",
                             "--bsld-tau", "60", "--warmup", "1")
    assert code == 0, err
    runs = json.loads(out)["policies"]
    _, rows = read_csv(table)
    scalars = [k for k, v in runs[0]["metrics"].items() if not isinstance(v, list)]
    assert list(rows[0]) == ["policy", *scalars]
    assert set(NEW_KEYS) - set(scalars) == {"class_jobs", "class_mean_response",
                                            "class_mean_bounded_slowdown"}
    assert [(r["bsld_tau"], r["warmup_jobs"], r["measured"]) for r in rows] == [
        ("60", "1", "2")] * 2


def test_compare_table_still_fits_100_columns(three_jobs: Path) -> None:
    from rich.console import Console

    from schedc.runtime.results.report import print_compare
    from schedc.runtime.run import RunOptions, run_policy

    options = RunOptions(bsld_tau=60, warmup=Cut(1))
    results = [run_policy(EXAMPLES / p, three_jobs, options) for p in ("fcfs.pol", "easy.pol")]
    buffer = io.StringIO()
    print_compare(results, console=Console(file=buffer, width=100))
    lines = buffer.getvalue().splitlines()
    assert max(map(len, lines)) <= 100
    # the headline columns only (--csv and --json carry the rest): one table, none split off
    assert sum("policy" in line for line in lines) == 1


@pytest.mark.parametrize("command", [["run", "p.pol"], ["compare", "p.pol"],
                                     ["plot", "run", "p.pol", "-o", "x.png"],
                                     ["plot", "compare", "p.pol", "-o", "x.png"]])
def test_every_simulating_command_takes_the_metric_flags(command: list[str]) -> None:
    args = build_parser().parse_args([*command, "--bsld-tau", "30", "--warmup", "2d",
                                      "--cooldown", "100"])
    assert (args.bsld_tau, args.warmup, args.cooldown) == (
        30, Cut(172800, "seconds"), Cut(100))
    defaults = build_parser().parse_args(command)
    assert (defaults.bsld_tau, defaults.warmup, defaults.cooldown) == (10, None, None)


def test_help_says_the_syntax(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--warmup N|DURATION" in text and "--bsld-tau SECONDS" in text
    assert "N jobs, or a duration (90s, 30min, 12h, 2d" in text


def test_the_html_pages_carry_the_new_tables(three_jobs: Path) -> None:
    from schedc.runtime.results.html_report.compare import compare_page
    from schedc.runtime.results.html_report.run import run_page
    from schedc.runtime.run import RunOptions, run_policy

    options = RunOptions(bsld_tau=60, cooldown=Cut(1))
    result = run_policy(EXAMPLES / "easy.pol", three_jobs, options)
    page = run_page(result, figures=False).html()
    assert "<h2>Percentiles (nearest rank)</h2>" in page
    assert "Per width x length category (short: run &lt;= 1 h" in page
    assert "mean bounded slowdown (60 s)" in page and "(10 s)" not in page
    assert "jobs left out: cool-down" in page and "per-user mean bsld: max / min" in page
    other = run_policy(EXAMPLES / "fcfs.pol", three_jobs, options)
    page = compare_page([result, other], ["easy", "fcfs"], figures=False).html()
    assert "<h2>Every metric</h2>" in page and "wait (s): 99th percentile" in page
    assert "bounded slowdown (60 s): median" in page
    assert "Mean bounded slowdown per width x length category" in page
