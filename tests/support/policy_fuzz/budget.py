"""Running the simulator with a deterministic budget (policy calls counted, a far-away
wall-clock guard), and naming the property a monitor stop is about."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs
from attrs import frozen

from schedc.runtime.engine.monitor import MonitorViolation
from schedc.runtime.engine.policy import PassState, RuntimePolicy
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.jobs import Job
from schedc.runtime.workloads.state_file import InitialState
from schedc.runtime.workloads.workload import Workload


class OutOfBudget(BaseException):
    """A simulation made more policy calls than its budget. A BaseException: the monitor
    turns every Exception a policy callable raises into a violation."""


class _Probe:
    """Wraps a runtime policy's callables: counts calls against a budget (deterministic),
    with a far-away wall-clock guard, and keeps the state of the last call (at a failure:
    the state the failing formula saw)."""

    def __init__(self, calls: int, seconds: float) -> None:
        self.left = calls
        self.deadline = time.monotonic() + seconds
        self.state: PassState | None = None

    def wrap(self, fn: Callable | None) -> Callable | None:
        if fn is None:
            return None

        def probed(job: Job, state: PassState) -> Any:
            self.left -= 1
            if self.left < 0 or (self.left & 4095 == 0 and time.monotonic() > self.deadline):
                raise OutOfBudget
            self.state = state
            return fn(job, state)

        return probed

    def progress(self, done: int, total: int) -> None:
        if time.monotonic() > self.deadline:
            raise OutOfBudget

    def policy(self, rt: RuntimePolicy) -> RuntimePolicy:
        w = self.wrap
        return attrs.evolve(
            rt, order_key=w(rt.order_key), score=w(rt.score), size=w(rt.size),
            size_low=w(rt.size_low), backfill_when=w(rt.backfill_when),
            reserve_key=w(rt.reserve_key), reserve_when=w(rt.reserve_when), slack=w(rt.slack),
            invariants=tuple(attrs.evolve(i, check=w(i.check)) for i in rt.invariants))


@frozen
class Outcome:
    status: str  # ok | stop | budget | error | rejected (a state or params the reader refused)
    message: str = ""
    queued: int | None = None  # what the last policy call saw (a failing formula's state)
    running: int | None = None


def run_simulation(rt: RuntimePolicy, workload: Workload, initial: InitialState | None,
                   calls: int, seconds: float) -> Outcome:
    probe = _Probe(calls, seconds)
    try:
        simulate(probe.policy(rt), workload, probe.progress, initial=initial)
    except MonitorViolation as exc:
        seen = probe.state
        return Outcome("stop", str(exc), len(seen.queue) if seen else None,
                       len(seen.running) if seen else None)
    except OutOfBudget:
        return Outcome("budget")
    except Exception as exc:  # a simulator bug (or a workload this module got wrong)
        return Outcome("error", f"{type(exc).__name__}: {exc}")
    return Outcome("ok")


def stop_property(message: str, invariants: Sequence[str]) -> str:
    """The property a monitor stop is about (as `verify` names it); "crash" for a failure
    that is none of them (a Python error in generated code, say)."""
    if " failed for job " in message:
        tail = message.split(" failed for job ", 1)[1]
        if ": SizeError: " in tail:  # a size outside its range (numbers.SizeError)
            return "size-bounds"
        if ": EvaluationError: " not in tail:
            return "crash"
        error = tail.split(": EvaluationError: ", 1)[1]
        if error.startswith("size ") and ("is outside" in error or "is not a whole" in error):
            return "size-bounds"
        return "well-defined"
    if "overcommitted" in message:
        return "capacity"
    if "reservation of job" in message and "delayed" in message:
        return "reservation-safety"
    if "no progress" in message or "simulation ended with" in message:
        return "progress"
    for text in invariants:
        if f"invariant `{text}`" in message and " violated" in message:
            return f"invariant `{text}`"
    if "is not an integer in" in message:
        return "size-bounds"
    return "crash"


def signature(message: str, prop: str) -> str:
    """What must stay the same while a failing state is shrunk: the property, and for a
    formula that failed, which formula and how (numbers left out)."""
    if prop != "well-defined":
        return prop
    tail = message.split(": ", 2)[-1]  # after "t=...: policy NAME: "
    return re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "#", tail)
