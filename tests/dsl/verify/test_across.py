"""`reservations-kept`, the property across two passes (dsl/verify/across.py): EASY's proof,
conservative backfilling's replayed counterexample, and how `schedc verify` reports them."""

from __future__ import annotations

import json

import pytest

from schedc.dsl import compile_file, compile_source
from schedc.dsl.verify import reports as vr
from schedc.dsl.verify.across import KEPT, makes_reservations, verify_across
from schedc.dsl.verify.verdict import Bounds
from schedc.runtime.cli.main import main
from schedc.runtime.replay import replay_stop, replayer, state_part
from schedc.runtime.workloads.state_file import state_from_data
from tests.support.repo import EXAMPLES


@pytest.fixture(scope="module")
def easy():
    policy = compile_file(EXAMPLES / "easy.pol")
    (verdict,) = verify_across(policy, replay=replayer(policy))
    return verdict


@pytest.fixture(scope="module")
def conservative():
    policy = compile_file(EXAMPLES / "conservative.pol")
    (verdict,) = verify_across(policy, replay=replayer(policy))
    return policy, verdict


def test_easy_keeps_its_reservations(easy) -> None:
    assert (easy.property, easy.status) == (KEPT, "proved")
    assert easy.bound == "N=8 queued, R=8 running, K=1"
    assert "longest estimate running when it became the head" in easy.reason
    assert "--overrun estimate" in easy.reason and "`--overrun extend`" in easy.reason
    # bounded: said as a caveat, with what to raise
    assert len(easy.caveats) == 1 and "at most 8 queued and 8 running" in easy.caveats[0]
    assert "jobs end by their estimated ends" in easy.core


def test_conservative_moves_a_reservation(conservative) -> None:
    policy, verdict = conservative
    assert verdict.status == "violated" and "reservation moved from" in verdict.reason
    cex = verdict.counterexample
    assert cex["check"] == [KEPT]
    # the record of the two passes: a job reserved by the first is reserved later by the next
    later = {j: t for j, t in cex["next_pass"]["reservations"].items()
             if j in cex["pass"]["reservations"] and t > cex["pass"]["reservations"][j]}
    assert later
    assert cex["next_pass"]["now"] > cex["now"]
    # an event between the passes: a job ends at the next pass, or one arrives
    ending = [j for j in [*cex["running"], *cex["queue"]] if j["run_time"] < j["estimate"]]
    assert ending or cex["arrivals"]
    stop = replay_stop(policy, cex)
    assert stop.kind == KEPT
    job = next(iter(later))
    assert (f"job {job}'s reservation moved from {cex['pass']['reservations'][job]} to "
            f"{later[job]} between the passes at {cex['now']} and "
            f"{cex['next_pass']['now']}") in stop.message
    state_from_data(json.loads(json.dumps(state_part(cex))))  # a valid state file


def test_the_check_is_needed_to_stop(conservative) -> None:
    """Without `check`, the state replays to its end: the stop is the opt-in check's."""
    policy, verdict = conservative
    cex = {k: v for k, v in verdict.counterexample.items() if k != "check"}
    assert replay_stop(policy, cex).kind is None


def test_a_counterexample_that_does_not_replay_is_unknown() -> None:
    policy = compile_file(EXAMPLES / "conservative-sjf.pol")
    (verdict,) = verify_across(policy, Bounds(2, 2),
                               replay=lambda cex: (None, "the run ended without a stop"))
    assert verdict.status == "unknown" and "does not stop" in verdict.reason


@pytest.mark.parametrize(("name", "status"), [
    ("easy-sjf.pol", "violated"),  # a shorter arrival comes first and takes the room
    ("ff-easy.pol", "proved"),
])
def test_other_examples(name: str, status: str) -> None:
    policy = compile_file(EXAMPLES / name)
    (verdict,) = verify_across(policy, Bounds(3, 3), replay=replayer(policy))
    assert verdict.status == status


def test_which_policies_make_reservations() -> None:
    assert makes_reservations(compile_file(EXAMPLES / "easy.pol"))
    assert not makes_reservations(compile_file(EXAMPLES / "fcfs.pol"))
    assert not makes_reservations(compile_source("policy p { reserve 0 backfill first_fit }",
                                                 "<t>"))


def test_a_sized_policy_is_not_proved_by_the_head_argument() -> None:
    policy = compile_source("policy p { size job.procs reserve 1 backfill first_fit }", "<t>")
    (verdict,) = verify_across(policy, Bounds(2, 2), replay=replayer(policy))
    assert verdict.status in ("unknown", "violated")
    assert verdict.status == "violated" or "sizes jobs" in verdict.reason


# -- the command ---------------------------------------------------------------------------

def test_verify_appends_the_property_for_policies_that_reserve(tmp_path, capsys) -> None:
    out = tmp_path / "v.json"
    assert main(["verify", str(EXAMPLES / "easy.pol"), str(EXAMPLES / "fcfs.pol"),
                 "--format", "json", "--output", str(out)]) == 0
    reports = json.loads(out.read_text())
    assert [v["property"] for v in reports[0]["verdicts"]][-1] == KEPT
    assert KEPT not in [v["property"] for v in reports[1]["verdicts"]]
    kept = reports[0]["verdicts"][-1]
    assert kept["status"] == "proved" and kept["caveats"]


def test_property_selects_it_and_counterexamples_replay(tmp_path, capsys) -> None:
    folder = tmp_path / "cex"
    # violated, as the example's `waive reservations-kept` says: expected, exit 0
    assert main(["verify", str(EXAMPLES / "conservative.pol"), "--property", KEPT,
                 "--counterexamples", str(folder), "--format", "markdown"]) == 0
    text = capsys.readouterr().out
    assert "| reservations-kept | **violated** (expected) |" in text
    assert "| capacity |" not in text
    path = folder / "conservative.reservations-kept.json"
    state = json.loads(path.read_text())
    assert "next_pass" not in state and "pass" not in state and state["check"] == [KEPT]
    assert main(["run", str(EXAMPLES / "conservative.pol"), "--state", str(path)]) == 1
    assert "reservation moved from" in capsys.readouterr().err


def test_every_format_carries_the_bound(tmp_path, capsys) -> None:
    args = ["verify", str(EXAMPLES / "easy.pol"), "--property", KEPT, "--queued", "3",
            "--running", "3"]
    assert main([*args, "--format", "markdown"]) == 0
    assert "Bounded: reservations-kept is proved for states of at most 3 queued and 3 " \
           "running" in capsys.readouterr().out
    assert main([*args, "--format", "sarif"]) == 0
    sarif = json.loads(capsys.readouterr().out)
    (result,) = sarif["runs"][0]["results"]
    assert result["ruleId"] == KEPT and "at most 3 queued" in result["message"]["text"]
    assert KEPT in {r["id"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert main(args) == 0  # the terminal's table and its note
    assert "at most 3 queued" in capsys.readouterr().out


def test_a_dynp_policy_asked_for_it_is_unknown(capsys) -> None:
    assert main(["verify", str(EXAMPLES / "dynp-simple.pol"), "--property", KEPT,
                 "--format", "json"]) == 3
    (verdict,) = json.loads(capsys.readouterr().out)[0]["verdicts"]
    assert verdict["status"] == "unknown" and "dynP" in verdict["reason"]


def test_a_misspelt_property_is_named(capsys) -> None:
    assert main(["verify", str(EXAMPLES / "easy.pol"), "--property",
                 "reservation-kept"]) == 2
    err = capsys.readouterr().err
    assert "no such property" in err and "reservations-kept" in err


def test_the_counterexample_table_shows_both_passes(conservative) -> None:
    _, verdict = conservative
    title, columns, rows = vr.counterexample_rows(verdict)
    cex = verdict.counterexample
    assert f"next pass at {cex['next_pass']['now']}" in title
    assert columns[-1] == f"at {cex['next_pass']['now']}"
    moved = [row for row in rows if row[-1].startswith("reserved at")]
    assert moved and all(len(row) == len(columns) for row in rows)
