"""The adaptive steps as Z3 terms (dsl/verify/preemption/adaptive.py) against the
simulator's (runtime/engine/adaptive.py) on concrete inputs: the SUBSET variant's N', its
subset sum, and the leftover processors given out equally (exactly) or by efficiency (the
simulator's choice is one the encoding allows)."""

from __future__ import annotations

import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from schedc.dsl import compile_source
from schedc.dsl.verify.preemption import adaptive as symbolic
from schedc.dsl.verify.preemption.slots import PreemptiveState
from schedc.dsl.verify.symbolic import FreshNames
from schedc.dsl.verify.z3context import fresh_context
from schedc.runtime.engine import adaptive as concrete

P = 6  # the processor bound of these states
POLICY = compile_source("policy p {\n  reserve 0\n  mechanism checkpoint\n"
                        "  preempt by order\n}\n", "p.pol")


def state() -> PreemptiveState:
    return PreemptiveState(POLICY, 1, 1, P, FreshNames())


def solve(st_: PreemptiveState, *terms: z3.ExprRef) -> list:
    solver = z3.Solver()
    solver.add(*st_.definitions)
    assert solver.check() == z3.sat
    model = solver.model()
    return [model.eval(t, model_completion=True) for t in terms]


@given(st.integers(0, 6), st.integers(0, 12), st.integers(1, 8))
def test_committed(first_fit: int, in_system: int, delta: int) -> None:
    with fresh_context():
        delta_term = z3.Int("delta")
        term = symbolic.committed(z3.IntVal(first_fit), z3.IntVal(in_system), delta_term, 6)
        got = z3.simplify(z3.substitute(term, (delta_term, z3.IntVal(delta)))).as_long()
    assert got == concrete.committed(first_fit, in_system, delta)


jobs = st.lists(st.tuples(st.booleans(), st.integers(1, P)), min_size=0, max_size=6)


@settings(max_examples=60, deadline=None)
@given(jobs, st.integers(0, P))
def test_fill(items: list[tuple[bool, int]], capacity: int) -> None:
    members = [i for i, (m, _) in enumerate(items) if m]
    want = {members[j] for j in concrete.fill([items[i][1] for i in members], capacity)}
    with fresh_context():
        st_ = state()
        chosen = symbolic.fill(st_, [z3.BoolVal(m) for m, _ in items],
                               [z3.IntVal(z) for _, z in items], z3.IntVal(capacity))
        got = {i for i, v in enumerate(solve(st_, *chosen)) if z3.is_true(v)}
    assert got == want


leftover_jobs = st.lists(st.tuples(st.booleans(), st.integers(1, 3), st.integers(0, 3)),
                         min_size=0, max_size=5)


@settings(max_examples=60, deadline=None)
@given(leftover_jobs, st.integers(0, P), st.booleans())
def test_give_leftover(items: list[tuple[bool, int, int]], leftover: int,
                       efficient: bool) -> None:
    """Equal: the same sizes. Efficient (here with Amdahl speedups): the simulator's sizes
    are among the encoding's outcomes."""
    resizable = [i for i, (r, _, _) in enumerate(items) if r]
    sizes = [items[i][1] for i in resizable]
    maxima = [items[i][1] + items[i][2] for i in resizable]
    serial = [0.1 * (i % 4) for i in resizable]

    def amdahl(j: int, n: int) -> float:
        return 1 / (serial[j] + (1 - serial[j]) / n)

    concrete.give_leftover(sizes, maxima, leftover, amdahl if efficient else None)
    want = [n for _, n, _ in items]
    for i, n in zip(resizable, sizes, strict=True):
        want[i] = n
    with fresh_context():
        st_ = state()
        got, _ = symbolic.give_leftover(
            st_, [z3.BoolVal(r) for r, _, _ in items], [z3.IntVal(n) for _, n, _ in items],
            [z3.IntVal(n + extra) for _, n, extra in items], z3.IntVal(leftover),
            z3.BoolVal(efficient), P)
        solver = z3.Solver()
        solver.add(*st_.definitions)
        if not efficient:
            assert solver.check() == z3.sat
            model = solver.model()
            assert [model.eval(n).as_long() for n in got] == want
            solver.add(z3.Or([n != w for n, w in zip(got, want, strict=True)] or
                             [z3.BoolVal(False)]))
            assert solver.check() == z3.unsat  # the only outcome
        else:
            solver.add(*(n == w for n, w in zip(got, want, strict=True)))
            assert solver.check() == z3.sat
