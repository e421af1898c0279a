"""A state file's preempted jobs and job histories (``runtime/workloads/state_file.py``):
what the reader builds (``History``, the processors it assigns, the workload's order), the
round trip through ``state_to_data``, and one test per rule broken."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from schedc.runtime.workloads.state_file import (
    History,
    load_state,
    state_from_data,
    state_to_data,
)
from schedc.runtime.workloads.workload import WorkloadError


def job(jid: int, submit: int, cpus: int, run: int, **extra) -> dict:
    return {"id": jid, "submit": submit, "estimate": run, "run_time": run,
            "request": {"cpus": cpus}, **extra}


def state() -> dict:
    """At 10 on 4 cpus: job 1 runs on 0-1, job 2 is suspended on 2-3, job 3 waits (it ran
    before: requeued), job 4 is stopped after a checkpoint, job 5 arrives at 20."""
    return {"now": 10, "capacity": {"cpus": 4},
            "running": [job(1, 0, 2, 100, start=5, processors=[0, 1], acquired=30,
                            preemptions=1, progress=0.25)],
            "queue": [job(3, 8, 1, 20, acquired=4, preemptions=1, last_start=8)],
            "suspended": [job(2, 0, 2, 50, processors=[2, 3], progress="1/3",
                              last_start=1)],
            "stopped": [job(4, 0, 3, 40, min_size=1, max_size=4, size=2, acquired=20)],
            "arrivals": [job(5, 20, 1, 5)]}


def test_the_reader_builds_each_job_s_history() -> None:
    s = state_from_data(state())
    assert [j.id for j in s.workload.jobs] == [1, 3, 2, 4, 5]  # running, queue, suspended,
    assert [j.index for j in s.workload.jobs] == [0, 1, 2, 3, 4]  # stopped, arrivals
    assert [j.id for j in s.suspended] == [2] and [j.id for j in s.stopped] == [4]
    assert s.histories == {
        0: History((0, 1), 2, 30, 1, Fraction(1, 4), 5),
        1: History((), 0, 4, 1, Fraction(0), 8),
        2: History((2, 3), 2, 0, 1, Fraction(1, 3), 1),
        3: History((), 2, 20, 1, Fraction(0), None)}
    assert s.has_history


def test_a_queued_job_has_a_history_only_when_the_file_gives_one() -> None:
    data = state()
    data["queue"].append(job(6, 9, 1, 5))
    data["queue"].append(job(7, 9, 1, 5, preemptions=0))
    s = state_from_data(data)
    by_id = {j.id: j.index for j in s.queue}
    assert by_id[6] not in s.histories and s.histories[by_id[7]] == History((), 0)


def test_processors_not_listed_are_the_lowest_no_job_lists_in_file_order() -> None:
    # job 2 lists cpu 0: job 1 (running, 2 cpus) takes 1-2, job 8 (suspended) 3
    data = {"now": 10, "capacity": {"cpus": 4}, "running": [job(1, 0, 2, 100, start=5)],
            "suspended": [job(8, 0, 1, 5), job(2, 0, 1, 50, processors=[0])]}
    s = state_from_data(data)
    assert [s.histories[i].processors for i in (0, 1, 2)] == [(1, 2), (3,), (0,)]


def test_a_suspended_job_may_share_processors_with_running_and_suspended_ones() -> None:
    data = {"now": 10, "capacity": {"cpus": 4},
            "running": [job(1, 0, 4, 100, start=5, processors=[0, 1, 2, 3])],
            "suspended": [job(2, 0, 2, 50, processors=[0, 1]),
                          job(3, 0, 2, 50, processors=[1, 2])]}
    s = state_from_data(data)
    assert s.histories[2].processors == (1, 2)


@pytest.mark.parametrize("edit", [
    lambda d: None,
    lambda d: d["running"][0].pop("processors"),  # then none is listed: file order gives
    lambda d: d["suspended"][0].pop("processors"),  # the same ones, and none is written
    lambda d: d["suspended"][0].update(processors=[0, 3]),
    lambda d: d["running"][0].update(progress="1/7"),  # no decimal: written "p/q"
    lambda d: d.update(queue=[job(3, 8, 1, 20)]),
])
def test_a_state_round_trips_through_its_data(edit) -> None:
    data = state()
    edit(data)
    s = state_from_data(data)
    assert state_from_data(state_to_data(s)) == s


def test_data_leaves_out_what_the_reader_defaults_to() -> None:
    data = state()
    for key in ("running", "suspended"):
        data[key][0].pop("processors")  # as file order gives them
    out = state_to_data(state_from_data(data))
    assert "processors" not in out["running"][0] and "processors" not in out["suspended"][0]
    assert out["running"][0]["progress"] == 0.25 and out["suspended"][0]["progress"] == "1/3"
    assert "preemptions" not in out["suspended"][0]  # 1, its default
    assert out["stopped"][0]["size"] == 2
    assert "last_start" not in out["running"][0]  # its `start`


def test_a_rigid_state_is_written_as_before() -> None:
    data = {"now": 2, "capacity": {"cpus": 10}, "params": {},
            "running": [job(1, 0, 6, 100, start=0)], "queue": [job(2, 1, 10, 100)]}
    s = state_from_data(data)
    assert not s.has_history and s.histories[0] == History(tuple(range(6)), 6, last_start=0)
    assert state_to_data(s) == data


def test_history_fields_at_their_defaults_say_nothing() -> None:
    # a rigid policy replays this state: nothing in it is a preemptive job's past
    data = {"now": 2, "capacity": {"cpus": 10},
            "running": [job(1, 0, 6, 100, start=0, processors=[0, 1, 2, 3, 4, 5],
                            acquired=0, preemptions=0, progress=0)],
            "queue": [job(2, 1, 10, 100, preemptions=0, acquired=0)]}
    assert not state_from_data(data).has_history
    for key, value in (("last_start", 1), ("acquired", 5), ("progress", 0.5)):
        changed = json.loads(json.dumps(data))
        changed["queue"][0][key] = value
        assert state_from_data(changed).has_history, key
    data["running"][0]["processors"] = [4, 5, 6, 7, 8, 9]
    assert state_from_data(data).has_history


def test_a_running_job_whose_work_ends_at_now_is_a_state() -> None:
    # a quarter done at 0, then 75 s of 100: it ends at now and frees its cpus before the pass
    data = {"now": 75, "capacity": {"cpus": 4},
            "running": [job(1, 0, 2, 100, start=0, progress=0.25)]}
    assert state_from_data(data).histories[0].progress == Fraction(1, 4)


@pytest.mark.parametrize("edit, message, help", [
    (lambda d: d["running"][0].update(processors=[]), "must be a non-empty JSON list",
     "processors are numbered 0 to 3"),
    (lambda d: d["running"][0].update(processors="0-1"), "must be a non-empty JSON list",
     "write e.g. [0, 1]"),
    (lambda d: d["running"][0].update(processors=[0, 4]), "there is no processor 4",
     "the capacity of cpus is 4"),
    (lambda d: d["running"][0].update(processors=[0, 1.5]), "is not an integer",
     "whole units"),
    (lambda d: d["suspended"][0].update(processors=[2, 2]), "processor 2 is listed twice",
     "list each processor once"),
    (lambda d: d["running"][0].update(processors=[0, 1, 2]), "3 processors for the 2 cpus "
     "it holds (its request)", "one processor for each cpu"),
    (lambda d: d["running"][0].update(size=3),
     "2 processors for the 3 cpus it holds (its `size`)", "one processor for each cpu"),
    (lambda d: d["running"].append(job(9, 0, 1, 100, start=5, processors=[1])),
     "processor 1 is also held by running[0] (job 1)", "running jobs hold disjoint"),
    (lambda d: d["running"].append(job(9, 0, 2, 100, start=5)),
     "it needs 2 processors and 0 are left", "give its `processors`"),
    (lambda d: d["running"][0].update(progress="half"), "\"half\" is not a number",
     "\"1/3\""),
    (lambda d: d["running"][0].update(progress=True), "true is not a number", "\"1/3\""),
    (lambda d: d["suspended"][0].update(progress=1), "1 is not in [0, 1)",
     "at least 0, below 1"),
    (lambda d: d["stopped"][0].update(progress=-0.5), "-0.5 is not in [0, 1)",
     "at least 0, below 1"),
    (lambda d: d["running"][0].update(progress=0.96), "its work is done at 9",
     "progress + (now - start) / T(size) <= 1"),
    (lambda d: d["running"][0].update(acquired=-1), "running[0].acquired: -1 is below 0",
     "at least 0"),
    (lambda d: d["running"][0].update(preemptions=-1), "running[0].preemptions: -1 is below 0",
     "at least 0"),
    (lambda d: d["suspended"][0].update(preemptions=0),
     "suspended[0].preemptions: 0 is below 1", "at least 1"),
    (lambda d: d["stopped"][0].update(preemptions=0), "stopped[0].preemptions: 0 is below 1",
     "at least 1"),
    (lambda d: d["suspended"][0].update(last_start=11), "last_start 11 is not between its "
     "submit 0 and now 10", "after its submission, by now"),
    (lambda d: d["queue"][0].update(last_start=7), "last_start 7 is not between its submit 8",
     "after its submission, by now"),
    (lambda d: d["suspended"][0].update(processors=[1, 2, 3]), "it ran on 3 processors, "
     "outside its sizes [2, 2]", "a size in [min_size, max_size]"),
    (lambda d: d["suspended"][0].update(min_size=1, max_size=4, processors=[0, 1, 2, 3, 0]),
     "processor 0 is listed twice", "once"),
    (lambda d: d["stopped"][0].pop("size"), "a stopped job needs `size`",
     "the cpus of its last run"),
    (lambda d: d["stopped"][0].update(size=5), "cannot have run on 5 cpus, its sizes are "
     "[1, 4]", "a moldable one on a size in [min_size, max_size]"),
    (lambda d: d["stopped"][0].update(size=0), "stopped[0].size: 0 is below 1", "at least 1"),
    (lambda d: d["suspended"][0].update(submit=11), "submitted at 11, after now 10",
     "a preempted job was submitted by now"),
    (lambda d: d["stopped"][0].update(id=1), "job id 1 is given twice", "its own id"),
    (lambda d: d["queue"][0].update(processors=[0]), "queue[0]: unknown field `processors`",
     "the fields are"),
    (lambda d: d["stopped"][0].update(processors=[0]), "unknown field `processors`",
     "the fields are"),
    (lambda d: d["suspended"][0].update(size=2), "suspended[0]: unknown field `size`",
     "the fields are"),
    (lambda d: d["running"][0].update(last_start=5), "unknown field `last_start`",
     "the fields are"),
    (lambda d: d.update(suspended={}), "`suspended` must be a JSON list of jobs", "write []"),
])
def test_each_broken_rule_names_its_field_with_help(edit, message: str, help: str) -> None:
    data = state()
    edit(data)
    with pytest.raises(WorkloadError) as info:
        state_from_data(data, source="s.json")
    assert message in str(info.value) and help in (info.value.help or "")


def test_a_suspended_job_s_memory_counts_against_the_capacity() -> None:
    data = {"now": 10, "capacity": {"cpus": 4, "memory": 100},
            "running": [{**job(1, 0, 2, 100, start=5), "request": {"cpus": 2, "memory": 50}}],
            "suspended": [{**job(2, 0, 2, 50), "request": {"cpus": 2, "memory": 60}}]}
    with pytest.raises(WorkloadError) as info:
        state_from_data(data, ("cpus", "memory"), source="s.json")
    assert "the running and suspended jobs hold 110 `memory`, more than the capacity 100" \
        in str(info.value) and "lower a request" in (info.value.help or "")
    data["suspended"][0]["request"]["memory"] = 50  # it fits
    assert state_from_data(data, ("cpus", "memory")).suspended[0].request == (2, 50)


def test_an_error_in_a_file_points_at_the_field(tmp_path: Path) -> None:
    data = state()
    data["suspended"][0]["processors"] = [2, 9]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data, indent=1))
    with pytest.raises(WorkloadError) as info:
        load_state(str(path))
    text = path.read_text().splitlines()
    assert info.value.line is not None and text[info.value.line - 1].strip().startswith("9")
