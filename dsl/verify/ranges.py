"""Intervals of IR expressions: a sign-and-range analysis, for the verifier's linear facts.

``interval(expr, ...)`` bounds the value an expression takes in every state that meets the
``HYPOTHESES`` below (what the pass assumes of a state, and what the simulator keeps true).
A bound is a constant or a constant times a resource's capacity (``Bound``): a sum of the
running jobs' cpus is at most the cpus, so its share of them is at most 1.

The symbolic evaluator (``dsl/verify/symbolic.py``) turns an interval into facts about the
Z3 term it makes for a nonlinear node: "if the operands lie in their intervals, the result
lies in this one". Each such fact is a theorem of exact arithmetic whatever the analysis
says of the operands (Z3 must still derive the premises), so an interval that were wrong
would cost a proof, never make a false one. The exception is what the simulator's `sqrt`
and `log` compute (``dsl/semantics/numbers.py``): their bounds come from the simulator's
own functions at the interval's ends, valid because its `sqrt` is monotone (the exact root
rounded to 53 bits, half to even), and `log` of an integer at least 1 is at least 0 (``log``
below). Nothing here claims `log(x) > 0` for `x > 1`: the simulator's `log(1 + 2**-60)` is 0.

The analysis is tested against the reference interpreter on random states
(tests/dsl/verify/test_ranges.py): every value lies in its interval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction

from attrs import frozen

from schedc.dsl import ir
from schedc.dsl.semantics import numbers as nm

__all__ = ["ANY", "HYPOTHESES", "Analysis", "Bound", "Context", "Interval", "interval",
           "log_lower", "product", "quotient", "sqrt_interval", "sums_held"]

# What an interval may rely on: each holds of every job and state the pass assumes
# (``_assume_jobs`` in pass_encoding/assumptions.py) and of every state the simulator's pass makes.
HYPOTHESES = (
    "params lie in their domains",
    "capacities are at least 1; used and free lie in [0, capacity]",
    "estimates are at least 1; requests lie in [0, capacity], cpus at least 1",
    "ids, submit times, starts, waits and elapsed times are at least 0; labels at least -1",
    "a running job ends after now (remaining at least 1)",
    "the running jobs' requests sum to at most each capacity (no size rule resized them)",
)

@frozen
class Bound:
    """``value``, or ``value`` times the capacity of resource ``resource``."""

    value: Fraction
    resource: int | None = None


@frozen
class Interval:
    """Closed; None: unbounded on that side."""

    lo: Bound | None = None
    hi: Bound | None = None


ANY = Interval()


@frozen
class Context:
    """What the analysis knows: the params' domains and the capacities (None: symbolic, at
    least 1)."""

    params: Mapping[str, tuple[Fraction | None, Fraction | None]]
    capacities: tuple[int | None, ...]


def interval(expr: ir.Expr, kinds: Mapping[str, str], ctx: Context) -> Interval:
    """The interval of a numeric ``expr`` (bool: ANY). ``kinds``: what each aggregate var
    ranges over ("queue", "running" or "resources"); `job` is a queued job. (A job
    attribute's interval is the same for queued and running jobs: the hypotheses are.)"""
    return Analysis(ctx).of(expr, kinds)


def sums_held(e: ir.Aggregate) -> int | None:
    """The resource k whose requests ``e`` sums over running jobs (`sum(r in running
    [where ...]: r.procs)`, `r.request[k]`): at most its capacity. None: not such a sum."""
    if e.fn != "sum" or e.domain != "running" or e.body is None:
        return None
    body = e.body
    if isinstance(body, ir.JobAttr) and body.var == e.var and body.attr == "procs":
        return 0
    if isinstance(body, ir.Request) and body.var == e.var and isinstance(body.resource, int):
        return body.resource
    return None


def log_lower(arg: ir.Expr, arg_interval: Interval) -> Fraction | None:
    """0 if the simulator's `log` of ``arg`` is at least 0: an int at least 1 (Fraction(n)
    has denominator 1, so `log` is ``math.log(n) - math.log(1)``, and ``math.log`` of an int
    n >= 1 is log(float(n)) >= log(1.0) = 0, or for ints beyond a double log(m) + e log(2)
    with m >= 0.5, e > 1000). A real argument may be p/q with huge p and q: no bound."""
    lo = _const_lo(arg_interval.lo)
    if arg.type == "int" and lo is not None and lo >= 1:
        return Fraction(0)
    return None


# -- bounds -----------------------------------------------------------------------------------

def _point(v: Fraction) -> Interval:
    return Interval(Bound(v), Bound(v))


def _const_lo(b: Bound | None) -> Fraction | None:
    """A constant lower bound implied by ``b`` (capacity >= 1: c * cap >= c for c >= 0)."""
    if b is None:
        return None
    if b.resource is None or b.value == 0:
        return b.value
    return b.value if b.value > 0 else None


def _const_hi(b: Bound | None) -> Fraction | None:
    if b is None:
        return None
    if b.resource is None or b.value == 0:
        return b.value
    return b.value if b.value < 0 else None


def _const(i: Interval) -> tuple[Fraction | None, Fraction | None]:
    return _const_lo(i.lo), _const_hi(i.hi)


def _bound(v: Fraction | None) -> Bound | None:
    return None if v is None else Bound(v)


def _of_consts(lo: Fraction | None, hi: Fraction | None) -> Interval:
    return Interval(_bound(lo), _bound(hi))


def _add_bounds(a: Bound | None, b: Bound | None, lower: bool) -> Bound | None:
    if a is None or b is None:
        return None
    if a.resource == b.resource:
        return Bound(a.value + b.value, a.resource)
    for x, y in ((a, b), (b, a)):
        if x.value == 0:
            return y
    weak = _const_lo if lower else _const_hi
    wa, wb = weak(a), weak(b)
    return None if wa is None or wb is None else Bound(wa + wb)


def _neg(i: Interval) -> Interval:
    def flip(b: Bound | None) -> Bound | None:
        return None if b is None else Bound(-b.value, b.resource)
    return Interval(flip(i.hi), flip(i.lo))


def _add(a: Interval, b: Interval) -> Interval:
    return Interval(_add_bounds(a.lo, b.lo, True), _add_bounds(a.hi, b.hi, False))


def _scale(i: Interval, c: Fraction) -> Interval:
    def times(b: Bound | None) -> Bound | None:
        return None if b is None else Bound(b.value * c, b.resource if c else None)
    return Interval(times(i.lo), times(i.hi)) if c >= 0 else Interval(times(i.hi), times(i.lo))


_INF = math.inf


def _times(a, b):
    """a * b on the extended line, 0 times an infinity being 0 (the values are finite)."""
    if a == 0 or b == 0:
        return Fraction(0)
    if a in (_INF, -_INF) or b in (_INF, -_INF):
        return _INF if (a > 0) == (b > 0) else -_INF
    return a * b


def _ext(lo: Fraction | None, hi: Fraction | None):
    return (-_INF if lo is None else lo), (_INF if hi is None else hi)


def _fin(v) -> Fraction | None:
    return None if v in (_INF, -_INF) else v


def _mul(a: Interval, b: Interval) -> Interval:
    for x, y in ((a, b), (b, a)):
        if x.lo is not None and x.lo == x.hi and x.lo.resource is None:
            return _scale(y, x.lo.value)
    alo, ahi = _ext(*_const(a))
    blo, bhi = _ext(*_const(b))
    products = [_times(p, q) for p in (alo, ahi) for q in (blo, bhi)]
    return _of_consts(_fin(min(products)), _fin(max(products)))


def _reciprocal(lo: Fraction | None, hi: Fraction | None) -> Interval | None:
    """1 / x for x in [lo, hi] not containing 0 (None if it may be 0)."""
    if lo is not None and lo > 0:
        return _of_consts(Fraction(0) if hi is None else 1 / hi, 1 / lo)
    if hi is not None and hi < 0:
        return _of_consts(1 / hi, Fraction(0) if lo is None else 1 / lo)
    return None


def product(a: Interval, b: Interval) -> Interval:
    """Where a * b lies for a in ``a``, b in ``b``."""
    return _mul(a, b)


def quotient(a: Interval, b: Interval) -> Interval:
    """Where a / b lies for a in ``a``, b in ``b`` (ANY if b may be 0)."""
    return _div(a, b)


def _div(a: Interval, b: Interval) -> Interval:
    """a / b: a share of a capacity by that capacity is a constant interval."""
    if b.lo is not None and b.lo == b.hi and b.lo.resource is not None and b.lo.value > 0:
        k, c = b.lo.resource, b.lo.value
        return Interval(_per_capacity(a.lo, k, c, True), _per_capacity(a.hi, k, c, False))
    inverse = _reciprocal(*_const(b))
    return ANY if inverse is None else _mul(a, inverse)


def _per_capacity(b: Bound | None, k: int, c: Fraction, lower: bool) -> Bound | None:
    """A bound of x / (c * cap_k) from one of x (cap_k >= 1)."""
    if b is None:
        return None
    if b.resource == k:
        return Bound(b.value / c)
    v = (_const_lo if lower else _const_hi)(b)
    if v is None:
        return None
    # v / (c cap) lies between 0 and v / c
    if lower:
        return Bound(min(v / c, Fraction(0)))
    return Bound(max(v / c, Fraction(0)))


def _hull(a: Interval, b: Interval) -> Interval:
    return Interval(_extreme(a.lo, b.lo, True), _extreme(a.hi, b.hi, False))


def _extreme(a: Bound | None, b: Bound | None, least: bool) -> Bound | None:
    """The least (or largest) of two bounds, weakened to a constant if they differ in
    kind."""
    if a is None or b is None:
        return None
    pick = min if least else max
    if a.resource == b.resource:
        return Bound(pick(a.value, b.value), a.resource)
    weak = _const_lo if least else _const_hi
    wa, wb = weak(a), weak(b)
    return None if wa is None or wb is None else Bound(pick(wa, wb))


def _min(items: list[Interval]) -> Interval:
    """min of values in these intervals: above the least lower bound, below any upper one."""
    lo = items[0].lo
    for i in items[1:]:
        lo = _extreme(lo, i.lo, True)
    his = [i.hi for i in items if i.hi is not None]
    constants = [b.value for b in his if b.resource is None]
    hi = Bound(min(constants)) if constants else his[0] if his else None
    return Interval(lo, hi)


def _max(items: list[Interval]) -> Interval:
    return _neg(_min([_neg(i) for i in items]))


def _floor(i: Interval, ceil: bool) -> Interval:
    lo, hi = _const(i)
    r = math.ceil if ceil else math.floor
    return _of_consts(None if lo is None else Fraction(r(lo)),
                      None if hi is None else Fraction(r(hi)))


def _abs(i: Interval) -> Interval:
    lo, hi = _const(i)
    if i.lo is not None and _const_lo(i.lo) is not None and _const_lo(i.lo) >= 0:
        return i
    if hi is not None and hi <= 0:
        return _neg(i)
    top = None if lo is None or hi is None else max(-lo, hi)
    return _of_consts(Fraction(0), top)


def sqrt_interval(i: Interval) -> Interval:
    """The simulator's sqrt is monotone: its values at the ends bound it (0 below)."""
    lo, hi = _const(i)
    bottom = nm.sqrt(lo) if lo is not None and lo > 0 else Fraction(0)
    top = nm.sqrt(hi) if hi is not None and hi >= 0 else None
    return _of_consts(bottom, top)


# -- the analysis -------------------------------------------------------------------------------

_AT_LEAST_0 = ("id", "submit", "wait", "start", "elapsed")
_AT_LEAST_1 = ("estimate", "area", "work", "remaining", "end")
_SIZES = ("procs", "min_size", "max_size", "size")


class Analysis:
    """Intervals of the expressions of one context, each node's computed once."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._memo: dict[tuple[int, tuple], tuple[ir.Expr, Interval]] = {}

    def capacity(self, k: int | None) -> Interval:
        caps = self.ctx.capacities
        if k is None or k >= len(caps):
            return _of_consts(Fraction(1), None)
        if caps[k] is not None:
            return _point(Fraction(caps[k]))
        return Interval(Bound(Fraction(1), k), Bound(Fraction(1), k))

    def up_to_capacity(self, k: int | None, lo: int) -> Interval:
        return Interval(Bound(Fraction(lo)), self.capacity(k).hi)

    def of(self, e: ir.Expr, kinds: Mapping[str, str]) -> Interval:
        key = (id(e), tuple(sorted(kinds.items())))
        if key not in self._memo:  # (the node is kept: its id stays its own)
            self._memo[key] = (e, ANY if e.type == "bool" else self._of(e, kinds))
        return self._memo[key][1]

    def _of(self, e: ir.Expr, kinds: Mapping[str, str]) -> Interval:
        match e:
            case ir.Const(value=v):
                return _point(Fraction(v))
            case ir.ParamRef(name=n):
                return _of_consts(*self.ctx.params.get(n, (None, None)))
            case ir.JobAttr(attr=a):
                return self.job_attr(a)
            case ir.Request(resource=r):
                k = r if isinstance(r, int) else None
                return self.up_to_capacity(k, 1 if k == 0 else 0)
            case ir.MachineAttr(attr=a, resource_index=k):
                return self.resource(a, k)
            case ir.ResourceAttr(attr=a):
                return self.resource(a, None)
            case ir.StateAttr():
                return _of_consts(Fraction(0), None)
            case ir.Unary(op="-", operand=x):
                return _neg(self.of(x, kinds))
            case ir.Binary(op=op, left=a, right=b):
                return self.binary(e, op, self.of(a, kinds), self.of(b, kinds))
            case ir.Call(fn="min" | "max" as fn, args=args):
                items = [self.of(a, kinds) for a in args]
                return _min(items) if fn == "min" else _max(items)
            case ir.Call(fn=fn, args=(x,)):
                return self.call(fn, x, self.of(x, kinds))
            case ir.IfThenElse(then=t, otherwise=o):
                return _hull(self.of(t, kinds), self.of(o, kinds))
            case ir.Aggregate():
                return self.aggregate(e, kinds)
        return ANY

    def job_attr(self, attr: str) -> Interval:
        if attr in _AT_LEAST_0:
            return _of_consts(Fraction(0), None)
        if attr in _AT_LEAST_1 or attr == "xfactor":
            return _of_consts(Fraction(1), None)
        if attr in _SIZES:
            return self.up_to_capacity(0, 1)
        if attr in ir.LABEL_ATTRS:
            return _of_consts(Fraction(-1), None)
        return ANY

    def resource(self, attr: str, k: int | None) -> Interval:
        match attr:
            case "capacity":
                return self.capacity(k)
            case "used" | "free":
                return self.up_to_capacity(k, 0)
            case "util":
                return _of_consts(Fraction(0), Fraction(1))
            case "bpu" | "power":
                return _of_consts(Fraction(0), None)
        return ANY

    def binary(self, e: ir.Binary, op: str, a: Interval, b: Interval) -> Interval:
        match op:
            case "+":
                return _add(a, b)
            case "-":
                return _add(a, _neg(b))
            case "*":
                return _mul(a, b)
            case "/":
                return _div(a, b)
            case "//":
                return _floor(_div(a, b), ceil=False)
            case "%":
                blo, bhi = _const(b)
                if blo is not None and blo > 0:
                    return _of_consts(Fraction(0), None if bhi is None else bhi - 1)
                if bhi is not None and bhi < 0:
                    return _of_consts(None if blo is None else blo + 1, Fraction(0))
                return ANY
            case "^":
                n = e.right.value if isinstance(e.right, ir.Const) else None
                if not isinstance(n, int):
                    return ANY
                acc = _point(Fraction(1))
                for _ in range(n):
                    acc = _mul(acc, a)
                return acc
        return ANY

    def call(self, fn: str, x: ir.Expr, i: Interval) -> Interval:
        match fn:
            case "abs":
                return _abs(i)
            case "floor" | "ceil":
                return i if x.type == "int" else _floor(i, ceil=fn == "ceil")
            case "sqrt":
                return sqrt_interval(i)
            case "log":
                return _of_consts(log_lower(x, i), None)
        return ANY

    def aggregate(self, e: ir.Aggregate, kinds: Mapping[str, str]) -> Interval:
        if e.fn == "count":
            return _of_consts(Fraction(0), None)
        inner = {**kinds, e.var: e.domain}
        body = self.of(e.body, inner) if e.body is not None else ANY
        if e.fn == "sum":
            k = sums_held(e)
            if k is not None:  # the running jobs' requests fit the capacity
                return self.up_to_capacity(k, 0)
            return self.sum(e, body)
        # min, max, avg: among the body's values, or the default
        if e.default is not None:
            return _hull(body, self.of(e.default, kinds))
        return body

    def sum(self, e: ir.Aggregate, body: Interval) -> Interval:
        """Any number of terms (the queue's tail has no bound); the K resources, K terms."""
        lo, hi = _const(body)
        if e.domain == "resources":
            n = Fraction(len(self.ctx.capacities))
            return _of_consts(None if lo is None else min(Fraction(0), n * lo),
                              None if hi is None else max(Fraction(0), n * hi))
        return _of_consts(Fraction(0) if lo is not None and lo >= 0 else None,
                          Fraction(0) if hi is not None and hi <= 0 else None)
