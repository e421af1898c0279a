"""Moldable jobs: their run times follow the size a policy gives them (``Job.at_size``), rigid
traces are made moldable as paper 000 does (range factor, Downey, load factor), and the
command line and state files carry them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedc.dsl import compile_source
from schedc.runtime.cli.main import main
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.jobs import Job, Moldable
from schedc.runtime.results.provenance import read_csv
from schedc.runtime.speedup import Downey, Linear
from schedc.runtime.workloads.moldable import MoldableSpec, make_moldable, size_range
from schedc.runtime.workloads.state_file import state_from_data
from schedc.runtime.workloads.workload import Workload
from tests.support.repo import ROOT


def job(i: int, submit: int, run: int, est: int, procs: int, moldable=None) -> Job:
    return Job(i, i - 1, submit, run, est, (procs,), moldable)


# -- run times on another size --------------------------------------------------------------


def test_rigid_job_keeps_its_times_on_any_size() -> None:
    j = job(1, 0, 100, 200, 4)
    assert j.at_size(2) == Job(1, 0, 0, 100, 200, (2,))
    assert j.at_size(4) is j


def test_moldable_job_scales_by_its_speedup() -> None:
    linear = job(1, 0, 100, 200, 4, Moldable(1, 8, Linear()))
    on8 = linear.at_size(8)
    assert (on8.run_time, on8.estimate, on8.request) == (50, 100, (8,))
    on3 = linear.at_size(3)  # 400 / 3 = 133.3 -> 134 (never before its work is done)
    assert (on3.run_time, on3.estimate) == (134, 267)
    # Downey A = 8, sigma = 0: S(4) = 4, S(8) = 8; sigma = 1: S(n) = 2 A n / (n + 2 A - 1)
    # (hand: S(4) = 64/19, S(8) = 128/23), so on 8 cpus times shrink by 1472/2432 = 0.605:
    # 100 s -> 60.5 -> 61, 200 s -> 121.05 -> 122
    downey = job(1, 0, 100, 200, 4, Moldable(1, 8, Downey(8, 1)))
    assert downey.at_size(8).run_time == 61
    assert downey.at_size(8).estimate == 122


@given(st.integers(1, 64), st.integers(1, 64), st.integers(0, 10_000), st.integers(1, 10_000),
       st.floats(0, 3))
def test_scaled_job_is_still_killed_at_its_estimate(p, n, run, extra, sigma) -> None:
    j = job(1, 0, run, run + extra, p, Moldable(1, 64, Downey(64, sigma)))
    sized = j.at_size(n)
    assert 0 <= sized.run_time <= sized.estimate and sized.estimate >= 1
    if n >= p:  # more cpus never take longer with Downey's speedup
        assert sized.run_time <= j.run_time


# -- paper 000's ranges ----------------------------------------------------------------------


@pytest.mark.parametrize(("p", "n", "rf", "expected"), [
    (10, 100, 1, (1, 100)),  # RF 1: any size
    (10, 100, 2, (6, 55)),  # floor(5) + 1, floor(90 / 2) + 10
    (10, 100, 4, (8, 32)),  # floor(7.5) + 1, floor(22.5) + 10
    (1, 100, 4, (1, 25)),  # floor(0.75) + 1 = 1, floor(99 / 4) + 1
    (100, 100, 3, (67, 100)),  # the whole machine: floor(66.7) + 1, max stays n
])
def test_size_range_by_hand(p, n, rf, expected) -> None:
    assert size_range(p, n, rf) == expected


@given(st.integers(1, 512), st.integers(0, 512), st.integers(1, 16))
def test_size_range_holds_the_recorded_size(p, extra, rf) -> None:
    n = p + extra
    lo, hi = size_range(p, n, rf)
    assert 1 <= lo <= p <= hi <= n
    # integer RF: the floored formula is p - (p - 1) / RF rounded up (symmetric to max)
    assert lo == -(-(p * rf - p + 1) // rf)


def workload(jobs, cpus: int = 100) -> Workload:
    return Workload(jobs=tuple(jobs), resources=("cpus",), capacities=(cpus,))


def test_make_moldable_sets_ranges_speedups_and_load() -> None:
    w = workload([job(1, 100, 50, 60, 10), job(2, 110, 50, 60, 30), job(3, 125, 5, 5, 1)])
    out = make_moldable(w, MoldableSpec(range_factor=2, sigma=0.5, load_factor=125))
    assert [j.submit for j in out.jobs] == [100, 108, 120]  # gaps 10, 15 scaled by 0.8
    assert [j.moldable for j in out.jobs] == [Moldable(6, 55, Downey(55.0, 0.5)),
                                              Moldable(16, 65, Downey(65.0, 0.5)),
                                              Moldable(1, 50, Downey(50.0, 0.5))]
    assert [(j.id, j.run_time, j.estimate, j.request) for j in out.jobs] == [
        (j.id, j.run_time, j.estimate, j.request) for j in w.jobs]
    assert out.transform == "moldable: RF 2, Downey sigma 0.5, load 125%"
    assert make_moldable(w, MoldableSpec()).jobs == w.jobs


def test_moldable_spec_rejects_bad_values() -> None:
    for kwargs, text in [({"range_factor": 0.5}, "range factor"), ({"sigma": -1}, "sigma"),
                         ({"load_factor": 0}, "load factor")]:
        with pytest.raises(ValueError, match=text):
            MoldableSpec(**kwargs)


# -- a hand-checked schedule ------------------------------------------------------------------


def test_size_rule_runs_a_moldable_job_on_its_maximum() -> None:
    """4 cpus. Job 1 (recorded on 2 cpus for 100 s, linear, range [1, 4]) gets its max, 4
    cpus, and runs 50 s; job 2 (rigid, 1 cpu) waits for it, then runs its 10 s."""
    policy = compile_source("policy p { reserve 1 backfill first_fit size job.max_size }",
                            "<max>")
    w = workload([job(1, 0, 100, 100, 2, Moldable(1, 4, Linear())), job(2, 0, 10, 10, 1)],
                 cpus=4)
    schedule = simulate(to_runtime(policy), w)
    assert [(r.job.id, r.start, r.end, r.alloc) for r in schedule.records] == [
        (1, 0, 50, (4,)), (2, 50, 60, (1,))]


def test_size_outside_the_moldable_range_stops_the_run() -> None:
    from schedc.runtime.engine.monitor import MonitorViolation

    policy = compile_source("policy p { size job.max_size + 1 }", "<over>")
    w = workload([job(1, 0, 100, 100, 2, Moldable(1, 3, Linear()))], cpus=8)
    with pytest.raises(MonitorViolation, match=r"size 4 for job 1 .*\[1, 3\] \(its moldable"):
        simulate(to_runtime(policy), w)


# -- state files and the command line ----------------------------------------------------------


def test_state_file_moldable_job_round_trips() -> None:
    data = {"now": 0, "capacity": {"cpus": 8}, "running": [],
            "queue": [{"id": 1, "submit": 0, "estimate": 10, "run_time": 10,
                       "request": {"cpus": 2}, "min_size": 1, "max_size": 8,
                       "speedup": "downey(8, 1)"}]}
    state = state_from_data(data)
    assert state.queue[0].moldable == Moldable(1, 8, Downey(8, 1))
    from schedc.runtime.workloads.state_file import state_to_data

    assert state_to_data(state)["queue"] == data["queue"]


@pytest.mark.parametrize(("extra", "message"), [
    ({"min_size": 1}, "needs both `min_size` and `max_size`"),
    ({"min_size": 3, "max_size": 8}, r"sizes \[3, 8\] must hold its request 2"),
    ({"min_size": 1, "max_size": 9}, "fit the 8 cpus"),
    ({"min_size": 1, "max_size": 8, "speedup": "dowey(8, 1)"}, "did you mean `downey`"),
])
def test_state_file_moldable_errors(extra, message) -> None:
    from schedc.runtime.workloads.workload import WorkloadError

    data = {"now": 0, "capacity": {"cpus": 8},
            "queue": [{"id": 1, "submit": 0, "estimate": 10, "run_time": 10,
                       "request": {"cpus": 2}, **extra}]}
    with pytest.raises(WorkloadError, match=message):
        state_from_data(data)


def test_cli_runs_a_trace_made_moldable(capsys) -> None:
    code = main(["run", str(ROOT / "examples" / "easy.pol"), "--range-factor", "2",
                 "--sigma", "1", "--load-factor", "125", "--json", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    result = json.loads(out)
    assert result["transform"] == "moldable: RF 2, Downey sigma 1, load 125%"
    assert result["metrics"]["jobs"] > 28_000


@pytest.mark.parametrize(("args", "message"), [
    (["--range-factor", "0.5"], "the range factor must be >= 1"),
    (["--sigma", "1"], "--sigma needs --range-factor"),
    (["--sigma", "1", "--load-factor", "125"], "--sigma needs --range-factor"),
    (["--load-factor", "-5"], "the load factor must be > 0"),
])
def test_cli_moldable_option_errors(args, message, capsys) -> None:
    code = main(["run", str(ROOT / "examples" / "easy.pol"), *args, "--no-progress"])
    assert code == 2
    assert message in capsys.readouterr().err


# -- job tables with a moldable range -----------------------------------------------------------

TABLE = '''id,submit,run_time,estimate,cpus,min_size,max_size,speedup
1,0,100,100,2,1,4,linear
2,0,10,10,1,1,1,
3,5,80,90,2,2,4,"downey(4, 0.5)"
'''


def test_job_table_moldable_columns(tmp_path: Path) -> None:
    from schedc.runtime.workloads.csv_table import read_csv_table

    path = tmp_path / "jobs.csv"
    path.write_text(TABLE)
    w = read_csv_table(path, capacities={"cpus": 4})
    assert [j.moldable for j in w.jobs] == [Moldable(1, 4, Linear()), Moldable(1, 1, Linear()),
                                            Moldable(2, 4, Downey(4, 0.5))]


@pytest.mark.parametrize(("row", "message", "col"), [
    ("4,0,1,1,2,3,4,linear", r"sizes \[3, 4\] must hold the request 2", 1),
    ("4,0,1,1,2,1,5,linear", "fit the 4 cpus", 1),
    ('4,0,1,1,2,1,4,"amdahl(2)"', "amdahl needs", 16),
    ("4,0,1,1,2,x,4,linear", "column `min_size` is not an integer", 11),
])
def test_job_table_moldable_errors(tmp_path: Path, row, message, col) -> None:
    from schedc.runtime.workloads.csv_table import read_csv_table
    from schedc.runtime.workloads.workload import WorkloadError

    path = tmp_path / "jobs.csv"
    path.write_text(TABLE + row + "\n")
    with pytest.raises(WorkloadError, match=message) as caught:
        read_csv_table(path, capacities={"cpus": 4})
    assert (caught.value.line, caught.value.col) == (5, col)
    assert caught.value.help not in str(caught.value.message)  # help adds, not repeats
    lenient = read_csv_table(path, capacities={"cpus": 4}, lenient=True)
    assert len(lenient.jobs) == 3 and lenient.skipped == {"malformed line": 1}


def test_job_table_needs_both_range_columns(tmp_path: Path) -> None:
    from schedc.runtime.workloads.csv_table import read_csv_table
    from schedc.runtime.workloads.workload import WorkloadError

    path = tmp_path / "jobs.csv"
    path.write_text("id,submit,run_time,estimate,cpus,min_size\n1,0,1,1,1,1\n")
    with pytest.raises(WorkloadError, match="needs both `min_size` and `max_size`"):
        read_csv_table(path, capacities={"cpus": 4})


def test_cli_runs_a_moldable_job_table(tmp_path: Path, capsys) -> None:
    table = tmp_path / "jobs.csv"
    table.write_text(TABLE)
    policy = tmp_path / "widest.pol"
    policy.write_text("policy widest { reserve 1 backfill first_fit size job.max_size }\n")
    out = tmp_path / "jobs-out.csv"
    code = main(["run", str(policy), "--workload", str(table), "--capacity", "cpus=4",
                 "--jobs-out", str(out), "--no-progress"])
    assert code == 0, capsys.readouterr().err
    _, rows = read_csv(out)
    # job 1 on 4 cpus for 50 s; job 2 (rigid) after it; job 3 (Downey A=4, sigma 0.5:
    # S(2) = 8/4.25, S(4) = 16/4.75) on 4 cpus from 60: 80 s * 38/68 = 44.7 -> 45
    assert [list(r.values())[:5] for r in rows] == [
        ["1", "0", "0", "50", "4"], ["2", "0", "50", "60", "1"], ["3", "5", "60", "105", "4"]]
    # each job's size, run time and estimate as it ran, beside its recorded request: job 3's
    # estimate on 4 cpus is 90 s * 38/68 = 50.3 -> 51 s
    shown = ("procs", "run_time", "estimate", "requested_procs", "requested_run_time",
             "requested_estimate")
    assert [[int(r[c]) for c in shown] for r in rows] == [
        [4, 50, 50, 2, 100, 100], [1, 10, 10, 1, 10, 10], [4, 45, 51, 2, 80, 90]]


def test_cli_generates_a_moldable_workload_that_runs(tmp_path: Path, capsys) -> None:
    out = tmp_path / "gen.csv"
    args = ["workload", "generate", "-o", str(out), "--jobs", "300", "--utilisation", "0.5",
            "--seed", "3"]
    assert main(args) == 0
    said = capsys.readouterr().out
    assert "wrote 300 jobs" in said and "offered utilisation 0.500 on 64 processors" in said
    scaled = tmp_path / "scaled.csv"
    assert main([*args[:3], str(scaled), *args[4:], "--time-scale", "100"]) == 0
    assert "units of 1/100 s; offered utilisation 0.500" in capsys.readouterr().out
    # the same draws, 100 times longer: the same jobs with times in 10 ms
    plain = [r.split(",") for r in out.read_text().splitlines()[1:]]
    fine_rows = scaled.read_text().splitlines()
    assert fine_rows[0] == "# time-unit 1/100 s"  # the reader reports seconds
    fine = [r.split(",") for r in fine_rows[2:]]
    assert [r[4] for r in plain] == [r[4] for r in fine]  # the same Pmax
    assert sum(int(r[2]) for r in fine) > 50 * sum(int(r[2]) for r in plain)
    first = out.read_bytes()
    assert main(args) == 0 and out.read_bytes() == first  # same seed, same bytes
    capsys.readouterr()
    rows = out.read_text().splitlines()
    assert rows[0] == "id,submit,run_time,estimate,cpus,min_size,max_size,speedup"
    assert len(rows) == 301
    policy = ROOT / "examples" / "map.pol"
    assert main(["run", str(policy), "--workload", str(out), "--capacity", "cpus=64",
                 "--json", "--no-progress"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["jobs"] == 300


def test_cli_generate_errors(tmp_path: Path, capsys) -> None:
    out = str(tmp_path / "gen.csv")
    assert main(["workload", "generate", "-o", out, "--utilisation", "0"]) == 2
    assert "target_utilisation: got 0.0" in capsys.readouterr().err
    assert main(["workload", "generate", "-o", out, "--mean-interarrival", "5",
                 "--pmax", "0"]) == 2
    assert "pmax_high" in capsys.readouterr().err
    assert main(["workload", "generate", "-o", out, "--mean-interarrival", "5",
                 "--time-scale", "0"]) == 2
    assert "--time-scale must be at least 1" in capsys.readouterr().err
    assert main(["workload", "generate", "-o", out]) == 2  # argparse: a rate is required
    assert "one of the arguments --mean-interarrival --utilisation is required" in \
        capsys.readouterr().err
    assert not Path(out).exists()  # nothing written on a mistake


def test_a_size_outside_a_moldable_range_is_a_replayable_counterexample(tmp_path: Path,
                                                                       capsys) -> None:
    # min(procs, free) ignores the job's minimum: proved for rigid jobs, not for moldable ones
    policy = tmp_path / "shrink.pol"
    policy.write_text("policy shrink { reserve 1 backfill first_fit "
                      "size max(1, min(job.procs, machine.free.cpus)) }\n")
    assert main(["verify", str(policy), "--queued", "2", "--running", "2", "--property",
                 "size-bounds", "--counterexamples", str(tmp_path)]) == 1
    (state,) = tmp_path.glob("*.json")
    (job,) = [j for j in json.loads(state.read_text())["queue"] if "min_size" in j]
    assert job["min_size"] > 1
    capsys.readouterr()
    assert main(["run", str(policy), "--state", str(state)]) == 1
    assert "(its moldable range)" in capsys.readouterr().err


def test_categories_are_by_the_recorded_weight() -> None:
    """Paper 000 compares per-category turnaround of rigid and moldable runs of one trace: a
    job stays in its category whatever size it ran on. Recorded on 2 cpus for 40 s (80,
    category 1); on 4 cpus with Amdahl f = 0.5 it runs ceil(40 * (4/3) / 1.6) = 34 s (136)."""
    from schedc.runtime.results.metrics import compute_metrics
    from schedc.runtime.speedup import Amdahl

    policy = compile_source("policy p { size job.max_size }", "<max>")
    w = workload([job(1, 0, 40, 40, 2, Moldable(1, 4, Amdahl(0.5)))], cpus=4)
    schedule = simulate(to_runtime(policy), w)
    (record,) = schedule.records
    assert (record.end - record.start, record.alloc) == (34, (4,))
    assert compute_metrics(schedule).category_jobs == (0, 1) + (0,) * 8
