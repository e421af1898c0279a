"""Verdicts of waived properties (`waive PROPERTY "REASON"`): marked by the policy's waivers,
a dynP policy's candidate by candidate (its own and the tuned policy's), and a failure no
one waived always shown before a waived one (it fails the run)."""

from __future__ import annotations

from schedc.dsl import compile_source
from schedc.dsl.verify.tuning import verify_tuned
from schedc.dsl.verify.verdict import Verdict, with_waivers

PLAN = "reserve all backfill first_fit"
SOURCE = f"""
policy a {{ order job.submit asc {PLAN} waive progress "a's reason" }}
policy b {{ order job.estimate asc {PLAN} }}
policy c {{ order job.estimate desc {PLAN} waive capacity "c's reason" }}
policy d {{ candidates a, b, c metric artww waive size-bounds "d's reason" }}
"""


def _verdict(prop: str, status: str) -> Verdict:
    return Verdict(prop, status, 0.0, "N=1 queued, R=1 running, K=1")


def _tuned(statuses: dict[str, dict[str, str]]) -> dict[str, Verdict]:
    """The dynP policy `d`'s verdicts when candidate X's property P is statuses[X][P]."""
    d = compile_source(SOURCE, "t.pol", "d")
    out = verify_tuned(d, lambda cand: [_verdict(p, s) for p, s in statuses[cand.name].items()])
    return {v.property: v for v in out}


def test_with_waivers_marks_the_waived_properties_only() -> None:
    a = compile_source(SOURCE, "t.pol", "a")
    progress, capacity = with_waivers([_verdict("progress", "violated"),
                                       _verdict("capacity", "violated")], a.waivers)
    assert progress.expected == "a's reason" and progress.excused
    assert progress.expected_at is not None and progress.expected_at.line == 2
    assert capacity.expected is None and not capacity.excused
    stale = with_waivers([_verdict("progress", "proved")], a.waivers)[0]
    assert stale.stale_waiver and not stale.excused


def test_a_candidate_s_failure_no_one_waived_comes_first() -> None:
    # a violates progress (waived by a), b too (waived by no one): the tuned verdict is b's
    v = _tuned({"a": {"progress": "violated"}, "b": {"progress": "violated"},
                "c": {"progress": "proved"}})["progress"]
    assert (v.status, v.candidate, v.expected, v.excused) == ("violated", "b", None, False)
    # b's unknown is no better: the tuned verdict fails the run
    v = _tuned({"a": {"progress": "violated"}, "b": {"progress": "unknown"},
                "c": {"progress": "proved"}})["progress"]
    assert (v.status, v.candidate, v.excused) == ("violated", "a", True)


def test_a_waived_failure_of_its_candidate_is_the_tuned_verdict() -> None:
    v = _tuned({"a": {"progress": "violated"}, "b": {"progress": "proved"},
                "c": {"progress": "proved"}})["progress"]
    assert (v.status, v.candidate, v.expected) == ("violated", "a", "a's reason")
    assert v.candidates == (("a", "violated"), ("b", "proved"), ("c", "proved"))


def test_the_tuned_policy_s_waiver_covers_every_candidate() -> None:
    v = _tuned({"a": {"size-bounds": "proved"}, "b": {"size-bounds": "violated"},
                "c": {"size-bounds": "unknown"}})["size-bounds"]
    assert (v.status, v.candidate, v.expected) == ("violated", "b", "d's reason")


def test_a_waived_property_every_candidate_proves_is_a_warning() -> None:
    v = _tuned({"a": {"capacity": "proved"}, "b": {"capacity": "proved"},
                "c": {"capacity": "proved"}})["capacity"]
    assert v.stale_waiver and v.expected == "c's reason"
