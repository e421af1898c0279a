"""The event loop of a preemptive policy (papers/003): jobs are suspended or requeued so that
others run, every job's life kept by ``lifecycle.JobLife``.

The rigid loop (``simulator.py``) stays as it is: a policy without preemption never comes
here. This loop runs a policy's order with first-fit starts (``reserve 0``; ``backfill none``
stops at the first job that does not fit) and ``PreemptionRules``: which mechanism each job
has, which running jobs a waiting job may preempt, which are protected now, the costs, a
limit on preemptions per job, the most jobs resident on one processor, a quantum.

Processors have identities: a job runs on a set of them, a suspended job keeps its processes
(and its memory and other resources) there and resumes there only. At each instant: all
completions, then the ends of dispatches, then the submissions (file order), then a timer;
then one pass:

1. **Resume**: each suspended job (in policy order) whose processors are all free resumes.
   A suspended job never waits behind a pending one for processors it already holds a
   claim on (else FCFS could wait for ever on memory the suspended jobs hold).
2. **Start**: the pending jobs in policy order, each on the lowest free processors where it
   fits (every resource; at most ``resident`` jobs' processes per processor); ``backfill
   none`` stops at the first that does not fit.
3. **Preempt**: each job still waiting, in policy order, looks for victims among the running
   jobs: not protected (``keep``), not of mechanism ``none``, under the preemption limit, and
   the rule holding for (candidate, victim). They are taken in the victims' order until the
   candidate fits (a suspended candidate: until its own processors are free; it needs none
   if earlier preemptions of the pass freed them), then each
   victim the start does not need is dropped again (last taken first). If it fits, the
   victims are suspended or requeued (their cpus free at once; a suspended job's other
   resources stay held) and the candidate starts or resumes in the same pass. A job started
   or preempted in this pass is neither a victim nor a candidate again in it.

Checkpointing mechanisms (``checkpoint``, ``malleable``: the processors are busy while the
job is written out) are ``JobLife`` transitions already; this loop does not take them yet.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from typing import Any

from attrs import frozen

from schedc.runtime.engine.lifecycle import HOLDS_CPUS, JobLife, Mechanism
from schedc.runtime.engine.monitor import MonitorViolation, call_policy
from schedc.runtime.engine.policy import PassState, PreemptionRules, RuntimePolicy, never
from schedc.runtime.engine.schedule import JobRecord, Preempted, Schedule
from schedc.runtime.jobs import RunningJob
from schedc.runtime.workloads.workload import Workload

# the mechanisms this loop takes (the others: see the module's doc)
LOOP_MECHANISMS: frozenset[Mechanism] = frozenset({"none", "suspend", "requeue"})


@frozen
class PreemptiveRun:
    """A preemptive run: the schedule (a job's record: its first start, its completion, its
    request) and every job's life (``JobLife``: phases, segments, preemptions, work)."""

    schedule: Schedule
    lives: tuple[JobLife, ...]
    preemptions: int


# event kinds, in handling order within an instant
_COMPLETE, _DISPATCHED, _TIMER = 0, 1, 3


def simulate_preemptive(policy: RuntimePolicy, rules: PreemptionRules, workload: Workload,
                        *, monitor: bool = True,
                        progress: Callable[[int, int], None] | None = None) -> PreemptiveRun:
    """Replay ``workload`` under ``policy`` and ``rules`` (the module's doc); ``progress``
    gets (jobs completed, jobs) about a hundred times."""
    if policy.size is not None or policy.depth != 0 or policy.backfill not in (
            "none", "first_fit") or policy.tuning is not None:
        raise ValueError(f"policy {policy.name}: a preemptive pass takes rigid jobs, "
                         "`reserve 0` and backfill `first_fit` or `none`")
    return _Loop(policy, rules, workload, monitor, progress).run()


class _Loop:
    def __init__(self, policy: RuntimePolicy, rules: PreemptionRules, workload: Workload,
                 monitor: bool, progress: Callable[[int, int], None] | None) -> None:
        self.policy, self.rules, self.workload, self.monitor = policy, rules, workload, monitor
        self.progress = progress
        self.completed = 0
        cap = tuple(c if c is not None else w
                    for c, w in zip(policy.capacities, workload.capacities, strict=True))
        self.cap = cap
        self.used = [0] * len(cap)
        self.owner = [-1] * cap[0]  # processor -> the job holding its cpu
        self.resident = [0] * cap[0]  # processor -> jobs with processes there
        self.lives: list[JobLife | None] = [None] * len(workload.jobs)
        self.waiting: list[int] = []  # pending and suspended, in the last pass's order
        self.running: set[int] = set()  # holding cpus
        self.events: list[tuple[int, int, int, int, int]] = []  # (t, kind, index, version, seq)
        self.version = [0] * len(workload.jobs)
        self.timer_at: int | None = None
        self.passes = self.preemptions = 0
        self.view = PassState(now=0, queue=[], running=[], capacity=cap, used=self.used)
        # each job's mechanism, chosen once (as at its submission: it reads the job only)
        self.mechanisms = [rules.mechanism(job) for job in workload.jobs]
        for job, mechanism in zip(workload.jobs, self.mechanisms, strict=True):
            if mechanism not in LOOP_MECHANISMS:
                raise ValueError(f"job {job.id}: mechanism {mechanism} is not taken by the "
                                 "preemptive loop yet")

    # -- the event loop -----------------------------------------------------------------------

    def run(self) -> PreemptiveRun:
        arrivals = sorted(self.workload.jobs, key=lambda j: (j.submit, j.index))
        nxt, events = 0, self.events
        while nxt < len(arrivals) or events:
            times = [events[0][0]] if events else []
            if nxt < len(arrivals):
                times.append(arrivals[nxt].submit)
            now = min(times)
            while events and events[0][0] == now:
                _, kind, index, version, _ = heapq.heappop(events)
                if kind == _TIMER:
                    self.timer_at = None
                elif version == self.version[index]:  # else the job moved on since
                    self._event(kind, index, now)
            while nxt < len(arrivals) and arrivals[nxt].submit == now:
                job = arrivals[nxt]
                self.lives[job.index] = JobLife(job, self.mechanisms[job.index])
                self.waiting.append(job.index)
                nxt += 1
            self._pass(now)
        if self.waiting or self.running:
            raise MonitorViolation(f"policy {self.policy.name}: run ended with "
                                   f"{len(self.waiting)} waiting and {len(self.running)} "
                                   "running jobs")
        return self._result()

    def _event(self, kind: int, index: int, now: int) -> None:
        life = self._life(index)
        self.version[index] += 1
        if kind == _COMPLETE:
            life.finish(now)
            self._release(index, life, cpus_only=False)
            self.running.discard(index)
            self.completed += 1
            n = len(self.lives)
            if self.progress is not None and (self.completed % max(1, n // 100) == 0
                                              or self.completed == n):
                self.progress(self.completed, n)
        else:
            life.dispatched(now)
            self._schedule_completion(index, life)

    def _push(self, t: int, kind: int, index: int) -> None:
        heapq.heappush(self.events, (t, kind, index, self.version[index], len(self.events)))

    def _schedule_completion(self, index: int, life: JobLife) -> None:
        self._push(life.completion_time(), _COMPLETE, index)

    # -- the pass -------------------------------------------------------------------------------

    def _pass(self, now: int) -> None:
        if not self.waiting:
            return
        self.passes += 1
        self.view.now = now
        order = self._ordered(now)
        touched: set[int] = set()  # started, resumed or preempted in this pass
        running_before = set(self.running)
        for index in order:  # 1. resume
            life = self._life(index)
            if life.phase == "suspended" and all(self.owner[p] < 0 for p in life.processors):
                self._resume(index, life, now, touched)
        free = self._free_processors()  # the lowest first: a start takes a prefix
        for index in order:  # 2. start
            life = self._life(index)
            if life.phase != "pending":
                continue
            procs = self._fit(life, free)
            if procs is not None:
                self._start(index, life, procs, now, touched)
                free = free[len(procs):]
            elif self.policy.backfill == "none":
                break
        if self.rules.may_preempt is not never:  # 3. preempt
            open_ = self._open_victims(touched)
            for index in order:
                life = self._life(index)
                if not open_:
                    break
                if (index not in touched and life.phase in ("pending", "suspended")
                        and self._try_preempt(index, life, now, touched, open_)):
                    open_ = [v for v in open_ if v not in touched]
        preempted = sorted(i for i in running_before if i not in self.running)
        self.waiting = [i for i in (*order, *preempted)
                        if self._life(i).phase in ("pending", "suspended")]
        if self.monitor:
            self._check(now)
        quantum = self.rules.quantum
        if quantum and self.waiting and (self.timer_at is None or self.timer_at > now + quantum):
            self.timer_at = now + quantum
            heapq.heappush(self.events, (now + quantum, _TIMER, -1, 0, len(self.events)))

    def _ordered(self, now: int) -> list[int]:
        """The waiting jobs in the policy's order (its key of the job's ``JobLife``, then
        submit time, then file order), the key computed with the state now."""
        lives = [self._life(i) for i in self.waiting]
        self.view.queue = [life.job for life in lives]
        self.view.running = [self._running_view(i) for i in sorted(self.running)]
        self.view.memo.clear()
        fn = self.policy.order_key
        if fn is None:
            keyed = [((life.job.submit, life.job.index), life.job.index) for life in lives]
        else:
            keyed = [(call_policy(self.policy, fn, life, self.view, "order key")  # type: ignore[arg-type]
                      + (life.job.submit, life.job.index), life.job.index) for life in lives]
        keyed.sort(key=lambda p: p[0])
        return [i for _, i in keyed]

    def _running_view(self, index: int) -> RunningJob:
        life = self._life(index)
        start = life.last_start if life.last_start is not None else life.since
        return RunningJob(life.job, start, life.alloc())

    # -- fitting --------------------------------------------------------------------------------

    def _usable(self, p: int, leaving: frozenset[int] = frozenset()) -> bool:
        """Processor ``p`` can take one more job's processes (after ``leaving`` go)."""
        limit = self.rules.resident
        return limit is None or self.resident[p] - (self.owner[p] in leaving) < limit

    def _free_processors(self) -> list[int]:
        return [p for p, o in enumerate(self.owner) if o < 0 and self._usable(p)]

    def _fit(self, life: JobLife, free: list[int], freed: tuple[int, ...] = ()
             ) -> tuple[int, ...] | None:
        """The lowest ``free`` processors a pending job runs on, if its other resources fit
        too (``freed``: per resource, what preempted jobs give back); else None."""
        request = life.job.request
        if len(free) < request[0]:
            return None
        for k in range(1, len(request)):
            if self.used[k] - (freed[k] if freed else 0) + request[k] > self.cap[k]:
                return None
        return tuple(free[:request[0]])

    # -- transitions, with the machine's books ---------------------------------------------------

    def _life(self, index: int) -> JobLife:
        life = self.lives[index]
        assert life is not None
        return life

    def _take(self, index: int, life: JobLife, others_too: bool) -> None:
        for p in life.processors:
            self.owner[p] = index
        self.used[0] += life.size
        if others_too:
            for p in life.processors:
                self.resident[p] += 1
            for k in range(1, len(self.used)):
                self.used[k] += life.job.request[k]
        self.running.add(index)

    def _release(self, index: int, life: JobLife, cpus_only: bool) -> None:
        for p in life.processors:
            self.owner[p] = -1
        self.used[0] -= life.size
        if not cpus_only:
            for p in life.processors:
                self.resident[p] -= 1
            for k in range(1, len(self.used)):
                self.used[k] -= life.job.request[k]

    def _start(self, index: int, life: JobLife, procs: tuple[int, ...], now: int,
               touched: set[int]) -> None:
        life.start(now, procs, dispatch=self._seconds(self.rules.dispatch, life, "cost dispatch"))
        self._take(index, life, others_too=True)
        self._dispatch(index, life)
        touched.add(index)

    def _resume(self, index: int, life: JobLife, now: int, touched: set[int]) -> None:
        life.resume(now, dispatch=self._seconds(self.rules.resume, life, "cost resume"))
        self._take(index, life, others_too=False)  # its processes and memory stayed there
        self._dispatch(index, life)
        touched.add(index)

    def _seconds(self, fn: Any, life: JobLife, what: str) -> int:
        """A cost in whole seconds: floored, at least 0."""
        value = call_policy(self.policy, fn, life, self.view, what)  # type: ignore[arg-type]
        return max(0, math.floor(value))

    def _dispatch(self, index: int, life: JobLife) -> None:
        self.version[index] += 1
        if life.phase == "dispatching":
            assert life.phase_end is not None
            self._push(life.phase_end, _DISPATCHED, index)
        else:
            self._schedule_completion(index, life)

    def _preempt(self, index: int, life: JobLife, now: int, touched: set[int]) -> None:
        if life.mechanism == "suspend":
            life.suspend(now)
            self._release(index, life, cpus_only=True)
        else:
            self._release(index, life, cpus_only=False)
            life.requeue(now)  # it restarts anywhere
        self.running.discard(index)
        self.version[index] += 1
        self.preemptions += 1
        touched.add(index)

    # -- preemption ------------------------------------------------------------------------------

    def _open_victims(self, touched: set[int]) -> list[int]:
        """The running jobs any candidate may preempt in this pass, in the victims' order:
        running (not dispatching), of a mechanism that preempts, under the limit, not
        protected, not started in this pass (the rule then decides, pair by pair)."""
        rules, view, policy = self.rules, self.view, self.policy
        out = []
        for v in self.running:
            victim = self._life(v)
            if (v in touched or victim.phase != "running" or victim.mechanism == "none"
                    or (rules.limit is not None and victim.preemptions.total() >= rules.limit)
                    or call_policy(policy, rules.keep, victim, view, "keep")):  # type: ignore[arg-type]
                continue
            out.append(v)
        out.sort(key=lambda v: (call_policy(policy, rules.victim_key, self._life(v), view,  # type: ignore[arg-type]
                                            "victims order"), v))
        return out

    def _try_preempt(self, index: int, cand: JobLife, now: int, touched: set[int],
                     open_: list[int]) -> bool:
        """Preempt for ``cand`` if victims it may preempt make room (the module's doc)."""
        if cand.phase == "suspended":
            holders = {self.owner[p] for p in cand.processors} - {-1}
            if not holders <= set(open_) or not all(
                    _pair(self.policy, self.rules.may_preempt, cand, self._life(v), self.view)
                    for v in sorted(holders)):
                return False
            chosen = sorted(holders)
        else:
            if self._fits_after(cand, open_) is None:
                return False  # not even every open victim would make room: no rule to ask
            chosen = []
            for v in open_:
                if not _pair(self.policy, self.rules.may_preempt, cand, self._life(v),
                             self.view):
                    continue
                chosen.append(v)
                if self._fits_after(cand, chosen) is not None:
                    break
            else:
                return False
            for v in reversed(list(chosen)):  # no victim the start does not need
                rest = [u for u in chosen if u != v]
                if self._fits_after(cand, rest) is not None:
                    chosen = rest
        for v in chosen:
            self._preempt(v, self._life(v), now, touched)
        if cand.phase == "suspended":
            self._resume(index, cand, now, touched)
        else:
            procs = self._fit(cand, self._free_processors())
            assert procs is not None, "the victims freed what the start needs"
            self._start(index, cand, procs, now, touched)
        return True

    def _fits_after(self, cand: JobLife, victims: list[int]) -> tuple[int, ...] | None:
        """Whether pending ``cand`` fits once ``victims`` are preempted: None if not, else
        the processors it would take (none named when counting them was enough)."""
        request = cand.job.request
        if self.rules.resident is None:  # any free processor will do: count, do not list
            cpus = self.used[0] - sum(self._life(v).size for v in victims)
            if self.cap[0] - cpus < request[0]:
                return None
            if len(request) == 1:
                return ()
        leaving = frozenset(v for v in victims if self._life(v).mechanism == "requeue")
        gone = frozenset(victims)
        free = [p for p, o in enumerate(self.owner)
                if (o < 0 or o in gone) and self._usable(p, leaving)]
        freed = [0] * len(self.cap)
        for v in leaving:
            for k, r in enumerate(self._life(v).job.request):
                freed[k] += r
        return self._fit(cand, free, tuple(freed))

    # -- the monitor and the result --------------------------------------------------------------

    def _check(self, now: int) -> None:
        """What every pass leaves, derived again from the jobs' lives."""
        used = [0] * len(self.cap)
        owner: dict[int, int] = {}
        resident = [0] * len(self.owner)
        # the jobs that hold anything: running ones, and suspended ones among the waiting
        for index in (*self.running, *self.waiting):
            life = self._life(index)
            alloc = life.alloc()
            for k, a in enumerate(alloc):
                used[k] += a
            if life.phase in HOLDS_CPUS:
                for p in life.processors:
                    if p in owner:
                        raise MonitorViolation(f"t={now}: processor {p} held by jobs "
                                               f"{owner[p]} and {life.job.id}", "capacity")
                    owner[p] = life.job.id
            if alloc[0] or life.phase == "suspended":
                for p in life.processors:
                    resident[p] += 1
        for k, (u, c) in enumerate(zip(used, self.cap, strict=True)):
            if u > c or u != self.used[k]:
                raise MonitorViolation(f"t={now}: policy {self.policy.name}: resource "
                                       f"{self.workload.resources[k]} in use {u} of {c} "
                                       f"(books say {self.used[k]})", "capacity")
        limit = self.rules.resident
        if limit is not None and max(resident, default=0) > limit:
            raise MonitorViolation(f"t={now}: more than {limit} jobs resident on a processor",
                                   "capacity")

    def _result(self) -> PreemptiveRun:
        records, preempted, processors = [], [], []
        for life in self.lives:
            assert life is not None and life.phase == "completed"
            first = next((s.start for s in life.segments), life.job.submit)
            end = life.segments[-1].end if life.segments else life.job.submit
            records.append(JobRecord(life.job, first, end, life.job.request))
            spent = {phase: sum(s.end - s.start for s in life.segments if s.phase == phase)
                     for phase in ("running", "suspended")}
            preempted.append(Preempted(
                ran=spent["running"] - life.lost // max(1, life.job.procs),
                suspensions=life.preemptions["suspend"], requeues=life.preemptions["requeue"],
                suspended=spent["suspended"], lost=life.lost, overhead=life.overhead,
                segments=tuple(life.segments)))
            processors.append(tuple(sorted({p for s in life.segments if s.phase == "running"
                                            for p in s.processors})))
        schedule = Schedule(records=tuple(records), capacities=self.cap,
                            resources=self.workload.resources, policy_name=self.policy.name,
                            passes=self.passes, workload=self.workload,
                            preempted=tuple(preempted), processors=tuple(processors))
        lives = tuple(life for life in self.lives if life is not None)
        return PreemptiveRun(schedule, lives, self.preemptions)


def _pair(policy: RuntimePolicy, rule: Any, cand: JobLife, victim: JobLife,
          state: PassState) -> bool:
    """The preemption rule for (``cand``, ``victim``); a failure is a bug report with its
    context, as ``call_policy``'s."""
    try:
        return bool(rule(cand, victim, state))
    except MonitorViolation:
        raise
    except Exception as exc:
        raise MonitorViolation(f"t={state.now}: policy {policy.name}: the preemption rule "
                               f"failed for jobs {cand.job.id} and {victim.job.id}: "
                               f"{type(exc).__name__}: {exc}", "well-defined") from exc
