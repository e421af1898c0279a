"""K-resource scheduling (papers/004, Leinberger, Karypis & Kumar): the Figure 1 example and
the prelude's Backfill Balanced and Backfill Lowest scores."""

from __future__ import annotations

import json
from itertools import product

import pytest

from schedc.dsl import compile_file, compile_source
from schedc.dsl.machines import with_resources
from schedc.dsl.verify.prover import verify_policy
from schedc.dsl.verify.verdict import Bounds
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.policy import PassState
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.jobs import Job
from schedc.runtime.workloads.workload import Workload
from tests.support.repo import ROOT

EXAMPLES = ROOT / "examples"

# Figure 1: 16 CPUs and 32 GB; six jobs at time 0, all of run time t (cpus, GB), in order.
T = 100
FIGURE_1 = ((8, 4), (4, 2), (7, 16), (11, 20), (1, 12), (1, 10))
MACHINE = (16, 32)


def figure_1() -> Workload:
    jobs = tuple(Job(i, i, 0, T, T, req) for i, req in enumerate(FIGURE_1))
    return Workload(jobs, ("cpus", "r2"), MACHINE)


def on_two_resources(name: str):
    """The example on the machine of its own resources plus a second one (`r2`, GB here)."""
    return to_runtime(with_resources(compile_file(EXAMPLES / name), 2))


def epochs(starts: list[int]) -> list[list[int]]:
    return [[j for j, s in enumerate(starts) if s == e * T]
            for e in range(max(starts) // T + 1)]


def test_figure_1_fcfs_needs_four_epochs() -> None:
    # 0 and 1, then 2 alone (8 + 4 + 7 > 16; 7 + 11 > 16), then 3 and 4 (12 GB + 20 GB),
    # then 5 (42 GB would not fit)
    starts = [r.start for r in simulate(on_two_resources("fcfs.pol"), figure_1()).records]
    assert epochs(starts) == [[0, 1], [2], [3, 4], [5]]


@pytest.mark.parametrize("name", ["ff-easy.pol", "easy.pol"])
def test_figure_1_fcfs_ff_needs_three_epochs(name: str) -> None:
    # job 2 is reserved at t; 4 and 5 backfill in the first epoch (they end by t); then 2,
    # then 3 (7 + 11 > 16)
    starts = [r.start for r in simulate(on_two_resources(name), figure_1()).records]
    assert epochs(starts) == [[0, 1, 4, 5], [2], [3]]


def test_figure_1_optimum_is_two_epochs_found_by_exhaustive_search() -> None:
    def fits(group: list[int]) -> bool:
        return all(sum(FIGURE_1[j][k] for j in group) <= MACHINE[k] for k in range(2))

    best = None
    for n_epochs in range(1, len(FIGURE_1) + 1):
        found = set()
        for assignment in product(range(n_epochs), repeat=len(FIGURE_1)):
            groups = [[j for j, e in enumerate(assignment) if e == g] for g in range(n_epochs)]
            if all(groups) and all(fits(g) for g in groups):
                found.add(frozenset(frozenset(g) for g in groups))
        if found:
            best = (n_epochs, found)
            break
    # two epochs, one way only: jobs 0, 2, 4 (16 cpus, 32 GB) and 1, 3, 5 (16, 32)
    assert best == (2, {frozenset({frozenset({0, 2, 4}), frozenset({1, 3, 5})})})


# -- the prelude's scores -----------------------------------------------------------------------

def score(name: str, job: Job, used: list[int], cap=MACHINE) -> float:
    fn = to_runtime(compile_source(
        f"machine m {{ resource cpus resource r2 }} policy p {{ machine m reserve 1 "
        f"backfill best by {name}(job) }}", "<t>")).score
    return fn(job, PassState(0, (), (), cap, list(used)))


def test_backfill_balanced_prefers_the_job_that_evens_the_resources() -> None:
    # 8 of 16 cpus and 4 of 32 GB in use: a memory-heavy job balances, a cpu-heavy one does not
    memory_heavy = Job(1, 0, 0, 1, 1, (1, 16))
    cpu_heavy = Job(2, 1, 0, 1, 1, (4, 2))
    used = [8, 4]
    # after: (9/16, 20/32) -> max/avg = 0.625/0.59375; (12/16, 6/32) -> 0.75/0.46875
    assert score("balance_measure", memory_heavy, used) == pytest.approx(0.625 / 0.59375)
    assert score("balance_measure", cpu_heavy, used) == pytest.approx(0.75 / 0.46875)
    assert score("fullness", memory_heavy, used) == pytest.approx(1 - 0.59375)
    assert score("bb_score", memory_heavy, used) < score("bb_score", cpu_heavy, used)


def test_backfill_lowest_marks_jobs_whose_largest_need_is_the_idlest_resource() -> None:
    used = [8, 4]  # memory (1/8 used) is the least utilised
    assert score("bl_score", Job(1, 0, 0, 1, 1, (1, 16)), used) == 0  # largest share: memory
    assert score("bl_score", Job(2, 1, 0, 1, 1, (4, 2)), used) == pytest.approx(
        1 - (12 / 16 + 6 / 32) / 2)  # largest share: cpus


@pytest.mark.parametrize("name", ["bb-easy.pol", "bl-easy.pol"])
def test_balancing_examples_are_proved_on_two_resources(name: str) -> None:
    # K up to 8: `schedc verify examples/bb-easy.pol --resources 8` (docs: performance)
    verdicts = verify_policy(with_resources(compile_file(EXAMPLES / name), 2), Bounds(4, 4))
    assert {v.status for v in verdicts} == {"proved"}, [
        (v.property, v.status, v.reason) for v in verdicts if v.status != "proved"]


def test_bb_easy_starts_the_balancing_job_first() -> None:
    # 16 cpus, 32 GB; job 0 holds (8, 4) until 100; job 1 (16, 32) is reserved at 100. At 1
    # three candidates of 50 s fit now and end by 100: job 2 (7, 2), job 3 (1, 28), job 4
    # (1, 26). FF starts 2, then 4 (3 no longer fits), and 3 waits for job 1: 150.
    # BB scores (used 8/16, 4/32): job 3 0.28 (it fills the memory), job 4 0.31, job 2 0.73:
    # it starts 3, after which neither 2 nor 4 fits; they run after job 1, at 150.
    jobs = (Job(0, 0, 0, 100, 100, (8, 4)), Job(1, 1, 1, 50, 50, (16, 32)),
            Job(2, 2, 1, 50, 50, (7, 2)), Job(3, 3, 1, 50, 50, (1, 28)),
            Job(4, 4, 1, 50, 50, (1, 26)))
    w = Workload(jobs, ("cpus", "r2"), MACHINE)
    ff = [r.start for r in simulate(on_two_resources("ff-easy.pol"), w).records]
    bb = [r.start for r in simulate(on_two_resources("bb-easy.pol"), w).records]
    assert ff == [0, 100, 1, 150, 1]
    assert bb == [0, 100, 150, 1, 150]


# -- `schedc run --resources`: a policy on more resources than its machine declares ----------

def test_cli_runs_figure_1_with_named_resources(tmp_path, capsys) -> None:
    from schedc.runtime.cli.main import main

    table = tmp_path / "fig1.csv"
    table.write_text("id,submit,run_time,estimate,cpus,memory\n" + "".join(
        f"{i},0,{T},{T},{c},{m}\n" for i, (c, m) in enumerate(FIGURE_1)))
    spans = {}
    for name in ("fcfs.pol", "ff-easy.pol"):
        assert main(["run", str(EXAMPLES / name), "--workload", str(table), "--resources",
                     "cpus,memory", "--capacity", "cpus=16", "--capacity", "memory=32",
                     "--json"]) == 0
        spans[name] = json.loads(capsys.readouterr().out)["metrics"]["makespan"]
    assert spans == {"fcfs.pol": 4 * T, "ff-easy.pol": 3 * T}


@pytest.mark.parametrize("spec, message", [
    ("memory,cpus", "must begin with the machine `default`'s own: cpus"),
    ("cpus,cpus", "a resource is named twice"),
    ("cpus,mem ory", "is not a resource name"),
])
def test_cli_resources_mistakes(spec: str, message: str, tmp_path, capsys) -> None:
    from schedc.runtime.cli.main import main

    assert main(["run", str(EXAMPLES / "fcfs.pol"), "--resources", spec]) == 2
    err = capsys.readouterr().err
    assert message in err and "help: list the machine's own first" in err


def test_a_counterexample_on_k_resources_replays_with_the_same_option(tmp_path, capsys) -> None:
    # `verify --resources 2` names a generic resource r2; `run --resources 2` gives the
    # policy that machine, so the state replays (it did not before: r2 was unknown)
    from schedc.runtime.cli.main import main

    broken = EXAMPLES / "broken" / "easy-freeprocs.pol"
    assert main(["verify", str(broken), "--resources", "2", "--queued", "3", "--running", "3",
                 "--property", "reservation-safety", "--counterexamples", str(tmp_path)]) == 1
    (state,) = tmp_path.glob("*.json")
    assert "r2" in state.read_text()
    capsys.readouterr()
    assert main(["run", str(broken), "--state", str(state), "--resources", "2"]) == 1
    assert "delayed" in capsys.readouterr().err
