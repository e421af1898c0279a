"""The event simulator: rigid jobs, one scheduling pass per instant (DESIGN, "Rigid-job
semantics").

Time is integer seconds. At each instant: all finishes, then all submissions (file order),
then one pass; a job started with zero run time ends at that same instant, which makes
another instant (finishes, then a pass) at the same time.

Three parts, one module each: the machine and queue (``machine.py``), the events and their
sources (``events.py``), and the pass (``walk.py``, ``PassWalk``); this module is the event
loop that joins them. Per-event work stays proportional to what changed:

* running jobs are kept sorted by expected end (bisect), real ends in a heap (``Machine``);
* with a static order the queue is kept sorted (key computed once, at submit);
* a pass whose free cpus are below the smallest cpus request in the queue (rigid sizes)
  cannot start anything, and a pass that starts nothing has no effect: it is skipped;
* a walk stops early, and plans cheaply (``walk.py``);
* "continuation" (``incremental``): see ``_Simulation._continue_pass`` for the proof that,
  after submissions alone, the previous pass's end state is the full re-pass's state for
  the old jobs, so only the new jobs are visited.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter, gt

from schedc.dsl.semantics.decisions import PassDecisions
from schedc.runtime.engine import one_resource
from schedc.runtime.engine.cluster import Cluster, ClusterError, ClusterState, check_fits
from schedc.runtime.engine.events import Agenda, Finish, Pass, Submit
from schedc.runtime.engine.machine import Machine, timed
from schedc.runtime.engine.monitor import MonitorViolation, call_policy, opt_in_checks
from schedc.runtime.engine.planning import order_queue
from schedc.runtime.engine.policy import RuntimePolicy
from schedc.runtime.engine.schedule import JobRecord, Schedule
from schedc.runtime.engine.tuning import Tuner
from schedc.runtime.engine.walk import PassWalk, share_packing, size_candidates
from schedc.runtime.gc_paused import paused_gc
from schedc.runtime.jobs import Job
from schedc.runtime.workloads.state_file import InitialState
from schedc.runtime.workloads.workload import Workload, WorkloadError

__all__ = ["JobRecord", "Schedule", "machine_at", "machine_for", "simulate", "size_candidates"]

Progress = Callable[[int, int], None]
_RUN, _ESTIMATE = attrgetter("run_time"), attrgetter("estimate")


def simulate(policy: RuntimePolicy, workload: Workload, progress: Progress | None = None, *,
             initial: InitialState | None = None, incremental: bool = True, fast: bool = True,
             monitor: bool = True, cluster: Cluster | None = None,
             on_pass: Callable[[PassDecisions], None] | None = None) -> Schedule:
    """Replay ``workload`` under ``policy``.

    With ``initial`` (``state_file.py``) the machine starts at ``initial.now`` with its running
    jobs in place (they end at start + run_time) and its queued jobs queued; the first pass
    is at ``now``. ``workload`` must hold the state's jobs at their indices (as
    ``initial.workload`` does); any other job is a later arrival (submit >= now). The
    state's capacities are the machine's.

    ``incremental`` (continuation after submission-only instants) and ``fast`` (the O(1)
    shadow-time plan instead of a full profile when depth is 1, and the one-resource kernel
    of ``one_resource.py`` where it applies) are optimisations that never change the schedule;
    they can be switched off to test exactly that. ``monitor`` runs the independent after-pass
    checks (``monitor.py``).

    ``cluster`` (``cluster.py``): the cpus are processors with speeds and background load; a
    job's times scale by the power of the processors it gets (policies without reservations).

    ``on_pass`` gets the decisions of every pass run (``dsl/semantics/decisions.py``), in
    time order; a pass skipped because nothing could start decides nothing and is not
    reported. A continuation reports the reservations it keeps from the pass it resumes,
    then its own decisions. With ``on_pass`` the general walk runs (not the one-resource
    kernel). A state's opt-in monitor checks (``initial.checks``: `reservations-kept`,
    ``monitor.ReservationsKept``) read those decisions after ``on_pass``.
    """
    if initial is not None and (initial.suspended or initial.stopped):
        raise ValueError(f"policy {policy.name}: the rigid simulator has no suspended or "
                         "stopped jobs (a preemptive policy's state: `simulate_preemptive`)")
    if initial is not None and initial.checks and monitor:
        on_pass = opt_in_checks(policy.name, initial.checks, on_pass)
    with paused_gc():
        sim = _Simulation(policy, workload, incremental, fast, monitor, initial, cluster, on_pass)
        if (fast and on_pass is None and initial is None and cluster is None
                and policy.tuning is None and not sim.overdue
                and one_resource.eligible(policy, sim.machine.K)):
            starts, passes = one_resource.run_one_resource(
                policy, workload.jobs, sim.machine.cap[0], progress, incremental, monitor)
            return sim.schedule(starts, [j.request for j in workload.jobs], passes)
        return sim.run(progress)


def _active_candidate(policy: RuntimePolicy, initial: InitialState | None) -> int:
    """The candidate a dynP run starts with: the state's `active` one, else the first."""
    assert policy.tuning is not None
    names = [c.name for c in policy.tuning.candidates]
    if initial is None or initial.active is None:
        return 0
    if initial.active not in names:
        raise WorkloadError(initial.source, None, None,
                            f"the state's active candidate `{initial.active}` is not a "
                            f"candidate of policy {policy.name}",
                            help=f"its candidates: {', '.join(names)}")
    return names.index(initial.active)


def machine_at(policy: RuntimePolicy, initial: InitialState) -> Machine:
    """The machine of a state file at its instant, the queue in ``policy``'s order: what the
    first pass of ``simulate(policy, initial.workload, initial=initial)`` plans on."""
    sim = _Simulation(policy, initial.workload, False, True, True, initial)
    sim._place_initial()
    sim.machine.view.now = initial.now
    if not sim.active.order_static and sim.machine.queue:  # a dynP state's active candidate
        sim._resort()
    return sim.machine


class _Simulation:
    """The event loop: events change the machine, then a pass (``PassWalk``) runs on it."""

    def __init__(self, policy: RuntimePolicy, workload: Workload, incremental: bool,
                 fast: bool, monitor: bool, initial: InitialState | None = None,
                 cluster: Cluster | None = None,
                 on_pass: Callable[[PassDecisions], None] | None = None) -> None:
        cap = machine_for(policy, workload, initial, cluster)
        cluster_state = ClusterState(cluster) if cluster is not None else None
        self.policy = policy
        self.workload = workload
        # rigid sizes (a pass that cannot start any request is skipped) only if every pass
        # keeps the requests: a dynP policy's fields are its first candidate's, and a later
        # candidate may size its jobs (start one on the few cpus free)
        self.machine = Machine(cap, len(workload.jobs), all(
            p.size is None for p in passes_of(policy)), cluster_state)
        # What the policy's formulas read (PassState): the machine's view of itself.
        self.view = self.machine.view
        self.walker = PassWalk(policy, self.machine, tuple(workload.resources), fast=fast,
                               monitor=monitor, record=on_pass is not None)
        # The policy whose order keys the queue and whose pass runs: a dynP policy's
        # active candidate (``tuning.py``), switched at its self-tuning steps.
        self.active = policy
        self.tuner: Tuner | None = None
        self.walkers: list[PassWalk] = []
        if policy.tuning is not None:
            self.tuner = Tuner(policy.tuning, workload.resources, self.machine.cap,
                               workload.jobs, fast=fast, monitor=monitor)
            self.walkers = [PassWalk(c, self.machine, tuple(workload.resources), fast=fast,
                                     monitor=monitor, record=on_pass is not None)
                            for c in policy.tuning.candidates]
            first = _active_candidate(policy, initial)
            self.tuner.active = first
            self.active = policy.tuning.candidates[first]
            self.walker = self.walkers[first]
        elif initial is not None and initial.active not in (None, policy.name):
            raise WorkloadError(initial.source, None, None,
                                f"the state's active candidate `{initial.active}` is not "
                                f"policy {policy.name}, which does not tune",
                                help="run the dynP policy it is a candidate of, or drop "
                                     "`active`")
        # Backfill "when" with depth >= 2: its starts may delay the reservations, so a
        # re-pass may reserve the first job later and then start the second (see
        # _continue_pass, point 4): the last pass's end state is not a re-pass's.
        when_deep = policy.backfill == "when" and (policy.depth is None or policy.depth > 1)
        # A size choice reads the plan, whose steps move with time: a job that waited for
        # its best completion may choose another size later, so no continuation.
        # A dynP policy may switch at any submission: its passes are always full ones.
        self.incremental = (incremental and policy.state_free and policy.order_static
                            and not when_deep and policy.size_choices is None
                            and policy.tuning is None)
        self.monitor = monitor
        # some job runs past its estimate (`--overrun extend`): each instant, running jobs
        # past theirs are planned anew (``Machine.extend_overdue``)
        jobs = workload.jobs
        self.overdue = any(map(gt, map(_RUN, jobs), map(_ESTIMATE, jobs)))  # at C speed
        self.passes = 0
        self.on_pass = on_pass
        # The walker's end state is the last pass's, complete: a continuation may resume it.
        self.resumable = False
        self.initial = initial

    # -- the event loop -------------------------------------------------------------------

    def run(self, progress: Progress | None) -> Schedule:
        """Take the next instant's events, handle each by kind, then the pass; until no
        event is left."""
        jobs = self.workload.jobs
        n = len(jobs)
        machine = self.machine
        share_packing((self.walker, *self.walkers), jobs)
        forced = self._place_initial()
        placed = {j.index for j in machine.queue} | {rj.job.index for rj in machine.running}
        agenda = Agenda(sorted((j for j in jobs if j.index not in placed),
                               key=lambda j: (j.submit, j.index)), machine.heap, machine.M)
        if forced is not None:  # the state's instant: one pass there, whatever happens
            agenda.force(Pass(forced))
        ended = 0
        step = max(1, -(-n // 100))  # at most ~100 progress calls
        finish, submit = machine.finish, self._submit
        full_pass, continue_pass = self._full_pass, self._continue_pass
        incremental = self.incremental
        queue = machine.queue
        cluster = machine.cluster
        tuner = self.tuner
        # a state naming its active candidate: that candidate's pass at its instant
        pinned = self.initial is not None and self.initial.active is not None
        on_change = tuner is not None and tuner.tuning.step == "change"
        overdue = self.overdue
        for now, events in agenda.instants():
            old = len(queue)  # jobs queued before this instant's submissions
            finished = forced_pass = submitted = False
            at_end = True  # every submission lands after the old jobs
            for event in events:
                kind = type(event)
                if kind is Finish:
                    finish(event.index)  # type: ignore[union-attr]
                    finished = True
                    ended += 1
                    if progress is not None and ended % step == 0:
                        progress(ended, n)
                elif kind is Submit:
                    at_end &= submit(event.job, old)  # type: ignore[union-attr]
                    submitted = True
                else:  # Pass
                    forced_pass = True
            if cluster is not None:  # new background loads at arrivals and departures
                cluster.refresh()
                self.view.power[0] = cluster.total_power
            if overdue and machine.extend_overdue(now):
                finished = True  # the plan changed: a full pass (no continuation)
            if tuner is not None and (submitted or forced_pass or (on_change and finished)) \
                    and not (forced_pass and pinned):
                self._tune(now)
            if finished or forced_pass or not at_end or not self.resumable or not incremental:
                full_pass(now)
            elif len(queue) > old:
                continue_pass(now, old)
        if progress is not None and n % step:
            progress(n, n)
        if machine.queue or any(machine.used):
            raise MonitorViolation(f"policy {self.policy.name}: simulation ended with "
                                   f"{len(machine.queue)} queued jobs and {machine.used} in use")
        return self.schedule(machine.starts, machine.allocs, self.passes)

    def _tune(self, now: int) -> None:
        """A self-tuning step: on a switch, the chosen candidate keys the queue and walks."""
        tuner = self.tuner
        assert tuner is not None
        self.view.now = now
        if tuner.step(self.machine, now):
            self.active = self.policy.tuning.candidates[tuner.active]  # type: ignore[union-attr]
            self.walker = self.walkers[tuner.active]
            order_queue(self.active, self.machine)

    def _place_initial(self) -> int | None:
        """Put the state's running jobs on the machine and its queued jobs in the queue;
        return its instant (None without a state)."""
        init = self.initial
        if init is None:
            return None
        machine = self.machine
        for rj in init.running:
            machine.launch(rj.job, rj.alloc, rj.start)
        for job in init.queue:
            self._submit(job, len(machine.queue))
        if self.active.size_fixed:  # sizes chosen before `now`, kept (by the active pass)
            for index, cpus in init.sizes.items():
                machine.fixed_sizes[index] = (cpus, *self.workload.jobs[index].request[1:])
        return init.now

    def schedule(self, starts: list[int], allocs: list[tuple[int, ...]], passes: int
                 ) -> Schedule:
        machine = self.machine
        if machine.cluster is not None:
            records = tuple(JobRecord(j, s, s + t, a) for j, s, a, t in zip(
                self.workload.jobs, starts, allocs, machine.run_times, strict=True))
        else:
            records = tuple(JobRecord(j, s, s + timed(j, a).run_time, a)
                            for j, s, a in zip(self.workload.jobs, starts, allocs, strict=True))
        tuning = None
        if self.tuner is not None:
            jobs = self.workload.jobs
            first = min((j.submit for j in jobs), default=0)
            last = max((r.end for r in records), default=first)
            tuning = self.tuner.record(first, last)
        given = machine.cluster.given if machine.cluster is not None else None
        processors = None if given is None else tuple(
            given.get(j.index, ()) for j in self.workload.jobs)
        return Schedule(records=records, capacities=machine.cap,
                        resources=self.workload.resources, policy_name=self.policy.name,
                        passes=passes, workload=self.workload, tuning=tuning,
                        processors=processors)

    def _submit(self, job: Job, old: int) -> bool:
        """Queue ``job``; True if it lands after the ``old`` jobs that were queued before."""
        self.view.now = job.submit
        machine = self.machine
        policy = self.active
        if policy.order_key is None:
            key: object = job.submit * machine.M + job.index
        elif not policy.order_static:
            # A key that reads the state is computed at the next pass (`_resort`), with the
            # job queued: here it would read a state no pass sees, and might fail there.
            key = machine.qkeys[-1] if machine.qkeys else ()
        else:
            key = call_policy(policy, policy.order_key, job, self.view, "order key") + (
                job.submit, job.index)
        return machine.enqueue(job, key, old)

    # -- passes ---------------------------------------------------------------------------

    def _full_pass(self, now: int) -> None:
        self.resumable = False
        machine = self.machine
        if not machine.queue:
            return
        self.view.now = now
        if not self.active.order_static:
            # every pass orders the queue, even one that can start nothing: a key that
            # fails there stops the run (as the verifier's pass sees it)
            self._resort()
        if machine.nothing_fits():
            return  # nothing can start, and a pass that starts nothing changes nothing
        self.passes += 1
        idle = not machine.running
        walker = self.walker
        walker.begin(now)
        walker.walk(0)
        if self.on_pass is not None:
            self.on_pass(walker.decided())
        self.resumable = walker.complete
        if idle and not walker.started and self.monitor:
            # Every queued job fits the empty machine (the reader skips the others): a pass
            # that starts none of them would leave the machine idle for ever (dead lock).
            raise MonitorViolation(
                f"t={now}: policy {self.policy.name}: no progress: the machine is idle, "
                f"{len(machine.queue)} job(s) wait and the pass started none "
                f"(first in order: job {machine.queue[0].id})", "progress")

    def _continue_pass(self, now: int, old: int) -> None:
        """Visit only the jobs queued at ``now`` (all after the old ones), resuming the last
        pass's end state.

        Why this equals a full re-pass at ``now`` (policy state-free, static order, no finish
        at ``now``, so no event at all since the last pass at t_prev):
        1. No running job's estimated end lies in (t_prev, now]: it would have ended by then
           (real end <= estimated end), which is a finish event; a job that runs past its
           estimate (`--overrun extend`) is planned anew at ``now``, which makes a full pass.
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
        assert self.resumable
        if self.machine.nothing_fits():
            # Nothing can start. Skip, as a full pass would; the next pass is a full one.
            self.resumable = False
            return
        walker = self.walker
        walker.resume(now)
        self.view.now = now
        self.passes += 1
        if not walker.blocked:  # backfill "none": the last pass stopped at a job still blocked
            walker.walk(old)
        if self.on_pass is not None:
            self.on_pass(walker.decided())
        if not walker.complete:
            self.resumable = False

    def _resort(self) -> None:
        """Dynamic order: recompute every key with the current state."""
        policy = self.active
        fn = policy.order_key
        assert fn is not None
        self.machine.reorder(sorted(
            ((call_policy(policy, fn, j, self.view, "order key") + (j.submit, j.index), j)
             for j in self.machine.queue), key=lambda p: p[0]))


def passes_of(policy: RuntimePolicy) -> tuple[RuntimePolicy, ...]:
    """The policies whose passes a run of ``policy`` makes: a dynP policy's candidates."""
    return policy.tuning.candidates if policy.tuning is not None else (policy,)


def reserves(policy: RuntimePolicy) -> bool:
    """Whether some pass of ``policy`` makes reservations (which a heterogeneous cluster
    cannot keep)."""
    return any(p.depth != 0 or p.selective for p in passes_of(policy))


def machine_for(policy: RuntimePolicy, workload: Workload, initial: InitialState | None = None,
                cluster: Cluster | None = None) -> tuple[int, ...]:
    """The capacities ``policy`` runs ``workload`` on, once checked that every job fits them
    (and the cluster, the policy): a user error here is found before any simulation, which is
    how `compare` checks all its runs before the first."""
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
    if cluster is not None:
        if reserves(policy):
            raise ClusterError(
                f"policy {policy.name} makes reservations, which a heterogeneous "
                "cluster cannot keep: a job's wall time is known only once its "
                "processors are chosen",
                "use `reserve 0` (first fit, the paper's FPFS) or `backfill none`")
        check_fits(cluster, cap[0])
    return cap


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
    mine = [rj.job for rj in initial.running] + [*initial.queue, *initial.suspended,
                                                 *initial.stopped]
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
