"""The runtime monitor: independent checks after each pass; a violation is a bug report.

The simulator's pass is trusted by nobody: after it, we re-derive from the running jobs and
the pass's reservations (not from the pass's own bookkeeping) that no resource is
overcommitted now and that every reservation still fits, i.e. no job started after a
reservation was made pushed it back. With `slack` (relaxed backfilling) a reservation is held
up to its slack after its earliest fit: it must still fit there, so no start moved it more
than the policy allows.

One check relates a pass to the next and is opt-in (a state file's ``check``, or
``ReservationsKept`` handed to ``simulate(on_pass=...)``), never on in ordinary runs:
``reservations-kept``, a job that holds a reservation and still waits gets, at a later pass,
a reservation or a start no later than the one it held (``dsl/verify/across.py`` proves it
for EASY; conservative backfilling re-planned at every pass breaks it). It assumes jobs end
by their estimates: `--overrun extend` plans overdue jobs anew and may move a reservation.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any

from attrs import frozen

from schedc.dsl.semantics.decisions import PassDecisions, Started
from schedc.dsl.semantics.numbers import SizeError
from schedc.dsl.verify.vocabulary import ALL_PROPERTIES, KEPT
from schedc.runtime.engine.policy import PassState, RuntimePolicy
from schedc.runtime.jobs import Job, RunningJob


class MonitorViolation(Exception):
    """A policy or simulator bug found at run time (not a user mistake).

    ``kind`` names the property of `schedc verify` the stop refutes (``PROPERTY_KINDS``, or
    "invariant `TEXT`"), so that a counterexample's replay can be matched to its property;
    None for a stop no property covers (the simulation ended with jobs left)."""

    def __init__(self, message: str, kind: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind


PROPERTY_KINDS = ALL_PROPERTIES  # the names of `schedc verify`'s properties, which stops carry


def call_policy(policy: RuntimePolicy, fn: Callable[[Job, PassState], Any], job: Job,
                state: PassState, what: str) -> Any:
    """Run a compiled policy callable; any failure is a bug report with its context."""
    try:
        return fn(job, state)
    except MonitorViolation:
        raise
    except Exception as exc:
        # a size the `size` formula computed outside [1, capacity] is `size-bounds`; every
        # other failure (division by zero, sqrt, log, empty aggregate) is `well-defined`
        kind = "size-bounds" if isinstance(exc, SizeError) else "well-defined"
        # a preemptive policy's formulas read a ``JobLife`` (the job and its history)
        ident = job.job.id if hasattr(job, "job") else job.id
        raise MonitorViolation(f"t={state.now}: policy {policy.name}: {what} failed for job "
                               f"{ident}: {type(exc).__name__}: {exc}", kind) from exc


def check_invariants(policy: RuntimePolicy, job: Job, state: PassState) -> None:
    """Each user invariant, right after ``job`` started (``state`` already holds it)."""
    for inv in policy.invariants:
        if not call_policy(policy, inv.check, job, state, f"invariant `{inv.text}`"):
            raise MonitorViolation(
                f"t={state.now}: policy {policy.name}: invariant `{inv.text}` "
                f"({inv.location}) violated after starting job {job.id}",
                f"invariant `{inv.text}`")


def check_kept_size(policy: RuntimePolicy, job: Job, sized: Job, alloc: tuple[int, ...],
                    state: PassState) -> None:
    """`size fixed`: the invariants of the job and its size alone, for the size just chosen
    to be kept (it will be the job's size when it starts, in whatever state; the verifier
    proves them at this point too). ``sized`` is the job as it would run on ``alloc``."""
    probe = None
    for inv in policy.invariants:
        if inv.reads_state:
            continue
        if probe is None:  # `job.size` reads the job's allocation from the running set
            probe = PassState(now=state.now, queue=(), running=(RunningJob(sized, state.now,
                                                                           alloc),),
                              capacity=state.capacity, used=list(state.used))
        if not call_policy(policy, inv.check, job, probe, f"invariant `{inv.text}`"):
            raise MonitorViolation(
                f"t={state.now}: policy {policy.name}: invariant `{inv.text}` "
                f"({inv.location}) violated by the size {alloc[0]} kept for job {job.id}",
                f"invariant `{inv.text}`")


@frozen(slots=True)
class Reservation:
    job: Job
    start: int  # where the plan holds it
    end: int  # start + estimate
    alloc: tuple[int, ...]
    # `slack` (relaxed backfilling): its earliest fit when it was made (None: ``start``) and
    # the slack it was given, in seconds; the plan holds it at most that much later
    earliest: int | None = None
    slack: int = 0

    def allowed(self) -> str:
        """The delay the policy allows, for messages: none, or the slack and from when."""
        if self.earliest is None:
            return ""
        return f" (its earliest fit t={self.earliest} plus its slack of {self.slack} s)"


def _check_slack(now: int, policy: str, reservations: Sequence[Reservation]) -> None:
    """Each reservation is held no later than its earliest fit plus its slack: the window
    the capacity checks below protect is one the policy's guarantee allows."""
    for r in reservations:
        if r.earliest is not None and not r.earliest <= r.start <= r.earliest + r.slack:
            raise MonitorViolation(
                f"t={now}: policy {policy}: reservation of job {r.job.id} held at t={r.start},"
                f" outside its earliest fit t={r.earliest} plus its slack of {r.slack} s",
                "reservation-safety")


def check_capacity(now: int, policy: str, resources: Sequence[str], capacity: Sequence[int],
                   used: Sequence[int], started: Sequence[Job]) -> None:
    for k, (u, c) in enumerate(zip(used, capacity, strict=True)):
        if u > c or u < 0:
            ids = ", ".join(str(j.id) for j in started)
            raise MonitorViolation(
                f"t={now}: policy {policy}: resource `{resources[k]}` overcommitted "
                f"({u} used of {c}) after starting jobs [{ids}]", "capacity")


def check_reservations(now: int, policy: str, resources: Sequence[str],
                       capacity: Sequence[int], used: Sequence[int],
                       running: Sequence[RunningJob], keys: Sequence[int], M: int,
                       reservations: Sequence[Reservation], started: Sequence[Job],
                       slack: bool = False) -> None:
    """Usage never exceeds capacity over any reservation's window.

    ``running`` is sorted by expected end, ``keys[i]`` is ``running[i]``'s expected end x M
    plus its index (M > every index), ``used`` is their total
    (already checked against capacity). Usage only rises at reservation starts (running jobs
    only release), so checking at each distinct reservation start suffices. Running usage at
    t is the sum over running jobs with expected end > t. For one start (EASY) it is summed
    from the shorter side of the bisect point, O(min(prefix, suffix)); for many starts one
    merged sweep over the running jobs and the sorted reservations, O(R + n log n).
    """
    K = len(capacity)
    if slack:  # a `slack` policy's (a loop over every reservation: only where it can fail)
        _check_slack(now, policy, reservations)
    if len(reservations) == 1:
        _check_one(now, policy, resources, capacity, used, running, keys, M, reservations[0],
                   started)
        return
    starts = sorted({r.start for r in reservations})
    events = sorted([(r.start, 1, i) for i, r in enumerate(reservations)]
                    + [(r.end, 0, i) for i, r in enumerate(reservations)])
    held = [0] * K  # reservations' usage at the sweep point
    active: set[int] = set()
    ev = 0
    cut = 0  # running[:cut] have released by the sweep point
    released = [0] * K
    for t in starts:
        while ev < len(events) and events[ev][0] <= t:  # ends (0) sort before starts (1)
            _, is_start, i = events[ev]
            sign = 1 if is_start else -1
            (active.add if is_start else active.discard)(i)
            for k, a in enumerate(reservations[i].alloc):
                held[k] += sign * a
            ev += 1
        new_cut = bisect_right(keys, t * M + M - 1)  # expected end <= t
        if len(starts) == 1 and len(running) - new_cut < new_cut:
            use = [0] * K
            for rj in running[new_cut:]:
                for k, a in enumerate(rj.alloc):
                    use[k] += a
        else:
            for rj in running[cut:new_cut]:
                for k, a in enumerate(rj.alloc):
                    released[k] += a
            use = [u - r for u, r in zip(used, released, strict=True)]
        cut = new_cut
        for k in range(K):
            if use[k] + held[k] > capacity[k]:
                res_ids = ", ".join(str(reservations[i].job.id) for i in sorted(active))
                ids = ", ".join(str(j.id) for j in started)
                # the reservations starting at t, with the delay each is allowed
                allowed = "".join(reservations[i].allowed() for i in sorted(active)
                                  if reservations[i].start == t)
                raise MonitorViolation(
                    f"t={now}: policy {policy}: reservation of job(s) [{res_ids}] at t={t}"
                    f"{allowed} delayed: resource `{resources[k]}` needs {use[k] + held[k]} of "
                    f"{capacity[k]} after starting jobs [{ids}]", "reservation-safety")


def _check_one(now: int, policy: str, resources: Sequence[str], capacity: Sequence[int],
               used: Sequence[int], running: Sequence[RunningJob], keys: Sequence[int], M: int,
               res: Reservation, started: Sequence[Job]) -> None:
    """One reservation (EASY): usage at its start, summed from the shorter side."""
    t = res.start
    cut = bisect_right(keys, t * M + M - 1)  # running[:cut] end by t
    if cut <= len(running) - cut:
        use = list(used)
        for rj in running[:cut]:
            for k, a in enumerate(rj.alloc):
                use[k] -= a
    else:
        use = [0] * len(capacity)
        for rj in running[cut:]:
            for k, a in enumerate(rj.alloc):
                use[k] += a
    for k, (u, a, c) in enumerate(zip(use, res.alloc, capacity, strict=True)):
        if u + a > c:
            ids = ", ".join(str(j.id) for j in started)
            raise MonitorViolation(
                f"t={now}: policy {policy}: reservation of job {res.job.id} at t={t}"
                f"{res.allowed()} delayed: resource `{resources[k]}` needs {u + a} of {c} "
                f"after starting jobs [{ids}]", "reservation-safety")


class ReservationsKept:
    """The opt-in check across passes, fed each pass's decisions (``simulate``'s
    ``on_pass``): a job reserved at t by one pass is, at each later pass that decides about
    it, started by t or reserved no later than t. A pass that does not reach the job (its
    walk stopped because nothing later could start, or it was skipped because nothing
    fits) decides nothing about it: the job keeps holding t for the next pass that does
    (the verifier proves the property of the full walk, whose reservations for a job the
    walk reaches are the same, so this check never refutes a proof). ``then`` gets every
    pass's decisions too (a caller's own ``on_pass``)."""

    def __init__(self, policy: str,
                 then: Callable[[PassDecisions], None] | None = None) -> None:
        self.policy = policy
        self.then = then
        self.held: dict[int, tuple[int, int]] = {}  # job id -> (its time, the pass's now)

    def __call__(self, decided: PassDecisions) -> None:
        if self.then is not None:
            self.then(decided)
        now = decided.now
        for d in decided.decisions:
            was = self.held.pop(d.job, None)
            if isinstance(d, Started):
                if was is not None and now > was[0]:
                    raise MonitorViolation(
                        f"t={now}: policy {self.policy}: job {d.job} started at {now}, after "
                        f"its reservation at {was[0]} (held since the pass at {was[1]})", KEPT)
                continue
            if was is not None and d.time > was[0]:
                raise MonitorViolation(
                    f"t={now}: policy {self.policy}: job {d.job}'s reservation moved from "
                    f"{was[0]} to {d.time} between the passes at {was[1]} and {now}", KEPT)
            self.held[d.job] = (d.time, now)


def opt_in_checks(policy: str, checks: Sequence[str],
                  on_pass: Callable[[PassDecisions], None] | None
                  ) -> Callable[[PassDecisions], None] | None:
    """``on_pass`` with the opt-in checks a state asks for (``checks``) run after it."""
    if KEPT in checks:
        return ReservationsKept(policy, on_pass)
    return on_pass
