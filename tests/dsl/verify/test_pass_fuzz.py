"""The one-pass differential check of random policies (tests/support/pass_fuzz.py): a few
seeds in CI (benchmarks/fuzz_pass.py runs campaigns), the known classes it must catch, and
that its comparison can fail."""

from __future__ import annotations

import random

import pytest
import z3
from pass_agreement import design_data, first_pass, pass_solver
from pass_fuzz import _compare, check_policy, check_text, random_state
from policy_fuzz import generate

from schedc.dsl import compile_source
from schedc.dsl.verify.pass_encoding import Bounds, encode_pass
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.workloads.state_file import state_from_data


@pytest.mark.parametrize("seed", range(11))  # (seed 11: a `sqrt` policy, 2 min)
def test_random_policies_agree_pass_by_pass(seed: int) -> None:
    check = check_policy(seed, states=8)
    assert check.skipped is None
    assert not check.mismatches, check.mismatches[0].what


@pytest.mark.parametrize("seed", [1000, 3095])
def test_mismatches_found_by_campaigns_are_fixed(seed: int) -> None:
    # 1000: `choose`'s HIGH failed in the encoding where the simulator never evaluates it;
    # 3095: a queue aggregate's further job was asserted where none can exist
    check = check_policy(seed, states=15)
    assert check.states == 15 and not check.mismatches, check.mismatches


def test_generated_states_are_valid_and_deterministic() -> None:
    policy = compile_source(generate(3).text, "g.pol")
    first = [random_state(random.Random(7), policy, {}) for _ in range(2)]
    assert first[0] == first[1]
    state_from_data(first[0], [r.name for r in policy.machine.resources])


def test_a_size_above_a_declared_capacity_has_a_pass() -> None:
    # the class of fuzz_verify's seed 4045: with `choose` and a candidate above the declared
    # capacity, no state with a queued job had a pass (every property proved)
    text = """machine m { resource cpus = 8 }
policy p { machine m reserve 1 backfill first_fit size choose 4 in [1, 99] }
"""
    check = check_text(text, seed=1, states=10)
    assert check.stops > 0 and not check.mismatches, check.mismatches


def test_the_comparison_can_fail() -> None:
    # EASY encoded, conservative simulated, on DESIGN's state: job 3 starts under EASY only
    easy = compile_source("policy e { reserve 1 backfill first_fit }", "e.pol")
    conservative = to_runtime(compile_source("policy c { reserve all backfill first_fit }",
                                             "c.pol"))
    sym = encode_pass(easy, Bounds(3, 2))
    solver = pass_solver(sym)
    state = state_from_data(design_data(), ["cpus"])
    stop, record, message = first_pass(conservative, state)
    assert stop is None
    what = _compare(sym, solver, z3.BoolVal(True), conservative, state, stop, record, message)
    assert what is not None and what.startswith("decisions")
