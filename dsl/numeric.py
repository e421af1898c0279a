"""Runtime helpers shared by the reference interpreter and generated code.

Both interpreters call these for every partial operation, so division by zero, sqrt/log of
a bad argument and empty aggregates fail the same way: with ``EvaluationError``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from schedc.runtime.jobs import Job
from schedc.runtime.policy import PassState


class EvaluationError(Exception):
    """A policy expression has no value in this state (the simulator reports it)."""


def div(a, b) -> float:
    if b == 0:
        raise EvaluationError("division by zero")
    return a / b


def floordiv(a: int, b: int) -> int:
    if b == 0:
        raise EvaluationError("integer division (`div`) by zero")
    return a // b


def mod(a: int, b: int) -> int:
    if b == 0:
        raise EvaluationError("`%` by zero")
    return a % b


def sqrt(x) -> float:
    if x < 0:
        raise EvaluationError(f"sqrt of a negative number ({x})")
    return math.sqrt(x)


def log(x) -> float:
    if x <= 0:
        raise EvaluationError(f"log of a non-positive number ({x})")
    return math.log(x)


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


def real(x) -> float:
    try:
        return float(x)
    except OverflowError as err:
        raise EvaluationError("number too large for a real") from err


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


def agg_avg(values: Iterable, default: Callable[[], object] | None):
    items = list(values)
    if items:
        return div(sum(items), len(items))
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


def job_size(job: Job, state: PassState) -> int:
    """The processors `job` got: its allocation in ``state.running`` (invariants run after it
    started)."""
    for r in state.running:
        # the same job (a moldable one runs as its sized copy: same position in the file)
        if r.job is job or r.job.index == job.index:
            return r.alloc[0]
    raise EvaluationError(f"job {job.id} is not running, so it has no size")
