"""Policies that read who submitted a job: the user fair-share example and `reserve N per
job.user`, on hand-checked schedules, and the label attributes in formulas."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from schedc.dsl import compile_file, compile_source
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.workloads.load import load_workload
from tests.support.schedule_checks import assert_feasible
from tests.support.shared_traces import any_real_workload

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"


def starts(schedule) -> dict[int, int]:
    return {r.job.id: r.start for r in schedule.records}


def table(tmp_path: Path, rows: str, cpus: int) -> object:
    path = tmp_path / "jobs.csv"
    path.write_text("id,submit,run_time,estimate,cpus,user\n" + rows)
    return load_workload(str(path), capacities={"cpus": cpus})


# 4 cpus. Jobs 1 (alice) and 2 (bob) start at 0; bob's ends at 50. Then alice holds half the
# machine and bob nothing: fair share starts bob's job 4 before alice's job 3, which FCFS
# (EASY) starts first.
FAIR_ROWS = ("1,0,100,100,2,alice\n2,0,50,50,2,bob\n"
             "3,1,100,100,2,alice\n4,2,100,100,2,bob\n")


def test_user_fairshare_starts_the_user_with_the_smaller_share(tmp_path: Path) -> None:
    load = table(tmp_path, FAIR_ROWS, 4)
    assert [j.user for j in load.jobs] == [1, 2, 1, 2]
    fair = simulate(to_runtime(compile_file(EXAMPLES / "user-fairshare.pol")), load)
    easy = simulate(to_runtime(compile_file(EXAMPLES / "easy.pol")), load)
    assert starts(fair) == {1: 0, 2: 0, 3: 100, 4: 50}
    assert starts(easy) == {1: 0, 2: 0, 3: 50, 4: 100}


def test_user_fairshare_with_one_user_is_easy(tmp_path: Path) -> None:
    # every share is the same: the order falls back to submit, as EASY's
    load = table(tmp_path, FAIR_ROWS.replace("bob", "alice"), 4)
    fair = simulate(to_runtime(compile_file(EXAMPLES / "user-fairshare.pol")), load)
    easy = simulate(to_runtime(compile_file(EXAMPLES / "easy.pol")), load)
    assert starts(fair) == starts(easy) == {1: 0, 2: 0, 3: 50, 4: 100}


# 10 cpus. Job 0 holds 6 until 100; job 1 (user 1, 8 cpus) is reserved at 100; job 2
# (user 2, the whole machine) gets a reservation at 200 only if reservations are per user;
# job 3 (user 3, 2 cpus, 300 s) fits now and beside job 1, but would delay job 2.
PER_USER_ROWS = ("0,0,100,100,6,1\n1,1,100,100,8,1\n2,2,100,100,10,2\n3,3,300,300,2,3\n")
PER_USER = "policy p { reserve 1 per job.user backfill first_fit }"
EASY = "policy p { reserve 1 backfill first_fit }"


def test_one_reservation_per_user(tmp_path: Path) -> None:
    load = table(tmp_path, PER_USER_ROWS, 10)
    per_user = simulate(to_runtime(compile_source(PER_USER, "<t>")), load)
    easy = simulate(to_runtime(compile_source(EASY, "<t>")), load)
    assert starts(per_user) == {0: 0, 1: 100, 2: 200, 3: 300}
    assert starts(easy) == {0: 0, 1: 100, 2: 303, 3: 3}
    # one user for all: one reservation in all, EASY
    same = table(tmp_path, PER_USER_ROWS.replace(",2\n", ",1\n").replace(",3\n", ",1\n"), 10)
    assert starts(simulate(to_runtime(compile_source(PER_USER, "<t>")), same)) == \
        starts(simulate(to_runtime(compile_source(EASY, "<t>")), same))


def test_per_user_on_a_real_trace_bounds_easy_and_conservative() -> None:
    # a user of their own for every job: conservative; one user for all: EASY
    load = any_real_workload("NASA-iPSC-1993-3.1-cln.swf.gz", stand_in_jobs=800)
    load = attrs.evolve(load, jobs=load.jobs[:800])
    own = attrs.evolve(load, jobs=tuple(attrs.evolve(j, user=j.id) for j in load.jobs))
    one = attrs.evolve(load, jobs=tuple(attrs.evolve(j, user=-1) for j in load.jobs))
    per_user = to_runtime(compile_source(PER_USER, "<t>"))
    conservative = to_runtime(compile_file(EXAMPLES / "conservative.pol"))
    easy = to_runtime(compile_source(EASY, "<t>"))
    schedule = simulate(per_user, own)
    assert_feasible(schedule)
    assert starts(schedule) == starts(simulate(conservative, own))
    assert starts(simulate(per_user, one)) == starts(simulate(easy, one))


@pytest.mark.parametrize("attr", ["user", "group", "executable", "queue", "partition"])
def test_every_label_reads_as_written(tmp_path: Path, attr: str) -> None:
    # ordered by the label, descending: the job with the largest label starts first
    path = tmp_path / "jobs.csv"
    path.write_text(f"id,submit,run_time,estimate,cpus,{attr}\n1,0,10,10,4,3\n2,0,10,10,4,9\n"
                    "3,0,10,10,4,\n")
    load = load_workload(str(path), capacities={"cpus": 4})
    policy = to_runtime(compile_source(f"policy p {{ order job.{attr} desc }}", "<t>"))
    assert starts(simulate(policy, load)) == {2: 0, 1: 10, 3: 20}
