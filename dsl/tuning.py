"""What a self-tuning dynP policy (``ir.Tuning``, papers/001) runs: its candidates, each
with the tuned policy's own invariants added (they must hold whichever candidate's pass
runs), and the params each candidate reads of those given."""

from __future__ import annotations

from collections.abc import Mapping

from attrs import evolve

from schedc.dsl import ir


def candidate_policies(policy: ir.Policy) -> tuple[ir.Policy, ...]:
    """The passes ``policy`` may make: its candidates with its invariants (and the params
    they read) added; a policy without tuning is its own one candidate."""
    if policy.tuning is None:
        return (policy,)
    # the tuned invariants' params become the candidate's too: its pass checks them
    read = {n.name for i in policy.invariants for n in ir.walk(i.expr)
            if isinstance(n, ir.ParamRef)}
    added = tuple(q for q in policy.params if q.name in read)
    return tuple(evolve(c, invariants=c.invariants + policy.invariants,
                        params=c.params + tuple(q for q in added
                                                if q.name not in {o.name for o in c.params}))
                 for c in policy.tuning.candidates)


def params_for(candidate: ir.Policy, given: Mapping[str, str] | None) -> dict[str, str]:
    """Of the param values ``given`` to the tuned policy (checked against its params, the
    union of its candidates'), those ``candidate`` reads."""
    own = {p.name for p in candidate.params}
    return {name: text for name, text in (given or {}).items() if name in own}
