"""A preemption rule taken apart by side (``runtime/engine/rule_split.py``): which rules
split and into what, and on real workloads the same schedule as the whole rule asked pair
by pair (the preemption fuzzer checks the same on random policies)."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from schedc.dsl import compile_file, compile_source
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.preemptive import simulate_preemptive
from schedc.runtime.engine.rule_split import split_rule
from schedc.runtime.workloads import parsons_sevcik
from schedc.runtime.workloads.load import load_workload
from tests.support.shared_traces import any_real_workload

ROOT = Path(__file__).resolve().parents[3]
POLICY = """
param demand: bool = false
policy p {{
  backfill  first_fit
  mechanism suspend
  preempt   when {rule}
}}
"""


def split(rule: str, **params: str):
    policy = compile_source(POLICY.format(rule=rule), "t.pol")
    assert policy.preemption is not None
    values = {"demand": params.get("demand", "false") == "true"}
    return split_rule(policy.preemption.rule, values)


def test_comparisons_of_one_side_with_the_other_split() -> None:
    parts = split("cand.xfactor >= 2 * victim.xfactor")
    assert (len(parts["cand"]), len(parts["victim"]), parts["checks"]) == (1, 1,
                                                                          ((0, ">=", 0),))
    mirrored = split("victim.procs < cand.procs and victim.suspended == false and true")
    assert mirrored["checks"] == ((0, ">", 0), (None, None, 1), (1, None, None))


def test_a_param_condition_is_folded_with_the_run_s_value() -> None:
    rule = ("cand.procs == victim.procs and (if demand then cand.work <= victim.work / 10 "
            "else cand.acquired <= victim.acquired / 2)")
    assert split(rule)["checks"] == ((0, "==", 0), (1, "<=", 1))
    assert split(rule, demand="true")["checks"] == ((0, "==", 0), (1, "<=", 1))


@pytest.mark.parametrize("rule", [
    "cand.procs + victim.procs > 4",  # one side reads both
    "cand.procs > 1 or victim.procs > 1",  # not a conjunction
    "cand.procs < count(j in queue where j.procs > 1)",  # the queue changes in a pass
    "cand.procs < machine.free.cpus",
    "if cand.procs > 1 then victim.procs > 1 else false",
])
def test_rules_that_do_not_split(rule: str) -> None:
    assert split(rule) is None


@pytest.mark.parametrize("name", ["selective-suspension.pol", "lsf-preempt.pol"])
def test_the_split_rule_gives_the_whole_rule_s_schedule(name: str, tmp_path: Path) -> None:
    policy = to_runtime(compile_file(ROOT / "examples" / "preemption" / name))
    rules = policy.preemption
    assert rules is not None and rules.split is not None
    if name == "lsf-preempt.pol":
        path = tmp_path / "ps.csv"
        parsons_sevcik.write_table(parsons_sevcik.generate(parsons_sevcik.ParsonsSevcikSpec(
            jobs=400, mean_interarrival=parsons_sevcik.interarrival_for_load(0.9), seed=1)),
            path)
        load = load_workload(str(path), resources=("cpus",), capacities={})
    else:
        load = attrs.evolve(any_real_workload("KTH-SP2-1996-2.1-cln.swf.gz"),
                            jobs=any_real_workload("KTH-SP2-1996-2.1-cln.swf.gz").jobs[:3000])
    by_side = simulate_preemptive(policy, rules, load)
    whole = simulate_preemptive(policy, attrs.evolve(rules, split=None), load)
    assert by_side.preemptions == whole.preemptions > 0
    assert [(r.start, r.end) for r in by_side.schedule.records] == [
        (r.start, r.end) for r in whole.schedule.records]
