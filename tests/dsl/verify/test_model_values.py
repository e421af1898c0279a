"""Values read from a Z3 model for a counterexample (counterexample.model_value): Z3 leaves
`to_int` of an irrational root unevaluated, and reading one crashed `schedc verify`
(fuzz_verify seed 7059: `ceil(sqrt(queue.count))` in a backfill condition; its policy's
run of `schedc verify ... --queued 3 --running 3 --rlimit 4000000` reaches the value in
reservation-safety's counterexample, and now reports the counterexample)."""

from __future__ import annotations

from fractions import Fraction

import z3

from schedc.dsl.verify.counterexample import model_value as _value


def _root_of_three() -> tuple[z3.ModelRef, z3.ArithRef]:
    x = z3.Real("x")
    solver = z3.Solver()
    solver.add(x * x == 3, x < 0)
    assert solver.check() == z3.sat
    return solver.model(), x


def test_floor_of_an_irrational_root_is_read() -> None:
    model, x = _root_of_three()
    assert not z3.is_true(model.eval(z3.ToReal(z3.ToInt(x)) == -2, model_completion=True))
    assert _value(model, z3.ToReal(z3.ToInt(x)) == -2) is True
    assert _value(model, z3.ToInt(x) * 2 + 1) == -3
    assert _value(model, z3.ToInt(-x)) == 1
    assert abs(_value(model, x + 1) - Fraction("-0.73205080756887729353")) < Fraction(1, 10**19)

