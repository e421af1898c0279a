"""`schedc verify` of a self-tuning dynP policy: every candidate's pass is proved (its
invariants added); a property fails if one candidate's pass breaks it, and its
counterexample names that candidate and replays with that candidate's pass."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from schedc.dsl import compile_file, compile_source
from schedc.dsl.tuning import candidate_policies
from schedc.dsl.verify import reports as vr
from schedc.dsl.verify.prover import verify_policy
from schedc.dsl.verify.tuning import verify_tuned
from schedc.dsl.verify.verdict import Bounds, Limits, Verdict
from schedc.runtime.cli.main import main
from schedc.runtime.replay import replay_stop, replayer
from tests.support.repo import ROOT

EXAMPLES = ROOT / "examples"
SMALL = Bounds(queued=3, running=3)
NO_CLOCK = Limits(timeout_ms=3_600_000)
# `narrow` gives every job one processor: the tuned invariant holds for fcfs's passes only
NARROW = """
policy fcfs { order job.submit asc  reserve all  backfill first_fit }
policy narrow extends fcfs { size 1 }
policy d { candidates fcfs, narrow  metric artww  invariant job.size >= job.procs }
"""


def test_dynp_example_is_proved_for_every_candidate() -> None:
    policy = compile_file(EXAMPLES / "dynp.pol")
    verdicts = verify_policy(policy, limits=NO_CLOCK, replay_for=replayer)
    assert {v.status for v in verdicts} == {"proved"}
    names = ("conservative", "conservative_sjf", "conservative_ljf")
    for v in verdicts:
        assert v.candidates == tuple((n, "proved") for n in names), v
        assert v.candidate is None and "proved for every candidate" in v.reason


def test_proved_iff_every_candidate_is() -> None:
    policy = compile_source(NARROW, "<t>", "d")
    tuned = {v.property: v for v in verify_policy(policy, SMALL, NO_CLOCK,
                                                  replay_for=replayer)}
    alone = {c.name: {v.property: v.status for v in verify_policy(c, SMALL, NO_CLOCK)}
             for c in candidate_policies(policy)}
    assert set(tuned) == set(alone["fcfs"]) == set(alone["narrow"])
    for name, v in tuned.items():
        each = (alone["fcfs"][name], alone["narrow"][name])
        assert v.status == ("proved" if each == ("proved", "proved") else "violated"), name
        assert v.candidates == (("fcfs", each[0]), ("narrow", each[1]))
    assert alone["fcfs"]["invariant `job.size >= job.procs`"] == "proved"


def test_counterexample_names_the_candidate_and_replays_with_its_pass() -> None:
    policy = compile_source(NARROW, "<t>", "d")
    (v,) = verify_policy(policy, SMALL, NO_CLOCK, only=["invariant"], replay_for=replayer)
    assert v.status == "violated" and v.candidate == "narrow"
    assert v.reason.startswith("candidate `narrow`: ") and "(proved for fcfs)" in v.reason
    narrow = candidate_policies(policy)[1]
    stop = replay_stop(narrow, v.counterexample)
    assert stop.kind == "invariant `job.size >= job.procs`", stop
    # the first candidate's pass does not break it: the candidate matters
    fcfs = candidate_policies(policy)[0]
    assert replay_stop(fcfs, v.counterexample).kind is None


def test_cli_reports_and_writes_the_candidates_counterexample(tmp_path: Path, capsys) -> None:
    src = tmp_path / "t.pol"
    src.write_text(NARROW)
    cex = tmp_path / "cex"
    code = main(["verify", str(src), "--policy", "d", "--queued", "3", "--running", "3",
                 "--property", "invariant", "--format", "json", "--counterexamples", str(cex)])
    out = capsys.readouterr().out
    assert code == 1
    (verdict,) = json.loads(out)[0]["verdicts"]
    assert verdict["candidate"] == "narrow"
    assert verdict["candidates"] == {"fcfs": "proved", "narrow": "violated"}
    assert sorted(p.name for p in cex.iterdir()) == ["t.narrow.invariant.json"]
    policy = compile_file(src, "d")
    report = vr.PolicyReport(str(src), "d", tuple(verify_policy(
        policy, SMALL, NO_CLOCK, only=["invariant"], replay_for=replayer)))
    assert "Counterexample for invariant `job.size >= job.procs` (candidate `narrow`)" in \
        vr.to_markdown([report])
    sarif = json.loads(vr.to_sarif([report], "test", tmp_path))
    (result,) = sarif["runs"][0]["results"]
    assert result["properties"]["candidate"] == "narrow"
    assert "candidate `narrow`" in result["message"]["text"]


def test_a_tuned_policy_needs_per_candidate_replay() -> None:
    policy = compile_source(NARROW, "<t>", "d")
    with pytest.raises(ValueError, match="replay_for"):
        verify_policy(policy, SMALL, replay=replayer(policy))


def _v(prop: str, status: str, reason: str | None = None) -> Verdict:
    return Verdict(prop, status, 1.0, "b", reason=reason, work=2)


def test_combination_is_the_first_worst_and_keeps_own_invariants() -> None:
    policy = compile_source(NARROW, "<t>", "d")
    given = {
        "fcfs": [_v("capacity", "unknown", "limit"), _v("progress", "proved"),
                 _v("invariant `x`", "proved")],
        "narrow": [_v("capacity", "violated", "over"), _v("progress", "unknown", "slow")],
    }
    out = verify_tuned(policy, lambda c: given[c.name])
    assert [v.property for v in out] == ["capacity", "progress", "invariant `x`"]
    cap, prog, own = out
    assert (cap.status, cap.candidate, cap.reason) == ("violated", "narrow",
                                                       "candidate `narrow`: over")
    assert (prog.status, prog.candidate) == ("unknown", "narrow")
    assert prog.reason == "candidate `narrow`: slow (proved for fcfs)"
    assert cap.seconds == 2.0 and cap.work == 4
    assert own.status == "proved" and own.candidates == (("fcfs", "proved"),)
    assert attrs.evolve(own, reason=None).candidate is None


def test_the_written_counterexample_replays_from_the_command_line(tmp_path: Path,
                                                                 capsys) -> None:
    """The file names its candidate (`active`): `schedc run DYNP --state FILE` runs that
    candidate's pass at its instant (no self-tuning step there) and the monitor stops."""
    src = tmp_path / "t.pol"
    src.write_text(NARROW)
    cex = tmp_path / "cex"
    assert main(["verify", str(src), "--policy", "d", "--queued", "3", "--running", "3",
                 "--property", "invariant", "--counterexamples", str(cex)]) == 1
    state = cex / "t.narrow.invariant.json"
    assert json.loads(state.read_text())["active"] == "narrow"
    capsys.readouterr()
    assert main(["run", str(src), "--policy", "d", "--state", str(state)]) == 1
    assert "job.size >= job.procs" in capsys.readouterr().err
    # without `active`, the step at its instant may choose fcfs, whose pass keeps it
    data = json.loads(state.read_text())
    del data["active"]
    state.write_text(json.dumps(data))
    assert main(["run", str(src), "--policy", "d", "--state", str(state)]) in (0, 1)
    # a name that is not a candidate is a user error
    data["active"] = "nope"
    state.write_text(json.dumps(data))
    assert main(["run", str(src), "--policy", "d", "--state", str(state)]) == 2
    assert "not a candidate of policy d" in capsys.readouterr().err
    assert main(["run", str(src), "--policy", "fcfs", "--state", str(state)]) == 2
    assert "does not tune" in capsys.readouterr().err


# One table of kept sizes serves every candidate: `wide` keeps max_size, and `half`, whose own
# invariant bounds its sizes by half of that, then starts the job on the size `wide` kept
# (KTH-SP2 with --range-factor 2 stops there). Proving `half`, a kept size satisfies only what
# every `size fixed` candidate proves of its sizes: here nothing but the range.
KEPT = """
policy wide { order job.submit asc  reserve all  backfill first_fit  size fixed job.max_size }
policy half extends wide {
  size fixed max(job.min_size, job.max_size div 2)
  invariant job.size <= max(job.min_size, job.max_size div 2)
}
policy d { candidates wide, half  metric artww }
"""


def test_a_size_another_candidate_kept_is_not_assumed_to_keep_this_one_s_invariants() -> None:
    policy = compile_source(KEPT, "<t>", "d")
    (v,) = verify_policy(policy, SMALL, NO_CLOCK, only=["invariant"], replay_for=replayer)
    assert v.status == "violated" and v.candidate == "half", v
    assert any("size" in job for job in v.counterexample["queue"])  # started on a kept size
    half = candidate_policies(policy)[1]
    assert replay_stop(half, v.counterexample).kind == (
        "invariant `job.size <= max(job.min_size, job.max_size div 2)`")
    # alone, `half` keeps only its own sizes: proved
    alone = compile_source(KEPT, "<t>", "half")
    (own,) = verify_policy(alone, SMALL, NO_CLOCK, only=["invariant"])
    assert own.status == "proved"


def test_kept_invariants_are_those_of_every_fixed_candidate() -> None:
    from schedc.dsl.verify.prover import kept_invariants

    policy = compile_source(KEPT.replace("metric artww", "metric artww  invariant "
                                         "job.size >= 1"), "<t>", "d")
    kept = kept_invariants(candidate_policies(policy))
    assert [i.text for i in kept] == ["job.size >= 1"]  # the tuned one, every candidate's
