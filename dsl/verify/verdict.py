"""What a verification gives: a property's ``Verdict`` (and its ``Status``), the ``Bounds``
of its symbolic state and the ``Limits`` it ran under (each checked against what the
verifier accepts: ``OutOfRange``), and ``unknown_reason``, the text of an unknown verdict
(why Z3 gave none and which limit to change).

Apart from the prover so that what reads verdicts (reports, the CLI, the HTML page, the
cross-pass check) needs neither Z3 nor the prover's machinery, and so that every module
of the prover can import them without importing one another back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import attrs
from attrs import frozen

from schedc.dsl import ir
from schedc.dsl.diagnostics import Span
from schedc.dsl.verify.budget import ran_out
from schedc.dsl.verify.vocabulary import (
    MAX_PROCESSORS,
    MAX_RLIMIT,
    MAX_SLOTS,
    MAX_TIMEOUT_S,
    MIN_TIMEOUT_S,
    OVERRUN,
    PREEMPTIVE_SLOTS,
    PROCESSORS,
    QUEUED,
    RLIMIT,
    RUNNING,
    TIMEOUT_S,
)


class OutOfRange(ValueError):
    """A bound or limit outside what the verifier accepts. ``field`` names it (the CLI's
    flag has its name), ``value`` is as given, ``text`` gives the range, ``help`` the use."""

    def __init__(self, field: str, value: str, text: str, help: str) -> None:
        super().__init__(f"{field} {value}: {text}")
        self.field, self.value, self.text, self.help = field, value, text, help


def _slots(name: str, value: int, default: int) -> None:
    if not 1 <= value <= MAX_SLOTS:
        raise OutOfRange(name, str(value), f"the bound must lie in [1, {MAX_SLOTS}]",
                         f"small bounds prove less; large ones take long (default {default})")


@frozen
class Bounds:
    """The symbolic state's slots: N queued jobs and R running ones (each slot may be empty,
    so every smaller state is covered too). The prover's own encodings take any sizes; what
    a user gives is checked by ``checked``."""

    queued: int = QUEUED  # N
    running: int = RUNNING  # R
    # P: a preemptive pass's machine has at most P processors (each job's are P terms)
    processors: int = PROCESSORS
    # a preemptive pass's slots (N waiting, R running): fewer by default, each carrying P
    # processor terms; ``--queued`` and ``--running`` set them as given
    preemptive: tuple[int, int] = (PREEMPTIVE_SLOTS, PREEMPTIVE_SLOTS)
    # the `--overrun` mode of the runs a preemptive pass's proofs cover (``OVERRUN_MODES``)
    overrun: str = OVERRUN

    @classmethod
    def checked(cls, queued: int | None, running: int | None,
                processors: int = PROCESSORS) -> Bounds:
        """The bounds of ``schedc verify --queued --running --processors`` (None: not
        given, each kind of pass its default): slots in [1, MAX_SLOTS], processors in
        [1, MAX_PROCESSORS], or ``OutOfRange``."""
        if queued is not None:
            _slots("queued", queued, QUEUED)
        if running is not None:
            _slots("running", running, RUNNING)
        if not 1 <= processors <= MAX_PROCESSORS:
            raise OutOfRange("processors", str(processors),
                             f"the bound must lie in [1, {MAX_PROCESSORS}]",
                             "a preemptive pass's machine has at most this many processors "
                             f"(default {PROCESSORS})")
        return cls(QUEUED if queued is None else queued,
                   RUNNING if running is None else running, processors,
                   (PREEMPTIVE_SLOTS if queued is None else queued,
                    PREEMPTIVE_SLOTS if running is None else running))


@frozen
class Limits:
    """What Z3 may spend on one property."""

    rlimit: int = RLIMIT  # Z3 resource units per property (deterministic)
    # CPU time per property, all it does together (``budget.py``), in milliseconds
    timeout_ms: int = int(TIMEOUT_S * 1000)

    @classmethod
    def checked(cls, rlimit: int, timeout_s: float) -> Limits:
        """The limits of ``schedc verify --rlimit --timeout`` (the timeout in seconds), each
        checked as given (nan and inf too), in the order of the flags, or ``OutOfRange``.
        Z3 reads both as unsigned 32-bit numbers: a larger rlimit wraps round, 0 is none."""
        if not 1 <= rlimit <= MAX_RLIMIT:
            raise OutOfRange("rlimit", str(rlimit), f"the limit must lie in [1, {MAX_RLIMIT}]",
                             f"Z3's resource units per property (default {RLIMIT})")
        if not MIN_TIMEOUT_S <= timeout_s < MAX_TIMEOUT_S:  # also false for nan
            raise OutOfRange("timeout", f"{timeout_s:g}", "give a number of seconds in "
                             f"[{MIN_TIMEOUT_S:g}, {int(MAX_TIMEOUT_S)}]",
                             f"per property (default {TIMEOUT_S:g})")
        return cls(rlimit, int(timeout_s * 1000))


# a verdict's; vacuous: "proved", but its assumptions admit no state where a job waits
Status = Literal["proved", "violated", "unknown", "vacuous"]


@frozen
class Assumed:
    """One assumption of a proof, as a vacuous verdict names it: its text, and where the
    policy states it (a param's declaration, a clause), if it does."""

    text: str
    location: Span | None = None

    def shown(self) -> str:
        return f"{self.text} ({self.location.location()})" if self.location else self.text


@frozen
class Verdict:
    property: str  # one of PROPERTIES, or "invariant `TEXT`"
    status: Status
    seconds: float
    bound: str  # e.g. "N=8 queued, R=8 running, K=1"
    location: Span | None = None  # of the invariant or the failing operation
    reason: str | None = None  # unknown: why; violated: what failed
    core: tuple[str, ...] = ()  # proved: the assumptions the proof used
    counterexample: dict[str, Any] | None = None  # violated: a state `schedc run --state` replays
    work: int = 0  # Z3's resource units spent: the same on any machine, unlike ``seconds``
    # proved, but for states of at most R running jobs only: where the policy reads every
    # running job (`running.count`, an aggregate over `running`), as "`TEXT` (file:line:col)"
    bounded_by: tuple[str, ...] = ()
    # proved, within limits the bounds set (each a sentence: what is not covered, what to
    # raise); the report prints them
    caveats: tuple[str, ...] = ()
    # a dynP policy's verdict (dsl/verify/tuning.py): the candidate whose verdict it is when
    # not proved (its counterexample replays with that candidate's pass), and every
    # candidate's status, in the order written
    candidate: str | None = None
    candidates: tuple[tuple[str, str], ...] = ()
    # vacuous: the assumptions that together admit no state (an unsat core), each located
    clash: tuple[Assumed, ...] = ()
    # the policy does not promise this property (`waive PROPERTY "REASON"`): the reason, and
    # where the clause is. Violated or unknown, the verdict leaves the exit status alone;
    # proved, the report warns that the clause is stale
    expected: str | None = None
    expected_at: Span | None = None

    @property
    def excused(self) -> bool:
        """Not proved, of a property the policy does not promise: no failure of the run."""
        return self.expected is not None and self.status in ("violated", "unknown")

    @property
    def stale_waiver(self) -> bool:
        """Proved, though the policy says it does not promise it: a warning."""
        return self.expected is not None and self.status == "proved"


def with_waivers(verdicts: Sequence[Verdict], waivers: Sequence[ir.Waiver]) -> list[Verdict]:
    """``verdicts`` with each property the policy waives (its ``ir.Waiver``s) marked expected;
    a verdict marked already (a dynP policy's, by its candidate) keeps its mark."""
    by_name = {w.property: w for w in waivers}
    return [attrs.evolve(v, expected=by_name[v.property].reason,
                         expected_at=by_name[v.property].span)
            if v.expected is None and v.property in by_name else v for v in verdicts]


def vacuous(verdict: Verdict, clash: tuple[Assumed, ...],
            fix: str = "change the values the policy allows") -> Verdict:
    """``verdict`` (proved) made vacuous: its assumptions ``clash`` admit no state in which a
    job waits, so the proof says nothing of any pass the simulator makes. It points at the
    first of them the policy states (else where it pointed)."""
    named = "; ".join(a.shown() for a in clash)
    # a clause (`limit`, ...) before a param's declaration: the value to change is there
    located = sorted((a for a in clash if a.location), key=lambda a: a.text.startswith("param"))
    where = located[0].location if located else verdict.location
    return attrs.evolve(
        verdict, status="vacuous", clash=clash, caveats=(), core=(), location=where,
        reason=("no state in which a job waits meets the proof's assumptions, so it proves "
                f"nothing; these clash: {named} ({fix})"))


def unknown_reason(why: str, at: tuple[int, int], limits: Limits, seconds: float = 0.0,
                   spent: int = 0) -> str:
    """Why the exact pass at ``at`` (n queued, n running) has no verdict, and what to change:
    Z3's reason ``why`` ("log": a counterexample that applies the uninterpreted `log`),
    the ``seconds`` the check took and the resource units it ``spent``."""
    where = f"while searching for a counterexample at N={at[0]}, R={at[1]}"
    smaller = "or lower --queued/--running" if max(at) > 1 else ""
    if why == "log":
        return (f"a counterexample was found at N={at[0]}, R={at[1]}, but it applies `log`, "
                "which Z3 treats as an unknown function: it may not be real, and no limit "
                "changes that (a proof holds for every `log`; a counterexample needs the "
                "formula without it)")
    if "incomplete" in why or "tactic failed" in why:
        return (f"Z3 cannot decide the pass at N={at[0]}, R={at[1]} ({why}): its arithmetic "
                "is incomplete here (nonlinear: products or quotients of unknowns, sqrt); "
                f"raising the limits will not help: simplify the formula {smaller}".rstrip())
    timeout_s = limits.timeout_ms / 1000
    rlimit = (f"Z3's resource limit (--rlimit {limits.rlimit}) ran out {where}: raise "
              f"--rlimit (e.g. --rlimit {min(8 * limits.rlimit, 2**32 - 1)}) {smaller}".rstrip())
    if why != "timeout" and spent >= limits.rlimit:
        return rlimit
    if why == "timeout" or seconds >= 0.98 * timeout_s:  # an Optimize says "canceled"
        return ran_out(timeout_s, where)
    if "resource" in why:
        return rlimit
    return f"Z3 gave up {where}: {why}"
