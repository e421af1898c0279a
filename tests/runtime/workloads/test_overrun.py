"""`--overrun`: jobs a trace records past their requested time, in each mode, against
schedules computed by hand; what every export says of how each job ended."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from schedc.runtime.cli.main import main
from schedc.runtime.run import RunOptions, run_policy
from schedc.runtime.workloads.load import load_workload
from schedc.runtime.workloads.overrun import apply_overrun, killed, overrun_facts

EASY = Path(__file__).parents[3] / "examples" / "easy.pol"

# 4 cpus. Job 1 asks 50 s and runs 100 s; job 4 gives no requested time (field 9 = -1).
OVER_SWF = """; MaxProcs: 4
1 0 -1 100 2 -1 -1 2 50 -1 1 1 1 -1 -1 -1 -1 -1
2 60 -1 10 4 -1 -1 4 10 -1 1 2 1 -1 -1 -1 -1 -1
3 60 -1 5 2 -1 -1 2 5 -1 1 1 1 -1 -1 -1 -1 -1
4 70 -1 30 1 -1 -1 1 -1 -1 1 2 1 -1 -1 -1 -1 -1
"""

# (start, end) per job, worked out by hand under EASY (examples/easy.pol):
# kill: job 1 ends at 50; at 60 job 2 takes the idle machine, job 3 is reserved at 70 (when
#   2 ends) and starts there beside job 4, which arrives at 70 with 3 cpus free.
# estimate: job 1 plans and runs 100 s; job 2 is reserved at 100, jobs 3 (ends 65) and 4
#   (ends 100) backfill before it.
# extend: job 1 plans 50 s but runs 100; past its estimate each pass plans it to end a second
#   later (61 at t=60, 71 at t=70), so job 2's reservation is at 61, then 71, and job 3
#   (ending 65 > 61) and job 4 cannot backfill; at 100 job 2 starts, 3 and 4 follow at 110.
EXPECTED = {
    "kill": [(0, 50), (60, 70), (70, 75), (70, 100)],
    "estimate": [(0, 100), (100, 110), (60, 65), (70, 100)],
    "extend": [(0, 100), (100, 110), (110, 115), (110, 140)],
}


@pytest.fixture
def over_swf(tmp_path: Path) -> Path:
    path = tmp_path / "over.swf"
    path.write_text(OVER_SWF)
    return path


def test_readers_keep_the_recorded_run_time(over_swf: Path) -> None:
    w = load_workload(over_swf)
    assert [j.run_time for j in w.jobs] == [50, 10, 5, 30]  # as read: killed
    assert [w.recorded_run(i) for i in range(4)] == [100, 10, 5, 30]
    assert w.no_estimate == 1 and w.overrun == "kill"
    facts = overrun_facts(w)
    assert (facts.over, facts.work, facts.work_over) == (1, 280, 100)
    assert facts.share_jobs == 0.25 and facts.ratios == (2.0,)


def test_modes_change_only_the_jobs_over(over_swf: Path) -> None:
    w = load_workload(over_swf)
    est = apply_overrun(w, "estimate")
    ext = apply_overrun(w, "extend")
    assert (est.jobs[0].run_time, est.jobs[0].estimate) == (100, 100)
    assert (ext.jobs[0].run_time, ext.jobs[0].estimate) == (100, 50)
    assert est.jobs[1:] == w.jobs[1:] == ext.jobs[1:]
    assert est.recorded_estimate(0) == 50  # as read, for the exports
    assert killed(w) == [True, False, False, False]
    assert killed(est) == killed(ext) == [False] * 4
    with pytest.raises(ValueError):
        apply_overrun(w, "stretch")


@pytest.mark.parametrize("mode", ["kill", "estimate", "extend"])
def test_schedules_by_hand(over_swf: Path, mode: str) -> None:
    result = run_policy(EASY, over_swf, RunOptions(overrun=mode))
    assert [(r.start, r.end) for r in result.schedule.records] == EXPECTED[mode]


@pytest.mark.parametrize("mode", ["kill", "estimate", "extend"])
def test_general_walk_agrees(over_swf: Path, mode: str) -> None:
    """The optimisations (continuation, shadow time, the one-resource kernel) are off in the
    slow path: same schedule."""
    from schedc.runtime.engine.simulator import simulate

    result = run_policy(EASY, over_swf, RunOptions(overrun=mode))
    slow = simulate(result.policy, result.workload, fast=False, incremental=False)
    assert slow.records == result.schedule.records


def test_warning_json_and_provenance(over_swf: Path, capsys: pytest.CaptureFixture[str]
                                     ) -> None:
    assert main(["run", str(EASY), "--workload", str(over_swf), "--overrun", "kill",
                 "--json"]) == 0
    out, err = capsys.readouterr()
    assert "1 of 4 jobs (25.0%) ran past their requested time, 35.7% of the recorded work" \
        in err
    assert "--overrun kill" in err
    assert "1 of 4 jobs (25.0%) has no requested time" in err
    data = json.loads(out)
    over = data["overrun"]
    assert over["mode"] == "kill" and over["jobs_over_estimate"] == 1
    assert over["jobs_killed_at_estimate"] == 1
    assert over["recorded_work"] == 280 and over["work_simulated"] == 180
    assert over["jobs_without_requested_time"] == 1
    assert data["provenance"]["workload"]["overrun"]["share_of_work"] == round(100 / 280, 6)
    assert data["provenance"]["options"]["overrun"] == "kill"
    assert any("ran past their requested time" in w for w in data["warnings"])


@pytest.mark.parametrize("mode", ["estimate", "extend"])
def test_every_recorded_second_is_simulated(over_swf: Path, mode: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(EASY), "--workload", str(over_swf), "--overrun", mode,
                 "--json"]) == 0
    over = json.loads(capsys.readouterr().out)["overrun"]
    assert over["work_simulated"] == over["recorded_work"] == 280
    assert over["jobs_killed_at_estimate"] == 0


def test_default_mode_is_estimate(over_swf: Path) -> None:
    result = run_policy(EASY, over_swf)
    assert result.workload.overrun == "estimate"
    assert [(r.start, r.end) for r in result.schedule.records] == EXPECTED["estimate"]


def test_trace_without_requested_times_warns(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "nasa.swf"
    path.write_text("; MaxProcs: 8\n1 0 -1 10 2 -1 -1 2 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                    "2 5 -1 20 8 -1 -1 8 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n")
    assert main(["run", str(EASY), "--workload", str(path)]) == 0
    err = capsys.readouterr().err
    assert "no job of the workload has a requested time" in err
    assert "perfect estimate" in err
    assert "ran past" not in err


def _rows(path: Path) -> list[dict[str, str]]:
    lines = [ln for ln in path.read_text().splitlines() if not ln.startswith("#")]
    return list(csv.DictReader(lines))


def test_exports_say_how_each_job_ended(over_swf: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    jobs, batsim, swf = tmp_path / "j.csv", tmp_path / "b.csv", tmp_path / "s.swf"
    common = ["run", str(EASY), "--workload", str(over_swf), "--overrun", "kill"]
    assert main([*common, "--jobs-out", str(jobs), "--swf-out", str(swf)]) == 0
    assert main([*common, "--jobs-out", str(batsim), "--jobs-out-format", "batsim"]) == 0
    capsys.readouterr()
    rows = _rows(jobs)
    assert [r["ended"] for r in rows] == ["killed", "completed", "completed", "completed"]
    # what the workload recorded, not the capped run
    assert [r["requested_run_time"] for r in rows] == ["100", "10", "5", "30"]
    assert [r["run_time"] for r in rows] == ["50", "10", "5", "30"]
    b = _rows(batsim)
    assert [(r["success"], r["final_state"]) for r in b] == [
        ("0", "COMPLETED_WALLTIME_REACHED")] + [("1", "COMPLETED_SUCCESSFULLY")] * 3
    status = [ln.split()[10] for ln in swf.read_text().splitlines() if not ln.startswith(";")]
    assert status == ["0", "1", "1", "1"]


def test_exports_in_estimate_mode_complete(over_swf: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    jobs, swf = tmp_path / "j.csv", tmp_path / "s.swf"
    assert main(["run", str(EASY), "--workload", str(over_swf), "--jobs-out", str(jobs),
                 "--swf-out", str(swf)]) == 0
    capsys.readouterr()
    rows = _rows(jobs)
    assert {r["ended"] for r in rows} == {"completed"}
    assert rows[0]["requested_estimate"] == "50" and rows[0]["estimate"] == "100"
    status = [ln.split()[10] for ln in swf.read_text().splitlines() if not ln.startswith(";")]
    assert status == ["1"] * 4


@pytest.mark.parametrize("mode", ["kill", "estimate", "extend"])
@pytest.mark.parametrize("out", ["--jobs-out", "--swf-out"])
def test_our_outputs_read_back_with_the_same_metrics(
        over_swf: Path, tmp_path: Path, mode: str, out: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    written = tmp_path / ("back.csv" if out == "--jobs-out" else "back.swf")
    common = ["run", str(EASY), "--overrun", mode, "--json"]
    assert main([*common, "--workload", str(over_swf), out, str(written)]) == 0
    first = json.loads(capsys.readouterr().out)["metrics"]
    assert main([*common, "--workload", str(written)]) == 0
    again = json.loads(capsys.readouterr().out)["metrics"]
    assert again == first


def test_jobs_table_names_every_missing_column(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.csv"
    path.write_text("# capacity cpus=4\nid,submit,runtime,estimat,cpus\n1,0,10,20,2\n")
    assert main(["run", str(EASY), "--workload", str(path)]) == 2
    err = capsys.readouterr().err
    assert "missing columns `run_time`, `estimate`" in err
    assert "`runtime` -> `run_time`" in err and "`estimat` -> `estimate`" in err


def test_bad_overrun_mode_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(EASY), "--overrun", "stretch"]) == 2
    assert "--overrun" in capsys.readouterr().err


def test_compare_takes_the_mode_and_reports_it(over_swf: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    fcfs = EASY.parent / "fcfs.pol"
    assert main(["compare", str(fcfs), str(EASY), "--workload", str(over_swf), "--overrun",
                 "kill", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err.count("ran past their requested time") == 1  # once, not per policy
    data = json.loads(out)
    assert data["provenance"]["options"]["overrun"] == "kill"
    for policy in data["policies"]:
        assert policy["overrun"]["jobs_killed_at_estimate"] == 1
        assert policy["overrun"]["work_simulated"] == 180


def test_lanl_cm5_warns_with_its_counts_and_simulates_all_its_work(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's case: EASY on LANL-CM5 warns with the counts; `estimate` simulates every
    cpu-second the trace records, `kill` the 76% left once the overruns are cut."""
    from tests.support.shared_traces import shared_trace

    lanl = str(shared_trace("LANL-CM5-1994-4.1-cln.swf.gz"))
    assert main(["run", str(EASY), "--workload", lanl, "--json"]) == 0
    out, err = capsys.readouterr()
    assert "40,180 of 122,057 jobs (32.9%) ran past their requested time, 24.0% of the " \
        "recorded work: they run to completion" in err
    assert "11,287 of 122,057 jobs (9.2%) have no requested time" in err
    over = json.loads(out)["overrun"]
    assert over["work_simulated"] == over["recorded_work"]
    assert over["jobs_killed_at_estimate"] == 0
    assert main(["run", str(EASY), "--workload", lanl, "--json", "--overrun", "kill"]) == 0
    over = json.loads(capsys.readouterr().out)["overrun"]
    assert over["jobs_killed_at_estimate"] == 40_180
    assert over["work_simulated"] == over["recorded_work"] - over["work_past_estimates"]


def test_lanl_cm5_extend_keeps_the_monitor_quiet(capsys: pytest.CaptureFixture[str]) -> None:
    """40,000 jobs of LANL-CM5 where a third outlive their estimate, under EASY and
    conservative backfilling: the monitor (on) never stops, every recorded second runs."""
    from tests.support.shared_traces import shared_trace

    lanl = str(shared_trace("LANL-CM5-1994-4.1-cln.swf.gz"))
    for policy in (EASY, EASY.parent / "conservative.pol"):
        assert main(["run", str(policy), "--workload", lanl, "--limit", "40000", "--json",
                     "--overrun", "extend"]) == 0
        over = json.loads(capsys.readouterr().out)["overrun"]
        assert over["work_simulated"] == over["recorded_work"] and over["jobs_over_estimate"]


def test_optimal_plans_an_overdue_job_to_end_a_second_later(over_swf: Path) -> None:
    """`schedc optimal` in extend mode: at t=60 job 1 (estimate 50) still runs; the instance
    plans it as the pass does, ending at 61, never before now."""
    from schedc.runtime.tools.optimal.instance import state_at

    result = run_policy(EASY.parent / "conservative.pol", over_swf, RunOptions(overrun="extend"))
    state = state_at(result.schedule, 60, "over.swf")
    (held,) = state.running
    assert held.job.id == 1 and held.expected_end == 61


def test_optimal_takes_the_mode(over_swf: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["optimal", str(EASY.parent / "conservative.pol"), "--workload",
                 str(over_swf), "--at", "60", "--overrun", "extend", "--json",
                 "--time-limit", "2"]) == 0
    assert json.loads(capsys.readouterr().out)


def test_compare_report_shows_the_warnings(over_swf: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "c.html"
    assert main(["compare", str(EASY.parent / "fcfs.pol"), str(EASY), "--workload",
                 str(over_swf), "--overrun", "kill", "--report", str(page)]) == 0
    capsys.readouterr()
    html = page.read_text()
    assert "Warnings" in html and html.count("ran past their requested time") == 1


def test_swf_out_keeps_the_trace_s_status(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Field 11: a job that ran its recorded time ended as the trace says (failed 0,
    cancelled 5; 1 where it says nothing); one the run killed at its estimate is 0."""
    trace = tmp_path / "status.swf"
    trace.write_text("; MaxProcs: 4\n"
                     "1 0 -1 10 1 -1 -1 1 20 -1 0 1 1 -1 -1 -1 -1 -1\n"
                     "2 0 -1 10 1 -1 -1 1 20 -1 5 1 1 -1 -1 -1 -1 -1\n"
                     "3 0 -1 10 1 -1 -1 1 20 -1 -1 1 1 -1 -1 -1 -1 -1\n"
                     "4 0 -1 30 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1\n")
    for mode, want in (("estimate", ["0", "5", "1", "1"]), ("kill", ["0", "5", "1", "0"])):
        out = tmp_path / f"{mode}.swf"
        assert main(["run", str(EASY), "--workload", str(trace), "--overrun", mode,
                     "--swf-out", str(out)]) == 0
        status = [ln.split()[10] for ln in out.read_text().splitlines()
                  if not ln.startswith(";")]
        assert status == want, mode
    capsys.readouterr()
