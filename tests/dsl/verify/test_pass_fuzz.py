"""The one-pass differential check of random policies (tests/support/pass_fuzz.py): a few
seeds in CI (benchmarks/fuzz_pass.py runs campaigns), the known classes it must catch, and
that its comparison can fail."""

from __future__ import annotations

import json
import random

import pytest
import z3

from schedc.dsl import compile_source
from schedc.dsl.verify.pass_encoding.encoder import encode_pass
from schedc.dsl.verify.verdict import Bounds
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.tools.optimal.instance import state_at
from schedc.runtime.workloads.state_file import state_from_data
from tests.support.pass_agreement import design_data, first_pass, pass_solver
from tests.support.pass_fuzz import (
    _compare,
    check_policy,
    check_reachable,
    check_text,
    random_state,
    random_workload,
    tally,
)
from tests.support.policy_fuzz import KINDS, NO_KINDS, GenConfig, generate


@pytest.mark.parametrize("seed", range(11))  # (seed 11: a `sqrt` policy, 2 min)
def test_random_policies_agree_pass_by_pass(seed: int) -> None:
    check = check_policy(seed, states=8)
    assert check.skipped is None
    assert not check.mismatches, check.mismatches[0].what


@pytest.mark.parametrize("seed", range(4))
def test_random_dynp_policies_agree_candidate_by_candidate(seed: int) -> None:
    # each state names a candidate active: the tuned policy's pass is that candidate's,
    # encoded as `schedc verify` encodes it
    check = check_policy(seed, states=8, config=GenConfig(tuned_rate=1))
    assert check.skipped is None and check.states == 8
    assert not check.mismatches, check.mismatches[0].what


@pytest.mark.parametrize("seed", [1, 6, 9, 12, 13, 15, 18, 26])
def test_random_slack_policies_agree_pass_by_pass(seed: int) -> None:
    # relaxed backfilling: each of these seeds draws a `slack` clause at this rate
    config = GenConfig(slack_rate=1)
    assert "slack" in generate(seed, config).features
    check = check_policy(seed, states=10, config=config)
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


def test_the_dynp_comparison_follows_the_active_candidate() -> None:
    # FCFS and LJF planning as candidates: from a state naming LJF active, the tuned pass
    # is LJF's, so FCFS's encoding disagrees with it and LJF's agrees
    text = """policy fcfs { reserve all backfill first_fit }
policy ljf { order job.estimate desc reserve all backfill first_fit }
policy tuned { candidates fcfs, ljf metric artww decider advanced }
"""
    check = check_text(text, seed=5, states=12, name="tuned")
    assert check.states == 12 and not check.mismatches, check.mismatches
    fcfs = compile_source(text, "t.pol", "fcfs")
    sym = encode_pass(fcfs, Bounds(3, 2))
    tuned = to_runtime(compile_source(text, "t.pol", "tuned"))
    data = {"now": 0, "capacity": {"cpus": 4}, "active": "ljf", "queue": [
        {"id": 1, "submit": 0, "estimate": 10, "run_time": 10, "request": {"cpus": 4}},
        {"id": 2, "submit": 0, "estimate": 50, "run_time": 50, "request": {"cpus": 4}}]}
    state = state_from_data(data, ["cpus"])
    stop, record, message = first_pass(tuned, state)
    assert stop is None and [d.job for d in record.starts] == [2]
    what = _compare(sym, pass_solver(sym), z3.BoolVal(True), tuned.tuning.candidates[0],
                    state, stop, record, message)
    assert what is not None and what.startswith("decisions")


@pytest.mark.parametrize("seed", range(12))
def test_states_runs_reach_replay_and_agree(seed: int) -> None:
    check = check_reachable(seed, runs=6)
    assert not check.mismatches, check.mismatches[0].what


@pytest.mark.parametrize("seed", [1, 15, 20, 22])
def test_states_slack_runs_reach_replay_and_agree(seed: int) -> None:
    check = check_reachable(seed, runs=4, config=GenConfig(slack_rate=1))
    assert check.states > 0 and not check.mismatches, check.mismatches


def test_a_reached_state_replays_the_run_pass() -> None:
    # the other side of check_reachable: the state a counterexample file would hold at each
    # pass of an EASY run replays that pass; one with a job ending early is among them
    policy = compile_source("policy e { reserve 1 backfill first_fit }", "e.pol")
    rng = random.Random(3)
    workload = random_workload(rng, policy)
    while all(j.run_time == j.estimate for j in workload.jobs):
        workload = random_workload(rng, policy)
    passes = []
    schedule = simulate(to_runtime(policy), workload, on_pass=passes.append)
    assert passes
    for made in passes:
        stop, record, _ = first_pass(to_runtime(policy), state_at(schedule, made.now, "w"))
        assert stop is None and record == made


@pytest.mark.parametrize("seed", [7, 17, 22, 25, 26, 28])
def test_queue_rank_policies_agree_on_states_past_the_proofs_slots(seed: int) -> None:
    # formulas over a job's place in the queue, on states of up to 5 queued jobs (the
    # passes start and reserve jobs past the 3 slots a campaign's proofs have)
    from tests.support.policy_fuzz import MORE_PATTERNS

    config = GenConfig(patterns=(*MORE_PATTERNS, "count"))
    assert "rank" in generate(seed, config).features
    check = check_policy(seed, states=6, config=config, queued=5)
    assert check.skipped is None and check.states == 6
    assert not check.mismatches, check.mismatches[0].what


# --- preemptive policies (`fuzz_pass.py --preemptive-rate P`) ------------------------------
# the preemptive policies of campaigns before issue 44: no class of policy_fuzz/kinds.py drawn
PLAIN = GenConfig(preemptive_rate=1, preemptive_kinds=NO_KINDS)


@pytest.mark.parametrize("seed", [0, 3, 25])
def test_random_preemptive_policies_agree_pass_by_pass(seed: int) -> None:
    # a seed the rate makes preemptive is checked by preemptive_agreement.agree_one: the
    # encoded preemptive pass pinned to random states of jobs in every phase
    check = check_policy(seed, states=3, config=PLAIN)
    assert check.preemptive and check.skipped is None and check.states == 3
    assert not check.mismatches, check.mismatches[0].what
    assert sum(check.actions.values()) > 0 or check.stops > 0


def test_preemptive_checks_are_tallied_apart(tmp_path) -> None:
    from benchmarks.fuzz_pass import main

    rigid = check_policy(0, states=2)  # rate 0: the seed's rigid policy
    assert not rigid.preemptive
    preemptive = check_policy(25, states=2, config=PLAIN)
    figures = tally([rigid, preemptive])
    assert figures["policies"] == 2 and figures["rigid_policies"] == 1
    assert figures["states"] == 2 and figures["preemptive"]["states"] == 2
    assert figures["preemptive"]["actions"] == preemptive.actions
    # the campaign script: summary.json counts them apart
    assert main(["--count", "1", "--seed", "25", "--preemptive-rate", "1", "--states", "2",
                 "--jobs", "1", "--kind-rates", "none", "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["policies"] == 1 and summary["rigid_policies"] == 0
    assert summary["preemptive"]["checked"] == 1 and summary["preemptive"]["states"] == 2
    assert summary["preemptive"]["actions"] == preemptive.actions


# seeds (default rates) drawing, together, every class of issue 44 (policy_fuzz/kinds.py):
# a setting `check` refuses (6), a value only `run` refuses (39), --overrun extend (16), a
# machine of 5 processors (4), a failing mechanism (2)
KIND_SEEDS = (6, 39, 16, 4, 2)


def test_preemptive_policies_of_every_kind_agree_pass_by_pass() -> None:
    checks = [check_policy(s, states=2, config=GenConfig(preemptive_rate=1))
              for s in KIND_SEEDS]
    for check in checks:
        assert not check.mismatches, check.mismatches[0].what
        assert check.skipped in (None, "refused by check")
    assert {k for c in checks for k in c.kinds} == set(KINDS)
    refused = [c for c in checks if c.skipped]
    assert [c.seed for c in refused] == [6] and "bad-setting" in refused[0].kinds
    kinds = tally(checks)["preemptive"]["kinds"]
    assert kinds == {k: sum(k in c.kinds for c in checks) for k in KINDS}
