"""Every example compiles and runs on the shared traces with a feasible schedule, and policies
that must coincide do coincide (differential tests through the whole compile-and-run path)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from schedc.dsl import compile_file, compile_source
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.policy import RuntimePolicy
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.run import bundled_trace
from schedc.runtime.workloads.load import load_workload
from schedc.runtime.workloads.workload import Workload
from tests.support.schedule_checks import assert_feasible, starts
from tests.support.shared_traces import any_real_workload, shared_trace

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SHARED_TRACES = ["KTH-SP2-1996-2.1-cln.swf.gz", "NASA-iPSC-1993-3.1-cln.swf.gz",
                 "lublin_256.swf.gz", "LANL-CM5-1994-4.1-cln.swf.gz"]
# sizes for moldable workloads (papers/000, 002): run on traces made moldable, and on
# generated workloads, below
MOLDABLE_EXAMPLES = ["ap2.pol", "map.pol", "hap.pol", "ihap.pol", "fairshare.pol",
                     "sqrt-fairshare.pol", "robust-moldable.pol", "submit-greedy.pol",
                     "submit-fairshare.pol"]
CPU_EXAMPLES = sorted(p.name for p in EXAMPLES.glob("*.pol")
                      if p.name not in ("easy-memory.pol", *MOLDABLE_EXAMPLES))


@cache
def workload(name: str, resources: tuple[str, ...] = ("cpus",)) -> Workload:
    path = bundled_trace() if name == "bundled" else shared_trace(name)
    return load_workload(str(path), resources=resources, capacities={})


@cache
def example(name: str, **params: str) -> RuntimePolicy:
    return to_runtime(compile_file(EXAMPLES / name), dict(params))


def from_source(text: str) -> RuntimePolicy:
    return to_runtime(compile_source(text, "<test>"))


@pytest.mark.slow
@pytest.mark.parametrize("trace", SHARED_TRACES)
@pytest.mark.parametrize("name", CPU_EXAMPLES)
def test_example_runs_feasibly(name: str, trace: str) -> None:
    schedule = simulate(example(name), workload(trace))
    assert len(schedule.records) == len(workload(trace).jobs)
    assert_feasible(schedule)


@pytest.mark.parametrize("name", MOLDABLE_EXAMPLES)
def test_moldable_example_on_a_trace_made_moldable(name: str) -> None:
    from schedc.runtime.workloads.moldable import MoldableSpec, make_moldable

    # any real trace will do: NASA's is the smallest, the bundled KTH-SP2 stands in for it
    load = make_moldable(any_real_workload("NASA-iPSC-1993-3.1-cln.swf.gz"),
                         MoldableSpec(range_factor=2, sigma=0.5, load_factor=125))
    schedule = simulate(example(name), load)
    assert len(schedule.records) == len(load.jobs)
    assert_feasible(schedule)
    # the sizes really vary: the policy is not the rigid one in disguise
    assert sum(r.alloc[0] != r.job.procs for r in schedule.records) > len(load.jobs) // 10


@cache
def generated(tmp: Path) -> Workload:
    from schedc.runtime.workloads import synthetic

    # offered utilisation 400 / (9 * 64) = 0.69 (eq. 9)
    spec = synthetic.SyntheticSpec(jobs=1500, mean_interarrival=9.0, cv_interarrival=1,
                                   mean_demand=400, cv_demand=4, pmax_high=32, seed=7)
    path = tmp / "generated.csv"
    synthetic.write_schedc_table(synthetic.generate(spec), path)
    return load_workload(str(path), capacities={"cpus": 64})


@pytest.mark.parametrize("name", MOLDABLE_EXAMPLES)
def test_moldable_example_on_a_generated_workload(name: str, tmp_path_factory) -> None:
    load = generated(tmp_path_factory.getbasetemp())
    schedule = simulate(example(name), load)
    assert len(schedule.records) == 1500
    assert_feasible(schedule)


def test_memory_example_on_lanl() -> None:
    path = shared_trace("LANL-CM5-1994-4.1-cln.swf.gz")
    policy = example("easy-memory.pol")
    assert policy.resources == ("cpus", "memory")
    declared = dict(zip(policy.resources, policy.capacities, strict=True))
    load = load_workload(str(path), resources=policy.resources, capacities=declared)
    assert load.capacities == (1024, 33_554_432)
    assert any(job.request[1] > 0 for job in load.jobs)
    schedule = simulate(policy, load)
    assert_feasible(schedule)


# --- policies that must coincide ----------------------------------------------------------


def test_depth_one_is_easy() -> None:
    load = workload("bundled")
    assert starts(simulate(example("depth2.pol", depth="1"), load)) == starts(
        simulate(example("easy.pol"), load))


def test_reserving_more_than_the_queue_is_conservative() -> None:
    load = workload("NASA-iPSC-1993-3.1-cln.swf.gz")
    deep = from_source("policy deep { reserve 1000000 backfill first_fit }")
    assert starts(simulate(deep, load)) == starts(simulate(example("conservative.pol"), load))


def test_best_by_queue_position_is_first_fit() -> None:
    # In FCFS order, the fitting candidate with the smallest submit time (ties: queue order)
    # is the first fitting one in queue order: best-score backfilling must equal first fit.
    load = workload("bundled")
    best = from_source("policy best { reserve 1 backfill best by job.submit asc }")
    assert starts(simulate(best, load)) == starts(simulate(example("easy.pol"), load))


def test_equal_estimates_make_sjf_fcfs() -> None:
    # With every estimate equal, SJF order degenerates to its tie-breakers: FCFS.
    load = workload("bundled")
    same = Workload(
        jobs=tuple(j.__class__(j.id, j.index, j.submit, min(j.run_time, 3600), 3600, j.request)
                   for j in load.jobs),
        resources=load.resources, capacities=load.capacities, source="equal estimates")
    assert starts(simulate(example("easy-sjf.pol"), same)) == starts(
        simulate(example("easy.pol"), same))


def test_fcfs_never_starts_out_of_order() -> None:
    schedule = simulate(example("fcfs.pol"), workload("bundled"))
    previous = -1
    for record in sorted(schedule.records, key=lambda r: (r.job.submit, r.job.index)):
        assert record.start >= previous
        previous = record.start


@pytest.mark.parametrize("name", CPU_EXAMPLES)
def test_fast_paths_change_no_start(name: str) -> None:
    # The one-resource kernel, the shadow plan and continuations against the plain
    # profile-based pass, through the compiled examples (static SJF/LJF keys included).
    load = workload("NASA-iPSC-1993-3.1-cln.swf.gz")
    policy = example(name)
    assert starts(simulate(policy, load)) == starts(
        simulate(policy, load, fast=False, incremental=False))


def test_memoised_aggregates_change_no_start(monkeypatch) -> None:
    # Job-independent sums (fair share's work in the system) are computed once per machine
    # state (numbers.memo); computing them at every call must give the same schedule.
    from schedc.dsl.semantics import python_code
    from schedc.runtime.workloads.moldable import MoldableSpec, make_moldable

    # any real trace will do: NASA's is the smallest, the bundled KTH-SP2 stands in for it
    load = make_moldable(any_real_workload("NASA-iPSC-1993-3.1-cln.swf.gz"),
                         MoldableSpec(range_factor=2, sigma=1, load_factor=150))
    memoised = simulate(example("sqrt-fairshare.pol"), load)
    # the generated code reads its helpers from python_code's namespace
    monkeypatch.setitem(python_code._NAMESPACE, "_memo", lambda state, key, compute: compute())
    fresh = to_runtime(compile_file(EXAMPLES / "sqrt-fairshare.pol"))
    plain = simulate(fresh, load)
    assert [(r.start, r.alloc) for r in memoised.records] == [
        (r.start, r.alloc) for r in plain.records]


def test_wfp_starts_the_job_that_waited_longest_for_its_length(tmp_path: Path) -> None:
    # 4 cpus, job 1 holds them until 100. At 100, job 2 (1000 s) has waited 99 s: (99/1000)^3
    # x 4 = 0.004; job 3 (10 s) has waited 50 s: (50/10)^3 x 4 = 500, so WFP starts it first;
    # EASY starts job 2 first, and job 3 only after it
    table = tmp_path / "jobs.csv"
    table.write_text("id,submit,run_time,estimate,cpus\n1,0,100,100,4\n2,1,1000,1000,4\n"
                     "3,50,10,10,4\n")
    load = load_workload(str(table), capacities={"cpus": 4})
    by_id = lambda s: {r.job.id: r.start for r in s.records}  # noqa: E731
    assert by_id(simulate(example("wfp.pol"), load)) == {1: 0, 2: 110, 3: 100}
    assert by_id(simulate(example("easy.pol"), load)) == {1: 0, 2: 100, 3: 1100}


@pytest.mark.parametrize("name", ["wfp.pol", "user-fairshare.pol"])
def test_label_and_power_examples_run_from_the_command_line(name: str, tmp_path: Path,
                                                             capsys) -> None:
    from schedc.runtime.cli.main import main

    table = tmp_path / "jobs.csv"
    table.write_text("# capacity cpus=4\nid,submit,run_time,estimate,cpus,user\n"
                     "1,0,100,100,2,ann\n2,0,50,50,2,bob\n3,1,100,100,2,ann\n4,2,100,100,2,bob\n")
    assert main(["run", str(EXAMPLES / name), "--workload", str(table), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["jobs"] == 4
