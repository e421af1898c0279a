"""The proofs' encoding of a preemptive pass (dsl/verify/preemption/passes.py, ``symmetric``):
any free processors where the simulator takes the lowest, one numbering of each state, and
lemmas about counts. A lemma is a fact Z3 is given: each must follow from the encoding's
definitions, or a proof could rest on a falsehood. That the symmetric encoding admits the
simulator's pass of random states is ``preemptive_agreement.admitted`` (run by
``test_preemptive_verify.py``'s agreement seeds)."""

from __future__ import annotations

import pytest
import z3

from schedc.dsl import compile_file
from schedc.dsl.verify.preemption.passes import encode_preemptive
from schedc.dsl.verify.z3context import fresh_context
from tests.support.repo import ROOT

# the order pass with suspended jobs, with checkpoint claims and `leftover`, with subsets
EXAMPLES = ("srpt", "mig-ad", "mall-adsubset")


@pytest.mark.parametrize("name", EXAMPLES)
@pytest.mark.parametrize("mode", ["exact", "symmetric", "grouped"])
def test_each_lemma_follows_from_the_definitions(name: str, mode: str) -> None:
    """Over groups of processors (``groups.py``) too: there a lemma holds on every
    machine size."""
    policy = compile_file(ROOT / "examples" / "preemption" / f"{name}.pol")
    with fresh_context():
        sym = encode_preemptive(policy, 2, 2, 4, symmetric=mode == "symmetric",
                                grouped=mode == "grouped")
        assert sym.lemmas, "the order pass states its counts"
        st = sym.state
        for lemma in sym.lemmas:
            solver = z3.Solver()
            solver.set("rlimit", 50_000_000)
            solver.add(*(f for _, f in st.assumptions), *st.definitions, z3.Not(lemma))
            assert solver.check() == z3.unsat, lemma


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
