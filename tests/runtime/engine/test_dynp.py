"""Self-tuning dynP in the simulator (papers/001; ``engine/tuning.py``), on tuned policies
built by hand from the three planning examples (``tests/support/tuned.py``): hand-checked
schedules and switches, the deciders on a tie, when steps happen, and differential runs
against the candidates themselves."""

from __future__ import annotations

import json
from fractions import Fraction

import attrs
import pytest

from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.engine.tuning import Switch
from schedc.runtime.results import report
from schedc.runtime.run import RunOptions, run_policy
from tests.support.shared_traces import BUNDLED, any_real_workload
from tests.support.tuned import planning, tuned

# 10 cpus. Job 1 (10 cpus, 100 s) runs from 0 to 100. Job 2 (10 cpus, 1000 s) arrives at 1,
# job 3 (10 cpus, 10 s) at 2. At t=2 the plans of the queue [2, 3]:
#   FCFS: 2 at 100 (response 1100 - 1 = 1099), 3 at 1100 (1110 - 2 = 1108):
#         ARTwW = (10*1099 + 10*1108) / 20 = 2207/2
#   SJF:  3 at 100 (110 - 2 = 108), 2 at 110 (1110 - 1 = 1109): ARTwW = 1217/2
#   LJF:  as FCFS (2 is the longer): 2207/2
# so dynP switches to SJF at t=2 and runs 3 at 100, 2 at 110 (conservative: 2 at 100, 3 at
# 1100). At t=0 and t=1 every plan is the same (one job): no switch.
GOLDEN = """\
; MaxProcs: 10
1 0 -1 100 10 -1 -1 10 100 -1 1 1 1 1 1 -1 -1 -1
2 1 -1 1000 10 -1 -1 10 1000 -1 1 1 1 1 1 -1 -1 -1
3 2 -1 10 10 -1 -1 10 10 -1 1 1 1 1 1 -1 -1 -1
"""
# Job 4 (10 cpus, 1000 s, like job 2) arrives at 105, while job 3 runs (100-110) and job 2
# waits for 110: every order puts 2 before 4 (SJF and LJF by estimate tie, then submit),
# so every plan is 2 at 110 (1110 - 1 = 1109), 4 at 1110 (2110 - 105 = 2005): ARTwW 1557
# for all three. The paper's wrong case: SJF is active and ties with FCFS as the best.
TIE = GOLDEN + "4 105 -1 1000 10 -1 -1 10 1000 -1 1 1 1 1 1 -1 -1 -1\n"

NAMES = ("conservative", "conservative_sjf", "conservative_ljf")


@pytest.fixture
def trace(tmp_path):
    def write(text: str) -> str:
        path = tmp_path / "t.swf"
        path.write_text(text)
        return str(path)
    return write


def starts(result) -> list[int]:
    return [r.start for r in result.schedule.records]


def test_golden_switch_to_sjf(trace):
    path = trace(GOLDEN)
    dynp = run_policy(tuned(), path)
    assert starts(dynp) == [0, 110, 100]
    assert starts(run_policy(planning("conservative"), path)) == [0, 100, 1100]
    t = dynp.schedule.tuning
    values = (("conservative", Fraction(2207, 2)), ("conservative_sjf", Fraction(1217, 2)),
              ("conservative_ljf", Fraction(2207, 2)))
    assert t.switches == (Switch(2, "conservative", "conservative_sjf", values),)
    # steps at the submissions 0, 1, 2 (each with a non-empty queue)
    assert t.steps == 3 and t.step_queue == (1, 1, 2)
    # active: conservative over [0, 2], SJF over [2, 1110] (last end)
    assert dict(t.share) == {"conservative": Fraction(2, 1110),
                             "conservative_sjf": Fraction(1108, 1110),
                             "conservative_ljf": Fraction(0)}
    assert (t.metric, t.decider, t.step) == ("artww", "advanced", "submit")


@pytest.mark.parametrize("decider, switches", [
    # simple: the tie at 105 goes to the earlier candidate, FCFS
    ("simple", [(2, "conservative", "conservative_sjf"),
                (105, "conservative_sjf", "conservative")]),
    # advanced: the active SJF ties with the best, so it stays
    ("advanced", [(2, "conservative", "conservative_sjf")])])
def test_deciders_on_a_tie(trace, decider, switches):
    dynp = run_policy(tuned(decider=decider), trace(TIE))
    t = dynp.schedule.tuning
    assert [(s.time, s.old, s.new) for s in t.switches] == switches
    if decider == "simple":
        assert {v for _, v in t.switches[1].values} == {Fraction(1109 + 2005, 2)}
    assert starts(dynp) == [0, 110, 100, 1110]


def test_step_change_adds_the_finishes(trace):
    path = trace(GOLDEN)
    # submit: 0, 1, 2. change: also the finishes at 100 (queue [2, 3]) and 110 (queue [2],
    # job 2 starts in the pass after the step); the finish at 1110 leaves an empty queue
    assert run_policy(tuned(step="submit"), path).schedule.tuning.steps == 3
    change = run_policy(tuned(step="change"), path).schedule.tuning
    assert change.steps == 5 and change.step_queue == (1, 1, 2, 2, 1)


def test_one_candidate_twice_is_that_candidate(trace):
    for path in (trace(TIE), str(BUNDLED)):
        opts = RunOptions(limit=800)
        twice = run_policy(tuned(("conservative_sjf", "conservative_sjf")), path, opts)
        alone = run_policy(planning("conservative_sjf"), path, opts)
        assert starts(twice) == starts(alone)
        assert twice.schedule.tuning.switches == ()


@pytest.mark.parametrize("name", ["KTH-SP2-1996-2.1-cln.swf.gz", "LANL-CM5-1994-4.1-cln.swf.gz"])
def test_all_candidates_the_same_is_conservative_on_real_traces(name):
    workload = any_real_workload(name)
    workload = attrs.evolve(workload, jobs=workload.jobs[:3000])
    same = to_runtime(tuned(("conservative",) * 3))
    alone = to_runtime(planning("conservative"))
    a = simulate(same, workload)
    b = simulate(alone, workload)
    assert [r.start for r in a.records] == [r.start for r in b.records]
    assert a.tuning is not None and a.tuning.switches == () and a.tuning.steps > 0


def test_switches_change_the_schedule_on_a_real_trace():
    opts = RunOptions(limit=1500)
    dynp = run_policy(tuned(), None, opts)
    assert dynp.schedule.tuning.switches
    assert starts(dynp) != starts(run_policy(planning("conservative"), None, opts))
    share = dict(dynp.schedule.tuning.share)
    assert sum(share.values()) == 1 and all(v > 0 for v in share.values())


def test_to_runtime_of_a_tuned_policy():
    rp = to_runtime(tuned(metric="sldwa", decider="simple", step="change"))
    first = to_runtime(planning("conservative"))
    assert rp.name == "dynp" and rp.depth == first.depth and rp.backfill == first.backfill
    assert rp.tuning is not None
    assert [c.name for c in rp.tuning.candidates] == list(NAMES)
    assert (rp.tuning.metric, rp.tuning.decider, rp.tuning.step) == ("sldwa", "simple",
                                                                      "change")
    assert all(c.tuning is None for c in rp.tuning.candidates)


def test_json_is_deterministic_and_has_the_tuning(trace):
    path = trace(TIE)
    texts = [json.dumps(report.run_json(run_policy(tuned(decider="simple"), path)), indent=2)
             for _ in range(2)]
    assert texts[0] == texts[1]
    t = json.loads(texts[0])["tuning"]
    assert t["steps"] == 4 and t["share"]["conservative_ljf"] == 0
    assert t["switches"][0] == {"time": 2, "from": "conservative", "to": "conservative_sjf",
                                "values": {"conservative": 1103.5, "conservative_sjf": 608.5,
                                           "conservative_ljf": 1103.5}}
    assert "timing" not in t
    timed = report.run_json(run_policy(tuned(), path), timing=True)["tuning"]["timing"]
    assert timed["steps"] == 4 and 0 <= timed["median_ms"] <= timed["p99_ms"] <= timed["max_ms"]


def test_a_policy_without_tuning_has_no_tuning_output(trace):
    result = run_policy(planning("conservative"), trace(GOLDEN))
    assert result.schedule.tuning is None and "tuning" not in report.run_json(result)
