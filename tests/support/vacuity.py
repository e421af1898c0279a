"""The fuzz campaigns' vacuity check: which proved verdicts rest on assumptions that admit no
state in which a job waits. Made apart from the prover's own check (``Checker.vacuity``,
``preemption/prover._vacuity``): the pass encoded again in a Z3 context of its own, one plain
solver, no learned facts, no reused solver. A property it names is a campaign failure: the
prover should have said `vacuous`. No pytest here: the harnesses import it."""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import z3

from schedc.dsl import ir
from schedc.dsl.tuning import candidate_policies
from schedc.dsl.verify.pass_encoding.encoder import encode_pass
from schedc.dsl.verify.pass_encoding.record import Unsupported
from schedc.dsl.verify.preemption.passes import encode_preemptive
from schedc.dsl.verify.preemption.properties import runs_through
from schedc.dsl.verify.preemption.slots import Unencodable
from schedc.dsl.verify.verdict import Bounds, Verdict
from schedc.dsl.verify.z3context import fresh_context

# a campaign's category (records.Disagreement.category): proved, but of no state
VACUOUS = "vacuous-proof"
RLIMIT = 20_000_000  # per check: finding any state is easy, an unknown is not a failure
# and a wall-clock guard: nlsat's polynomial arithmetic does not count the rlimit (seed 1029
# of the CI fuzz sat in one check for over 10 minutes); an unknown is not counted
TIMEOUT_MS = 20_000


def vacuous_proofs(policy: ir.Policy, verdicts: Sequence[Verdict], bounds: Bounds
                   ) -> list[str]:
    """The properties of ``verdicts`` proved although the assumptions of their pass (its
    equations and a waiting job: for a preemptive one, also a pass that runs through where
    the proof assumed it) admit no state; a dynP policy's where any candidate's do not."""
    proved = [v.property for v in verdicts if v.status == "proved"]
    if not proved:
        return []
    with fresh_context():
        if policy.preemption is not None:
            return _preemptive(policy, proved, bounds)
        out: dict[str, None] = {}
        sized = any(c.size is not None for c in candidate_policies(policy))
        for c in candidate_policies(policy):
            c = attrs.evolve(c, machine=policy.machine)
            for name in proved:
                if _rigid_empty(c, bounds, idle=name == "progress", resized=sized):
                    out[name] = None
        return list(out)


def _rigid_empty(policy: ir.Policy, bounds: Bounds, idle: bool, resized: bool) -> bool:
    try:
        sym = encode_pass(policy, bounds, exact=False, idle=idle, earliest=not idle,
                          resized=resized)
    except Unsupported:
        return False
    return _empty([a.formula for a in sym.assumptions] + list(sym.definitions.all())
                  + [sym.queue[0].present])


def _preemptive(policy: ir.Policy, proved: list[str], bounds: Bounds) -> list[str]:
    try:
        sym = encode_preemptive(policy, *bounds.preemptive, bounds.processors,
                                overrun=bounds.overrun)
    except Unencodable:
        return []
    st = sym.state
    base = [f for _, f in st.assumptions] + list(st.definitions) + [st.pass_runs]
    empty = {False: _empty(base)}
    out = []
    for name in proved:
        through = name not in ("well-defined", "size-bounds")
        if through not in empty:
            empty[through] = _empty([*base, runs_through(sym)])
        if empty[through]:
            out.append(name)
    return out


def _empty(formulas: list[z3.BoolRef]) -> bool:
    """No model (unknown is not counted: the campaign reports only what it shows)."""
    solver = z3.Solver()
    solver.set("rlimit", RLIMIT)
    solver.set("timeout", TIMEOUT_MS)
    solver.add(*formulas)
    return solver.check() == z3.unsat
