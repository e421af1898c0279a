"""A run's warnings: what compiles and runs but is likely not meant is said on standard
error, once each, never changing an exit status; the shipped examples raise none."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedc.dsl import check_source, compile_source
from schedc.runtime.cli.main import main
from schedc.runtime.results.metrics import compute_metrics
from schedc.runtime.run import RunOptions, run_policy
from tests.support.repo import EXAMPLES

RESERVE_NO_BACKFILL = "policy p { reserve 1 }\npolicy q extends p { order job.procs }\n"


def _main(argv: list[str], capsys) -> tuple[int, str, str]:
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("depth", ["1", "3", "all", "d"])
def test_reserve_without_backfill_warns_at_the_reserve_clause(depth: str):
    src = f"param d: int in [0, 4] = 1\npolicy p {{ reserve {depth} }}"
    (w,) = check_source(src).diagnostics
    assert w.severity == "warning" and (w.line, w.col) == (2, 12)
    assert f"`reserve {depth}` does nothing without a backfill clause" in w.message
    assert "backfill first_fit" in w.help
    assert compile_source(src).warnings == (w,)


@pytest.mark.parametrize("clauses", ["reserve 0", "reserve 1 backfill first_fit",
                                     "reserve all backfill best by job.estimate",
                                     "backfill none", ""])
def test_no_warning_when_the_clauses_mean_what_they_say(clauses: str):
    assert check_source(f"policy p {{ {clauses} }}").diagnostics == ()


def test_check_prints_the_warning_once_to_stderr_and_exits_0(tmp_path: Path, capsys):
    pol = tmp_path / "p.pol"
    pol.write_text(RESERVE_NO_BACKFILL)
    status, out, err = _main(["check", str(pol)], capsys)
    assert status == 0 and out == f"ok: {pol} (p, q)\n"
    assert err.count("warning:") == 1 and f"--> {pol}:1:12" in err and "help:" in err
    assert "error" not in err


def test_run_and_verify_print_the_warning_once_with_their_exit_status(
        tmp_path: Path, three_jobs: Path, capsys):
    pol = tmp_path / "p.pol"
    pol.write_text(RESERVE_NO_BACKFILL)
    status, out, err = _main(["run", str(pol), "--policy", "q", "--workload",
                              str(three_jobs), "--json"], capsys)
    assert status == 0 and err.count("warning:") == 1 and out.startswith("{")
    status, out, err = _main(["verify", str(pol), "--policy", "q", "--queued", "1",
                              "--running", "1", "--property", "progress"], capsys)
    assert status == 0 and err.count("warning:") == 1


def test_an_error_and_a_warning_still_fail_check(tmp_path: Path, capsys):
    pol = tmp_path / "p.pol"
    pol.write_text("policy p { reserve 1 }\npolicy r { order nope }\n")
    status, _, err = _main(["check", str(pol)], capsys)
    assert status == 2 and "warning:" in err and "error:" in err


def test_the_shipped_examples_raise_no_warning(capsys):
    files = sorted(str(p) for p in EXAMPLES.glob("*.pol"))
    status, _, err = _main(["check", *files], capsys)
    assert status == 0 and err == ""


def test_a_size_clause_on_a_rigid_workload_warns(three_jobs: Path, capsys):
    pol = EXAMPLES / "robust-moldable.pol"
    status, _, err = _main(["run", str(pol), "--workload", str(three_jobs), "--json"], capsys)
    assert status == 0 and "no job of the workload is moldable" in err
    assert f"--> {pol}" in err and "--range-factor" in err
    status, _, err = _main(["run", str(pol), "--workload", str(three_jobs), "--json",
                            "--range-factor", "2"], capsys)
    assert status == 0 and "moldable" not in err
    status, _, err = _main(["run", str(EXAMPLES / "easy.pol"), "--workload",
                            str(three_jobs), "--json"], capsys)
    assert status == 0 and err == ""  # a rigid policy on a rigid workload: nothing to say


@pytest.mark.parametrize(("text", "lenient", "words"), [
    ("; MaxProcs: 8\n", [], "the workload has no job: every metric is 0"),
    ("; MaxProcs: 8\nbad line\n", ["--lenient"], "no job left after skipping 1"),
])
def test_an_empty_workload_warns_and_exits_0(tmp_path: Path, capsys, text: str,
                                             lenient: list[str], words: str):
    trace = tmp_path / "t.swf"
    trace.write_text(text)
    status, out, err = _main(["run", str(EXAMPLES / "easy.pol"), "--workload", str(trace),
                              "--json", *lenient], capsys)
    assert status == 0 and words in err and f"--> {trace}" in err and "help:" in err
    assert '"jobs": 0' in out


def test_compare_reports_each_warning_once(tmp_path: Path, capsys):
    trace = tmp_path / "t.swf"
    trace.write_text("; MaxProcs: 8\n")
    status, _, err = _main(["compare", str(EXAMPLES / "easy.pol"), str(EXAMPLES / "fcfs.pol"),
                            "--workload", str(trace), "--json"], capsys)
    assert status == 0 and err.count("warning: the workload has no job") == 1


# --- time units --------------------------------------------------------------------------

def _table(tmp_path: Path, unit: str | None, scale: int) -> Path:
    """Two jobs on 4 cpus, the second waiting for the first: times multiplied by ``scale``."""
    path = tmp_path / f"t{scale}.csv"
    head = f"# time-unit {unit}\n" if unit else ""
    rows = [(1, 0, 20, 20, 4), (2, 1, 5, 5, 4)]
    path.write_text(head + "# capacity cpus=4\nid,submit,run_time,estimate,cpus\n" + "".join(
        f"{i},{s * scale},{r * scale},{e * scale},{c}\n" for i, s, r, e, c in rows))
    return path


def test_a_table_in_hundredths_reports_the_metrics_of_the_same_table_in_seconds(
        tmp_path: Path):
    policy = EXAMPLES / "fcfs.pol"
    in_s = run_policy(policy, _table(tmp_path, None, 1), RunOptions())
    in_cs = run_policy(policy, _table(tmp_path, "1/100 s", 100), RunOptions())
    assert in_cs.workload.time_unit == pytest.approx(0.01)
    a, b = in_s.metrics(), in_cs.metrics()
    assert a["max_wait"] == 19 and b["max_wait"] == 19.0  # 1900 units of 1/100 s
    for key in ("mean_wait", "mean_response", "makespan", "artww", "weighted_response",
                "mean_bounded_slowdown", "utilisation", "mean_queue", "category_jobs",
                "median_wait", "p99_wait", "p95_response", "p90_bounded_slowdown",
                "class_jobs", "class_mean_response", "class_mean_bounded_slowdown"):
        assert b[key] == pytest.approx(a[key]), key
    assert a["p99_wait"] == 19 and b["p99_wait"] == 19.0
    assert compute_metrics(in_cs.schedule).makespan == 25.0
    assert [r.start for r in in_cs.schedule.records] == [0, 2000]  # simulated in units


@pytest.mark.parametrize("line", ["# time-unit", "# time-unit 0 s", "# time-unit x s",
                                  "# time-unit 1/100", "# time-unit -1 s"])
def test_a_bad_time_unit_is_located_with_help(tmp_path: Path, capsys, line: str):
    path = tmp_path / "t.csv"
    path.write_text(f"{line}\nid,submit,run_time,estimate,cpus\n1,0,1,1,1\n")
    status, _, err = _main(["run", str(EXAMPLES / "fcfs.pol"), "--workload", str(path),
                            "--capacity", "cpus=4"], capsys)
    assert status == 2 and f"{path}:1:1" in err and "help: write `# time-unit 1/100 s`" in err
    assert "Traceback" not in err


def test_generate_records_the_time_scale_and_run_reports_seconds(tmp_path: Path, capsys):
    out = tmp_path / "g.csv"
    assert main(["workload", "generate", "-o", str(out), "--jobs", "50", "--utilisation",
                 "0.5", "--time-scale", "100"]) == 0
    assert out.read_text().splitlines()[0] == "# time-unit 1/100 s"
    capsys.readouterr()
    status, _, err = _main(["run", str(EXAMPLES / "easy.pol"), "--workload", str(out),
                            "--capacity", "cpus=64", "--json"], capsys)
    assert status == 0 and "units of 1/100 s" in err and "36 s" in err
    plain = tmp_path / "p.csv"
    assert main(["workload", "generate", "-o", str(plain), "--jobs", "5",
                 "--utilisation", "0.5"]) == 0
    assert not plain.read_text().startswith("#")
