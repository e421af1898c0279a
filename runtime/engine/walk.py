"""One scheduling pass, interpreted concretely: which queued jobs start now and which are
reserved (DESIGN, "Rigid-job semantics").

``PassWalk`` plans on a ``Machine`` (``machine.py``) and starts jobs on it; the event loop
(``simulator.py``) decides when a pass runs. Its steps have the names of the symbolic
pass's (``PassEncoder`` in dsl/verify/pass_encoding/), step for step: ``walk``, ``visit``,
``fits_now``, ``start``, ``wait_or_reserve``, ``reserve``, ``best_rounds``, ``choose_size``
(``reserve_late``, a `slack` policy's reservation, is the slack's part of ``reserve``).

Per-pass work stays proportional to what can change:

* a walk stops once no later job's request fits the free resources (rigid sizes): those
  jobs cannot start in this pass, and their reservations could only matter to jobs after
  them, which cannot start either (the symbolic pass stops at the same job);
* with K >= 2 resources the plan packs each free vector into one int (``ProfileK``), so a
  fit test is one subtraction whatever K;
* with depth 1 the O(1) shadow-time plan (``shadow_time.py``) replaces the full profile.

A walk's end state (its plan, reservations, flags) stays on the object after the pass, so
that a continuation (``resume``) can go on from it: see ``simulator._Simulation._continue_pass``.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any

from schedc.dsl.semantics.decisions import PassDecisions, Reserved, Started
from schedc.runtime.engine.machine import Machine, timed
from schedc.runtime.engine.monitor import (
    MonitorViolation,
    Reservation,
    call_policy,
    check_capacity,
    check_invariants,
    check_kept_size,
    check_reservations,
)
from schedc.runtime.engine.packing import Packing
from schedc.runtime.engine.policy import PassState, RuntimePolicy
from schedc.runtime.engine.profile import Profile, Profile1, ProfileK
from schedc.runtime.engine.shadow_time import Shadow
from schedc.runtime.jobs import Job

Decision = Started | Reserved


def _last_fitting(jobs: list[Job], packed: list[int], free_g: int, guard: int, i: int) -> int:
    """The last position at or before ``i`` whose job's packed request fits ``free_g`` (the
    free vector packed, with its guard bits set); -1: none."""
    while i >= 0 and (free_g - packed[jobs[i].index]) & guard != guard:
        i -= 1
    return i


def size_candidates(low: int, high: int, choices: int) -> list[int]:
    """`choose N in [LOW, HIGH]`: every size of [LOW, max(LOW, HIGH)] if there are at most
    N, else N sizes spread evenly from LOW to HIGH (both included): LOW + i(HIGH-LOW) div
    (N-1); one choice is HIGH."""
    high = max(low, high)
    if high - low + 1 <= choices:
        return list(range(low, high + 1))
    if choices == 1:
        return [high]
    return [low + i * (high - low) // (choices - 1) for i in range(choices)]


class PassWalk:
    """The pass of ``policy`` on ``machine``: the policy's fixed choices (set once), and the
    state of the pass in progress (set by ``begin``, kept afterwards for ``resume``)."""

    __slots__ = (
        # fixed for a run
        "policy", "machine", "resources", "depth", "backfill", "use_shadow", "profile1",
        "fast", "packing", "packed", "rigid", "waits_when_full", "exact_queue", "monitor",
        "record", "full", "slack",
        # the pass in progress (and its end state)
        "now", "free", "profile", "shadow", "nres", "blocked", "reservations", "started",
        "check_res", "candidates", "complete", "per_key", "decisions",
    )

    def __init__(self, policy: RuntimePolicy, machine: Machine, resources: tuple[str, ...], *,
                 fast: bool = True, monitor: bool = True, record: bool = False,
                 full: bool = False) -> None:
        self.policy = policy
        self.machine = machine
        self.resources = resources
        self.depth = policy.depth
        self.backfill = policy.backfill
        self.slack = policy.slack  # read at every reservation: one attribute, not two
        # A size choice reads the whole plan: the shadow plan does not keep it; nor does it
        # hold a reservation after its earliest fit (`slack`).
        self.use_shadow = (fast and policy.depth == 1 and policy.backfill != "none"
                           and not policy.selective and policy.size_choices is None
                           and policy.slack is None)
        self.profile1 = fast and machine.K == 1
        self.fast = fast
        self.packing = Packing(machine.cap)
        self.rigid = policy.size is None
        # Rigid requests packed (packing.py), by job index: the walk's fit tests against the
        # free vector are one subtraction each, whatever K. Filled by ``pack``.
        self.packed: list[int] = []
        # A job that does not fit the free resources now only waits once no reservation is
        # left to make (first fit and `when`): the walk skips visiting it.
        self.waits_when_full = policy.backfill in ("first_fit", "when") and not policy.selective
        # Callables and invariants that read the state see an exact queue (started jobs
        # leave it at once); others never look at it.
        self.exact_queue = not policy.state_free or any(
            inv.reads_state for inv in policy.invariants)
        self.monitor = monitor
        self.record = record  # keep the pass's decisions (``decided``)
        # Visit every queued job, even once none can start now (``planning.py``: a planning
        # policy's full plan reserves every job that waits). The starts are the same.
        self.full = full
        self.begin(0)

    def pack(self, jobs: tuple[Job, ...] | list[Job]) -> None:
        """Pack every job's rigid request, by index (once per run)."""
        if self.rigid:
            self.packed = [self.packing.pack(j.request) for j in jobs]


    # -- the pass's state -------------------------------------------------------------------

    def begin(self, now: int) -> None:
        """A fresh pass at ``now`` on the machine as it is."""
        self.now = now
        self.free = self.machine.free()  # per resource, current during the pass
        # built at the first reservation (when depth != 1 or not fast)
        self.profile: Profile | Profile1 | ProfileK | None = None
        self.shadow: Shadow | None = None  # the reservation when depth == 1 (fast plan)
        self.nres = 0
        self.blocked = False  # backfill "none": a job did not fit, the pass is over
        self.reservations: list[Reservation] = []
        self.started: list[Job] = []  # in this pass (or continuation)
        self.check_res = False  # a job started while a reservation existed
        self.candidates: list[Job] = []  # backfill "best": queue after the D-th reservation
        # every queued job was visited (or could be skipped safely). A `slack` policy's
        # reservations lie off its earliest fits, which a continuation's argument needs
        # (simulator._continue_pass): its passes are never resumed.
        self.complete = self.slack is None
        self.per_key: dict[Any, int] = {}  # `reserve D per KEY`: reservations per key value
        self.decisions: list[Decision] | None = [] if self.record else None

    def resume(self, now: int) -> None:
        """Go on from the last pass's end state at ``now`` (a continuation): its plan and
        reservations stand, nothing has started yet."""
        self.now = now
        if self.profile is not None:
            self.profile.set_origin(now)
        self.started = []
        self.check_res = False
        self.candidates = []
        if self.decisions is not None:  # the reservations it keeps, then its own decisions
            self.decisions = [d for d in self.decisions if isinstance(d, Reserved)]

    def decided(self) -> PassDecisions:
        """The pass's decisions, in decision order (``record`` must be set)."""
        assert self.decisions is not None
        return PassDecisions(self.now, tuple(self.decisions))

    # -- the steps ---------------------------------------------------------------------------

    def walk(self, first: int = 0) -> None:
        """Visit ``queue[first:]`` in order, then (backfill best) the best rounds; then the
        started jobs leave the queue and the monitor checks the machine.

        Twin: ``PassEncoder.walk`` in dsl/verify/pass_encoding/walk.py.
        """
        machine = self.machine
        depth = self.depth
        rigid = self.rigid
        free = self.free
        best = self.backfill == "best"
        visit = self.visit
        jobs = machine.queue[first:]  # a copy: the exact queue shrinks as jobs start
        # Rigid sizes: the free vector packed with its guard bits (packing.py), and the last
        # position whose job fits it. Free only shrinks in a pass, so no job after that
        # position can start now, and it only moves back as jobs start (amortised O(queue)
        # a pass, for any number of resources).
        packed, guard = self.packed, self.packing.guard
        free_g = (self.packing.pack(free) | guard) if rigid else 0
        last_fit = _last_fitting(jobs, packed, free_g, guard, len(jobs) - 1) if rigid \
            else len(jobs)
        skip_full = rigid and self.waits_when_full and depth is not None
        started = len(self.started)
        for qi, job in enumerate(jobs):
            if self.blocked:
                break
            if rigid and len(self.started) != started:
                started = len(self.started)
                free_g = self.packing.pack(free) | guard
                last_fit = _last_fitting(jobs, packed, free_g, guard, last_fit)
            if qi > last_fit and not self.full:
                # No job can start now. If reservations are left to make, they could only
                # matter to later jobs of this pass, which cannot start either: stop, but
                # the end state is incomplete, so no continuation may resume from it.
                if depth is None or self.nres < depth or self.policy.selective:
                    self.complete = False
                if self.backfill == "none":
                    self.blocked = True  # this job does not fit: the pass ends here
                break
            if best and depth is not None and self.nres >= depth:
                self.candidates.append(job)
            elif (skip_full and self.nres >= depth  # type: ignore[operator]
                  and (free_g - packed[job.index]) & guard != guard):
                continue  # no reservation left, and it does not fit now: it waits
            else:
                visit(job)
        if self.candidates:
            self.best_rounds()
        if self.started:
            machine.unqueue_started(self.started, queue_too=not self.exact_queue)
            if self.monitor:
                self.check()

    def visit(self, job: Job) -> None:
        """``job``'s turn: its size, then it starts if it fits now (and, after the last
        reservation under backfill "when", the user's condition holds), else it waits or is
        reserved.

        Twin: ``PassEncoder.visit`` in dsl/verify/pass_encoding/walk.py.
        """
        policy = self.policy
        if policy.size_choices is None or (policy.size_fixed
                                           and job.index in self.machine.fixed_sizes):
            req = self.alloc(job)
        else:
            low = self.call(policy.size_low, job, "size")
            if self.free[0] < low and not policy.size_fixed:
                # No candidate (all >= LOW) fits now: the choice matters only to a
                # reservation, so it is made only if the job may get one (same decisions,
                # fewer evaluations: most of a long queue waits this way).
                self.wait_or_reserve(job, None, low)
                return
            req = self.choose_size(job, low)
            if policy.size_fixed:
                self.keep_size(job, req)
        if self.backfill == "when" and self.depth is not None and self.nres >= self.depth:
            # The user's rule: free resources now and the condition; reservations unread.
            if (all(f >= r for f, r in zip(self.free, req, strict=True))
                    and self.call(self.policy.backfill_when, job, "backfill condition")):
                self.start(job, req, plan=False)
            return
        # ``fits_now``, inlined: this is the walk's hot path (one call per visited job)
        est = job.estimate_at(req[0])
        if self.shadow is not None:
            fits = self.shadow.fits_now(self.free, self.now, est, req)
        elif self.profile is not None:
            fits = self.profile.fits_at(0, est, req) < 0
        else:  # no reservation yet: the profile never dips below the free vector now
            fits = all(f >= r for f, r in zip(self.free, req, strict=True))
        if fits:
            self.start(job, req)
        else:
            self.wait_or_reserve(job, req)

    def fits_now(self, job: Job, req: tuple[int, ...]) -> bool:
        """Whether ``job`` on ``req`` can start now without delaying a reservation: it fits
        the plan from now for its estimate.

        Twin: ``PassEncoder.fits_now`` in dsl/verify/pass_encoding/plan.py.
        """
        est = job.estimate_at(req[0])
        if self.shadow is not None:
            return self.shadow.fits_now(self.free, self.now, est, req)
        if self.profile is not None:
            return self.profile.fits_at(0, est, req) < 0
        # no reservation yet: the profile never dips below the free vector now
        return all(f >= r for f, r in zip(self.free, req, strict=True))

    def start(self, job: Job, req: tuple[int, ...], plan: bool = True) -> None:
        """Start ``job`` on ``req`` now: the machine, then (``plan``) the pass's plan.

        Backfill "when" starts after the last reservation skip the plan: nothing reads it
        any more, and a start that delays a reservation would drive it below zero.

        Twin: ``PassEncoder.start`` in dsl/verify/pass_encoding/plan.py.
        """
        now = self.now
        machine = self.machine
        machine.launch(job, req, now)
        free = self.free
        for k, r in enumerate(req):
            free[k] -= r
        if not plan:
            pass
        elif self.shadow is not None:
            self.shadow.take(now, job.estimate_at(req[0]), req)
        elif self.profile is not None:
            self.profile.add(now, now + job.estimate_at(req[0]), req)
        if self.nres:
            self.check_res = True
        self.started.append(job)
        if self.decisions is not None:
            self.decisions.append(Started(job.id, req))
        if self.exact_queue:
            machine.unqueue(job)
        check_invariants(self.policy, job, machine.view)

    def wait_or_reserve(self, job: Job, req: tuple[int, ...] | None, low: int = 0) -> None:
        """``job`` does not fit now: the pass ends (backfill none), or it is reserved if the
        policy allows one more, or it waits. ``req`` None: its `size choose` is still to be
        made (candidates from ``low``), once a reservation is granted.

        Twin: ``PassEncoder.wait_or_reserve`` in dsl/verify/pass_encoding/walk.py.
        """
        policy = self.policy
        if self.backfill == "none":
            self.blocked = True
            return
        if policy.selective:
            # `reserve D per KEY or when COND`: while fewer than D jobs of its key are
            # reserved, or else if COND holds for it
            key = (None if policy.reserve_key is None
                   else self.call(policy.reserve_key, job, "reservation key"))
            depth = self.depth
            assert depth is not None  # the compiler rejects `reserve all per ...`
            if not (self.per_key.get(key, 0) < depth or (
                    policy.reserve_when is not None
                    and self.call(policy.reserve_when, job, "reservation condition"))):
                return
            self.per_key[key] = self.per_key.get(key, 0) + 1
        elif self.depth is not None and self.nres >= self.depth:
            return
        self.reserve(job, self.choose_size(job, low) if req is None else req)

    def reserve(self, job: Job, req: tuple[int, ...]) -> None:
        """Reserve ``req`` for ``job`` at its earliest fit in the plan, and add it there.

        Twin: ``PassEncoder.reserve`` in dsl/verify/pass_encoding/walk.py.
        """
        est = job.estimate_at(req[0])
        if self.use_shadow:
            sh = Shadow(self.free, self.machine.running, req)
            self.shadow = sh
            start = sh.time
        else:
            if self.profile is None:
                self.profile = self.new_profile()
            start = self.profile.earliest(est, req)
            if self.slack is not None:
                self.reserve_late(job, start, est, req)
                return
            self.profile.add(start, start + est, req)
        self.nres += 1
        self.reservations.append(Reservation(job, start, start + est, req))
        if self.decisions is not None:
            self.decisions.append(Reserved(job.id, start, req))

    def reserve_late(self, job: Job, earliest: int, est: int, req: tuple[int, ...]) -> None:
        """`slack`: hold ``job``'s reservation from its earliest fit plus its slack (the
        policy's formula for the job, now, floored, 0 if negative) if it fits there, else
        from its earliest fit. Later starts of the pass then fit around that window: they
        may delay the job by up to its slack, never more.

        Twin: the slack's part of ``PassEncoder.reserve`` in dsl/verify/pass_encoding/walk.py.
        """
        profile = self.profile
        assert profile is not None
        slack = max(0, math.floor(self.call(self.slack, job, "slack")))
        start = earliest
        if slack:
            late = earliest + slack
            i = bisect_right(profile.times, late) - 1
            # the step holding `late` has one free value: fitting from its start for the
            # longer window is fitting from `late`
            if profile.fits_at(i, late + est - profile.times[i], req) < 0:
                start = late
        profile.add(start, start + est, req)
        self.nres += 1
        self.reservations.append(Reservation(job, start, start + est, req, earliest, slack))
        if self.decisions is not None:
            self.decisions.append(Reserved(job.id, start, req))

    def best_rounds(self) -> None:
        """Backfill "best": start the fitting candidate of smallest score until none fits.

        A candidate that does not fit now never fits later in this pass (starting jobs only
        lowers the profile), so it is dropped for good. With score = queue position this
        starts exactly first fit's jobs: first fit starts, in order, each job that fits at
        its turn, and a job passed over at its turn cannot fit later either.

        Twin: ``PassEncoder.best_rounds`` in dsl/verify/pass_encoding/walk.py.
        """
        score = self.policy.score
        assert score is not None, f"policy {self.policy.name}: backfill best needs a score"
        pool = list(self.candidates)
        pos = {j.index: p for p, j in enumerate(pool)}
        while pool:
            fitting = []
            for job in pool:
                req = self.alloc(job)
                if self.fits_now(job, req):
                    fitting.append((self.call(score, job, "score"), pos[job.index], job, req))
            if not fitting:
                return
            _, _, job, req = min(fitting, key=lambda f: (f[0], f[1]))
            self.start(job, req)
            pool = [f[2] for f in fitting if f[2] is not job]

    def choose_size(self, job: Job, low: int) -> tuple[int, ...]:
        """`size choose N in [LOW, HIGH]`: of the candidate sizes, the one with which ``job``
        completes first in the plan (its earliest fit plus its estimate on that size); ties
        go to the smaller size.

        Papers/000 section 4.1's scan: the plan's steps in time order, each candidate placed
        at the first step it fits from (its earliest fit), until a step starts at or after
        the best completion so far (a start there cannot complete earlier: estimates >= 1).

        Twin: ``PassEncoder.choose_size`` in dsl/verify/pass_encoding/sizes.py.
        """
        policy = self.policy
        high = self.call(policy.size, job, "size")
        if self.profile is None:
            self.profile = self.new_profile()
        profile = self.profile
        pending = [(s, job.estimate_at(s), self.sized(job, s, "a `choose` candidate"))
                   for s in size_candidates(int(low), int(high), policy.size_choices)]
        best: tuple[int, int] | None = None  # (completion, size)
        for i, t in enumerate(profile.times):
            if best is not None and t >= best[0]:
                break
            waiting = []
            for s, est, req in pending:
                if profile.fits_at(i, est, req) < 0:
                    if best is None or (t + est, s) < best:
                        best = (t + est, s)
                else:
                    waiting.append((s, est, req))
            pending = waiting
        assert best is not None, "the plan's last step is the whole machine: every size fits"
        return self.sized(job, best[1])

    # -- helpers ---------------------------------------------------------------------------

    def alloc(self, job: Job) -> tuple[int, ...]:
        """``job``'s allocation: its request (rigid), its `size fixed` size once chosen, or
        the size rule's value now."""
        if self.policy.size is None:
            return job.request
        if self.policy.size_fixed:  # `size fixed`: the size of the job's first visit
            req = self.machine.fixed_sizes.get(job.index)
            if req is None:
                req = self.sized(job, self.call(self.policy.size, job, "size"))
                self.keep_size(job, req)
            return req
        return self.sized(job, self.call(self.policy.size, job, "size"))

    def keep_size(self, job: Job, req: tuple[int, ...]) -> None:
        self.machine.fixed_sizes[job.index] = req
        if self.policy.invariants:
            check_kept_size(self.policy, job, timed(job, req), req, self.machine.view)

    def sized(self, job: Job, size: Any, what: str = "size") -> tuple[int, ...]:
        """``job``'s request with ``size`` cpus, which must be in its range (monitor)."""
        cap = self.machine.cap
        lo, hi = (1, cap[0]) if job.moldable is None else (
            job.moldable.min_procs, min(job.moldable.max_procs, cap[0]))
        if not isinstance(size, int) or isinstance(size, bool) or not lo <= size <= hi:
            where = "" if job.moldable is None else " (its moldable range)"
            raise MonitorViolation(f"t={self.machine.view.now}: policy {self.policy.name}: "
                                   f"{what} {size!r} for job {job.id} is not an integer in "
                                   f"[{lo}, {hi}]{where}", "size-bounds")
        return (size, *job.request[1:])

    def new_profile(self) -> Profile | Profile1 | ProfileK:
        running = self.machine.running
        if self.profile1:
            return Profile1(self.now, self.free, running)
        if self.fast:
            return ProfileK(self.now, self.free, running, self.packing)
        return Profile(self.now, self.free, running)

    def call(self, fn: Callable[[Job, PassState], Any] | None, job: Job, what: str) -> Any:
        assert fn is not None
        return call_policy(self.policy, fn, job, self.machine.view, what)

    def check(self) -> None:
        """The monitor's after-pass checks, on the machine's own counters."""
        m = self.machine
        name = self.policy.name
        for u, c in zip(m.used, m.cap, strict=True):
            if u > c or u < 0:
                check_capacity(self.now, name, self.resources, m.cap, m.used, self.started)
        if self.check_res and self.reservations:
            check_reservations(self.now, name, self.resources, m.cap, m.used, m.running,
                               m.run_keys, m.M, self.reservations, self.started,
                               self.slack is not None)


def share_packing(walkers: Sequence[PassWalk], jobs: tuple[Job, ...] | list[Job]) -> None:
    """Pack the rigid requests once for walkers on one machine (a dynP policy's candidates):
    by a rigid walker, as one that sizes its jobs (`size fixed`) packs nothing."""
    packer = next((w for w in walkers if w.rigid), walkers[0])
    packer.pack(jobs)
    for walker in walkers:
        walker.packed = packer.packed
