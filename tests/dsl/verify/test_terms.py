"""The fast term builders (``dsl/verify/terms.py``) make the very terms z3py makes: Z3
shares equal terms, so each is the same term (``eq``), and no proof or search changes."""

from __future__ import annotations

import z3
from hypothesis import given
from hypothesis import strategies as st

from schedc.dsl.verify.terms import conj, counted, disj, ite, weighed

bits_and_weights = st.lists(st.tuples(st.integers(0, 5), st.integers(-3, 9)), max_size=6)


def _bits(spec: list[tuple[int, int]]) -> tuple[list[z3.BoolRef], list[z3.ArithRef]]:
    """Bools (some constants) and Int weights (some numerals), as the encodings mix them."""
    bits = [z3.BoolVal(b == 0) if b < 2 else z3.Bool(f"b{b}") for b, _ in spec]
    weights = [z3.IntVal(w) if w < 0 else z3.Int(f"n{w}") for _, w in spec]
    return bits, weights


@given(bits_and_weights)
def test_sums_of_weights_and_counts_are_z3py_s(spec: list[tuple[int, int]]) -> None:
    bits, weights = _bits(spec)
    if weights:
        expected = z3.Sum([z3.If(b, w, 0) for b, w in zip(bits, weights, strict=True)])
        assert weighed(bits, weights).eq(expected)
    counts = z3.Sum([z3.If(b, 1, 0) for b in bits]) if bits else z3.IntVal(0)
    assert counted(bits).eq(counts)


@given(bits_and_weights)
def test_conjunctions_and_disjunctions_are_z3py_s(spec: list[tuple[int, int]]) -> None:
    bits, _ = _bits(spec)
    assert conj(bits).eq(z3.And(*bits)) and disj(bits).eq(z3.Or(*bits))


def test_an_if_of_bools_ints_or_python_values_is_z3py_s() -> None:
    c, a, b = z3.Bool("c"), z3.Bool("a"), z3.Bool("b")
    x, y = z3.Int("x"), z3.Int("y")
    assert ite(c, a, b).eq(z3.If(c, a, b)) and isinstance(ite(c, a, b), z3.BoolRef)
    assert ite(c, x, y).eq(z3.If(c, x, y)) and isinstance(ite(c, x, y), z3.ArithRef)
    # a Python value goes through z3py, which casts it
    assert ite(c, x, 0).eq(z3.If(c, x, 0)) and ite(True, x, y).eq(z3.If(True, x, y))


def test_an_if_of_an_int_and_a_real_is_z3py_s() -> None:
    """z3py casts the Int to a Real; Z3 itself casts it the same way."""
    c, x, r = z3.Bool("c"), z3.Int("x"), z3.Real("r")
    assert ite(c, x, r).eq(z3.If(c, x, r)) and ite(c, x, r).is_real()
