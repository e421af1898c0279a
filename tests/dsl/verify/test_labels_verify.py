"""The verifier on labels (job.user, ...) and powers: labels exist only where read, their
counterexamples carry them and replay, and `^` is proved and refuted like a product."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedc.dsl import compile_file, compile_source
from schedc.dsl.verify.pass_encoding.encoder import encode_pass
from schedc.dsl.verify.prover import verify_policy
from schedc.dsl.verify.verdict import Bounds, Limits
from schedc.runtime.cli.main import main
from tests.support.repo import ROOT

EXAMPLES = ROOT / "examples"
SMALL = Bounds(queued=3, running=3)
NO_CLOCK = Limits(timeout_ms=3_600_000)

# backfills any job of a user other than 0 whether or not it delays the reservation
BAD_USER = """\
policy bad_user {
  order sum(r in running where r.user == job.user: r.procs) asc
  reserve 1
  backfill when job.user != 0
}
"""


def test_labels_are_made_only_for_the_attributes_a_policy_reads() -> None:
    easy = encode_pass(compile_file(EXAMPLES / "easy.pol"), SMALL)
    assert all(not j.labels for j in (*easy.queue, *easy.running))
    fair = encode_pass(compile_file(EXAMPLES / "user-fairshare.pol"), SMALL)
    assert {tuple(j.labels) for j in (*fair.queue, *fair.running)} == {("user",)}
    both = encode_pass(compile_source(
        "policy p { order job.queue reserve 1 per job.partition backfill first_fit }", "<t>"),
        SMALL)
    assert tuple(both.queue[0].labels) == ("queue", "partition")


def test_a_label_counterexample_carries_the_labels_and_replays(tmp_path: Path,
                                                               capsys) -> None:
    policy = tmp_path / "bad.pol"
    policy.write_text(BAD_USER)
    verdicts = {v.property: v for v in verify_policy(compile_file(policy), SMALL, NO_CLOCK)}
    cex = verdicts["reservation-safety"].counterexample
    assert verdicts["reservation-safety"].status == "violated" and cex is not None
    jobs = [*cex["running"], *cex["queue"]]
    assert all("user" in j and j["user"] >= -1 and "group" not in j for j in jobs)
    started = [j for j in cex["queue"] if j["id"] in cex["pass"]["started"]]
    assert started and all(j["user"] != 0 for j in started)
    state = tmp_path / "cex.json"
    state.write_text(json.dumps({k: v for k, v in cex.items() if k != "pass"}))
    capsys.readouterr()
    assert main(["run", str(policy), "--state", str(state)]) == 1
    assert "delayed" in capsys.readouterr().err


@pytest.mark.parametrize(("invariant", "status"), [
    ("(job.procs - 3) ^ 2 >= 0", "proved"),  # a square is never negative
    ("job.estimate ^ 3 >= job.estimate", "proved"),  # estimates are at least 1
    ("-job.procs ^ 2 < 0", "proved"),  # -(procs^2), not (-procs)^2
    ("job.procs ^ 2 >= 2", "violated"),  # a 1-cpu job
    ("(job.wait / job.estimate) ^ 0 == 1", "proved"),
])
def test_powers_are_proved_and_refuted(invariant: str, status: str) -> None:
    source = f"policy p {{ reserve 1 backfill first_fit invariant {invariant} }}"
    verdicts = verify_policy(compile_source(source, "<t>"), SMALL, NO_CLOCK)
    (inv,) = [v for v in verdicts if v.property.startswith("invariant")]
    assert inv.status == status, inv.reason
