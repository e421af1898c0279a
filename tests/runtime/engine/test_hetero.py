"""Heterogeneous, non-dedicated clusters (papers/002): processors with speeds in BPU and a
background load; HAP and IHAP read them as `machine.bpu.cpus` and `machine.power.cpus`."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from schedc.dsl import compile_file, compile_source
from schedc.runtime.cli.main import main
from schedc.runtime.engine.cluster import Cluster, ClusterError, parse_speeds, wall_time
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.monitor import MonitorViolation
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.jobs import Job
from schedc.runtime.workloads import synthetic
from schedc.runtime.workloads.load import load_workload
from schedc.runtime.workloads.workload import Workload
from tests.support.repo import ROOT
from tests.support.schedule_checks import assert_feasible

PAPER = Cluster(parse_speeds("32x1,32x2"), 0.3, 1)  # papers/002's cluster


def policy(clauses: str):
    return to_runtime(compile_source(f"policy p {{ {clauses} }}", "<test>"))


@cache
def generated(tmp: Path) -> Workload:
    # papers/002's workload at offered utilisation 0.6 (eq. 9), times in 1/100 s
    spec = synthetic.SyntheticSpec(jobs=2000, mean_interarrival=16 / (0.6 * 64) * 100,
                                   cv_interarrival=1, mean_demand=1600, cv_demand=4,
                                   pmax_high=32, seed=3)
    path = tmp / "paper002.csv"
    synthetic.write_schedc_table(synthetic.generate(spec), path)
    return load_workload(str(path), capacities={"cpus": 64})


# -- the model -----------------------------------------------------------------------------------

def test_speeds_parse_and_describe() -> None:
    assert parse_speeds("2x1, 1x2.5") == (1.0, 1.0, 2.5)
    assert PAPER.describe() == "32 x 1 BPU + 32 x 2 BPU, load U(0, 0.3)"
    for bad in ("32", "0x1", "2x0", "2x-1", "x2", ""):
        with pytest.raises(ClusterError, match="bad processor group"):
            parse_speeds(bad)
    with pytest.raises(ClusterError, match=r"not in \[0, 1\)"):
        Cluster((1.0,), 1.0)


def test_wall_time_rounds_up_and_keeps_zero() -> None:
    assert wall_time(100, 2, 4.0) == 50
    assert wall_time(100, 2, 3.0) == 67  # 66.67 s
    assert wall_time(1, 4, 8.0) == 1  # never below 1 s
    assert wall_time(0, 4, 8.0) == 0


# 4 processors: two of 1 BPU, two of 2 BPU, no background load. Three rigid jobs of 2 cpus
# and 100 s (on 1-BPU cpus) at t = 0: job 1 gets the fast pair, 200 s of work on 4 BPU: 50 s;
# job 2 the slow pair: 100 s; job 3 waits for job 1's pair at 50 and takes 50 s.
TWO_SPEEDS = Cluster((1.0, 1.0, 2.0, 2.0))
THREE_JOBS = Workload(tuple(Job(i + 1, i, 0, 100, 100, (2,)) for i in range(3)),
                      ("cpus",), (4,))


def test_the_fastest_idle_processors_and_times_by_their_power() -> None:
    schedule = simulate(policy("reserve 0 backfill first_fit"), THREE_JOBS, cluster=TWO_SPEEDS)
    assert [(r.start, r.end) for r in schedule.records] == [(0, 50), (0, 100), (50, 100)]
    assert_feasible(schedule, TWO_SPEEDS)


def test_machine_attributes_see_speeds_and_loads() -> None:
    # every start checks the invariants with the state of the pass: the loads of its instant
    bounds = ("invariant machine.bpu.cpus == 96 "
              "invariant machine.power.cpus <= machine.bpu.cpus "
              "invariant machine.power.cpus >= 0.7 * machine.bpu.cpus")
    w = Workload(tuple(Job(i + 1, i, i, 50, 60, (8,)) for i in range(40)), ("cpus",), (64,))
    simulate(policy(f"reserve 0 backfill first_fit {bounds}"), w, cluster=PAPER)
    exact = policy("reserve 0 backfill first_fit invariant machine.power.cpus == 96")
    simulate(exact, w, cluster=Cluster(PAPER.speeds))  # no load: all the speed is there
    with pytest.raises(MonitorViolation, match="machine.power.cpus == 96"):
        simulate(exact, w, cluster=PAPER)
    # a dedicated homogeneous machine: both are its capacity
    simulate(policy("reserve 0 backfill first_fit invariant machine.power.cpus == 64 "
                    "invariant machine.bpu.cpus == 64"), w)


def test_same_seed_same_schedule_other_seed_other(tmp_path_factory) -> None:
    w = generated(tmp_path_factory.getbasetemp())
    ihap = to_runtime(compile_file(ROOT / "examples" / "ihap.pol"))
    runs = [[(r.start, r.end, r.alloc) for r in simulate(ihap, w, cluster=c).records]
            for c in (PAPER, PAPER, Cluster(PAPER.speeds, 0.3, 2))]
    assert runs[0] == runs[1] != runs[2]


@pytest.mark.parametrize("name", ["map.pol", "hap.pol", "ihap.pol", "ap2.pol"])
def test_paper_policies_run_on_the_paper_cluster(name: str, tmp_path_factory) -> None:
    w = generated(tmp_path_factory.getbasetemp())
    schedule = simulate(to_runtime(compile_file(ROOT / "examples" / name)), w, cluster=PAPER)
    assert len(schedule.records) == len(w.jobs)
    assert_feasible(schedule, PAPER)


def test_hap_sees_more_than_map_and_ihap_less(tmp_path_factory) -> None:
    # 96 BPU against 64 cpus: HAP's partitions are at least MAP's; IHAP's (power <= 96) at
    # most HAP's, at the same state. Over a run the mean sizes keep that order.
    w = generated(tmp_path_factory.getbasetemp())
    mean = {}
    for name in ("map", "hap", "ihap"):
        s = simulate(to_runtime(compile_file(ROOT / "examples" / f"{name}.pol")), w,
                     cluster=PAPER)
        mean[name] = sum(r.alloc[0] for r in s.records) / len(s.records)
    assert mean["hap"] > mean["map"] and mean["hap"] > mean["ihap"]


# -- mistakes ----------------------------------------------------------------------------------

def test_reservations_are_refused() -> None:
    with pytest.raises(ClusterError, match="makes reservations"):
        simulate(policy("reserve 1 backfill first_fit"), THREE_JOBS, cluster=TWO_SPEEDS)
    with pytest.raises(ClusterError, match="has 2 processors but the machine 4 cpus"):
        simulate(policy("backfill none"), THREE_JOBS, cluster=Cluster((1.0, 2.0)))


@pytest.mark.parametrize("argv, message", [
    (["--background-load", "0.3"], "--background-load and --load-seed need --speeds"),
    (["--speeds", "32x"], "bad processor group '32x'"),
    (["--speeds", "64x1", "--background-load", "1.5"], "background load 1.5 is not in"),
    (["--speeds", "4x1"], "has 4 processors but the machine 64 cpus"),
])
def test_cli_mistakes(argv: list[str], message: str, tmp_path_factory, capsys) -> None:
    generated(tmp_path_factory.getbasetemp())
    path = tmp_path_factory.getbasetemp() / "paper002.csv"
    code = main(["run", str(ROOT / "examples" / "ihap.pol"), "--workload", str(path),
                 "--capacity", "cpus=64", *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "help:" in err and "Traceback" not in err


def test_cli_runs_the_paper_cluster(tmp_path_factory, capsys) -> None:
    generated(tmp_path_factory.getbasetemp())
    path = tmp_path_factory.getbasetemp() / "paper002.csv"
    code = main(["run", str(ROOT / "examples" / "ihap.pol"), "--workload", str(path),
                 "--speeds", "32x1,32x2", "--background-load", "0.3", "--json"])
    out = capsys.readouterr().out
    assert code == 0 and '"cluster": "32 x 1 BPU + 32 x 2 BPU, load U(0, 0.3)"' in out
