"""Proofs of a preemptive pass for every machine size: the processors as groups of any
length (dsl/verify/preemption/groups.py), tried before the per-processor encodings. A
property proved so says "any number of processors" and has no processor-bound caveat;
one the groups cannot prove falls back to the bound P and says so. That the grouped
encoding admits the simulator's pass of random states is checked with the other
encodings' agreement (``preemptive_agreement.admitted_grouped``, run by
``test_preemptive_verify.py``'s seeds); its lemmas by ``test_preemptive_symmetry.py``."""

from __future__ import annotations

import random

import pytest

from schedc.dsl import compile_file, compile_source
from schedc.dsl.verify.preemption.groups import Group, group_count, processor_groups
from schedc.dsl.verify.preemption.prover import SMALL_MACHINE, GroupedPass
from schedc.dsl.verify.prover import verify_policy
from schedc.dsl.verify.verdict import Bounds
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.replay import replay_stop, replayer
from tests.support.preemptive_agreement import random_state
from tests.support.processor_bound import BOUND, TOO_SMALL
from tests.support.repo import ROOT

SMALL = Bounds(2, 2, 4, preemptive=(2, 2))
EVERY_SIZE = "any number of processors"

# least attained service, checkpointed, on a machine of 32 cpus: more than the per-processor
# encodings' bound P = 4 (each processor a term), which refuse it
LARGE = """
machine big {
  resource cpus = 32
}
policy las {
  machine   big
  order     job.acquired asc
  reserve   0
  mechanism checkpoint
  keep      job.since_start < 5
  preempt   by order
}
"""



def test_the_groups_of_a_pass_are_its_kinds_of_processor() -> None:
    """Without `suspend` a processor has at most one holder: by order over 1 + 1 slots,
    the columns {}, {0}, {1}, each untaken or taken by a slot that does not hold it."""
    policy = compile_source(LARGE, "las.pol")
    groups = set(processor_groups(policy, 1, 1))
    empty, zero, one = frozenset(), frozenset({0}), frozenset({1})
    assert groups == {Group(empty, None), Group(empty, 0), Group(empty, 1),
                      Group(zero, None), Group(zero, 1), Group(one, None), Group(one, 0)}
    # with `suspend`, a processor holds any set of slots
    stacked = compile_source(LARGE.replace("checkpoint", "suspend"), "las.pol")
    assert Group(frozenset({0, 1}), None) in processor_groups(stacked, 1, 1)


@pytest.mark.parametrize("name", ["srpt", "mlf", "slurm-suspend", "slurm-requeue"])
def test_the_groups_are_counted_without_making_them(name: str) -> None:
    """``group_count`` (which decides whether the groups are tried, at any bounds: 2^T
    columns over T slots with `suspend`) is the number ``processor_groups`` makes."""
    policy = compile_file(ROOT / "examples" / "preemption" / f"{name}.pol")
    for waiting, running in ((1, 1), (2, 3), (3, 3), (4, 2)):
        assert group_count(policy, waiting, running) == len(
            processor_groups(policy, waiting, running))
    assert group_count(policy, 64, 64) > GroupedPass.MOST


def test_a_machine_larger_than_the_bound_is_proved_and_its_runs_agree() -> None:
    """Every property proved for any machine size (no bound caveat), on a machine the
    per-processor encodings refuse; random states of the 32-cpu machine replayed with the
    first pass's checks stop for none of them."""
    policy = compile_source(LARGE, "las.pol")
    verdicts = verify_policy(policy, SMALL, replay=replayer(policy))
    assert [v.status for v in verdicts] == ["proved"] * 7, [(v.property, v.reason)
                                                           for v in verdicts]
    for v in verdicts:
        assert EVERY_SIZE in v.bound and BOUND not in v.caveats, v
    rules = to_runtime(policy, {}).preemption
    rng = random.Random(44)
    for _ in range(30):
        data = random_state(rng, rules.mechanism, rules.limit, rules.resident, (2, 2), 32)
        data["capacity"].pop("memory")
        for phase in ("running", "queue", "suspended", "stopped"):
            for job in data.get(phase, []):
                job["request"].pop("memory")
        data["check"] = ["preemptive-pass"]
        stop = replay_stop(policy, data)
        assert stop.kind is None, (stop, data)


@pytest.mark.parametrize("prop", ["size-bounds", "capacity"])
def test_what_the_groups_cannot_prove_keeps_its_bound(prop: str) -> None:
    """size-bounds fails from 5 cpus: the groups find it (any size) but cannot report it
    (their takes are any processors, not the simulator's), so it is proved within P = 4
    and says so; capacity holds on every machine: proved for any number of processors."""
    policy = compile_source(TOO_SMALL, "too_small.pol")
    (v,) = verify_policy(policy, SMALL, only=[prop], replay=replayer(policy))
    assert v.status == "proved", v.reason
    if prop == "size-bounds":
        assert BOUND in v.caveats and EVERY_SIZE not in v.bound
    else:
        assert BOUND not in v.caveats and EVERY_SIZE in v.bound


def test_a_violation_the_groups_find_is_shown_on_a_small_machine_first() -> None:
    """SLURM-REQUEUE's `progress` (a scavenger head waits for scavengers: expected) at
    --processors 8: the groups find a violating state, and the counterexample replayed comes
    from a machine of at most 4 processors (``SMALL_MACHINE``), searched first."""
    policy = compile_file(ROOT / "examples" / "preemption" / "slurm-requeue.pol")
    (v,) = verify_policy(policy, Bounds(processors=8), only=["progress"],
                         replay=replayer(policy))
    assert v.status == "violated" and "the replay" in (v.reason or "")
    assert "P=8 processors" in v.bound
    assert v.counterexample["capacity"]["cpus"] <= SMALL_MACHINE


def test_a_violation_only_larger_machines_have_is_sought_over_the_whole_bound() -> None:
    """TOO_SMALL's `size` is out of range from 5 cpus up: the groups find it, a machine of
    4 processors has none, and the search over P = 8 reports one of at least 5 cpus."""
    policy = compile_source(TOO_SMALL, "too_small.pol")
    (v,) = verify_policy(policy, Bounds(2, 2, 8, preemptive=(2, 2)), only=["size-bounds"],
                         replay=replayer(policy))
    assert v.status == "violated", v.reason
    assert v.counterexample["capacity"]["cpus"] > SMALL_MACHINE
