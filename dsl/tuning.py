"""What a self-tuning dynP policy (``ir.Tuning``, papers/001) runs: its candidates, each
with the tuned policy's own invariants added (they must hold whichever candidate's pass
runs), and the params each candidate reads of those given."""

from __future__ import annotations

from collections.abc import Mapping

from attrs import evolve

from schedc.dsl import ir


def candidate_policies(policy: ir.Policy) -> tuple[ir.Policy, ...]:
    """The passes ``policy`` may make: its candidates with its invariants added; a policy
    without tuning is its own one candidate."""
    if policy.tuning is None:
        return (policy,)
    return tuple(evolve(c, invariants=c.invariants + policy.invariants)
                 for c in policy.tuning.candidates)


def params_for(candidate: ir.Policy, given: Mapping[str, str] | None) -> dict[str, str]:
    """Of the param values ``given`` to the tuned policy (checked against its params, the
    union of its candidates'), those ``candidate`` reads."""
    own = {p.name for p in candidate.params}
    return {name: text for name, text in (given or {}).items() if name in own}
