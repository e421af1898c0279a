"""The differential fuzzer (tests/support/policy_fuzz/): `schedc verify` against the runtime
monitor on random policies, a small derandomized budget; and tests of the fuzzer itself.

A disagreement fails its seed's test with the policy, the evidence (a workload or a state
that `schedc run` replays, the params, the monitor's message) and the commands that show
it. `python -m benchmarks.fuzz_verify --count 500` runs a large campaign.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import attrs
import pytest

from schedc.dsl import check_source, compile_source
from schedc.dsl.verify.prover import verify_policy
from schedc.dsl.verify.verdict import Bounds, Limits
from schedc.runtime.cli.main import main

# Fixed seeds: CI fuzzes the same policies on every run (about 1-2 s each here).
from schedc.runtime.workloads.load import load_workload
from schedc.runtime.workloads.workload import WorkloadError
from tests.support.policy_fuzz import (
    KINDS,
    NO_KINDS,
    PATTERNS,
    STATED_BOUNDS,
    GenConfig,
    HarnessConfig,
    PolicyResult,
    commands,
    fuzz_policy,
    fuzz_seed,
    generate,
    has_odd_inputs,
    is_preemptive,
    random_workload,
    report,
    tally,
    through_reader,
    trace_prefix,
    workload_csv,
)
from tests.support.policy_fuzz.preemptive import RUNS

# Fixed seeds: CI fuzzes the same policies on every run (about 1-2 s each here).
CI_SEEDS = tuple(range(1000, 1030))


@pytest.mark.parametrize("seed", CI_SEEDS)
def test_verifier_and_monitor_agree(seed: int) -> None:
    result = fuzz_seed(seed)
    assert result.compile_error is None, report(result)
    # A stop that needs more jobs than the proof's bounds, and that the verifier finds once
    # given them, is the bound the report states (e.g. `reserve 3` with N=3: no job is
    # visited after the reservations); any other disagreement fails.
    assert all(beyond_bounds(d) for d in result.disagreements), report(result)


def beyond_bounds(d) -> bool:
    # the stated-bounds category: the verdict says which bound to raise (policy_fuzz)
    return d.category in ("bounds", STATED_BOUNDS) and "it is violated" in d.note


# --- the generator ----------------------------------------------------------------------


def test_generated_policies_are_well_typed_and_deterministic() -> None:
    for seed in range(150):
        g = generate(seed)
        assert generate(seed) == g
        result = check_source(g.text, f"<seed {seed}>")
        assert result.ok, (g.text, result.diagnostics)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_restricted_generator_builds_on_its_pattern(pattern: str) -> None:
    made = [generate(seed, GenConfig(patterns=(pattern,), edge_rate=1.0)) for seed in range(20)]
    assert all(check_source(g.text).ok for g in made)
    assert sum(f"edge:{pattern}" in g.features for g in made) >= 15


def test_bound_pattern_writes_the_bound_as_the_literal() -> None:
    # class 1's shape: `0.9 - p1` where p1's domain ends at 0.9, written alike
    texts = [generate(seed, GenConfig(patterns=("bound",), edge_rate=1.0)).text
             for seed in range(20)]
    hits = 0
    for text in texts:
        decl = text.splitlines()[0]  # param p1: real in [LO, HI] = ...
        lo, hi = decl.split("[", 1)[1].split("]", 1)[0].split(", ")
        hits += f"{hi} - p1" in text or f"p1 - {lo}" in text or "p1 == " in text
    assert hits >= 10


# --- workloads -----------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "moldable"), [("tiny", False), ("tiny", True),
                                                 ("long", True), ("odd", False)])
def test_random_workloads_round_trip_through_a_job_table(kind: str, moldable: bool,
                                                         tmp_path: Path) -> None:
    w = random_workload(random.Random(7), ("cpus", "r2"), (None, 16), kind, moldable)
    if kind == "odd":  # the reader refuses what a proof assumes away, --lenient skips it
        path = tmp_path / "w.csv"
        path.write_text(workload_csv(w))
        with pytest.raises(WorkloadError):
            load_workload(path, w.resources)
        kept = through_reader(w)
        assert not has_odd_inputs(kept) and kept.skipped_total > 0
        return
    _assert_round_trip(w, tmp_path)


def test_trace_prefix_round_trips(tmp_path: Path) -> None:
    w = trace_prefix(("cpus", "r2"), (64, None), 300, moldable=True)
    assert len(w.jobs) == 300 and max(j.procs for j in w.jobs) <= 64
    _assert_round_trip(w, tmp_path)


def _assert_round_trip(w, tmp_path: Path) -> None:
    path = tmp_path / "w.csv"
    path.write_text(workload_csv(w))
    back = load_workload(path, w.resources)
    assert back.capacities == w.capacities
    assert [attrs_of(j) for j in back.jobs] == [attrs_of(j) for j in w.jobs]


def attrs_of(job) -> tuple:
    m = job.moldable
    shape = None if m is None else (m.min_procs, m.max_procs, m.speedup)
    return (job.id, job.index, job.submit, job.run_time, job.estimate, job.request, shape)


# --- the fuzzer finds each class of disagreement ------------------------------------------
# Each policy below sits on one edge. The fuzzer must reach the edge (some run stops the
# monitor there) and judge it: while the verifier proves the property, that is a
# disagreement of the class; once the verifier is fixed and reports it violated, its
# counterexample must replay. So these tests pass before and after the fix.

CLASSES = {
    # 1. a constant and a domain bound read as two values: 0.9 - 0.9 is 0 in floats only
    "constant-vs-bound": """
param target: real in [0.5, 0.9] = 0.8
policy c1 {
  order job.submit asc
  reserve 1
  backfill best by job.procs / (0.9 - target) asc
}""",
    # 3. proved with 3 queue slots, divides by zero once 100 jobs wait on 100 cpus
    "bounds": """
machine m { resource cpus = 100 }
def partition = machine.capacity.cpus div (queue.count + 1)
policy c3 {
  machine m
  order job.procs / partition asc
  reserve 1
  backfill first_fit
}""",
    # found by the fuzzer: `well-defined` is proved though this invariant divides by zero
    # once the machine is full of running jobs (its counterexample replays to that failure)
    "other": """
policy c6 {
  invariant 1 / (machine.capacity.cpus - running.count) > 0
}""",
}


# Classes closed by design, not by a verdict: reals are exact rationals on both sides (0 is
# 0), the readers reject (or skip, under --lenient) what a proof assumes away, and a formula
# is evaluated only in states a pass sees.
CLOSED = {
    # 2. exactly 0 in rationals, and now in the simulator too (-5.6e-17 in floats)
    "real-arithmetic": """
policy c2 {
  order sqrt(1 - machine.util.cpus - machine.free.cpus / machine.capacity.cpus) asc
}""",
    # a dynamic order key was also evaluated at a job's submission, before it was queued;
    # now only in the pass, with the job queued (as the verifier sees it)
    "outside-pass": """
policy c5 {
  order 1 / queue.count asc
}""",
    # 4. proved for distinct ids; the readers refuse repeated ones
    "input-assumption": """
policy c4 {
  reserve 1
  backfill first_fit
  invariant count(k in running where k.id == job.id) == 1
}""",
}


@pytest.mark.parametrize("category", sorted(CLOSED))
def test_closed_classes_are_proved_and_never_stop(category: str) -> None:
    result = fuzz_policy(CLOSED[category], seed=1, config=HarnessConfig(odd_inputs=1.0))
    assert not result.stops and not result.disagreements, report(result)
    assert all(v.status == "proved" for v in result.verdicts), report(result)


@pytest.mark.parametrize("category", sorted(CLASSES))
def test_the_fuzzer_finds_each_class(category: str, tmp_path: Path, capsys) -> None:
    text = CLASSES[category]
    result = fuzz_policy(text, seed=1, config=HarnessConfig(odd_inputs=1.0))
    assert result.stops, "the fuzzer never reached the edge"
    prop = result.stops[0].property
    _assert_judged(result, prop)
    if result.status(prop) == "proved":
        (d,) = [d for d in result.disagreements if d.property == prop]
        assert d.kind == "proved-but-stopped" and d.category == category, report(result)
        if d.evidence.state is not None:  # the evidence replays as the report says
            (tmp_path / "p.pol").write_text(text)
            (tmp_path / "s.json").write_text(json.dumps(d.evidence.state))
            capsys.readouterr()
            assert main(["run", str(tmp_path / "p.pol"), "--state",
                         str(tmp_path / "s.json")]) == 1
            assert "runtime monitor" in capsys.readouterr().err


def _assert_judged(result: PolicyResult, prop: str) -> None:
    """A disagreement on ``prop`` is reported exactly when a run stopped for it while the
    verifier proved it; a counterexample of it, when it did not replay."""
    stopped = any(s.property == prop for s in result.stops)
    found = {d.kind for d in result.disagreements if d.property == prop}
    proved = result.status(prop) == "proved"
    assert ("proved-but-stopped" in found) == (proved and stopped), report(result)


@pytest.mark.parametrize("pattern", ["bound", "residue", "count", "ids"])
def test_a_restricted_generator_reaches_its_edge(pattern: str) -> None:
    cfg = HarnessConfig(odd_inputs=1.0, triage=False, rlimit=2_000_000)
    results = [fuzz_seed(seed, GenConfig(patterns=(pattern,), edge_rate=0.9), cfg)
               for seed in range(4)]
    if pattern != "ids":  # repeated ids are refused by the readers: an edge no run reaches
        assert any(s.property == "well-defined" or s.property.startswith("invariant")
                   for r in results for s in r.stops)
    for r in results:
        for prop in {s.property for s in r.stops}:
            _assert_judged(r, prop)


def test_a_counterexample_that_does_not_replay_is_a_disagreement(tmp_path: Path,
                                                                 capsys) -> None:
    # exactly 0.9 in the simulator, 9/10 for the bound and the float 0.9 for the literal in
    # the verifier: sqrt(9/10 - 0.9000000000000000222) is a violation only there
    text = "param p: real in [0.9, 1.0] = 1.0\npolicy c { order sqrt(p - 0.9) asc }\n"
    result = fuzz_policy(text, seed=1)
    (verdict,) = verify_policy(compile_source(text), Bounds(3, 3), Limits(rlimit=4_000_000),
                               only=["well-defined"])
    found = [d for d in result.disagreements if d.kind == "counterexample"]
    if verdict.status != "violated":
        assert not found
        return
    # the fuzzer's judgement is the CLI's: replay the counterexample with `run --state`
    state = {k: v for k, v in verdict.counterexample.items() if k != "pass"}
    (tmp_path / "p.pol").write_text(text)
    (tmp_path / "s.json").write_text(json.dumps(state))
    capsys.readouterr()
    replays = main(["run", str(tmp_path / "p.pol"), "--state", str(tmp_path / "s.json")]) == 1
    assert bool(found) == (not replays), report(result)
    if found:  # the param sits at its bound, 0.9, written as a literal too
        assert found[0].category == "constant-vs-bound", report(result)


def test_unknown_verdicts_are_counted_not_disagreements() -> None:
    # divides by zero when the machine is full and the order is computed; a tiny rlimit
    # leaves the verdict unknown, which is counted and never a disagreement
    text = "policy share { order job.procs / machine.free.cpus asc reserve 1 " \
           "backfill first_fit }"
    result = fuzz_policy(text, seed=2, config=HarnessConfig(rlimit=1_000))
    assert result.status("well-defined") == "unknown"
    assert result.unknown >= 1
    assert not [d for d in result.disagreements if d.property == "well-defined"]


def test_fuzzing_is_deterministic() -> None:
    a, b = fuzz_seed(8), fuzz_seed(8)
    key = lambda r: ([(v.property, v.status) for v in r.verdicts],  # noqa: E731
                     [(d.kind, d.category, d.property, d.evidence.message, d.evidence.state)
                      for d in r.disagreements], r.stops)
    assert key(a) == key(b)


# The issue-31 campaign's config (`fuzz_verify.py --patterns ...,rank --tuned-rate 0.3
# --kept-rate 1 --slack-rate 0.2`, seeds 10000-10299: 0 disagreements): a job's rank in the
# queue in invariants and backfill rules under first-come orders, dynP candidates keeping
# sizes. 10162 was the campaign's one invalid policy (`job.size == if ...`: now bracketed).
RANK = GenConfig(patterns=(*PATTERNS, "rank"), tuned_rate=0.3, kept_rate=1, slack_rate=0.2)


@pytest.mark.parametrize("seed", [10006, 10011, 10058, 10072, 10087, 10162])
def test_queue_rank_and_kept_size_policies_agree(seed: int) -> None:
    assert "rank" in generate(seed, RANK).features
    result = fuzz_seed(seed, RANK)
    assert result.compile_error is None, report(result)
    assert all(beyond_bounds(d) for d in result.disagreements), report(result)


# --- preemptive policies (`fuzz_verify.py --preemptive-rate P`) ----------------------------
PREEMPTIVE = GenConfig(preemptive_rate=1)
# the preemptive policies of campaigns before issue 44: no class of kinds.py drawn
PLAIN = GenConfig(preemptive_rate=1, preemptive_kinds=NO_KINDS)


def test_the_preemptive_rate_leaves_the_rigid_seeds_their_policies() -> None:
    # the choice is a stream of the seed's own: a seed that stays rigid keeps its policy,
    # one preemptive at a rate stays so at a higher one; none at 0, all at 1
    low, high = GenConfig(preemptive_rate=0.2), GenConfig(preemptive_rate=0.5)
    chosen = {s for s in range(60) if is_preemptive(s, low)}
    assert 3 <= len(chosen) <= 25
    assert chosen <= {s for s in range(60) if is_preemptive(s, high)}
    assert not any(is_preemptive(s, GenConfig()) for s in range(60))
    assert all(is_preemptive(s, PREEMPTIVE) for s in range(60))
    for seed in range(60):
        g = generate(seed, attrs.evolve(low, preemptive_kinds=NO_KINDS))
        if seed in chosen:
            assert g.features == ("preemptive",) and "preempt" in g.text
            assert check_source(g.text).ok
        else:
            assert g == generate(seed)


@pytest.mark.parametrize("seed", [25, 26])
def test_preemptive_policies_are_verified_and_replayed(seed: int) -> None:
    result = fuzz_seed(seed, PLAIN)
    assert result.preemptive and result.skipped is None, report(result)
    assert {"capacity", "protected", "mechanism"} <= {v.property for v in result.verdicts}
    # the states replayed, the workloads run
    assert result.simulations == HarnessConfig().preemptive_states + RUNS
    assert not result.disagreements, report(result)
    figures = tally([result])
    assert figures["policies"] == 1 and figures["rigid_policies"] == 0
    assert figures["verdicts"] == {} and figures["disagreements"] == 0
    pre = figures["preemptive"]
    assert pre["policies"] == 1 and pre["replays"] == result.simulations
    assert sum(sum(row.values()) for row in pre["verdicts"].values()) == len(result.verdicts)


def test_a_preemptive_disagreement_is_recorded_with_its_state() -> None:
    # verify_one's two kinds, as the harness's records: the evidence a `run --state` replays
    from tests.support.policy_fuzz.preemptive import _record

    state = {"now": 0, "capacity": {"cpus": 8, "memory": 20}, "running": [],
             "queue": [{"id": 0, "submit": 0, "estimate": 2, "run_time": 2,
                        "request": {"cpus": 1, "memory": 0}}], "check": ["preemptive-pass"]}
    stop = _record("progress is proved, but the replay of this state stops for it: ...",
                   state, ["progress"])
    assert (stop.kind, stop.category, stop.property) == ("proved-but-stopped", "preemptive",
                                                         "progress")
    assert stop.evidence.state == state and stop.evidence.queued == 1
    cex = _record("well-defined: the replay does not stop", {}, ["well-defined"])
    assert (cex.kind, cex.category, cex.property) == (
        "counterexample", "preemptive-counterexample", "well-defined")
    result = PolicyResult(3, "fuzz", "policy fuzz {}", ("preemptive",), (), (stop, cex), 8, 0,
                          0, 1.0, preemptive=True)
    assert commands(stop, name=None, preemptive=True) == [
        "schedc verify policy.pol --queued 2 --running 2 --processors 8",
        "schedc run policy.pol --state state.json"]
    figures = tally([result])
    assert figures["disagreements"] == 2 and figures["preemptive"]["disagreements"] == 2
    assert figures["by_category"] == {"preemptive": 1, "preemptive-counterexample": 1}
    assert "[preemptive] proved-but-stopped: progress" in report(result)


# --- the classes of issue 44 drawn onto preemptive policies (policy_fuzz/kinds.py) ----------
# seeds (default rates) that, together, draw every kind: a setting `check` refuses (6), a
# value only `run --param` refuses with job.progress (39), --overrun extend (16), a machine
# of 5 processors without a fixed capacity (4), a failing mechanism with job.progress (2)
KIND_SEEDS = (6, 39, 16, 4, 2)


def test_the_kinds_are_drawn_and_each_case_is_what_it_says() -> None:
    from schedc.dsl import DiagnosticError
    from schedc.dsl.binding import bind
    from tests.support.policy_fuzz import preemptive_case
    from tests.support.policy_fuzz.preemptive import unlocated
    from tests.support.preemptive_agreement import encodable_policy

    cases = [preemptive_case(s) for s in range(80)]
    drawn = Counter(k for c in cases for k in c.kinds)
    assert set(drawn) == set(KINDS)
    assert {c.processors for c in cases if "machine" in c.kinds} >= {5, 10, 15}
    assert any(not c.fixed_machine for c in cases) and any(c.bad_values for c in cases)
    for c in cases:
        assert 4 <= c.processors <= 16 and c.bounds == ((2, 2) if c.processors <= 8 else (1, 1))
        assert (c.overrun == "extend") == ("overrun-extend" in c.kinds)
        if "progress" in c.kinds:
            assert "progress" in c.text
        if c.refused is not None:  # `check` refuses it, at the clause
            with pytest.raises(DiagnosticError) as refused:
                compile_source(c.text, "<kinds>")
            assert unlocated(refused.value.diagnostics, c.text, c.refused) is None, c.text
            continue
        policy = compile_source(c.text, "<kinds>")
        for name, value, clause in c.bad_values:  # `run --param` refuses each, at the clause
            with pytest.raises(DiagnosticError) as bad:
                bind(policy, {name: value})
            assert unlocated(bad.value.diagnostics, c.text, clause) is None
    # no kind drawn: the policy of earlier campaigns, whatever the seed
    assert all(preemptive_case(s, NO_KINDS).text == encodable_policy(s) for s in range(10))


def test_an_unlocated_refusal_is_told_apart() -> None:
    from schedc.dsl.diagnostics import Diagnostic
    from tests.support.policy_fuzz.preemptive import unlocated

    text = "policy p {\n  quantum -5\n}\n"
    at = Diagnostic("`quantum` is -5: it must be from 0 to 10^15", line=2, col=11, help="...")
    assert unlocated([at], text, "quantum") is None
    assert "not at `quantum`" in unlocated([attrs.evolve(at, line=1)], text, "quantum")
    assert "has no help" in unlocated([attrs.evolve(at, help=None)], text, "quantum")
    assert unlocated([], text, "quantum") == "no error for `quantum`"


def test_the_kind_seeds_draw_every_kind() -> None:
    drawn = {k for s in KIND_SEEDS for k in generate(s, PREEMPTIVE).features}
    assert drawn == {"preemptive", *KINDS}


@pytest.mark.parametrize("seed", KIND_SEEDS)
def test_preemptive_policies_of_every_kind_agree(seed: int) -> None:
    result = fuzz_seed(seed, PREEMPTIVE)
    assert result.compile_error is None, report(result)
    assert not result.disagreements, report(result)
    if result.skipped is None:
        assert result.verdicts and result.simulations == (
            HarnessConfig().preemptive_states + RUNS)
    else:  # a setting the domains make non-positive: refused at the clause, as it must be
        assert result.skipped == "refused by check" and "bad-setting" in result.features
    pre = tally([result])["preemptive"]
    assert all(pre["kinds"][k] == (k in result.features) for k in KINDS)


def test_a_run_that_stops_for_a_proved_property_is_a_disagreement() -> None:
    # the runs' check itself: a stop for a property taken as proved, with no departure from
    # the proofs' assumptions noted, is reported with its workload and the run's options;
    # the same stop after a departure (a job past its estimate under --overrun extend) is not
    from tests.support.policy_fuzz import PreemptiveCase
    from tests.support.policy_fuzz.preemptive import PREEMPTIVE_RUN, _runs

    head = "machine m {\n  resource cpus = 4\n  resource memory = 20\n}\n"
    body = ("policy fuzz {\n  machine m\n  order 10 / (job.procs - 1) asc\n  reserve 0\n"
            "  backfill first_fit\n  mechanism suspend\n  preempt by order\n}\n")
    fails = compile_source(head + body, "<runs>")  # a job of one cpu waits: it stops
    case = PreemptiveCase(1, head + body, (), 4, (2, 2), "estimate")
    runs, found = _runs(fails, case, {"well-defined"})
    assert runs == RUNS and found and found[0].category == PREEMPTIVE_RUN
    assert found[0].property == "well-defined" and found[0].evidence.workload_csv
    assert "division by zero" in found[0].evidence.message
    assert not _runs(fails, case, {"capacity"})[1]
    # a newer job preempts by the order, once a second, unless the keep fails first
    overrun = head + body.replace("order 10 / (job.procs - 1) asc",
                                  "order job.submit desc\n  quantum 1\n"
                                  "  keep 10 / (job.estimate - job.since_start) > 1")
    stops: Counter = Counter()
    found = [d for seed in range(8) for d in _runs(
        compile_source(overrun, "<runs>"),
        PreemptiveCase(seed, overrun, (), 4, (2, 2), "extend"), {"well-defined"}, stops)[1]]
    assert not found, found[0].evidence.message
    assert stops["stops well-defined"] >= 1 and stops["noted"] == stops["stops well-defined"]
