"""The proofs' encoding of a preemptive pass (dsl/verify/preemption/passes.py, ``symmetric``):
any free processors where the simulator takes the lowest, one numbering of each state, and
lemmas about counts. A lemma is a fact Z3 is given: each must follow from the encoding's
definitions, or a proof could rest on a falsehood. That the symmetric encoding admits the
simulator's pass of random states is ``preemptive_agreement.admitted`` (run by
``test_preemptive_verify.py``'s agreement seeds)."""

from __future__ import annotations

import pytest
import z3

from schedc.dsl import compile_file, compile_source, ir
from schedc.dsl.verify.preemption.passes import encode_preemptive
from schedc.dsl.verify.z3context import fresh_context
from tests.support.repo import ROOT

# the order pass with suspended jobs, with checkpoint claims and `leftover`, with subsets
EXAMPLES = ("srpt", "mig-ad", "mall-adsubset")
# the rule pass: suspended jobs, with at most `resident` of them per processor, and a
# second resource; its lemmas are over groups only
RULE_EXAMPLES = ("selective-suspension", "lsf-preempt", "slurm-requeue")
# every mechanism behind one rule: a checkpoint that takes time (the victim keeps its
# processors a while), one that does not, a requeue and a suspension
MIXED_RULE = """
param keep_for: int in [0, 600] = 60
policy mixed {
  order     job.submit asc
  reserve   0
  backfill  first_fit
  mechanism suspend when job.procs <= 2
  mechanism checkpoint when job.procs <= 4
  mechanism requeue when job.procs <= 6
  mechanism checkpoint
  cost      checkpoint (if job.procs <= 4 then 0 else 30)
  preempt   when cand.submit < victim.submit
  keep      job.since_start < keep_for
  resident  3
}
"""


def _lemmas_hold(policy: ir.Policy, mode: str, waiting: int = 2, running: int = 2) -> int:
    """Each lemma of ``policy``'s pass in ``mode`` proved from the definitions; how many."""
    with fresh_context():
        sym = encode_preemptive(policy, waiting, running, 4, symmetric=mode == "symmetric",
                                grouped=mode == "grouped")
        st = sym.state
        for lemma in sym.lemmas:
            solver = z3.Solver()
            solver.set("rlimit", 50_000_000)
            solver.add(*(f for _, f in st.assumptions), *st.definitions, z3.Not(lemma))
            assert solver.check() == z3.unsat, lemma
        return len(sym.lemmas)


@pytest.mark.parametrize("name", EXAMPLES)
@pytest.mark.parametrize("mode", ["exact", "symmetric", "grouped"])
def test_each_lemma_follows_from_the_definitions(name: str, mode: str) -> None:
    """Over groups of processors (``groups.py``) too: there a lemma holds on every
    machine size."""
    policy = compile_file(ROOT / "examples" / "preemption" / f"{name}.pol")
    assert _lemmas_hold(policy, mode), "the order pass states its counts"


@pytest.mark.parametrize("name", RULE_EXAMPLES)
def test_each_rule_pass_lemma_follows_from_the_definitions(name: str) -> None:
    """The rule pass over groups: the room a candidate was fitted to is what it takes
    from, its take split into free and held processors."""
    policy = compile_file(ROOT / "examples" / "preemption" / f"{name}.pol")
    assert _lemmas_hold(policy, "grouped")


def test_the_rule_pass_lemmas_hold_for_every_mechanism() -> None:
    policy = compile_source(MIXED_RULE, "mixed.pol")
    assert policy.preemption is not None and len(policy.preemption.mechanisms) == 4
    assert _lemmas_hold(policy, "grouped")


def test_a_wrong_lemma_is_caught() -> None:
    """The check above can fail: a count the pass does not imply is satisfiable to deny."""
    policy = compile_file(ROOT / "examples" / "preemption" / "srpt.pol")
    with fresh_context():
        sym = encode_preemptive(policy, 2, 2, 4, symmetric=True)
        st = sym.state
        wrong = z3.And([z3.Not(b) for s in st.slots for b in s.procs])  # nobody holds any
        solver = z3.Solver()
        solver.add(*(f for _, f in st.assumptions), *st.definitions, z3.Not(wrong))
        assert solver.check() == z3.sat


def test_the_canonical_numbering_lists_processors_by_what_they_hold() -> None:
    """Two running jobs of one and two cpus on a machine of four: numbered canonically,
    the first slot's processors come first; any numbering is allowed without it."""
    policy = compile_file(ROOT / "examples" / "preemption" / "srpt.pol")
    for canonical, expected in ((True, z3.unsat), (False, z3.sat)):
        with fresh_context():
            sym = encode_preemptive(policy, 2, 2, 4, symmetric=True, canonical=canonical)
            st = sym.state
            solver = z3.Solver()
            solver.add(*(f for _, f in st.assumptions), *st.definitions)
            s = st.slots[0]
            # the first slot holds processor 3 but not processor 0, which no one holds
            solver.add(s.present, s.procs[3], z3.Not(s.procs[0]),
                       *(z3.Not(t.procs[0]) for t in st.slots))
            assert solver.check() == expected
