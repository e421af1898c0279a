"""Verifying a self-tuning dynP policy (papers/001): any pass it makes is one of its
candidates' passes (with its own invariants added), so it has a property iff every
candidate has it. Each candidate is proved on its own; the tuned verdict of a property is
the worst of the candidates' (violated, vacuous, unknown), names the candidate it comes from,
and keeps that candidate's counterexample (it replays with that candidate's pass)."""

from __future__ import annotations

from collections.abc import Callable

import attrs

from schedc.dsl import ir
from schedc.dsl.tuning import candidate_policies
from schedc.dsl.verify.verdict import Verdict, with_waivers

# the worst first: a vacuous proof is a defect of the policy, as a violation is
_RANK = {"violated": 0, "vacuous": 1, "unknown": 2, "proved": 3}


def verify_tuned(policy: ir.Policy, verify_one: Callable[[ir.Policy], list[Verdict]]
                 ) -> list[Verdict]:
    """The tuned policy's verdicts from ``verify_one`` of each candidate (a property only
    some candidates have, their own invariant, is theirs alone)."""
    # a property the tuned policy or the candidate waives is expected of that candidate
    runs = [(cand.name, with_waivers(verify_one(cand), (*policy.waivers, *cand.waivers)))
            for cand in candidate_policies(policy)]
    names = list(dict.fromkeys(v.property for _, verdicts in runs for v in verdicts))
    out = []
    for name in names:
        group = [(cand, v) for cand, verdicts in runs for v in verdicts if v.property == name]
        out.append(_combined(group))
    return out


def _combined(group: list[tuple[str, Verdict]]) -> Verdict:
    # the first of the worst, one nobody waived before a waived one (it fails the run)
    worst_cand, worst = min(group, key=lambda cv: (_RANK[cv[1].status],
                                                   cv[1].expected is not None))
    statuses = tuple((cand, v.status) for cand, v in group)
    proved = [cand for cand, v in group if v.status == "proved"]
    total = {"seconds": sum(v.seconds for _, v in group), "work": sum(v.work for _, v in group)}
    if worst.status == "proved":
        note = f"proved for every candidate ({', '.join(proved)})"
        waived = next((v for _, v in group if v.expected is not None), worst)
        return attrs.evolve(
            worst, **total, candidates=statuses, expected=waived.expected,
            expected_at=waived.expected_at,
            reason=f"{worst.reason}; {note}" if worst.reason else note,
            core=tuple(dict.fromkeys(c for _, v in group for c in v.core)),
            bounded_by=tuple(dict.fromkeys(b for _, v in group for b in v.bounded_by)),
            caveats=tuple(dict.fromkeys(c for _, v in group for c in v.caveats)))
    reason = f"candidate `{worst_cand}`: {worst.reason or worst.status}"
    if proved:
        reason += f" (proved for {', '.join(proved)})"
    return attrs.evolve(worst, **total, candidate=worst_cand, candidates=statuses,
                        reason=reason)
