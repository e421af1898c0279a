"""The event simulator: rigid jobs, one scheduling pass per instant (DESIGN, "Rigid-job
semantics").

Time is integer seconds. At each instant: all finishes, then all submissions (file order),
then one pass; a job started with zero run time ends at that same instant, which makes
another instant (finishes, then a pass) at the same time.

Per-event work stays proportional to what changed:

* running jobs are kept sorted by expected end (bisect), real ends in a heap;
* with a static order the queue is kept sorted (key computed once, at submit);
* a pass whose free cpus are below the smallest cpus request in the queue (rigid sizes)
  cannot start anything, and a pass that starts nothing has no effect: it is skipped;
* a walk stops once no later job's request fits the free resources (rigid sizes): those
  jobs cannot start in this pass, and their reservations could only matter to jobs after
  them, which cannot start either (the symbolic pass stops at the same job);
* with K >= 2 resources the plan packs each free vector into one int (``ProfileK``), so a
  fit test is one subtraction whatever K;
* "continuation" (``incremental``): see ``_Sim._can_continue`` for the proof that, after
  submissions alone, the previous pass's end state is the full re-pass's state for the old
  jobs, so only the new jobs are visited.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort
from collections.abc import Callable
from typing import Any

from attrs import evolve

from schedc.dsl.semantics.decisions import PassDecisions, Reserved, Started
from schedc.runtime.engine import one_resource
from schedc.runtime.engine.cluster import Cluster, ClusterError, ClusterState, check_fits, wall_time
from schedc.runtime.engine.gc_paused import paused_gc
from schedc.runtime.engine.packing import Packing
from schedc.runtime.engine.policy import PassState, RuntimePolicy
from schedc.runtime.engine.profile import Profile, Profile1, ProfileK
from schedc.runtime.engine.shadow_time import Shadow
from schedc.runtime.jobs import Job, RunningJob
from schedc.runtime.monitor import (
    MonitorViolation,
    Reservation,
    call_policy,
    check_capacity,
    check_invariants,
    check_kept_size,
    check_reservations,
)
from schedc.runtime.schedule import JobRecord, Schedule
from schedc.runtime.workloads.state_file import InitialState
from schedc.runtime.workloads.workload import Workload, WorkloadError

__all__ = ["JobRecord", "Schedule", "simulate"]

Progress = Callable[[int, int], None]


def simulate(policy: RuntimePolicy, workload: Workload, progress: Progress | None = None, *,
             initial: InitialState | None = None, incremental: bool = True, fast: bool = True,
             monitor: bool = True, cluster: Cluster | None = None,
             on_pass: Callable[[PassDecisions], None] | None = None) -> Schedule:
    """Replay ``workload`` under ``policy``.

    With ``initial`` (``state.py``) the machine starts at ``initial.now`` with its running
    jobs in place (they end at start + run_time) and its queued jobs queued; the first pass
    is at ``now``. ``workload`` must hold the state's jobs at their indices (as
    ``initial.workload`` does); any other job is a later arrival (submit >= now). The
    state's capacities are the machine's.

    ``incremental`` (continuation after submission-only instants) and ``fast`` (the O(1)
    shadow-time plan instead of a full profile when depth is 1, and the one-resource kernel
    of ``one_resource.py`` where it applies) are optimisations that never change the schedule;
    they can be switched off to test exactly that. ``monitor`` runs the independent after-pass
    checks (``monitor.py``).

    ``cluster`` (``hetero.py``): the cpus are processors with speeds and background load; a
    job's times scale by the power of the processors it gets (policies without reservations).

    ``on_pass`` gets the decisions of every pass run (``dsl/semantics/decisions.py``), in
    time order; a pass skipped because nothing could start decides nothing and is not
    reported. A continuation reports the reservations it keeps from the pass it resumes,
    then its own decisions. With ``on_pass`` the general walk runs (not the one-resource
    kernel).
    """
    with paused_gc():
        sim = _Sim(policy, workload, incremental, fast, monitor, initial, cluster)
        sim.on_pass = on_pass
        if (fast and on_pass is None and initial is None and cluster is None
                and one_resource.eligible(policy, sim.K)):
            starts, passes = one_resource.run_one_resource(
                policy, workload.jobs, sim.cap[0], progress, incremental, monitor)
            return sim.schedule(starts, [j.request for j in workload.jobs], passes)
        return sim.run(progress)


class _PassRun:
    """One pass in progress (and, kept afterwards, the end state a continuation resumes)."""

    __slots__ = ("now", "free", "profile", "shadow", "nres", "blocked", "reservations",
                 "started", "check_res", "candidates", "complete", "per_key", "decisions")

    def __init__(self, now: int, free: list[int]) -> None:
        self.now = now
        self.free = free  # per resource, current during the pass
        # built at the first reservation (when depth != 1 or not fast)
        self.profile: Profile | Profile1 | ProfileK | None = None
        self.shadow: Shadow | None = None  # the reservation when depth == 1 (fast plan)
        self.nres = 0
        self.blocked = False  # backfill "none": a job did not fit, the pass is over
        self.reservations: list[Reservation] = []
        self.started: list[Job] = []  # in this pass (or continuation)
        self.check_res = False  # a job started while a reservation existed
        self.candidates: list[Job] = []  # backfill "best": queue after the D-th reservation
        self.complete = True  # every queued job was visited (or could be skipped safely)
        self.per_key: dict[Any, int] = {}  # `reserve D per KEY`: reservations per key value
        self.decisions: list[Started | Reserved] | None = None  # kept for ``on_pass`` only


def _last_fitting(jobs: list[Job], packed: list[int], free_g: int, guard: int, i: int) -> int:
    """The last position at or before ``i`` whose job's packed request fits ``free_g`` (the
    free vector packed, with its guard bits set); -1: none."""
    while i >= 0 and (free_g - packed[jobs[i].index]) & guard != guard:
        i -= 1
    return i


def _timed(job: Job, req: tuple[int, ...]) -> Job:
    """The job with the run time and estimate it has on ``req``'s cpus: a moldable job's
    follow its speedup; a rigid job keeps its own whatever a size rule gives it."""
    return job if job.moldable is None else job.at_size(req[0])


class _Sim:
    def __init__(self, policy: RuntimePolicy, workload: Workload, incremental: bool,
                 fast: bool, monitor: bool, initial: InitialState | None = None,
                 cluster: Cluster | None = None) -> None:
        if tuple(policy.resources) != tuple(workload.resources):
            raise WorkloadError(workload.source, None, None,
                                f"the workload has resources {list(workload.resources)}, the "
                                f"policy {policy.name} wants {list(policy.resources)}",
                                help="load the workload with the policy's resources")
        if initial is not None:
            cap = _initial_capacities(policy, workload, initial)
        else:
            cap = tuple(c if c is not None else w
                        for c, w in zip(policy.capacities, workload.capacities, strict=True))
        for k, c in enumerate(cap):
            big = [j for j in workload.jobs if j.request[k] > c]
            if big:
                raise WorkloadError(workload.source, None, None,
                                    f"job {big[0].id} requests {big[0].request}, more than "
                                    f"the machine's {cap}",
                                    help="load the workload with the policy's capacities")
        self.policy = policy
        self.workload = workload
        self.cap = cap
        self.K = len(cap)
        self.depth = policy.depth
        self.backfill = policy.backfill
        # A size choice reads the whole plan: the shadow plan does not keep it.
        self.use_shadow = (fast and policy.depth == 1 and policy.backfill != "none"
                           and not policy.selective and policy.size_choices is None)
        self.profile1 = fast and len(cap) == 1
        self.fast = fast
        self.packing = Packing(cap)
        # Backfill "when" with depth >= 2: its starts may delay the reservations, so a
        # re-pass may reserve the first job later and then start the second (see
        # _continue_pass, point 4): the last pass's end state is not a re-pass's.
        when_deep = policy.backfill == "when" and (policy.depth is None or policy.depth > 1)
        # A size choice reads the plan, whose steps move with time: a job that waited for
        # its best completion may choose another size later, so no continuation.
        self.incremental = (incremental and policy.state_free and policy.order_static
                            and not when_deep and policy.size_choices is None)
        self.monitor = monitor
        self.rigid = policy.size is None
        # Rigid requests packed (runtime/engine/packing.py), by job index: the walk's fit tests
        # against the free vector are one subtraction each, whatever K. Filled by ``run``:
        # the one-resource kernel never walks.
        self.packed: list[int] = []
        # A job that does not fit the free resources now only waits once no reservation is
        # left to make (first fit and `when`): the walk skips visiting it.
        self.waits_when_full = policy.backfill in ("first_fit", "when") and not policy.selective
        # Callables and invariants that read the state see an exact queue (started jobs
        # leave it at once); others never look at it.
        self.exact_queue = not policy.state_free or any(
            inv.reads_state for inv in policy.invariants)
        self.used = [0] * self.K
        # Time-and-index keys packed in one int (t * M + index): int compares beat tuples.
        self.M = M = len(workload.jobs) + 1
        self.running: list[RunningJob] = []  # sorted by (expected end, index)
        self.run_keys: list[int] = []  # expected end * M + index, parallel to running
        self.heap: list[int] = []  # real end * M + index
        self.holder: list[RunningJob | None] = [None] * M  # index -> its RunningJob
        self.queue: list[Job] = []  # policy order
        self.qkeys: list[Any] = []  # submit * M + index for FCFS, else key + (submit, index)
        self.keyof: list[Any] = [None] * M  # index -> its queue key
        self.qprocs: list[int] = []  # sorted cpus requests of the queue (rigid sizes)
        self.starts: list[int] = [-1] * len(workload.jobs)
        self.allocs: list[tuple[int, ...]] = [()] * len(workload.jobs)
        self.state = PassState(now=0, queue=self.queue, running=self.running, capacity=cap,
                               used=self.used)
        self.passes = 0
        self.on_pass: Callable[[PassDecisions], None] | None = None
        self.memo: _PassRun | None = None
        self.initial = initial
        # `size fixed`: job index -> the allocation chosen at its first visit
        self.fixed_sizes: dict[int, tuple[int, ...]] = {}
        self.cluster: ClusterState | None = None
        self.run_times: list[int] = []  # with a cluster: each job's wall run time
        if cluster is not None:
            if policy.depth != 0 or policy.selective:
                raise ClusterError(
                    f"policy {policy.name} makes reservations, which a heterogeneous "
                    "cluster cannot keep: a job's wall time is known only once its "
                    "processors are chosen",
                    "use `reserve 0` (first fit, the paper's FPFS) or `backfill none`")
            check_fits(cluster, cap[0])
            self.cluster = ClusterState(cluster)
            self.run_times = [0] * len(workload.jobs)
            self.state.bpu[0] = self.cluster.total_bpu
            self.state.power[0] = self.cluster.total_power

    # -- the event loop -------------------------------------------------------------------

    def run(self, progress: Progress | None) -> Schedule:
        jobs = self.workload.jobs
        n = len(jobs)
        if self.rigid:
            self.packed = [self.packing.pack(j.request) for j in jobs]
        forced = self._place_initial()  # the state's instant: one pass there, whatever happens
        placed = {j.index for j in self.queue} | {rj.job.index for rj in self.running}
        arrivals = sorted((j for j in jobs if j.index not in placed),
                          key=lambda j: (j.submit, j.index))
        subs = [j.submit for j in arrivals]
        n_arrivals = len(arrivals)
        nxt = 0
        ended = 0
        step = max(1, -(-n // 100))  # at most ~100 progress calls
        heap = self.heap
        M = self.M
        finish, submit = self._finish, self._submit
        full_pass, continue_pass = self._full_pass, self._continue_pass
        incremental = self.incremental
        queue = self.queue
        while nxt < n_arrivals or heap or forced is not None:
            if forced is not None:  # every event of a state is at or after its `now`
                now, forced = forced, None
                self.memo = None
            else:
                now = subs[nxt] if nxt < n_arrivals else heap[0] // M
                if heap and heap[0] < now * M:
                    now = heap[0] // M
            finished = False
            limit = now * M + M
            while heap and heap[0] < limit:
                finish(heapq.heappop(heap) % M)
                finished = True
                ended += 1
                if progress is not None and ended % step == 0:
                    progress(ended, n)
            old = len(queue)
            at_end = True
            while nxt < n_arrivals and subs[nxt] == now:
                at_end &= submit(arrivals[nxt], old)
                nxt += 1
            if self.cluster is not None:  # new background loads at arrivals and departures
                self.cluster.refresh()
                self.state.power[0] = self.cluster.total_power
            if finished or not at_end or self.memo is None or not incremental:
                full_pass(now)
            elif len(queue) > old:
                continue_pass(now, old)
        if progress is not None and n % step:
            progress(n, n)
        if self.queue or any(self.used):
            raise MonitorViolation(f"policy {self.policy.name}: simulation ended with "
                                   f"{len(self.queue)} queued jobs and {self.used} in use")
        return self.schedule(self.starts, self.allocs, self.passes)

    def _place_initial(self) -> int | None:
        """Put the state's running jobs on the machine and its queued jobs in the queue;
        return its instant (None without a state)."""
        init = self.initial
        if init is None:
            return None
        for rj in init.running:
            self._launch(rj.job, rj.alloc, rj.start)
        for job in init.queue:
            self._submit(job, len(self.queue))
        if self.policy.size_fixed:  # sizes chosen before `now`, kept
            for index, cpus in init.sizes.items():
                self.fixed_sizes[index] = (cpus, *self.workload.jobs[index].request[1:])
        return init.now

    def schedule(self, starts: list[int], allocs: list[tuple[int, ...]], passes: int
                 ) -> Schedule:
        if self.cluster is not None:
            records = tuple(JobRecord(j, s, s + t, a) for j, s, a, t in zip(
                self.workload.jobs, starts, allocs, self.run_times, strict=True))
        else:
            records = tuple(JobRecord(j, s, s + _timed(j, a).run_time, a)
                            for j, s, a in zip(self.workload.jobs, starts, allocs, strict=True))
        return Schedule(records=records, capacities=self.cap, resources=self.workload.resources,
                        policy_name=self.policy.name, passes=passes, workload=self.workload)

    def _finish(self, index: int) -> None:
        rj = self.holder[index]
        assert rj is not None
        self.holder[index] = None
        if self.cluster is not None:
            self.cluster.release(index)
        i = bisect_left(self.run_keys, rj.expected_end * self.M + index)
        del self.running[i], self.run_keys[i]
        for k, a in enumerate(rj.alloc):
            self.used[k] -= a

    def _submit(self, job: Job, old: int) -> bool:
        """Queue ``job``; True if it lands after the ``old`` jobs that were queued before."""
        self.state.now = job.submit
        qkeys = self.qkeys
        if self.policy.order_key is None:
            key: Any = job.submit * self.M + job.index
        elif not self.policy.order_static:
            # A key that reads the state is computed at the next pass (`_resort`), with the
            # job queued: here it would read a state no pass sees, and might fail there.
            key = qkeys[-1] if qkeys else ()
        else:
            key = self._call(self.policy.order_key, job, "order key") + (job.submit, job.index)
        # FCFS arrivals come in key order: append without a search
        pos = len(qkeys) if not qkeys or qkeys[-1] <= key else bisect_left(qkeys, key)
        self.keyof[job.index] = key
        self.qkeys.insert(pos, key)
        self.queue.insert(pos, job)
        if self.rigid:
            insort(self.qprocs, job.procs)
        return pos >= old

    # -- passes ---------------------------------------------------------------------------

    def _full_pass(self, now: int) -> None:
        self.memo = None
        if not self.queue:
            return
        self.state.now = now
        if not self.policy.order_static:
            # every pass orders the queue, even one that can start nothing: a key that
            # fails there stops the run (as the verifier's pass sees it)
            self._resort()
        if self.rigid and self.cap[0] - self.used[0] < self.qprocs[0]:
            return  # nothing can start, and a pass that starts nothing changes nothing
        self.passes += 1
        idle = not self.running
        run = _PassRun(now, [c - u for c, u in zip(self.cap, self.used, strict=True)])
        if self.on_pass is not None:
            run.decisions = []
        self._walk(run, 0)
        if self.on_pass is not None:
            self.on_pass(PassDecisions(now, tuple(run.decisions)))
        self.memo = run if run.complete else None
        if idle and not run.started and self.monitor:
            # Every queued job fits the empty machine (the reader skips the others): a pass
            # that starts none of them would leave the machine idle for ever (dead lock).
            raise MonitorViolation(
                f"t={now}: policy {self.policy.name}: no progress: the machine is idle, "
                f"{len(self.queue)} job(s) wait and the pass started none "
                f"(first in order: job {self.queue[0].id})", "progress")

    def _continue_pass(self, now: int, old: int) -> None:
        """Visit only the jobs queued at ``now`` (all after the old ones), resuming the last
        pass's end state.

        Why this equals a full re-pass at ``now`` (policy state-free, static order, no finish
        at ``now``, so no event at all since the last pass at t_prev):
        1. No running job's estimated end lies in (t_prev, now]: it would have ended by then
           (real end <= estimated end), which is a finish event.
        2. Every reservation of the last pass starts after ``now``: an earliest fit is t_prev
           or a step start of the profile; t_prev is excluded (the job would have fit and
           started), running ends are after ``now`` by 1, and reservation ends come after
           their starts (induction in pass order). So the profile is constant on
           [t_prev, now] and has the same steps after it.
        3. Old job j did not fit at t_prev: min over [t_prev, t_prev+e) < req. By 2 that
           window's minimum equals the minimum over [now, t_prev+e), a sub-window of
           [now, now+e): it does not fit at ``now`` either. Its earliest fit from ``now`` is
           its old reservation (same profile after ``now``, candidates before it failed).
           Callables are state-free, so sizes and scores are unchanged. By induction in
           queue order, the re-pass makes the same decisions (wait, same reservation, or
           stop for backfill "none") with the same profile for every old job, and reaches
           the new jobs, last in the order, in exactly the saved end state.
        4. Backfill "when" (D <= 1; with D >= 2 there is no continuation): its starts come
           after the reservation and may delay it, so 2-3 hold only up to it. With D = 1
           the reserved job is the first old job that did not fit the free vector, and it
           still does not (free only shrank); every later old job did not fit the free
           vector at t_prev or its (state-free) condition was false, and neither changed.
           The reservation's time is never read after it is made.
        5. Backfill "best": old candidates did not fit at the end of the last pass, so they
           do not fit now (3), and fitting only gets harder as jobs start: the best loop
           only ever picks among the new candidates.
        """
        run = self.memo
        assert run is not None
        if self.rigid and self.cap[0] - self.used[0] < self.qprocs[0]:
            # Nothing can start. Skip, as a full pass would; the next pass is a full one.
            self.memo = None
            return
        run.now = now
        self.state.now = now
        if run.profile is not None:
            run.profile.set_origin(now)
        run.started = []
        run.check_res = False
        run.candidates = []
        self.passes += 1
        if run.decisions is not None:
            run.decisions = [d for d in run.decisions if isinstance(d, Reserved)]
        if not run.blocked:  # backfill "none": the last pass stopped at a job still blocked
            self._walk(run, old)
        if self.on_pass is not None:
            self.on_pass(PassDecisions(now, tuple(run.decisions)))
        if not run.complete:
            self.memo = None

    def _resort(self) -> None:
        """Dynamic order: recompute every key with the current state."""
        fn = self.policy.order_key
        assert fn is not None
        pairs = sorted(((self._call(fn, j, "order key") + (j.submit, j.index), j)
                        for j in self.queue), key=lambda p: p[0])
        self.qkeys[:] = [k for k, _ in pairs]
        self.queue[:] = [j for _, j in pairs]
        for k, j in pairs:
            self.keyof[j.index] = k

    def _walk(self, run: _PassRun, first: int) -> None:
        """Visit ``queue[first:]`` in order, then (backfill best) run the best loop."""
        depth = self.depth
        rigid = self.rigid
        free = run.free
        best = self.backfill == "best"
        visit = self._visit
        jobs = self.queue[first:]  # a copy: the exact queue shrinks as jobs start
        # Rigid sizes: the free vector packed with its guard bits (runtime/engine/packing.py), and
        # the last position whose job fits it. Free only shrinks in a pass, so no job after
        # that position can start now, and it only moves back as jobs start (amortised
        # O(queue) a pass, for any number of resources).
        packed, guard = self.packed, self.packing.guard
        free_g = (self.packing.pack(free) | guard) if rigid else 0
        last_fit = _last_fitting(jobs, packed, free_g, guard, len(jobs) - 1) if rigid \
            else len(jobs)
        skip_full = rigid and self.waits_when_full and depth is not None
        started = len(run.started)
        for qi, job in enumerate(jobs):
            if run.blocked:
                break
            if rigid and len(run.started) != started:
                started = len(run.started)
                free_g = self.packing.pack(free) | guard
                last_fit = _last_fitting(jobs, packed, free_g, guard, last_fit)
            if qi > last_fit:
                # No job can start now. If reservations are left to make, they could only
                # matter to later jobs of this pass, which cannot start either: stop, but
                # the end state is incomplete, so no continuation may resume from it.
                if depth is None or run.nres < depth or self.policy.selective:
                    run.complete = False
                if self.backfill == "none":
                    run.blocked = True  # this job does not fit: the pass ends here
                break
            if best and depth is not None and run.nres >= depth:
                run.candidates.append(job)
            elif (skip_full and run.nres >= depth  # type: ignore[operator]
                  and (free_g - packed[job.index]) & guard != guard):
                continue  # no reservation left, and it does not fit now: it waits
            else:
                visit(run, job)
        if run.candidates:
            self._best_loop(run)
        if run.started:
            if not self.exact_queue:  # delete the started jobs, last position first
                qkeys, keyof, queue = self.qkeys, self.keyof, self.queue
                for i in sorted((bisect_left(qkeys, keyof[j.index]) for j in run.started),
                                reverse=True):
                    del queue[i], qkeys[i]
            if self.rigid:
                qprocs = self.qprocs
                for job in run.started:
                    del qprocs[bisect_left(qprocs, job.procs)]
            if self.monitor:
                self._check(run)

    def _visit(self, run: _PassRun, job: Job) -> None:
        policy = self.policy
        if policy.size_choices is None or (policy.size_fixed
                                           and job.index in self.fixed_sizes):
            req = self._alloc(job)
        else:
            low = self._call(policy.size_low, job, "size")
            if run.free[0] < low and not policy.size_fixed:
                # No candidate (all >= LOW) fits now: the choice matters only to a
                # reservation, so it is made only if the job may get one (same decisions,
                # fewer evaluations: most of a long queue waits this way).
                self._wait_or_reserve(run, job, None, low)
                return
            req = self._choose(run, job, low)
            if policy.size_fixed:
                self._keep_size(job, req)
        now = run.now
        est = job.estimate_at(req[0])
        if self.backfill == "when" and self.depth is not None and run.nres >= self.depth:
            # The user's rule: free resources now and the condition; reservations unread.
            if (all(f >= r for f, r in zip(run.free, req, strict=True))
                    and self._call(self.policy.backfill_when, job, "backfill condition")):
                self._start(run, job, req, plan=False)
            return
        if run.shadow is not None:
            fits = run.shadow.fits_now(run.free, now, est, req)
        elif run.profile is not None:
            fits = run.profile.fits_at(0, est, req) < 0
        else:  # no reservation yet: the profile never dips below the free vector now
            fits = all(f >= r for f, r in zip(run.free, req, strict=True))
        if fits:
            self._start(run, job, req)
        else:
            self._wait_or_reserve(run, job, req)

    def _wait_or_reserve(self, run: _PassRun, job: Job, req: tuple[int, ...] | None,
                         low: int = 0) -> None:
        """``job`` does not fit now: the pass ends (backfill none), or it is reserved if the
        policy allows one more, or it waits. ``req`` None: its `size choose` is still to be
        made (candidates from ``low``), once a reservation is granted."""
        policy = self.policy
        if self.backfill == "none":
            run.blocked = True
            return
        if policy.selective:
            # `reserve D per KEY or when COND`: while fewer than D jobs of its key are
            # reserved, or else if COND holds for it
            key = (None if policy.reserve_key is None
                   else self._call(policy.reserve_key, job, "reservation key"))
            depth = self.depth
            assert depth is not None  # the compiler rejects `reserve all per ...`
            if not (run.per_key.get(key, 0) < depth or (
                    policy.reserve_when is not None
                    and self._call(policy.reserve_when, job, "reservation condition"))):
                return
            run.per_key[key] = run.per_key.get(key, 0) + 1
        elif self.depth is not None and run.nres >= self.depth:
            return
        self._reserve(run, job, self._choose(run, job, low) if req is None else req)

    def _reserve(self, run: _PassRun, job: Job, req: tuple[int, ...]) -> None:
        est = job.estimate_at(req[0])
        if self.use_shadow:
            sh = Shadow(run.free, self.running, req)
            run.shadow = sh
            start = sh.time
        else:
            if run.profile is None:
                run.profile = self._new_profile(run)
            start = run.profile.earliest(est, req)
            run.profile.add(start, start + est, req)
        run.nres += 1
        run.reservations.append(Reservation(job, start, start + est, req))
        if run.decisions is not None:
            run.decisions.append(Reserved(job.id, start, req))

    def _best_loop(self, run: _PassRun) -> None:
        """Backfill "best": start the fitting candidate of smallest score until none fits.

        A candidate that does not fit now never fits later in this pass (starting jobs only
        lowers the profile), so it is dropped for good. With score = queue position this
        starts exactly first fit's jobs: first fit starts, in order, each job that fits at
        its turn, and a job passed over at its turn cannot fit later either.
        """
        score = self.policy.score
        assert score is not None, f"policy {self.policy.name}: backfill best needs a score"
        pool = list(run.candidates)
        pos = {j.index: p for p, j in enumerate(pool)}
        while pool:
            fitting = []
            for job in pool:
                req = self._alloc(job)
                if self._fits_now(run, job, req):
                    fitting.append((self._call(score, job, "score"), pos[job.index], job, req))
            if not fitting:
                return
            _, _, job, req = min(fitting, key=lambda f: (f[0], f[1]))
            self._start(run, job, req)
            pool = [f[2] for f in fitting if f[2] is not job]

    def _fits_now(self, run: _PassRun, job: Job, req: tuple[int, ...]) -> bool:
        est = job.estimate_at(req[0])
        if run.shadow is not None:
            return run.shadow.fits_now(run.free, run.now, est, req)
        if run.profile is not None:
            return run.profile.fits_at(0, est, req) < 0
        return all(f >= r for f, r in zip(run.free, req, strict=True))

    def _alloc(self, job: Job) -> tuple[int, ...]:
        if self.policy.size is None:
            return job.request
        if self.policy.size_fixed:  # `size fixed`: the size of the job's first visit
            req = self.fixed_sizes.get(job.index)
            if req is None:
                req = self._sized(job, self._call(self.policy.size, job, "size"))
                self._keep_size(job, req)
            return req
        return self._sized(job, self._call(self.policy.size, job, "size"))

    def _keep_size(self, job: Job, req: tuple[int, ...]) -> None:
        self.fixed_sizes[job.index] = req
        if self.policy.invariants:
            check_kept_size(self.policy, job, _timed(job, req), req, self.state)

    def _sized(self, job: Job, size: Any, what: str = "size") -> tuple[int, ...]:
        """``job``'s request with ``size`` cpus, which must be in its range (monitor)."""
        lo, hi = (1, self.cap[0]) if job.moldable is None else (
            job.moldable.min_procs, min(job.moldable.max_procs, self.cap[0]))
        if not isinstance(size, int) or isinstance(size, bool) or not lo <= size <= hi:
            where = "" if job.moldable is None else " (its moldable range)"
            raise MonitorViolation(f"t={self.state.now}: policy {self.policy.name}: {what} "
                                   f"{size!r} for job {job.id} is not an integer in "
                                   f"[{lo}, {hi}]{where}", "size-bounds")
        return (size, *job.request[1:])

    def _new_profile(self, run: _PassRun) -> Profile | Profile1 | ProfileK:
        if self.profile1:
            return Profile1(run.now, run.free, self.running)
        if self.fast:
            return ProfileK(run.now, run.free, self.running, self.packing)
        return Profile(run.now, run.free, self.running)

    def _choose(self, run: _PassRun, job: Job, low: int) -> tuple[int, ...]:
        """`size choose N in [LOW, HIGH]`: of the candidate sizes, the one with which ``job``
        completes first in the plan (its earliest fit plus its estimate on that size); ties
        go to the smaller size.

        Papers/000 section 4.1's scan: the plan's steps in time order, each candidate placed
        at the first step it fits from (its earliest fit), until a step starts at or after
        the best completion so far (a start there cannot complete earlier: estimates >= 1).
        """
        policy = self.policy
        high = self._call(policy.size, job, "size")
        if run.profile is None:
            run.profile = self._new_profile(run)
        profile = run.profile
        pending = [(s, job.estimate_at(s), self._sized(job, s, "a `choose` candidate"))
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
        return self._sized(job, best[1])

    def _launch(self, job: Job, req: tuple[int, ...], now: int) -> None:
        """The machine's side of a start: running list, end heap, usage, the record."""
        job = _timed(job, req)
        if self.cluster is not None:  # times scale by the power of the processors it gets
            power = self.cluster.take(job.index, req[0])
            job = evolve(job, run_time=wall_time(job.run_time, req[0], power),
                         estimate=wall_time(job.estimate, req[0], power))
            self.run_times[job.index] = job.run_time
        rj = RunningJob(job, now, req)
        M = self.M
        idx = job.index
        key = (now + job.estimate) * M + idx
        i = bisect_left(self.run_keys, key)
        self.run_keys.insert(i, key)
        self.running.insert(i, rj)
        heapq.heappush(self.heap, (now + job.run_time) * M + idx)
        self.holder[idx] = rj
        used = self.used
        for k, r in enumerate(req):
            used[k] += r
        self.starts[idx] = now
        self.allocs[idx] = req

    def _start(self, run: _PassRun, job: Job, req: tuple[int, ...], plan: bool = True) -> None:
        """A start decided by the general walk: the machine, then (``plan``) the pass's plan.

        Backfill "when" starts after the last reservation skip the plan: nothing reads it
        any more, and a start that delays a reservation would drive it below zero.
        """
        now = run.now
        self._launch(job, req, now)
        for k, r in enumerate(req):
            run.free[k] -= r
        est = job.estimate_at(req[0])
        if not plan:
            pass
        elif run.shadow is not None:
            run.shadow.take(now, est, req)
        elif run.profile is not None:
            run.profile.add(now, now + est, req)
        if run.nres:
            run.check_res = True
        run.started.append(job)
        if run.decisions is not None:
            run.decisions.append(Started(job.id, req))
        if self.exact_queue:
            i = bisect_left(self.qkeys, self.keyof[job.index])
            del self.queue[i], self.qkeys[i]
        check_invariants(self.policy, job, self.state)

    def _call(self, fn: Callable[[Job, PassState], Any] | None, job: Job, what: str) -> Any:
        assert fn is not None
        return call_policy(self.policy, fn, job, self.state, what)

    def _check(self, run: _PassRun) -> None:
        name = self.policy.name
        for u, c in zip(self.used, self.cap, strict=True):
            if u > c or u < 0:
                check_capacity(run.now, name, self.workload.resources, self.cap, self.used,
                               run.started)
        if run.check_res and run.reservations:
            check_reservations(run.now, name, self.workload.resources, self.cap, self.used,
                               self.running, self.run_keys, self.M, run.reservations,
                               run.started)


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


def _initial_capacities(policy: RuntimePolicy, workload: Workload, initial: InitialState
                        ) -> tuple[int, ...]:
    """The state's machine, which must be the policy's, and hold the state's jobs."""
    where = initial.source
    if tuple(initial.resources) != tuple(policy.resources):
        raise WorkloadError(where, None, None,
                            f"the state has resources {list(initial.resources)}, the policy "
                            f"{policy.name} wants {list(policy.resources)}",
                            help="load the state with the policy's resources")
    for name, c, s in zip(policy.resources, policy.capacities, initial.capacities, strict=True):
        if c is not None and c != s:
            raise WorkloadError(where, None, None,
                                f"the state's capacity of `{name}` is {s}, the policy "
                                f"{policy.name} declares {c}",
                                help="write the policy's capacity in the state's `capacity`")
    jobs = workload.jobs
    mine = [rj.job for rj in initial.running] + list(initial.queue)
    for job in mine:
        if not (job.index < len(jobs) and jobs[job.index] == job):
            raise WorkloadError(where, None, None,
                                f"job {job.id} of the state is not job {job.index} of the "
                                "workload", help="simulate the state's own `workload`")
    placed = {j.index for j in mine}
    early = [j for j in jobs if j.index not in placed and j.submit < initial.now]
    if early:
        raise WorkloadError(where, None, None,
                            f"job {early[0].id} arrives at {early[0].submit}, before the "
                            f"state's now {initial.now}",
                            help="a later arrival is submitted at or after `now`")
    return initial.capacities
