"""`--swf-out` of a preemptive run: an SWF log headed `; Preemption: Double`, a summary line
and one partial execution per running stretch for each job that ran in several, which the
SWF reader reads back as the same jobs with the run's running segments as their history."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedc.runtime.cli.main import main
from schedc.runtime.results.swf_out import running_stretches
from schedc.runtime.run import RunOptions, run_policy
from schedc.runtime.workloads.load import load_workload
from tests.support.repo import ROOT

SS = ROOT / "examples" / "preemption" / "selective-suspension.pol"
EASY = ROOT / "examples" / "easy.pol"


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def data_lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if not line.startswith(";")]


def test_a_suspended_job_is_a_summary_and_its_parts(capsys, tmp_path) -> None:
    # job 1 takes the machine for 1000 s; job 2 (10 s) arrives at 100 and, at the quantum's
    # pass at 120, suspends it until 130: job 1 ran [0, 120) and [130, 1010)
    jobs = tmp_path / "jobs.csv"
    jobs.write_text("# capacity cpus=4\nid,submit,run_time,estimate,cpus\n"
                    "1,0,1000,1000,4\n2,100,10,10,4\n3,2000,5,5,1\n")
    policy = tmp_path / "ss.pol"
    policy.write_text(SS.read_text().replace("  keep ", "  quantum   20s\n  keep ", 1))
    out = tmp_path / "s.swf"
    code, _, err = run_cli(capsys, "run", policy, "--workload", jobs, "--swf-out", out)
    assert code == 0, err
    header = [line for line in out.read_text().splitlines() if line.startswith(";")]
    assert header[-4:] == ["; MaxRecords: 5", "; MaxProcs: 4", "; MaxNodes: 4",
                           "; Preemption: Double"]
    assert "; MaxJobs: 3" in header
    labels = "-1 -1 -1 -1 -1 -1 -1"
    assert data_lines(out) == [
        f"1 0 0 1000 4 -1 -1 4 1000 -1 1 {labels}",  # summary: 120 + 880 s run
        f"1 0 0 120 4 -1 -1 4 1000 -1 2 {labels}",
        f"1 0 130 880 4 -1 -1 4 1000 -1 3 {labels}",
        f"2 100 20 10 4 -1 -1 4 10 -1 1 {labels}",  # one stretch: one line
        f"3 2000 0 5 1 -1 -1 1 5 -1 1 {labels}"]
    back = load_workload(out)
    assert [(j.id, j.submit, j.run_time, j.request) for j in back.jobs] == [
        (1, 0, 1000, (4,)), (2, 100, 10, (4,)), (3, 2000, 5, (1,))]
    assert [(p.start, p.end, p.procs, p.status) for p in back.parts[1]] == [
        (0, 120, 4, 2), (130, 1010, 4, 3)]
    assert back.part_counts() == (1, 2, 0)


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> tuple[Path, object]:
    """selective-suspension's first 300 jobs of the bundled trace: the run, and its SWF
    written by the command line."""
    out = tmp_path_factory.mktemp("swf") / "ss.swf"
    assert main(["run", str(SS), "--limit", "300", "--swf-out", str(out)]) == 0
    result = run_policy(SS, None, RunOptions(limit=300))
    return out, result


def test_a_preemptive_run_reads_back_as_the_same_jobs_and_its_segments(written) -> None:
    out, result = written
    schedule = result.schedule
    assert schedule.preempted is not None
    back = load_workload(out)
    assert back.header["Preemption"] == "Double" and back.skipped == {}
    stretches = [running_stretches(p) for p in schedule.preempted]
    ran = [sum(s.end - s.start for s in parts) for parts in stretches]
    assert [(j.id, j.submit, j.request, j.estimate) for j in back.jobs] == [
        (r.job.id, r.job.submit, r.job.request, r.job.estimate) for r in schedule.records]
    assert list(back.recorded_runs) == ran
    # no requeue: the total run time is the job's own
    assert ran == [r.job.run_time for r in schedule.records] == schedule.ran()
    recorded = schedule.workload.recorded_status
    assert list(back.recorded_status) == [
        1 if recorded[r.job.index] < 0 else recorded[r.job.index] for r in schedule.records]
    assert 0 in back.recorded_status  # a failed job's last part is status 4
    failed = next(j.id for j, s in zip(back.jobs, back.recorded_status, strict=True)
                  if s == 0 and j.id in back.parts)
    assert back.parts[failed][-1].status == 4
    several = {r.job.id: parts for r, parts in zip(schedule.records, stretches, strict=True)
               if len(parts) > 1}
    assert len(several) > 5  # the run did preempt
    assert set(back.parts) == set(several)
    for jid, parts in several.items():
        assert [(p.start, p.end, p.procs) for p in back.parts[jid]] == [
            (s.start, s.end, len(s.processors)) for s in parts]
        assert [p.status for p in back.parts[jid]][:-1] == [2] * (len(parts) - 1)
    assert back.part_counts() == (len(several), sum(map(len, several.values())), 0)


def test_the_written_log_runs_under_easy(written, capsys) -> None:
    out, _ = written
    code, stdout, err = run_cli(capsys, "run", EASY, "--workload", out, "--json")
    assert code == 0, err
    assert json.loads(stdout)["metrics"]["jobs"] == 300


def test_a_rigid_run_writes_no_preemption_header(capsys, tmp_path) -> None:
    out = tmp_path / "e.swf"
    code, _, err = run_cli(capsys, "run", EASY, "--limit", "50", "--swf-out", out)
    assert code == 0, err
    text = out.read_text()
    assert "Preemption" not in text and "; MaxRecords: 50\n" in text
    assert len(data_lines(out)) == 50
