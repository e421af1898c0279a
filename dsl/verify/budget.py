"""A property's time limit (`schedc verify --timeout`), counted in the process's CPU time, not
the wall clock: a busy machine gives a verification less of a processor per second, and a
wall-clock limit turned a proof there into unknown. Z3's rlimit decides a verdict (the same
count on any machine); this limit is the guard for what the rlimit does not bound: the
Python that encodes passes, the number of checks, counterexamples and their replays.

A ``Budget`` is one property's: its CPU seconds run over everything the property does, with
what it shares with the others (the pass they all read, encoded once) counted in
(``spent``), so that a property's time, and whether it runs out, do not depend on which
others are asked. Two guards, as neither alone suffices:

- Python code calls ``check`` between its steps (the encoders, before each Z3 check), which
  raises ``OutOfTime`` once the budget is spent. What catches it (``stopped``) ends the
  property with an unknown verdict; a cache filled in the property keeps only what was
  made whole.
- A Z3 check runs in C, where no Python code runs (nor a signal handler) until it returns.
  A watchdog thread reads the CPU clock and, once the budget is spent, interrupts the Z3
  context (the check returns unknown at once) every ``TICK`` until the budget is closed (a
  check started after an interrupt is not stopped by it). Z3's own `timeout` parameter
  counts wall-clock time: the verifier does not set it.

The process's CPU time counts every thread: while a verification runs, the others only wait
(the CLI's main thread, the watchdog).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

TICK = 0.02  # seconds: how often the watchdog reads the clock once little is left


class OutOfTime(Exception):
    """The running property's CPU time ran out (raised by ``check``)."""

    def __init__(self, budget: Budget) -> None:
        super().__init__(budget.reason())
        self.budget = budget


class Budget:
    """``seconds`` of CPU time for one property, ``spent`` of them already (its share of
    what the properties share); ``interrupt`` stops Z3's check at hand (``Context.interrupt``
    of the verification's context). Used as a context manager, which makes it the running
    thread's (``check``) and runs the watchdog while it is open."""

    def __init__(self, seconds: float, interrupt: Callable[[], None] | None = None,
                 spent: float = 0.0) -> None:
        self.seconds = seconds
        self.interrupt = interrupt
        self._start = time.process_time() - spent
        self._end: float | None = None  # the clock when closed: ``spent`` stops there
        self._expired = False
        self.interrupts = 0  # how often the watchdog interrupted Z3 (tests read it)
        # what the property was doing (the reason of an unknown verdict says it)
        self.doing = ""
        self._closed = threading.Event()
        self._watchdog: threading.Thread | None = None
        self._outer: Budget | None = None

    def spent(self) -> float:
        """CPU seconds spent so far (until closed)."""
        return (time.process_time() if self._end is None else self._end) - self._start

    def left(self) -> float:
        return self.seconds - self.spent()

    def expired(self) -> bool:
        """The budget is spent (once spent, it stays spent)."""
        if not self._expired and self.spent() >= self.seconds:
            self._expired = True
        return self._expired

    def check(self) -> None:
        """Raise ``OutOfTime`` if the budget is spent."""
        if self.expired():
            raise OutOfTime(self)

    def stopped(self, exc: BaseException) -> bool:
        """``exc`` ends the property for want of time: ``OutOfTime``, or a Z3 call that the
        watchdog's interrupt cancelled (Z3 raises on any call it cancels: a push, a
        simplify, not only a check)."""
        return isinstance(exc, OutOfTime) or (
            type(exc).__name__ == "Z3Exception" and self.expired())

    def reason(self, doing: str | None = None) -> str:
        """The reason of a verdict left unknown by this budget."""
        return ran_out(self.seconds, self.doing if doing is None else doing)

    def __enter__(self) -> Budget:
        self._outer = getattr(_running, "budget", None)
        _running.budget = self
        self._watchdog = threading.Thread(target=self._watch, name="schedc-verify-budget",
                                          daemon=True)
        self._watchdog.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._end = time.process_time()
        self._closed.set()
        if self._watchdog is not None:
            self._watchdog.join()
        _running.budget = self._outer
        if exc is not None and not isinstance(exc, OutOfTime) and self.stopped(exc):
            raise OutOfTime(self) from exc  # a Z3 call the watchdog cancelled

    def _watch(self) -> None:
        """Until closed: sleep about as long as the budget has left (CPU time grows no
        faster than the wall clock while one thread works), at most ``TICK`` near its
        end; once spent, interrupt Z3 at every tick."""
        while not self._closed.wait(max(TICK, min(self.left(), 0.5))):
            if self.expired() and self.interrupt is not None:
                self.interrupts += 1
                self.interrupt()


_running = threading.local()  # the running thread's open budget


def running() -> Budget | None:
    """The running thread's open budget, if any."""
    return getattr(_running, "budget", None)


def check() -> None:
    """Raise ``OutOfTime`` if the running thread's budget is spent (none: never), at most
    a ``TICK`` late. The encoders call it between their steps."""
    budget = getattr(_running, "budget", None)
    # the flag the watchdog sets (no clock read: the encoders call this often)
    if budget is not None and budget._expired:
        raise OutOfTime(budget)


def add(solver: Any, terms: Sequence[Any], slice_: int = 1000) -> None:
    """``solver.add(*terms)``, a slice at a time with ``check`` between (z3's Python adds a
    pass's ten thousands of terms in a good part of a second, which no interrupt stops);
    the same assertions in the same order."""
    terms = list(terms)
    for start in range(0, len(terms), slice_):
        check()
        solver.add(*terms[start:start + slice_])


def ran_out(seconds: float, doing: str = "") -> str:
    """Why a verdict is unknown when its CPU time ran out, and what to change."""
    where = f" {doing}" if doing else ""
    return (f"the time limit (--timeout {seconds:g} s of CPU time) ran out{where}: raise "
            f"--timeout (e.g. --timeout {4 * seconds:g}) or lower --queued/--running (a "
            f"verdict this limit decides may differ on another machine)")
