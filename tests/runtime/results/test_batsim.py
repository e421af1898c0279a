"""`--jobs-out-format batsim`: Batsim's jobs.csv columns, read by evalys as its users read
it, with the same jobs, times and utilisation as our run."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from schedc.runtime.cli.main import main
from schedc.runtime.results.allocation import processor_sets, procset_text
from schedc.runtime.results.batsim import COLUMNS, write_batsim_jobs
from schedc.runtime.run import RunOptions, run_policy
from tests.support.repo import ROOT

EASY = ROOT / "examples" / "easy.pol"


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
