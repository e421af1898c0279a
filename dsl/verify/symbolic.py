"""The symbolic interpreter of IR expressions: an IR expression -> a Z3 term.

It mirrors `evaluate` (the reference interpreter) node by node, so that a proof about the IR is
a proof about the code the simulator runs. What Z3 does differently is made explicit:

- Z3 never fails: `x / 0` is some value. Every partial operation instead yields an
  `Obligation` (when it is evaluated -> what must hold then); the expression fails in a state
  iff some obligation has its guard true and its `safe` false (`SymResult.error()`).
- Z3 Int `div`/`mod` are Euclidean; the language's `div` and `%` are Python's floor division
  and modulo: they are encoded from the Euclidean ones (`_floordiv`, `_floormod`).
- Reals are exact rationals on both sides (``semantics/numbers``: the simulator computes them with
  ``Fraction``); constants and param bounds are the exact values of their decimals.
- `sqrt` rounds its root to 53 significant bits (``numbers.sqrt``): the exact root s is a
  fresh Real with `s >= 0 and s * s == x`, the result y a fresh Real within a relative 2**-53
  of it, with the facts of that rounding that proofs need (y is 0 iff x is, y >= 1 iff
  s >= 1, y <= x from x = 1 on) and of its monotonicity (y between the simulator's roots of
  the ends of x's interval). A proof holds for every such y, so for the simulator's; a
  counterexample may pick another y than the simulator's (the verifier replays every
  counterexample it reports).
- Z3 has no log: `LOG` is an uninterpreted Real -> Real function with `LOG(1) == 0`, and
  `LOG(n) >= 0` for an int n >= 1 (the simulator's is; of a real above 1 it may be 0, or
  below: no fact). A proof ("unsat") is then valid for every such function, so for `log`
  too; a model (counterexample) is valid only for the function Z3 picked, so
  ``SymResult.uses_log`` tells the caller to replay it before reporting it.
- A nonlinear product is a fresh constant defined as the product; it, each quotient and each
  sum of the running jobs' requests come with linear facts of their sign and range, from the
  range analysis of ``dsl/verify/ranges.py`` ("if the operands lie in their intervals, the
  result lies in this one": theorems of exact arithmetic), so that a proof about a weighted
  sum of shares rarely needs the nonlinear solver.

Definitions are conservative: for any values of the other variables there are values of the
fresh ones that satisfy them, so conjoining them never makes a property vacuously true.

Only this module (and the verifier built on it) imports z3; the simulator never does.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction

import z3
from attrs import define, field, frozen

from schedc.dsl import ir
from schedc.dsl.number_text import number_text
from schedc.dsl.verify import ranges
from schedc.dsl.verify.budget import check as in_time
from schedc.dsl.verify.ranges import Interval

__all__ = [
    "DIV_ZERO", "EMPTY_AGGREGATE", "LOG", "LOG_NONPOSITIVE", "SQRT_NEGATIVE", "UTIL_ZERO",
    "log_function",
    "ActiveTerms", "FreshNames", "Obligation", "ParamTerms", "SymJob", "SymResult", "SymState",
    "SymbolicError", "describe", "running_total", "sym_eval",
]

DIV_ZERO = "division by zero"
SQRT_NEGATIVE = "sqrt of a negative number"
LOG_NONPOSITIVE = "log of a number <= 0"
UTIL_ZERO = "util of a resource with capacity 0"
EMPTY_AGGREGATE = "min/max/avg of an empty set without `else`"


def log_function() -> z3.FuncDeclRef:
    """The function symbol of `log`: one for every formula (Z3 makes equal declarations one),
    or a proof could pick different logs for equal arguments. Made on each use, in the
    context at hand (``dsl/verify/z3context.py``: one per verification)."""
    return z3.Function("log", z3.RealSort(), z3.RealSort())


def LOG(x: z3.ArithRef) -> z3.ArithRef:  # noqa: N802 (it stands for the function symbol)
    return log_function()(x)


# `sqrt`'s rounding (``numbers.sqrt``: 53 significant bits): |result - root| <= this * root
SQRT_ERROR = Fraction(1, 2 ** 53)


def _sqrt_facts(x: z3.ArithRef, y: z3.ArithRef, i: Interval) -> list[z3.BoolRef]:
    """Facts of y, the simulator's `sqrt` of x (``numbers.sqrt``: the exact root rounded to
    53 bits, half to even, a monotone function): at most x from 1 on (the rounding never
    passes x: tests/dsl/verify/test_ranges.py), and between its values at the ends of x's
    interval (``ranges.sqrt_interval``; each end a separate fact, as monotonicity gives)."""
    facts = [z3.Implies(x >= 1, y <= x)]
    roots = ranges.sqrt_interval(i)
    lo, hi = roots.lo, roots.hi
    if i.lo is not None and i.lo.resource is None and lo is not None and lo.value > 0:
        facts.append(z3.Implies(x >= z3.RealVal(i.lo.value), y >= z3.RealVal(lo.value)))
    if i.hi is not None and i.hi.resource is None and hi is not None:
        facts.append(z3.Implies(x <= z3.RealVal(i.hi.value), y <= z3.RealVal(hi.value)))
    return facts


class SymbolicError(ValueError):
    """The expression cannot be encoded against this state (ill-formed IR or missing input)."""


# eq=False on the z3-holding classes: attrs' generated `==` would compare z3 terms, and z3's
# `==` builds a formula instead of answering; identity equality is what callers need.


@frozen(eq=False)
class SymJob:
    """One job slot of a bounded symbolic state."""

    present: z3.BoolRef  # the slot holds a job
    id: z3.ArithRef  # Int
    submit: z3.ArithRef  # Int
    estimate: z3.ArithRef  # Int
    request: tuple[z3.ArithRef, ...]  # Int per resource, machine order (0 = cpus)
    start: z3.ArithRef | None = None  # Int, running jobs only
    # a moldable job runs on any size in [min_size, max_size] (None: rigid, [procs, procs])
    moldable: z3.BoolRef | None = None
    min_size: z3.ArithRef | None = None
    max_size: z3.ArithRef | None = None
    # a moldable job's effective sequential time (its speedup's; a rigid job's is its area)
    work: z3.ArithRef | None = None
    # Int per label attribute the policy reads (``ir.labels_read``): user, group, ...
    labels: Mapping[str, z3.ArithRef] = field(factory=dict)
    # a job of a preemptive policy: what it has run so far (``ir.ACTIVE_ATTRS``)
    active: ActiveTerms | None = None


@frozen(eq=False)
class ActiveTerms:
    """What a preemptive policy's job has run so far, at the pass's instant
    (``runtime/engine/lifecycle.py``'s ``JobLife``): processor-seconds run (``acquired``),
    seconds since its last start or resume (0 if it never ran), preemptions, whether it is
    suspended, the fraction of its work done (``progress``: None where not encoded)."""

    acquired: z3.ArithRef  # Int
    since_start: z3.ArithRef  # Int
    preemptions: z3.ArithRef  # Int
    suspended: z3.BoolRef
    progress: z3.ArithRef | None = None  # Real


@frozen(eq=False)
class QueueTail:
    """Queued jobs beyond the slots: ``count`` of them (any number >= 0), after the slots in
    the policy's order, so the encoded steps never visit them; aggregates over `queue` and
    `queue.count` range over them too, so a formula is proved for every queue length.

    ``copy``: the tail is ``count`` copies of this one job (the exact pass: a state that a
    counterexample can write down). None: each aggregate sees arbitrary jobs, made by
    ``template`` (a fresh job and the formula that makes it a valid queued job), which covers
    every tail: a count is any number up to ``count``, a min or max some job's value, a sum
    lies between the count times two jobs' values."""

    count: z3.ArithRef  # Int >= 0
    template: Callable[[], tuple[SymJob, z3.BoolRef]]
    copy: SymJob | None = None


@frozen(eq=False)
class SymState:
    now: z3.ArithRef  # Int
    capacity: tuple[z3.ArithRef, ...]  # Int per resource
    used: tuple[z3.ArithRef, ...]  # Int per resource (current, as the pass proceeds)
    queue: tuple[SymJob, ...]  # absent slots are ignored by aggregates and counts
    running: tuple[SymJob, ...]
    # Slot i is in the queue iff queue_member[i] (else iff it is present): during a pass the
    # queue an expression sees shrinks as jobs start, while the slots stay.
    queue_member: tuple[z3.BoolRef, ...] | None = None
    # Real per resource: the processors' speeds and available power (None: the capacity)
    bpu: tuple[z3.ArithRef, ...] | None = None
    power: tuple[z3.ArithRef, ...] | None = None
    queue_tail: QueueTail | None = None  # None: the slots are the whole queue

    def in_queue(self, i: int) -> z3.BoolRef:
        return self.queue[i].present if self.queue_member is None else self.queue_member[i]


def running_total(state: SymState, k: int) -> z3.ArithRef:
    """What the running jobs of ``state`` ask of resource k, summed: the term a sum over
    `running` of a request is bounded by (``_Eval._held_sum``), and the pass relates it to
    the use (prover.py's learned facts)."""
    return _sum([z3.If(j.present, j.request[k], 0) for j in state.running], "int")


class ParamTerms(dict):
    """The params' Z3 terms by name, with their domains (lo, hi; None: open), which the
    range analysis reads (``dsl/verify/ranges.py``)."""

    def __init__(self, terms: Mapping[str, z3.ExprRef],
                 domains: Mapping[str, tuple[Fraction | None, Fraction | None]]) -> None:
        super().__init__(terms)
        self.domains = dict(domains)


@frozen(eq=False)
class Obligation:
    """A partial operation that must be safe wherever it is evaluated."""

    kind: str  # DIV_ZERO | SQRT_NEGATIVE | LOG_NONPOSITIVE | UTIL_ZERO | EMPTY_AGGREGATE
    guard: z3.BoolRef  # when the operation is evaluated (the path condition)
    safe: z3.BoolRef  # what must hold then
    span: object | None  # the IR node's span
    text: str  # e.g. "`machine.free.cpus` in a division"

    def violated(self) -> z3.BoolRef:
        return z3.And(self.guard, z3.Not(self.safe))


@frozen(eq=False)
class SymResult:
    value: z3.ExprRef  # Int, Real or Bool term
    obligations: tuple[Obligation, ...]
    definitions: tuple[z3.BoolRef, ...]  # constraints defining fresh variables (sqrt)
    uses_log: bool = False  # the value or an obligation applies `LOG` (see the module doc)

    def error(self) -> z3.BoolRef:
        """True iff evaluating the expression fails (EvaluationError in `evaluate`)."""
        return z3.Or([o.violated() for o in self.obligations]) if self.obligations \
            else z3.BoolVal(False)


_prefix_counts: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _next_prefix() -> str:
    # counted per Z3 context (one a verification: dsl/verify/z3context.py): Z3 hashes names, so
    # a name that depended on what the process did before would change a proof's search
    counter = _prefix_counts.setdefault(z3.main_ctx(), itertools.count())
    return f"_f{next(counter)}_"


@define
class FreshNames:
    """Unique names for the fresh variables of sqrt.

    Two sqrt results must never share a constant (its two definitions would contradict each
    other and make any property "proved"), so each instance gets a process-unique prefix and
    counts within it. Share one instance across the `sym_eval` calls of one query to keep the
    names short; `made` lists the variables created, e.g. to hide them from counterexamples.
    """

    prefix: str = field(factory=_next_prefix)
    made: list[z3.ArithRef] = field(factory=list)
    # (rounded result, exact root, argument) of each sqrt: a counterexample is first sought
    # with the first two equal (a rounding the simulator may not make is the last resort)
    roots: list[tuple[z3.ArithRef, z3.ArithRef, z3.ArithRef]] = field(factory=list)
    _count: itertools.count = field(factory=itertools.count, init=False, repr=False)

    def real(self, hint: str) -> z3.ArithRef:
        v = z3.Real(f"{self.prefix}{hint}{next(self._count)}")
        self.made.append(v)
        return v

    def const(self, hint: str, typ: str) -> z3.ExprRef:
        v = {"int": z3.Int, "real": z3.Real, "bool": z3.Bool}[typ](
            f"{self.prefix}{hint}{next(self._count)}")
        self.made.append(v)
        return v


_DEFAULT_FRESH = FreshNames(prefix="_sym_")  # used when the caller passes none


def sym_eval(expr: ir.Expr, *, job: SymJob | None, state: SymState,
             params: Mapping[str, z3.ExprRef], size: z3.ArithRef | None = None,
             fresh: FreshNames | None = None,
             jobs: Mapping[str, SymJob] | None = None) -> SymResult:
    """The Z3 term of ``expr`` with its obligations and definitions.

    ``job`` is what `job` denotes (a queue job: `wait` counts up to `now`); ``size`` is what
    `job.size` denotes (invariants); ``jobs`` binds other job variables (a preemptive rule's
    `cand` and `victim`, read as waiting jobs). Raises SymbolicError for input it cannot
    encode.
    """
    ev = _Eval(state, job, params, size, fresh if fresh is not None else _DEFAULT_FRESH)
    env = {name: (slot, False) for name, slot in (jobs or {}).items()}
    value = ev.expr(expr, z3.BoolVal(True), env)
    return SymResult(value, tuple(ev.obligations), tuple(ev.definitions), ev.uses_log)


# -- helpers --------------------------------------------------------------------------------

def _zero(typ: str) -> z3.ExprRef:
    return {"int": z3.IntVal, "real": z3.RealVal, "bool": z3.BoolVal}[typ](0)


def _as(typ: str, v: z3.ExprRef) -> z3.ExprRef:
    """Promote to the IR type (int -> real is the only implicit conversion)."""
    if typ == "real" and z3.is_int(v):
        return z3.ToReal(v)
    if not {"int": z3.is_int, "real": z3.is_real, "bool": z3.is_bool}[typ](v):
        raise SymbolicError(f"a {v.sort()} term where the IR says {typ}")
    return v


def _real(v: z3.ExprRef) -> z3.ArithRef:
    return z3.ToReal(v) if z3.is_int(v) else v


def _num_pair(a: z3.ExprRef, b: z3.ExprRef) -> tuple[z3.ExprRef, z3.ExprRef]:
    if z3.is_bool(a) or z3.is_int(a) and z3.is_int(b):
        return a, b
    return _real(a), _real(b)


def _and(g: z3.BoolRef, c: z3.BoolRef) -> z3.BoolRef:
    # Keep guards small: most paths are unconditional.
    if z3.is_true(g):
        return c
    if z3.is_true(c):
        return g
    return z3.And(g, c)


def _floordiv(a: z3.ArithRef, b: z3.ArithRef) -> z3.ArithRef:
    # Euclid: a == b*q + r with 0 <= r < |b|. Python floors: the same q when b > 0 or the
    # division is exact, else one less (b < 0 and r > 0).
    q, r = a / b, a % b  # on Int terms z3 `/` is div, `%` is mod
    return z3.If(z3.Or(b > 0, r == 0), q, q - 1)


def _floormod(a: z3.ArithRef, b: z3.ArithRef) -> z3.ArithRef:
    # Python's remainder has the divisor's sign: r + b when b < 0 and r > 0.
    r = a % b
    return z3.If(z3.Or(b > 0, r == 0), r, r + b)


def _sum(terms: Sequence[z3.ExprRef], typ: str) -> z3.ExprRef:
    return z3.Sum(list(terms)) if terms else _zero(typ)


def _const(v: int | float | bool, typ: str) -> z3.ExprRef:
    if typ == "bool":
        return z3.BoolVal(bool(v))
    if typ == "int":
        return z3.IntVal(int(v))
    if isinstance(v, float):
        raise SymbolicError(f"a float constant {v}: reals are exact rationals")
    return z3.RealVal(Fraction(v))  # exact, as the simulator's


_RES = set(ir.MACHINE_ATTRS)


def describe(e: ir.Expr) -> str:
    """Short source-like text of an IR expression, for obligation messages."""
    match e:
        case ir.Const(value=v):
            return ("true" if v else "false") if e.type == "bool" else number_text(v)
        case ir.ParamRef(name=n):
            return n
        case ir.JobAttr(var=v, attr=a):
            return f"{v}.{a}"
        case ir.Request(var=v, resource=r):
            return f"{v}.request[{r}]" if isinstance(r, str) else \
                f"{v}.request{'.cpus' if r == 0 else f'[#{r}]'}"
        case ir.MachineAttr(attr=a, resource_index=k):
            return f"machine.{a}" + (".cpus" if k == 0 else f"[#{k}]")
        case ir.ResourceAttr(var=v, attr=a):
            return f"{v}.{a}"
        case ir.StateAttr(attr=a):
            return a
        case ir.Unary(op=op, operand=x):
            return f"{'not ' if op == 'not' else '-'}{_paren(x)}"
        case ir.Binary(op=op, left=a, right=b):
            return f"{_paren(a)} {'div' if op == '//' else op} {_paren(b)}"
        case ir.Call(fn=fn, args=args):
            return f"{fn}({', '.join(describe(a) for a in args)})"
        case ir.IfThenElse(cond=c, then=t, otherwise=o):
            return f"if {describe(c)} then {describe(t)} else {describe(o)}"
        case ir.Aggregate(fn=fn, var=v, domain=d, where=w, body=b, default=df):
            text = f"{fn}({v} in {d}"
            text += f" where {describe(w)}" if w is not None else ""
            text += f": {describe(b)}" if b is not None else ""
            text += f" else {describe(df)}" if df is not None else ""
            return text + ")"
    return type(e).__name__


def _paren(e: ir.Expr) -> str:
    simple = isinstance(e, ir.Const | ir.ParamRef | ir.JobAttr | ir.Request | ir.MachineAttr
                        | ir.ResourceAttr | ir.StateAttr | ir.Call | ir.Aggregate)
    return describe(e) if simple else f"({describe(e)})"


# -- the interpreter ------------------------------------------------------------------------


@frozen(eq=False)
class _TailPart:
    count: z3.ArithRef  # how many tail jobs the aggregate's filter lets in
    has: z3.BoolRef  # at least one
    extreme: z3.ExprRef | None  # min/max: a value some tail job in has
    total: z3.ExprRef | None  # sum/avg: the sum of their values


# What an aggregate variable is bound to: a job slot (and whether it is a running one) or a
# resource index (the resources are concrete: K is fixed by the machine).
_Binding = tuple[SymJob, bool] | int
_Env = Mapping[str, _Binding]

_CMP = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
}
_ARITH = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}


class _Eval:
    """One `sym_eval` call: walks the IR, accumulating obligations and definitions."""

    def __init__(self, state: SymState, job: SymJob | None, params: Mapping[str, z3.ExprRef],
                 size: z3.ArithRef | None, fresh: FreshNames) -> None:
        self.state, self.job, self.params, self.size, self.fresh = state, job, params, size, fresh
        self.obligations: list[Obligation] = []
        self.definitions: list[z3.BoolRef] = []
        self._products: set[int] = set()  # quotients whose facts are in ``definitions``
        self._named: dict[int, z3.ArithRef] = {}  # each product's name (``_product``)
        self.uses_log = False
        domains = params.domains if isinstance(params, ParamTerms) else {}
        capacities = tuple(c.as_long() if z3.is_int_value(c) else None for c in state.capacity)
        self.ranges = ranges.Analysis(ranges.Context(domains, capacities))

    def interval(self, e: ir.Expr, env: _Env) -> Interval:
        """``e``'s interval (``dsl/verify/ranges.py``), its aggregate vars bound as in ``env``."""
        kinds = {v: ("resources" if isinstance(b, int) else "running" if b[1] else "queue")
                 for v, b in env.items()}
        return self.ranges.of(e, kinds)

    def _bound_term(self, b: ranges.Bound) -> z3.ArithRef:
        value = b.value
        c = z3.IntVal(int(value)) if value.denominator == 1 else z3.RealVal(value)
        return c if b.resource is None else c * self.state.capacity[b.resource]

    def within(self, t: z3.ArithRef, i: Interval | None) -> list[z3.BoolRef]:
        """``t`` lies in ``i``, as linear atoms."""
        if i is None:
            return []
        return ([t >= self._bound_term(i.lo)] if i.lo is not None else []) + \
            ([t <= self._bound_term(i.hi)] if i.hi is not None else [])

    def _range_fact(self, t: z3.ArithRef, operands: Sequence[tuple[z3.ArithRef, Interval | None]],
                    result: Interval) -> None:
        """If the operands lie in their intervals, ``t`` lies in ``result``: a theorem of
        exact arithmetic (interval arithmetic is; capacities are at least 1), so it holds for
        any values, whatever the analysis assumed of the operands."""
        conclusion = self.within(t, result)
        if not conclusion:
            return
        premises = [atom for x, i in operands for atom in self.within(x, i)]
        premises += [c >= 1 for c in self.state.capacity if not z3.is_int_value(c)]
        self.definitions.append(z3.Implies(z3.And(premises), z3.And(conclusion)))

    def _product(self, a: z3.ArithRef, b: z3.ArithRef, ia: Interval | None = None,
                 ib: Interval | None = None) -> z3.ArithRef:
        """``a * b``; for two non-constant factors, with the facts of its sign and size in
        linear arithmetic (valid for any values), so that a proof about a product (a job's
        area is positive) rarely needs the nonlinear solver, whose search is fragile; with
        the factors' intervals, the product's (``ranges.product``). The product is a fresh
        constant defined as ``a * b``, the facts about it: a sum of products then stays a
        linear sum for Z3 (its rewriter spreads a product of sums into many monomials: a
        weighted sum of three shares took seconds a step, 0.05 s named)."""
        product = a * b
        if z3.is_rational_value(a) or z3.is_int_value(a) or z3.is_rational_value(b) \
                or z3.is_int_value(b):
            return product
        if product.get_id() in self._named:
            return self._named[product.get_id()]
        p = self._named[product.get_id()] = self.fresh.const(
            "product", "int" if z3.is_int(product) else "real")
        self.definitions.append(p == product)
        if ia is not None and ib is not None:
            self._range_fact(p, [(a, ia), (b, ib)], ranges.product(ia, ib))
        self.definitions += [
            z3.Implies(z3.And(a >= 0, b >= 0), p >= 0),
            z3.Implies(z3.And(a <= 0, b <= 0), p >= 0),
            z3.Implies(z3.And(a >= 0, b <= 0), p <= 0),
            z3.Implies(z3.And(a <= 0, b >= 0), p <= 0),
            z3.Implies(z3.And(a >= 1, b >= 0), p >= b),
            z3.Implies(z3.And(b >= 1, a >= 0), p >= a),
        ]
        return p

    def _quotient(self, a: z3.ArithRef, b: z3.ArithRef, ia: Interval | None = None,
                  ib: Interval | None = None) -> z3.ArithRef:
        """``a / b`` (reals); for a non-constant divisor, with the facts of its sign and size
        in linear arithmetic where b != 0 (as `_product`'s): a share of a positive total
        is in [0, 1], a utilisation at most 1 where use is within capacity; with the
        operands' intervals, the quotient's (``ranges.quotient``: b's excludes 0)."""
        q = a / b
        if z3.is_rational_value(b) or q.get_id() in self._products:
            return q
        self._products.add(q.get_id())
        if ia is not None and ib is not None:
            self._range_fact(q, [(a, ia), (b, ib)], ranges.quotient(ia, ib))
        self.definitions += [
            z3.Implies(z3.And(b > 0, a >= 0), q >= 0),
            z3.Implies(z3.And(b > 0, a > 0), q > 0),
            z3.Implies(z3.And(b > 0, a <= 0), q <= 0),
            z3.Implies(z3.And(b > 0, a < 0), q < 0),
            z3.Implies(z3.And(b < 0, a >= 0), q <= 0),
            z3.Implies(z3.And(b < 0, a > 0), q < 0),
            z3.Implies(z3.And(b < 0, a <= 0), q >= 0),
            z3.Implies(z3.And(b < 0, a < 0), q > 0),
            z3.Implies(z3.And(b > 0, a <= b), q <= 1),
            z3.Implies(z3.And(b > 0, a >= b), q >= 1),
            z3.Implies(z3.And(b >= 1, a >= 0), q <= a),
        ]
        return q

    def oblige(self, kind: str, g: z3.BoolRef, safe: z3.BoolRef, e: ir.Expr, text: str) -> None:
        self.obligations.append(Obligation(kind, g, safe, e.span, text))

    def expr(self, e: ir.Expr, g: z3.BoolRef, env: _Env) -> z3.ExprRef:
        """The term of ``e`` under path condition ``g``, promoted to ``e.type``."""
        return _as(e.type, self._value(e, g, env))

    def _value(self, e: ir.Expr, g: z3.BoolRef, env: _Env) -> z3.ExprRef:
        match e:
            case ir.Const(value=v):
                return _const(v, e.type)
            case ir.ParamRef(name=n):
                if n not in self.params:
                    raise SymbolicError(f"no value for param `{n}`")
                v = self.params[n]
                return v if isinstance(v, z3.ExprRef) else _const(v, e.type)
            case ir.JobAttr():
                return self._job_attr(e, g, env)
            case ir.Request(var=var, resource=r):
                slot, _ = self._slot(var, env)
                k = r if isinstance(r, int) else env[r]
                return slot.request[k]
            case ir.MachineAttr(attr=a, resource_index=k):
                return self._resource(a, k, g, e)
            case ir.ResourceAttr(var=var, attr=a):
                return self._resource(a, env[var], g, e)
            case ir.StateAttr(attr="now"):
                return self.state.now
            case ir.StateAttr(attr="queue.count"):
                n = len(self.state.queue)
                slots = _sum([z3.If(self.state.in_queue(i), 1, 0) for i in range(n)], "int")
                tail = self.state.queue_tail
                return slots if tail is None else slots + tail.count
            case ir.StateAttr(attr="running.count"):
                return _sum([z3.If(j.present, 1, 0) for j in self.state.running], "int")
            case ir.Unary(op="-", operand=x):
                return -self.expr(x, g, env)
            case ir.Unary(op="not", operand=x):
                return z3.Not(self.expr(x, g, env))
            case ir.Binary(op="and", left=a, right=b):
                va = self.expr(a, g, env)
                return z3.And(va, self.expr(b, _and(g, va), env))  # b runs only if a holds
            case ir.Binary(op="or", left=a, right=b):
                va = self.expr(a, g, env)
                return z3.Or(va, self.expr(b, _and(g, z3.Not(va)), env))
            case ir.Binary(op=op, left=a, right=b):
                return self._binary(e, op, self.expr(a, g, env), self.expr(b, g, env), g, env)
            case ir.Call(fn="min" | "max" as fn, args=args):
                vs = [_as(e.type, self.expr(a, g, env)) for a in args]
                acc = vs[0]
                for v in vs[1:]:  # Python keeps the first extreme; ties have equal values
                    acc = z3.If(v < acc if fn == "min" else v > acc, v, acc)
                return acc
            case ir.Call(fn=fn, args=(x,)):
                return self._call(e, fn, x, g, env)
            case ir.IfThenElse(cond=c, then=t, otherwise=o):
                vc = self.expr(c, g, env)
                vt = self.expr(t, _and(g, vc), env)
                vo = self.expr(o, _and(g, z3.Not(vc)), env)
                return z3.If(vc, _as(e.type, vt), _as(e.type, vo))
            case ir.Aggregate():
                return self._aggregate(e, g, env)
        raise SymbolicError(f"unknown IR node {e!r}")

    def _slot(self, var: str, env: _Env) -> tuple[SymJob, bool]:
        if var == "job":  # as in evaluate: `job` is a queue job even in invariants
            if self.job is None:
                raise SymbolicError("`job` is not in scope")
            return self.job, False
        b = env[var]
        if isinstance(b, int):
            raise SymbolicError(f"`{var}` ranges over resources, not jobs")
        return b

    def _job_attr(self, e: ir.JobAttr, g: z3.BoolRef, env: _Env) -> z3.ExprRef:
        slot, running = self._slot(e.var, env)
        now = self.state.now
        if e.attr in ir.RUNNING_ATTRS and (not running or slot.start is None):
            raise SymbolicError(f"`{e.var}.{e.attr}` on a job that is not running")
        if e.attr in ir.ACTIVE_ATTRS:
            active = slot.active
            if active is None:
                raise SymbolicError(f"`{e.var}.{e.attr}` on a job of no preemptive policy")
            if e.attr == "progress" and active.progress is None:
                raise SymbolicError(f"`{e.var}.progress` reads the job's run time at its "
                                    "size (its speedup): not encoded")
            return getattr(active, e.attr)
        match e.attr:
            case "id" | "submit" | "estimate":
                return getattr(slot, e.attr)
            case "procs":
                return slot.request[0]
            case "min_size":
                return slot.request[0] if slot.min_size is None else slot.min_size
            case "max_size":
                return slot.request[0] if slot.max_size is None else slot.max_size
            case "area":
                return self._product(slot.request[0], slot.estimate)
            case "work":
                area = self._product(slot.request[0], slot.estimate)
                if slot.work is None or slot.moldable is None:
                    return area
                return z3.If(slot.moldable, slot.work, area)
            case "wait":
                return (slot.start if running else now) - slot.submit
            case "xfactor":
                wait = (slot.start if running else now) - slot.submit
                self.oblige(DIV_ZERO, g, slot.estimate != 0, e,
                            f"`{e.var}.estimate` in `{e.var}.xfactor`")
                return z3.ToReal(wait + slot.estimate) / z3.ToReal(slot.estimate)
            case "start":
                return slot.start
            case "elapsed":
                return now - slot.start
            case "remaining":
                return slot.start + slot.estimate - now
            case "end":
                return slot.start + slot.estimate
            case "size":
                if self.size is None:
                    raise SymbolicError("`job.size` needs the `size` argument")
                return self.size
            case label if label in ir.LABEL_ATTRS:
                if label not in slot.labels:
                    raise SymbolicError(f"no symbolic `{label}` for `{e.var}`: the encoder "
                                        "makes labels the policy reads (ir.labels_read)")
                return slot.labels[label]
        raise SymbolicError(f"unknown job attribute {e.attr}")

    def _resource(self, attr: str, k: int, g: z3.BoolRef, e: ir.Expr) -> z3.ExprRef:
        cap, used = self.state.capacity[k], self.state.used[k]
        match attr:
            case "capacity":
                return cap
            case "used":
                return used
            case "free":
                return cap - used
            case "util":
                self.oblige(UTIL_ZERO, g, cap != 0, e, f"`{describe(e)}`")
                return self._quotient(_real(used), _real(cap), *self._use_and_capacity(k))
            case "bpu":
                return _real(cap) if self.state.bpu is None else self.state.bpu[k]
            case "power":
                return _real(cap) if self.state.power is None else self.state.power[k]
        raise SymbolicError(f"unknown resource attribute {attr}")

    def _use_and_capacity(self, k: int) -> tuple[Interval, Interval]:
        """The intervals of resource k's use and capacity (`util` is their quotient)."""
        return self.ranges.resource("used", k), self.ranges.resource("capacity", k)

    def _power(self, e: ir.Binary, a: z3.ExprRef) -> z3.ExprRef:
        """``a ^ n`` as a product of n factors, each with `_product`'s facts (n is a literal:
        the lowering allows nothing else)."""
        n = e.right.value if isinstance(e.right, ir.Const) else None
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= ir.MAX_EXPONENT:
            raise SymbolicError(f"`^` needs an int literal exponent, not {describe(e.right)}")
        a = _real(a) if e.type == "real" else a
        if n == 0:
            return _const(1, e.type)
        acc = a
        for _ in range(n - 1):
            acc = self._product(acc, a)
        return acc

    def _binary(self, e: ir.Binary, op: str, a: z3.ExprRef, b: z3.ExprRef,
                g: z3.BoolRef, env: _Env) -> z3.ExprRef:
        if op == "^":
            return self._power(e, a)
        if op in _CMP:
            return _CMP[op](*_num_pair(a, b))
        if op in _ARITH:
            if e.type == "real":
                a, b = _real(a), _real(b)
            if op == "*":
                return self._product(a, b, self.interval(e.left, env),
                                     self.interval(e.right, env))
            return _ARITH[op](a, b)
        if op in ("/", "//", "%"):
            where = {"/": "a division", "//": "a `div`", "%": "a `%`"}[op]
            self.oblige(DIV_ZERO, g, b != 0, e, f"`{describe(e.right)}` in {where}")
            if op == "/":
                return self._quotient(_real(a), _real(b), self.interval(e.left, env),
                                      self.interval(e.right, env))
            if not (z3.is_int(a) and z3.is_int(b)):
                raise SymbolicError(f"`{op}` on a non-int operand")
            return _floordiv(a, b) if op == "//" else _floormod(a, b)
        raise SymbolicError(f"unknown operator {op}")

    def _call(self, e: ir.Call, fn: str, x: ir.Expr, g: z3.BoolRef, env: _Env) -> z3.ExprRef:
        v = self.expr(x, g, env)
        match fn:
            case "abs":
                return z3.If(v < 0, -v, v)
            case "floor":
                return v if z3.is_int(v) else z3.ToInt(v)  # ToInt is floor
            case "ceil":
                return v if z3.is_int(v) else -z3.ToInt(-v)
            case "sqrt":
                x_r = _real(v)
                root, y = self.fresh.real("root"), self.fresh.real("sqrt")
                self.fresh.roots.append((y, root, x_r))
                # Conservative: when x < 0, both are free (the obligation reports that case).
                self.definitions.append(z3.Implies(x_r >= 0, z3.And(
                    root >= 0, root * root == x_r,
                    y - root <= z3.RealVal(SQRT_ERROR) * root,
                    root - y <= z3.RealVal(SQRT_ERROR) * root)))
                # facts of the rounding in linear arithmetic, so that a proof rarely needs the
                # nonlinear solver: 0 stays 0, positives stay positive, 1 is representable
                self.definitions.append(z3.Implies(x_r == 0, y == 0))
                self.definitions.append(z3.Implies(x_r > 0, y > 0))
                self.definitions.append(z3.Implies(x_r >= 1, y >= 1))
                self.definitions.append(z3.Implies(z3.And(x_r >= 0, x_r <= 1), y <= 1))
                self.definitions += _sqrt_facts(x_r, y, self.interval(x, env))
                self.oblige(SQRT_NEGATIVE, g, x_r >= 0, e, f"`{describe(x)}` in a sqrt")
                return y
            case "log":
                x_r = _real(v)
                self.uses_log = True
                self.definitions.append(LOG(z3.RealVal(1)) == 0)
                if x.type == "int":  # the simulator's log of an int n >= 1 is at least 0
                    # (ranges.log_lower); of a real above 1, it may be 0, or less
                    self.definitions.append(z3.Implies(v >= 1, LOG(x_r) >= 0))
                self.oblige(LOG_NONPOSITIVE, g, x_r > 0, e, f"`{describe(x)}` in a log")
                return LOG(x_r)
        raise SymbolicError(f"unknown function {fn}")

    def _members(self, domain: str) -> list[tuple[_Binding, z3.BoolRef]]:
        s = self.state
        if domain == "queue":
            return [((j, False), s.in_queue(i)) for i, j in enumerate(s.queue)]
        if domain == "running":
            return [((j, True), j.present) for j in s.running]
        if domain == "resources":
            return [(k, z3.BoolVal(True)) for k in range(len(s.capacity))]
        raise SymbolicError(f"unknown domain {domain}")

    def _aggregate(self, e: ir.Aggregate, g: z3.BoolRef, env: _Env) -> z3.ExprRef:
        # For each element: `in_` = member and where. The where runs for every member, the
        # body only for the elements in, the default only when none is in.
        ins: list[z3.BoolRef] = []
        values: list[z3.ExprRef] = []
        for binding, member in self._members(e.domain):
            # one element's terms can take a good part of a second (a formula nesting
            # aggregates over many slots): the time limit is read between elements
            in_time()
            env_i = {**env, e.var: binding}
            g_member = _and(g, member)
            in_ = member
            if e.where is not None:
                in_ = _and(member, self.expr(e.where, g_member, env_i))
            ins.append(in_)
            if e.body is not None:
                values.append(self.expr(e.body, _and(g, in_), env_i))
        tail = self.state.queue_tail if e.domain == "queue" else None
        part = self._tail(e, g, env, tail) if tail is not None else None
        if part is not None and e.fn in ("min", "max"):  # one more candidate element
            ins.append(part.has)
            values.append(part.extreme)
        counts = [z3.If(c, 1, 0) for c in ins]
        if part is not None and e.fn in ("count", "sum", "avg"):
            counts.append(part.count)
        if e.fn == "count":
            return _sum(counts, "int")
        terms = [z3.If(c, _as(e.type, v), _zero(e.type)) for c, v in zip(ins, values,
                                                                          strict=True)]
        if part is not None and e.fn in ("sum", "avg"):
            terms.append(_as(e.type, part.total))
        if e.fn == "sum":
            total = _sum(terms, e.type)
            self._held_sum(e, values, total)
            return total
        nonempty = z3.Or(ins) if ins else z3.BoolVal(False)
        if e.fn == "avg":
            if part is not None:
                nonempty = z3.Or(nonempty, part.count >= 1)
            total = _sum([_real(t) for t in terms], "real")
            count = _sum(counts, "int")
            value: z3.ExprRef = total / z3.ToReal(count)  # count > 0 wherever it is used
        elif e.fn in ("min", "max"):
            value = _zero(e.type)
            has: z3.BoolRef = z3.BoolVal(False)
            for c, v in zip(ins, values, strict=True):
                v = _as(e.type, v)
                better = v < value if e.fn == "min" else v > value
                value = z3.If(c, z3.If(z3.Or(z3.Not(has), better), v, value), value)
                has = z3.Or(has, c) if not z3.is_false(has) else c
        else:
            raise SymbolicError(f"unknown aggregate {e.fn}")
        if e.default is None:
            self.oblige(EMPTY_AGGREGATE, g, nonempty, e, f"`{describe(e)}`")
            return value
        default = _as(e.type, self.expr(e.default, _and(g, z3.Not(nonempty)), env))
        return z3.If(nonempty, value, default)

    def _held_sum(self, e: ir.Aggregate, values: Sequence[z3.ExprRef],
                  total: z3.ExprRef) -> None:
        """A sum over `running` of their requests of resource k (``ranges.sums_held``) lies
        between 0 and what all running jobs ask (``running_total``): a theorem where each
        present job asks at least 0 (each element in is present). The pass knows that
        total within the capacity (the use: prover.py's learned facts)."""
        k = ranges.sums_held(e)
        jobs = self.state.running
        if k is None or len(values) != len(jobs) or not all(
                v.eq(j.request[k]) for v, j in zip(values, jobs, strict=True)):
            return
        # (each element in is present: its `in` is `present` and the filter, ``_members``)
        nonnegative = [z3.Implies(j.present, j.request[k] >= 0) for j in jobs]
        self.definitions.append(z3.Implies(z3.And(nonnegative), z3.And(
            total >= 0, total <= running_total(self.state, k))))

    def _tail(self, e: ir.Aggregate, g: z3.BoolRef, env: _Env, tail: QueueTail) -> _TailPart:
        """What the tail adds to the aggregate ``e`` (see ``QueueTail``)."""
        some = tail.count >= 1

        def element(job: SymJob) -> tuple[z3.BoolRef, z3.ExprRef | None]:
            """(where, body) of one tail job, evaluated where the simulator would."""
            env_j = {**env, e.var: (job, False)}
            where = z3.BoolVal(True) if e.where is None else self.expr(e.where, _and(g, some),
                                                                       env_j)
            body = None if e.body is None else self.expr(e.body, _and(g, _and(some, where)),
                                                         env_j)
            return where, body

        if tail.copy is not None:
            where, body = element(tail.copy)
            n = z3.If(where, tail.count, 0)
            total = None
            if e.fn in ("sum", "avg"):
                total = (z3.ToReal(n) * _real(body) if e.type == "real" or e.fn == "avg"
                         else n * body)
            return _TailPart(n, z3.And(some, where), body, total)
        # a template is one of the further jobs, so it is a valid one only if there is one:
        # where no job could come after the slots (ids distinct, ordered by id), an
        # unguarded `valid` left such states with no pass at all (fuzz_pass seed 3095)
        lo, valid = tail.template()
        self.definitions.append(z3.Implies(some, valid))
        where, body = element(lo)
        if e.where is None:
            n = tail.count
        else:  # any number of the tail's jobs pass the filter; if any, `lo` is one
            n = self.fresh.const("tail_in", "int")
            self.definitions.append(z3.And(n >= 0, n <= tail.count, z3.Implies(n >= 1, where)))
        if e.fn in ("count", "min", "max"):
            return _TailPart(n, n >= 1, body, None)
        # a sum of n values lies between n times the least and n times the largest
        hi, valid_hi = tail.template()
        self.definitions.append(z3.Implies(some, valid_hi))
        where_hi, body_hi = element(hi)
        typ = "real" if e.fn == "avg" else e.type
        total = self.fresh.const("tail_sum", typ)
        n_t = z3.ToReal(n) if typ == "real" else n
        low, high = _as(typ, body), _as(typ, body_hi)
        self.definitions.append(z3.Implies(n == 0, total == 0))
        self.definitions.append(z3.Implies(n >= 1, z3.And(
            where_hi, n_t * low <= total, total <= n_t * high)))
        # their linear consequences, so that a sign argument needs no nonlinear reasoning
        self.definitions.append(z3.Implies(z3.And(n >= 1, low >= 0), total >= low))
        self.definitions.append(z3.Implies(z3.And(n >= 1, high <= 0), total <= high))
        self.definitions.append(z3.Implies(low >= 0, total >= 0))
        self.definitions.append(z3.Implies(high <= 0, total <= 0))
        return _TailPart(n, n >= 1, body, total)
