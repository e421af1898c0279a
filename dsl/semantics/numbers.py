"""Runtime helpers shared by the reference interpreter and generated code.

Both interpreters call these for every partial operation, so division by zero, sqrt/log of
a bad argument and empty aggregates fail the same way: with ``EvaluationError``.

The meaning of `real` (docs/reference/language.md; the verifier encodes the same): a real is an
exact rational number (``fractions.Fraction``), never a float. Literals and param values
are their exact decimal values (`0.9` is 9/10), `/`, `util`, `avg` and `xfactor` are exact,
so `0.9 - target` is 0 exactly when target is 0.9, and `1 - 7/100 - 93/100` is 0, as in a
proof. Only the two irrational functions round, each to a function of its exact argument:
`sqrt(x)` is the square root rounded to 53 significant bits (the correctly rounded double
for every x a double can hold: Python's ``math.sqrt``), `log(x)` is Python's ``math.log``
of numerator minus that of denominator; both results are exact rationals from then on.
What a preemptive policy's job has done is exact too: `job.progress` is the ``Fraction`` its
life keeps (``runtime/engine/lifecycle.py``), never a float (a float made
`progress * estimate - since_start` negative where the proof has 0).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable
from fractions import Fraction

from schedc.dsl.number_text import show
from schedc.dsl.semantics.pass_state import JobView, PassState


class EvaluationError(Exception):
    """A policy expression has no value in this state (the simulator reports it)."""


class SizeError(EvaluationError):
    """A `size` formula gave no valid number of processors (``python_code.check_size``)."""


def div(a, b) -> Fraction:
    if b == 0:
        raise EvaluationError("division by zero")
    if type(a) is int and type(b) is int:  # the common case (util, ratios of counts)
        return Fraction(a, b)
    return Fraction(a) / b


def floordiv(a: int, b: int) -> int:
    if b == 0:
        raise EvaluationError("integer division (`div`) by zero")
    return a // b


def mod(a: int, b: int) -> int:
    if b == 0:
        raise EvaluationError("`%` by zero")
    return a % b


SQRT_BITS = 53  # significant bits of `sqrt`'s result (a double's)
_EXACT_FLOAT = 2 ** 53  # every int below converts to a float exactly


@functools.lru_cache(maxsize=1 << 16)
def _int_sqrt(n: int) -> Fraction:
    # a queue's sum of sqrt(work) recomputes the same roots at every pass
    return Fraction(math.sqrt(n))


def sqrt(x) -> Fraction:
    """The square root of the exact ``x`` rounded to 53 significant bits, half to even (the
    correctly rounded double wherever one exists): within a relative 2**-53 of the root,
    exact for squares of such numbers, 0 only for 0, at least 1 iff x is at least 1."""
    if x < 0:
        raise EvaluationError(f"sqrt of a negative number ({show(x)})")
    if type(x) is int and x < _EXACT_FLOAT:  # the common case, sqrt(work): math.sqrt
        return _int_sqrt(x)  # rounds the exact root to 53 bits already (IEEE 754)
    if x == 0:
        return Fraction(0)
    x = Fraction(x)
    p, q = x.numerator, x.denominator
    # scale by 4**k so that the integer root has at least SQRT_BITS + 2 bits
    k = max(0, (2 * (SQRT_BITS + 2) - (p.bit_length() - q.bit_length())) // 2 + 1)
    scaled_num = p << (2 * k)
    whole, rest = divmod(scaled_num, q)
    root = math.isqrt(whole)
    inexact = rest != 0 or root * root != whole  # the true root lies above `root`
    extra = root.bit_length() - SQRT_BITS  # >= 2 by the choice of k
    kept, dropped = root >> extra, root & ((1 << extra) - 1)
    half = 1 << (extra - 1)
    if dropped > half or dropped == half and (inexact or kept & 1):
        kept += 1
    return Fraction(kept << extra, 1 << k)


def log(x) -> Fraction:
    """Python's ``math.log`` of the exact ``x`` = p/q: log(p) - log(q), defined for every
    positive rational (no float overflow), as an exact rational."""
    if x <= 0:
        raise EvaluationError(f"log of a non-positive number ({show(x)})")
    x = Fraction(x)
    return Fraction(math.log(x.numerator) - math.log(x.denominator))


def ceil(x) -> int:
    try:
        return math.ceil(x)
    except (OverflowError, ValueError) as err:
        raise EvaluationError(f"ceil of {x}") from err


def floor(x) -> int:
    try:
        return math.floor(x)
    except (OverflowError, ValueError) as err:
        raise EvaluationError(f"floor of {x}") from err


def real(x) -> Fraction:
    """A value where the IR says real: an exact rational (a float, as the processors' speeds
    are, by its exact binary value)."""
    return x if type(x) is Fraction else Fraction(x)




def agg_min(values: Iterable, default: Callable[[], object] | None):
    items = list(values)
    if items:
        return min(items)
    return _empty(default, "min")


def agg_max(values: Iterable, default: Callable[[], object] | None):
    items = list(values)
    if items:
        return max(items)
    return _empty(default, "max")


def exact_sum(values: Iterable) -> int | Fraction:
    """The exact sum of ints and Fractions, on one common denominator (builtin ``sum``
    normalises a Fraction at every step: the sum of a queue's sqrt(work) spent most of a fair
    share run there)."""
    num, den, real = 0, 1, False
    for v in values:
        if type(v) is int:
            num += v * den
            continue
        real = True
        n, d = v.numerator, v.denominator
        if d == den:
            num += n
        else:
            common = den // math.gcd(den, d) * d
            num = num * (common // den) + n * (common // d)
            den = common
    return Fraction(num, den) if real else num


def agg_avg(values: Iterable, default: Callable[[], object] | None):
    items = list(values)
    if items:
        return div(exact_sum(items), len(items))
    return _empty(default, "avg")


def _empty(default: Callable[[], object] | None, fn: str):
    if default is None:
        raise EvaluationError(f"{fn} over an empty set without `else`")
    return default()


def memo(state: PassState, key: int, compute):
    """An aggregate that reads the state but not the job, computed once per state: every
    change the simulator makes between two evaluations (a submission, a start, an end, the
    clock) changes the time, the queue's or the running set's length or the use."""
    stamp = (state.now, len(state.queue), len(state.running), tuple(state.used))
    if state.memo_stamp != stamp:
        state.memo.clear()
        state.memo_stamp = stamp
    cache = state.memo
    if key not in cache:
        cache[key] = compute()
    return cache[key]


def job_size(job: JobView, state: PassState) -> int:
    """The processors `job` got: its allocation in ``state.running`` (invariants run after it
    started)."""
    for r in state.running:
        # the same job (a moldable one runs as its sized copy: same position in the file)
        if r.job is job or r.job.index == job.index:
            return r.alloc[0]
    raise EvaluationError(f"job {job.id} is not running, so it has no size")
