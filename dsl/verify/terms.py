"""Z3 terms built without z3py's coercions, for the encodings' hot loops.

``z3.If``, ``z3.And`` and ``z3.Sum`` work out the sorts and contexts of their arguments,
cast Python values and check them before they call Z3's API; over groups of processors a
preemptive pass makes tens of thousands of such terms and those checks took most of its
encoding's time. These builders take terms of the right sort already (the callers' own)
and call the same API functions with the same arguments, in the same order, so the terms
are the very ones z3py would make (Z3 shares equal terms): only the Python work changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import z3
from z3 import z3core


def ite(c: z3.BoolRef, a: Any, b: Any) -> Any:
    """``z3.If(c, a, b)`` for terms ``a`` and ``b`` (Bools, or numbers)."""
    if not (isinstance(c, z3.BoolRef) and isinstance(a, z3.ExprRef)
            and isinstance(b, z3.ExprRef)):
        return z3.If(c, a, b)  # a Python value: z3py casts it
    # (an Int beside a Real Z3 casts as z3py does: ``tests/dsl/verify/test_terms.py``)
    ctx = c.ctx
    made = z3core.Z3_mk_ite(ctx.ref(), c.as_ast(), a.as_ast(), b.as_ast())
    return z3.BoolRef(made, ctx) if isinstance(a, z3.BoolRef) else z3.ArithRef(made, ctx)


def _array(terms: Sequence[z3.ExprRef]) -> Any:
    array = (z3.Ast * len(terms))()
    for i, t in enumerate(terms):
        array[i] = t.as_ast()
    return array


def add(terms: Sequence[z3.ArithRef], ctx: z3.Context) -> z3.ArithRef:
    """``z3.Sum(terms)`` of Int terms (0 if none)."""
    if not terms:
        return z3.IntVal(0, ctx)
    return z3.ArithRef(z3core.Z3_mk_add(ctx.ref(), len(terms), _array(terms)), ctx)


def weighed(bits: Sequence[z3.BoolRef], weights: Sequence[z3.ArithRef]) -> z3.ArithRef:
    """``z3.Sum([z3.If(b, w, 0) ...])``: the weights of the units ``bits`` marks."""
    ctx = weights[0].ctx if weights else z3.main_ctx()
    zero = z3.IntVal(0, ctx)
    return add([ite(b, w, zero) for b, w in zip(bits, weights, strict=True)], ctx)


def counted(bits: Sequence[z3.BoolRef]) -> z3.ArithRef:
    """``z3.Sum([z3.If(b, 1, 0) ...])``: how many of ``bits`` hold."""
    if not bits:
        return z3.IntVal(0)
    ctx = bits[0].ctx
    one, zero = z3.IntVal(1, ctx), z3.IntVal(0, ctx)
    return add([ite(b, one, zero) for b in bits], ctx)


def conj(bools: Sequence[z3.BoolRef]) -> z3.BoolRef:
    """``z3.And(bools)`` of Bool terms."""
    if not bools or not all(isinstance(b, z3.BoolRef) for b in bools):
        return z3.And(*bools)
    ctx = bools[0].ctx
    return z3.BoolRef(z3core.Z3_mk_and(ctx.ref(), len(bools), _array(bools)), ctx)


def disj(bools: Sequence[z3.BoolRef]) -> z3.BoolRef:
    """``z3.Or(bools)`` of Bool terms."""
    if not bools or not all(isinstance(b, z3.BoolRef) for b in bools):
        return z3.Or(*bools)
    ctx = bools[0].ctx
    return z3.BoolRef(z3core.Z3_mk_or(ctx.ref(), len(bools), _array(bools)), ctx)
