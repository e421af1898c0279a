"""`--jobs-out-format batsim`: Batsim's jobs.csv columns, read by evalys as its users read
it, with the same jobs, times and utilisation as our run; a preemptive run's jobs one row
each, their execution time the time they ran, their preemptions in `metadata`."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from schedc.runtime.cli.main import main
from schedc.runtime.results.allocation import processor_sets, procset_text
from schedc.runtime.results.batsim import COLUMNS, write_batsim_jobs
from schedc.runtime.run import RunOptions, run_policy
from tests.support.preempted_runs import TABLE, files, preempted_run
from tests.support.repo import ROOT

EASY = ROOT / "examples" / "easy.pol"
SELECTIVE_SUSPENSION = ROOT / "examples" / "preemption" / "selective-suspension.pol"


def test_columns_are_batsims(tmp_path: Path) -> None:
    result = run_policy(EASY, None, RunOptions(limit=50))
    out = tmp_path / "jobs.csv"
    write_batsim_jobs(result.schedule, out)
    with open(out, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0]) == COLUMNS == (
        "job_id", "workload_name", "submission_time", "requested_number_of_resources",
        "requested_time", "success", "final_state", "starting_time", "execution_time",
        "finish_time", "waiting_time", "turnaround_time", "stretch", "allocated_resources",
        "consumed_energy", "metadata")
    ids = processor_sets(result.schedule)
    for row, record, mine in zip(rows, result.schedule.records, ids, strict=True):
        assert row["job_id"] == str(record.job.id)
        assert row["workload_name"] == "KTH-SP2-1996-2.1-cln"
        assert int(row["starting_time"]) == record.start
        assert int(row["finish_time"]) == record.end
        assert int(row["waiting_time"]) == record.wait
        assert int(row["requested_number_of_resources"]) == record.alloc[0]
        assert row["allocated_resources"] == procset_text(mine)
        assert row["final_state"] == "COMPLETED_SUCCESSFULLY" and row["success"] == "1"
    assert len(rows) == 50


@pytest.mark.filterwarnings("ignore:The inplace keyword")  # evalys on pandas 3
def test_evalys_reads_our_file(tmp_path: Path, capsys) -> None:
    evalys = pytest.importorskip("evalys.jobset")
    metrics = pytest.importorskip("evalys.metrics")
    out = tmp_path / "jobs.csv"
    code = main(["run", str(EASY), "--limit", "400", "--jobs-out", str(out),
                 "--jobs-out-format", "batsim", "--no-progress"])
    assert code == 0, capsys.readouterr().err
    assert not out.read_text().startswith("#")  # pandas would read a comment as a row
    result = run_policy(EASY, None, RunOptions(limit=400))
    records = result.schedule.records
    jobs = evalys.JobSet.from_csv(str(out), resource_bounds=(0, 99))
    assert len(jobs.df) == len(records) == 400
    assert list(jobs.df["starting_time"]) == [r.start for r in records]
    assert list(jobs.df["finish_time"]) == [r.end for r in records]
    assert list(jobs.df["proc_alloc"]) == [r.alloc[0] for r in records]
    # evalys's mean load over [first start, last end] is our busy area over that span
    busy = sum(r.alloc[0] * (r.end - r.start) for r in records)
    span = max(r.end for r in records) - min(r.start for r in records)
    assert metrics.load_mean(jobs.utilisation) == pytest.approx(busy / span)


def test_the_format_needs_jobs_out(capsys) -> None:
    code = main(["run", str(EASY), "--limit", "5", "--jobs-out-format", "batsim"])
    assert code == 2
    assert "--jobs-out-format batsim needs --jobs-out" in capsys.readouterr().err


def test_times_in_smaller_units_are_written_in_seconds(tmp_path: Path) -> None:
    from fractions import Fraction

    from schedc.runtime.jobs import Job
    from schedc.runtime.workloads.workload import Workload

    jobs = (Job(1, 0, 0, 150, 200, (2,)), Job(2, 1, 10, 50, 60, (4,)))
    workload = Workload(jobs, ("cpus",), (4,), time_unit=Fraction(1, 100), source="t.csv")
    result = run_policy(EASY, workload)
    out = tmp_path / "jobs.csv"
    write_batsim_jobs(result.schedule, out)
    with open(out, newline="") as handle:
        rows = list(csv.DictReader(handle))
    # job 2 (4 cpus) waits for job 1 (2 of 4 cpus) to end at 150 units = 1.5 s
    assert [(r["submission_time"], r["starting_time"], r["finish_time"]) for r in rows] == [
        ("0.0", "0.0", "1.5"), ("0.1", "1.5", "2.0")]
    assert rows[1]["requested_time"] == "0.6" and rows[1]["waiting_time"] == "1.4"
    assert rows[0]["workload_name"] == "t"


# --- a preemptive run: one row per job, its execution time the time it ran -----------------

ZEROS = "suspensions=0 checkpoints=0 requeues=0 suspended_time=0 stopped_time=0 lost_work=0 " \
        "overhead=0"


def _batsim_rows(result, tmp_path: Path) -> list[list[str]]:
    out = tmp_path / "batsim.csv"
    write_batsim_jobs(result.schedule, out)
    with open(out, newline="") as handle:
        header, *rows = csv.reader(handle)
    assert tuple(header) == COLUMNS
    return rows


def test_a_job_suspended_once_runs_from_its_first_start_to_its_end(tmp_path: Path) -> None:
    # job 1 runs [0, 100), is suspended [100, 110) for job 2, runs [110, 1010)
    rows = _batsim_rows(preempted_run(tmp_path, "suspend"), tmp_path)
    assert rows == [
        ["1", "jobs", "0", "4", "1000", "1", "COMPLETED_SUCCESSFULLY", "0", "1000", "1010",
         "0", "1010", "1.01", "0-3", "-1",
         "suspensions=1 checkpoints=0 requeues=0 suspended_time=10 stopped_time=0 "
         "lost_work=0 overhead=0"],
        ["2", "jobs", "100", "4", "10", "1", "COMPLETED_SUCCESSFULLY", "100", "10", "110",
         "0", "10", "1.0", "0-3", "-1", ZEROS],
        ["3", "jobs", "2000", "1", "5", "1", "COMPLETED_SUCCESSFULLY", "2000", "5", "2005",
         "0", "5", "1.0", "0", "-1", ZEROS]]


def test_a_requeued_job_s_lost_work_is_not_execution(tmp_path: Path) -> None:
    # job 1 runs [0, 100) (lost: 400 cpu-s), is requeued, dispatches [110, 140) (120 cpu-s
    # of overhead) and runs its whole 1000 s [140, 1140): execution 1000, not 1100 or 1140
    rows = _batsim_rows(preempted_run(tmp_path, "requeue"), tmp_path)
    assert rows[0] == [
        "1", "jobs", "0", "4", "1000", "1", "COMPLETED_SUCCESSFULLY", "0", "1000", "1140", "0",
        "1140", "1.14", "0-3", "-1",
        "suspensions=0 checkpoints=0 requeues=1 suspended_time=0 stopped_time=0 lost_work=400 "
        "overhead=120"]
    assert rows[1][7:12] == ["100", "10", "110", "0", "10"]


def test_a_checkpointed_job_s_metadata_counts_its_checkpoint_and_stop(tmp_path: Path) -> None:
    result = preempted_run(tmp_path, "checkpoint")
    rows = _batsim_rows(result, tmp_path)
    # checkpointing [100, 120), stopped [120, 130), dispatching [130, 135), 900 s more
    assert rows[0][7:10] == ["0", "1000", "1035"]
    assert rows[0][15] == ("suspensions=0 checkpoints=1 requeues=0 suspended_time=0 "
                           "stopped_time=10 lost_work=0 overhead=100")
    # the same values as the jobs CSV's run_time and preemption columns
    assert [int(r[8]) for r in rows] == result.schedule.ran()


def test_preemption_metadata_is_in_seconds_too(tmp_path: Path) -> None:
    policy, table = files(tmp_path, "suspend")
    table.write_text(TABLE.replace("\n", '\n# time-unit: "1/100 s"\n', 1))
    rows = _batsim_rows(run_policy(policy, table), tmp_path)
    assert rows[0][7:13] == ["0.0", "10.0", "10.1", "0.0", "10.1", "1.01"]
    assert "suspended_time=0.1 stopped_time=0.0" in rows[0][15]


@pytest.mark.filterwarnings("ignore:The inplace keyword")  # evalys on pandas 3
def test_evalys_reads_a_preemptive_run_as_the_run_s_jobs(tmp_path: Path, capsys) -> None:
    evalys = pytest.importorskip("evalys.jobset")
    out = tmp_path / "jobs.csv"
    argv = [str(SELECTIVE_SUSPENSION), "--limit", "400", "--no-progress"]
    code = main(["run", *argv, "--jobs-out", str(out), "--jobs-out-format", "batsim"])
    assert code == 0, capsys.readouterr().err
    result = run_policy(SELECTIVE_SUSPENSION, None, RunOptions(limit=400))
    records, ran = result.schedule.records, result.schedule.ran()
    assert result.schedule.preempted is not None
    assert sum(p.suspensions for p in result.schedule.preempted) > 10
    jobs = evalys.JobSet.from_csv(str(out), resource_bounds=(0, 99))
    assert list(jobs.df["execution_time"]) == ran
    assert list(jobs.df["finish_time"]) == [r.end for r in records]
    assert list(jobs.df["waiting_time"]) == [r.wait for r in records]
    assert jobs.df["waiting_time"].mean() == pytest.approx(result.metrics()["mean_wait"])
    # evalys places each job's execution time from its first start: its load's area is
    # the run's busy area (each suspended job resumed on its own processors)
    busy = sum(r.alloc[0] * run for r, run in zip(records, ran, strict=True))
    assert jobs.utilisation["area"].sum() == pytest.approx(busy)
