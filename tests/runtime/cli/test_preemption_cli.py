"""Preemptive policies from the command line: `schedc run` on a workload (metrics, JSON, the
jobs CSV with each job's preemptions, Batsim's table, the HTML page), `schedc plot run`, the
inputs and options it refuses, and `schedc verify`'s unknown verdicts."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from schedc.runtime.cli.main import main
from tests.support.repo import ROOT
from tests.support.shared_traces import shared_trace

EXAMPLES = ROOT / "examples" / "preemption"
SS = EXAMPLES / "selective-suspension.pol"
SUSPEND = ROOT / "examples" / "preemption" / "slurm-suspend.pol"
REQUEUE = ROOT / "examples" / "preemption" / "slurm-requeue.pol"


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def table(tmp_path: Path) -> Path:
    """Job 1 takes the machine for 1000 s; job 2 (short) arrives at 100 and, once its
    expansion factor is twice job 1's, suspends it."""
    path = tmp_path / "jobs.csv"
    path.write_text("# capacity cpus=4\nid,submit,run_time,estimate,cpus\n"
                    "1,0,1000,1000,4\n2,100,10,10,4\n3,2000,5,5,1\n")
    return path


def test_run_reports_the_preemptions_in_the_table_and_the_json(capsys, tmp_path) -> None:
    policy = tmp_path / "ss.pol"
    policy.write_text(SS.read_text().replace("  keep ", "  quantum   20s\n  keep ", 1))
    code, out, err = run_cli(capsys, "run", policy, "--workload", table(tmp_path), "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["preemption"] == {
        "suspensions": 1, "checkpoints": 0, "requeues": 0, "jobs_preempted": 1,
        "most_preemptions_of_a_job": 1, "suspended_time": 10, "stopped_time": 0,
        "lost_work": 0, "overhead": 0,
        # job 1 ran 1000 s on 4 cpus, job 2 10 s on 4 (beside job 1's processes: two
        # resident), job 3 5 s on 1; over the span 0..2005 of 4 cpus. Job 2 waited 20 s
        "useful_work": 4045, "held_idle": 0, "most_resident": 2,
        "utilisation_useful": pytest.approx(4045 / (4 * 2005)), "utilisation_overhead": 0.0,
        "utilisation_lost": 0.0, "utilisation_held_idle": 0.0,
        "mean_pending": pytest.approx(20 / 2005), "mean_stopped": 0.0}
    metrics = result["metrics"]
    # job 1 ran 1000 s (not 1010: 10 s suspended), job 2 waited 20 s
    assert metrics["mean_wait"] == pytest.approx(20 / 3)
    assert metrics["utilisation"] == pytest.approx((4000 + 40 + 5) / (4 * 2005))
    code, out, err = run_cli(capsys, "run", policy, "--workload", table(tmp_path))
    assert code == 0 and "preemptions: 1 suspensions, 0 checkpoints and 0 requeues of 1 jobs" in out


def test_the_jobs_csv_has_each_jobs_preemptions(capsys, tmp_path) -> None:
    policy = tmp_path / "ss.pol"
    policy.write_text(SS.read_text().replace("  keep ", "  quantum   20s\n  keep ", 1))
    jobs = tmp_path / "out.csv"
    code, _, err = run_cli(capsys, "run", policy, "--workload", table(tmp_path),
                           "--jobs-out", jobs)
    assert code == 0, err
    rows = list(csv.DictReader(line for line in jobs.read_text().splitlines()
                               if not line.startswith("#")))
    first = rows[0]
    assert (first["start"], first["end"], first["run_time"]) == ("0", "1010", "1000")
    assert (first["suspensions"], first["requeues"], first["suspended_time"]) == ("1", "0", "10")
    assert first["allocated_resources"] == "0-3"
    # the table reads back as the workload it recorded
    code, out, err = run_cli(capsys, "workload", "info", jobs, "--json")
    assert code == 0, err


def test_the_report_and_batsim_s_table_show_a_preemptive_run(capsys, tmp_path) -> None:
    pytest.importorskip("matplotlib")
    policy = tmp_path / "ss.pol"
    policy.write_text(SS.read_text().replace("  keep ", "  quantum   20s\n  keep ", 1))
    page, jobs = tmp_path / "r.html", tmp_path / "j.csv"
    code, out, err = run_cli(capsys, "run", policy, "--workload", table(tmp_path), "--report",
                             page, "--jobs-out", jobs, "--jobs-out-format", "batsim")
    assert code == 0, err
    text = page.read_text()
    assert "<h2>Preemption</h2>" in text
    assert "<td>time suspended (s)</td><td class=num>10</td>" in text
    assert text.count("<svg") == 3
    rows = list(csv.DictReader(jobs.read_text().splitlines()))
    # job 1: suspended [120, 130) for job 2, its 1000 s run from its first start at 0
    assert (rows[0]["starting_time"], rows[0]["execution_time"], rows[0]["finish_time"]) == (
        "0", "1000", "1010")
    assert rows[0]["metadata"].startswith("suspensions=1 checkpoints=0 requeues=0")


def test_run_replays_a_preemptive_state(capsys, tmp_path) -> None:
    # at 10: job 1 runs on cpus 0-1, job 2 is suspended on 2-3 with a fifth of its work
    # done, job 3 waits; job 2 resumes at once (its cpus are free) and job 3 follows it
    state = tmp_path / "s.json"
    job = {"submit": 0, "request": {"cpus": 2}}
    state.write_text(json.dumps({
        "now": 10, "capacity": {"cpus": 4},
        "running": [{**job, "id": 1, "estimate": 100, "run_time": 100, "start": 5,
                     "processors": [0, 1]}],
        "queue": [{**job, "id": 3, "submit": 8, "estimate": 20, "run_time": 20}],
        "suspended": [{**job, "id": 2, "estimate": 50, "run_time": 50, "processors": [2, 3],
                       "progress": "1/5"}]}))
    jobs = tmp_path / "jobs.csv"
    code, out, err = run_cli(capsys, "run", SS, "--state", state, "--jobs-out", jobs)
    assert code == 0, err
    assert "jobs simulated" in out and "preemptions:" in out
    rows = {r["job_id"]: r for r in csv.DictReader(
        line for line in jobs.read_text().splitlines() if not line.startswith("#"))}
    assert [(rows[i]["start"], rows[i]["end"]) for i in "123"] == [
        ("5", "105"), ("10", "50"), ("50", "70")]
    assert rows["2"]["allocated_resources"] == "2-3"


def test_a_heterogeneous_cluster_is_refused(capsys, tmp_path) -> None:
    code, _, err = run_cli(capsys, "run", SS, "--workload", table(tmp_path),
                           "--speeds", "4x1")
    assert code == 2 and "does not run preemptive policies yet" in err


def test_verify_proves_the_pass_and_refutes_progress(capsys, tmp_path) -> None:
    """Selective suspension: six properties proved; `progress` violated with a state file
    that `schedc run --state` replays, stopping for it; the policy waives `progress`, so
    the violation is marked expected and verify exits 0."""
    cex = tmp_path / "cex"
    code, out, err = run_cli(capsys, "verify", SS, "--format", "json", "--queued", "2",
                             "--running", "2", "--processors", "4", "--counterexamples", cex)
    assert code == 0, err
    verdicts = {v["property"]: v for v in json.loads(out)[0]["verdicts"]}
    assert [v for v in verdicts if verdicts[v]["status"] != "proved"] == ["progress"]
    assert verdicts["progress"]["status"] == "violated" and verdicts["progress"]["expected"]
    # proved over groups of processors: for every machine size
    assert verdicts["capacity"]["bound"] == ("N=2 waiting, R=2 running, any number of "
                                             "processors, K=1")
    state = cex / "selective-suspension.progress.json"
    assert json.loads(state.read_text())["check"] == ["preemptive-pass"]
    code, out, err = run_cli(capsys, "run", SS, "--state", state)
    assert code == 1 and "the head of the order, was not placed" in err


def test_verify_says_what_is_not_encoded(capsys, tmp_path) -> None:
    policy = tmp_path / "crowd.pol"
    policy.write_text("policy crowd {\n  reserve 0\n  mechanism suspend\n"
                      "  preempt when machine.used.cpus > 2\n}\n")
    code, out, err = run_cli(capsys, "verify", policy, "--format", "json")
    assert code == 3, err
    verdicts = json.loads(out)[0]["verdicts"]
    assert {v["status"] for v in verdicts} == {"unknown"}
    assert all("not encoded yet" in v["reason"] for v in verdicts)


def test_a_bad_processor_bound_is_a_usage_error(capsys) -> None:
    code, _, err = run_cli(capsys, "verify", SS, "--processors", "33")
    assert code == 2 and "--processors 33: the bound must lie in [1, 32]" in err


def test_the_slurm_examples_run_on_lanl_with_held_memory(capsys) -> None:
    lanl = shared_trace("LANL-CM5-1994-4.1-cln.swf.gz")
    for policy, kind in ((SUSPEND, "suspensions"), (REQUEUE, "requeues")):
        code, out, err = run_cli(capsys, "run", policy, "--workload", lanl, "--limit", "4000",
                                 "--json")
        assert code == 0, err
        assert json.loads(out)["preemption"][kind] > 0


def test_plot_run_draws_a_preemptive_run(capsys, tmp_path) -> None:
    pytest.importorskip("matplotlib")
    code, out, err = run_cli(capsys, "plot", "run", SS, "--workload", table(tmp_path),
                             "--kind", "all", "--output", tmp_path / "fig.png")
    assert code == 0, err
    kinds = ("gantt", "utilisation", "waits")
    assert out.split() == [str(tmp_path / f"fig-{kind}.png") for kind in kinds]
    assert all((tmp_path / f"fig-{kind}.png").stat().st_size > 10_000 for kind in kinds)


def test_a_dynp_policy_may_not_preempt(capsys, tmp_path) -> None:
    dynp = tmp_path / "d.pol"
    dynp.write_text("policy a { order job.submit asc reserve all backfill first_fit }\n"
                    "policy b { order job.estimate asc reserve all backfill first_fit }\n"
                    "policy d { candidates a, b metric artww mechanism suspend "
                    "preempt when true }\n")
    code, _, err = run_cli(capsys, "check", dynp)
    assert code == 2 and "dynP policy `d` cannot have a `preempt` clause" in err


def test_a_subset_below_one_is_shown_at_its_line(capsys, tmp_path) -> None:
    policy = tmp_path / "p.pol"
    policy.write_text("policy p {\n  backfill first_fit\n  mechanism none\n"
                      "  preempt by order\n  subset 0\n}\n")
    code, out, err = run_cli(capsys, "run", policy, "--workload", table(tmp_path))
    assert code == 2 and "`subset` is 0" in err and "5 |   subset 0" in err
    assert "^" in err and "Traceback" not in err
