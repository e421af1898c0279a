"""The event loop of a preemptive policy (papers/003): jobs are suspended, checkpointed or
requeued so that others run, every job's life kept by ``lifecycle.JobLife``.

The rigid loop (``simulator.py``) stays as it is: a policy without preemption never comes
here. This loop runs rigid jobs with first-fit starts (``reserve 0``; ``backfill none`` stops
at the first job that does not fit) and ``PreemptionRules``: which mechanism each job has,
which jobs are protected now (``keep``), the costs, a limit on preemptions per job, the most
jobs resident on one processor, a quantum, and one of two ways to preempt:

- **a rule** (``preempt when COND``, the paper's LSF-PREEMPT, selective suspension, Slurm's
  partition priorities): a waiting job preempts running ones for which the rule holds;
- **the order** (``preempt by order``, the paper's LSF-MIG, least attained service, SRPT,
  multilevel feedback): each pass selects the jobs that run from every active job, running
  ones included, in the policy's order; the running jobs left out are preempted.

Processors have identities: a job runs on a set of them, a suspended job keeps its processes
(and its memory and other resources) there and resumes there only. A checkpointing job keeps
its processors busy for ``cost checkpoint`` seconds, then releases everything and is stopped;
a stopped (migratable) job restarts anywhere at its size. A job that preempts checkpointing
jobs **claims** the processors (and the other resources) they will release, and starts when
they are all free: no other job takes what is claimed. Resources a checkpoint end releases go
first to the claims still waiting for them, in the order the claims were made.

At each instant: all completions, then the ends of dispatches, then the ends of checkpoints,
then the submissions (file order), then a timer; then one pass:

0. **Claims**: each claim whose processors and resources are all free starts its job.
1. **Resume**: each suspended job (in policy order) whose processors are all free resumes.
   A suspended job never waits behind a pending one for processors it already holds a
   claim on (else FCFS could wait for ever on memory the suspended jobs hold).
2. **Start**: the pending and stopped jobs in policy order, each on the lowest free processors
   where it fits (every resource; at most ``resident`` jobs' processes per processor);
   ``backfill none`` stops at the first that does not fit.
3. **Preempt**, by a rule: each job still waiting, in policy order, looks for victims among
   the running jobs: not protected (``keep``), not of mechanism ``none``, under the
   preemption limit, and the rule holding for (candidate, victim). They are taken in the
   victims' order until the candidate fits (a suspended candidate: until its own processors
   are free; it needs none if earlier preemptions of the pass freed them), then each victim
   the start does not need is dropped again (last taken first). If it fits, the victims are
   preempted (suspended or requeued: their cpus free at once, a suspended job's other
   resources stay held; checkpointed: busy until the checkpoint ends) and the candidate
   starts, resumes or claims in the same pass. A job started or preempted in this pass is
   neither a victim nor a candidate again in it.

   By the order, steps 1 to 3 are one selection instead: the running jobs that cannot be
   preempted now (protected, mechanism ``none``, at the limit, dispatching, checkpointing)
   keep what they hold; then every other active job, in the policy's order, is selected if
   it fits beside those and the jobs selected before it (a running or suspended job on its
   own processors, a pending or stopped one on any; the resources of jobs being
   checkpointed count as free, to be claimed). With ``backfill none`` no pending or stopped
   job after the first that does not fit is selected, but running and suspended ones still
   are where they fit: preempting them would not make room for it, and a suspended job
   never waits behind a pending one for resources it holds. Running jobs not selected are
   preempted; selected suspended jobs resume,
   selected pending and stopped ones start on the lowest processors free now, then on those
   being checkpointed (a claim).
"""

from __future__ import annotations

import heapq
import math
import operator
from collections.abc import Callable, Iterable
from fractions import Fraction
from typing import Any, Literal

from attrs import frozen

from schedc.dsl.number_text import MAX_TIME
from schedc.dsl.semantics.numbers import EvaluationError
from schedc.dsl.verify.vocabulary import KEPT, PREEMPTIVE_PASS
from schedc.runtime.engine.adaptive import committed, fill, give_leftover
from schedc.runtime.engine.lifecycle import HOLDS_CPUS, JobLife, Mechanism
from schedc.runtime.engine.monitor import MonitorViolation, call_policy
from schedc.runtime.engine.policy import PassState, PreemptionRules, RuntimePolicy, never
from schedc.runtime.engine.preemptive_books import Books
from schedc.runtime.engine.preemptive_checks import Assumptions, FirstPassChecks
from schedc.runtime.engine.schedule import JobRecord, Preempted, PreemptionTotals, Schedule
from schedc.runtime.engine.simulator import machine_for
from schedc.runtime.jobs import Job, RunningJob
from schedc.runtime.workloads.state_file import (
    InitialState,
    complete_histories,
    job_path,
    located_in_state,
)
from schedc.runtime.workloads.workload import Workload, WorkloadError

WAITING = ("pending", "suspended", "stopped")  # the phases of ``_Loop.waiting``
# preemptions with no job completed in between after which a run stops: the policy livelocks
# (least attained service with requeues, say, preempts every restart before it can end)
STALL_PREEMPTIONS = 100_000


class PassLimit(Exception):
    """A run stopped at the bound on its passes (``simulate_preemptive``'s ``max_passes``,
    `schedc run --max-passes`): a bound the user set, not a fault of the policy."""

    def __init__(self, policy: str, limit: int, now: int, completed: int, jobs: int) -> None:
        super().__init__(f"policy {policy} stopped at t={now} after {limit:,} passes, "
                         f"{completed:,} of {jobs:,} jobs completed")
        self.policy, self.limit, self.now = policy, limit, now
        self.completed, self.jobs = completed, jobs


ActionKind = Literal["start", "resume", "claim", "suspend", "checkpoint", "requeue"]


@frozen
class Action:
    """One thing a pass did, for ``simulate_preemptive``'s ``on_pass``: a job started,
    resumed or claimed ``processors`` (where it runs, or will), or was preempted off them
    (``checkpoint``: by checkpoint or malleable, the processors it held). ``job`` is the
    job's id (``Job.id``)."""

    kind: ActionKind
    job: int
    processors: tuple[int, ...]


@frozen
class PreemptiveRun:
    """A preemptive run: the schedule (a job's record: its first start, its completion, its
    request) and every job's life (``JobLife``: phases, segments, preemptions, work)."""

    schedule: Schedule
    lives: tuple[JobLife, ...]
    preemptions: int


class _Claim:
    """A waiting job's claim: the processors it will start on (some still held by
    checkpointing jobs) and, per resource after cpus, what it still waits to be released."""

    __slots__ = ("processors", "outstanding")

    def __init__(self, processors: tuple[int, ...], outstanding: list[int]) -> None:
        self.processors = processors
        self.outstanding = outstanding


def _exact(op: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    """``op``, two fractions compared by their cross products as ``Fraction`` does, without
    its dispatch on types (the expansion factors of a rule's sides)."""
    def compare(a: Any, b: Any) -> bool:
        if type(a) is Fraction and type(b) is Fraction:
            return op(a.numerator * b.denominator, a.denominator * b.numerator)
        return op(a, b)
    return compare


_COMPARE = {name: _exact(op) for name, op in (
    ("<", operator.lt), ("<=", operator.le), (">", operator.gt), (">=", operator.ge),
    ("==", operator.eq), ("!=", operator.ne))}
_UNSEEN = object()  # no side computed yet in this pass
# event kinds, in handling order within an instant
_COMPLETE, _DISPATCHED, _CHECKPOINTED, _TIMER = 0, 1, 2, 3


def simulate_preemptive(policy: RuntimePolicy, rules: PreemptionRules, workload: Workload,
                        *, monitor: bool = True,
                        progress: Callable[[int, int], None] | None = None,
                        stall: int = STALL_PREEMPTIONS, initial: InitialState | None = None,
                        on_pass: Callable[[int, tuple[Action, ...]], None] | None = None,
                        max_passes: int | None = None) -> PreemptiveRun:
    """Replay ``workload`` under ``policy`` and ``rules`` (the module's doc); ``progress``
    gets (jobs completed, jobs) about a hundred times; ``stall`` preemptions with no job
    completed stop the run as a livelock; a pass past ``max_passes`` raises ``PassLimit``.

    With ``initial`` (``state_file.py``, ``workload`` holding its jobs at their indices, as
    ``initial.workload`` does) the machine starts at ``initial.now`` with the state's jobs in
    their phases (``JobLife.restore`` from their histories: running jobs on their processors
    end when their work is done, suspended ones keep their processes and other resources on
    theirs), the queued, suspended and stopped jobs waiting in that order (a tie-break; the
    policy's order decides), and a pass at ``now``; any other job arrives at its submit time
    (>= now). A job's life, and so the run's counts of service and preemptions, includes
    the history it was restored with. ``state_problem`` says first why a state cannot be
    replayed (a ``ValueError`` here).

    ``on_pass`` gets, after every pass and before the monitor checks it, its instant and
    what it did (``Action``), in the order done."""
    if (policy.size is not None and not rules.select) or policy.depth != 0 or (
            policy.backfill not in ("none", "first_fit")) or policy.tuning is not None:
        raise ValueError(f"policy {policy.name}: a preemptive pass takes `reserve 0` and "
                         "backfill `first_fit` or `none`, and sizes only by the order")
    if initial is not None:
        problem = state_problem(policy, initial, rules)
        if problem is not None:
            raise ValueError(f"{problem[0]} ({problem[1]})")
        machine_for(policy, workload, initial)  # the state's machine and jobs, or an error
    loop = _Loop(policy, rules, workload, monitor, progress, stall, on_pass)
    loop.max_passes = max_passes
    try:
        return loop.run(initial)
    except MonitorViolation as exc:  # say where the run had left the proofs' assumptions
        if loop.assumed is not None:
            loop.assumed.note(exc)
        raise


def state_problem(policy: RuntimePolicy, state: InitialState,
                  rules: PreemptionRules | None = None) -> tuple[str, str] | None:
    """Why ``policy`` (``rules``: its preemption rules, by default ``policy.preemption``)
    cannot replay ``state``: (message, help), or None. The rigid simulator replays no
    preempted job nor history; the preemptive one needs each job's phase to agree with its
    mechanism, no more jobs resident on a processor than the policy allows, and no kept
    sizes or checks of reservations (its passes make none)."""
    problem = _state_problem(policy, state, rules)
    return None if problem is None else problem[:2]


def state_error(policy: RuntimePolicy, state: InitialState,
                rules: PreemptionRules | None = None) -> WorkloadError | None:
    """``state_problem`` as a located error: at the job or field it concerns, in the state's
    file (its line and column, when the state was read from one)."""
    problem = _state_problem(policy, state, rules)
    return None if problem is None else located_in_state(state, *problem)


def _state_problem(policy: RuntimePolicy, state: InitialState,
                   rules: PreemptionRules | None
                   ) -> tuple[str, str, tuple[str | int, ...]] | None:
    """``state_problem``'s (message, help) and where in the state it is (a path into its
    JSON)."""
    rules = rules if rules is not None else policy.preemption
    if rules is None:
        if PREEMPTIVE_PASS in state.checks:
            return (f"the state asks for `check` {PREEMPTIVE_PASS}, but policy {policy.name} "
                    "does not preempt",
                    "replay it with the preemptive policy it was found for, or remove the "
                    "check", ("check",))
        moldable = next((rj.job for rj in state.running if rj.job.moldable is not None), None)
        if moldable is not None:
            return (f"job {moldable.id} runs moldable in the state, but policy {policy.name} "
                    "does not preempt: the rigid simulator runs a job at the size it started "
                    "with, as a rigid one",
                    "remove `min_size`, `max_size` and `speedup` from the running jobs, or "
                    "replay it with a preemptive policy", (*job_path(state, moldable.index),
                                                           "min_size"))
        if state.has_history:
            return (f"policy {policy.name} does not preempt, and the state holds preempted "
                    "jobs or a job's history: the rigid simulator has no suspended or "
                    "stopped jobs, processors or service acquired",
                    "replay it with a policy that has `preempt when` or `preempt by order`, "
                    "or remove `suspended`, `stopped` and the history fields (processors, "
                    "acquired, preemptions, progress, last_start)",
                    ("suspended",) if state.suspended else ("stopped",) if state.stopped
                    else ())
        return None
    if state.sizes:
        return (f"the state gives queued jobs a `size`, but policy {policy.name} preempts: "
                "its passes keep no size chosen before",
                "remove the `size` fields of the queued jobs",
                (*job_path(state, min(state.sizes)), "size"))
    if state.active not in (None, policy.name):
        return (f"the state's active candidate `{state.active}` is not policy "
                f"{policy.name}: a preemptive policy does not tune itself",
                "remove `active` from the state", ("active",))
    if KEPT in state.checks:
        return (f"the state asks for `check` {KEPT}, but policy {policy.name} preempts: its "
                "passes reserve nothing to keep",
                f"remove `check` from the state, or check {PREEMPTIVE_PASS}", ("check",))
    histories = complete_histories(state)
    phases: list[tuple[str, Any]] = [
        *(("running", rj.job) for rj in state.running),
        *(("queue", job) for job in state.queue if job.index in histories),
        *(("suspended", job) for job in state.suspended),
        *(("stopped", job) for job in state.stopped)]
    allowed: dict[str, tuple[Mechanism, ...]] = {
        "suspended": ("suspend",), "stopped": ("checkpoint", "malleable")}
    for phase, job in phases:
        try:
            mechanism = rules.mechanism(job)
        except EvaluationError:  # the run stops where it meets the job (`well-defined`)
            continue
        ok = allowed.get(phase)
        if ok is not None and mechanism not in ok:
            return (f"job {job.id} is {phase} in the state, but policy {policy.name} gives it "
                    f"mechanism {mechanism}: only a job of mechanism {' or '.join(ok)} is "
                    f"{phase}",
                    "put the job where its mechanism can leave it (a suspended job: "
                    "`mechanism suspend`; a stopped one: `checkpoint` or `malleable`)",
                    (*job_path(state, job.index), "id"))
        if histories[job.index].preemptions and mechanism == "none":
            return (f"job {job.id} was preempted {histories[job.index].preemptions} times, "
                    f"but policy {policy.name} gives it mechanism none: it is never "
                    "preempted", "give it `preemptions: 0`, or a mechanism that preempts",
                    (*job_path(state, job.index), "preemptions"))
    if rules.resident is not None:
        resident = [0] * state.capacities[0]
        holders = (*(rj.job.index for rj in state.running),
                   *(job.index for job in state.suspended))
        for index in holders:
            for p in histories[index].processors:
                resident[p] += 1
        most = max(resident, default=0)
        if most > rules.resident:
            p = resident.index(most)
            # the last job in the file with processes on it: the one past the limit
            last = [i for i in holders if p in histories[i].processors][-1]
            return (f"processor {p} holds the processes of {most} jobs in the state, more "
                    f"than policy {policy.name}'s `resident` {rules.resident}",
                    "give the suspended jobs other processors, or fewer of them",
                    (*job_path(state, last), "processors"))
    return None


class _Loop:
    def __init__(self, policy: RuntimePolicy, rules: PreemptionRules, workload: Workload,
                 monitor: bool, progress: Callable[[int, int], None] | None,
                 stall: int, on_pass: Callable[[int, tuple[Action, ...]], None] | None = None
                 ) -> None:
        self.policy, self.rules, self.workload, self.monitor = policy, rules, workload, monitor
        self.progress, self.stall = progress, stall
        # what each pass did, for ``on_pass`` (``recording``: tested before anything is built)
        self.on_pass = on_pass
        self.recording = on_pass is not None
        self.actions: list[Action] = []
        # a replayed state's first pass, checked for what `schedc verify` proves of it
        self.first_checks: FirstPassChecks | None = None
        # what schedc verify's proofs assume of each pass's state, checked as it starts
        self.assumed = Assumptions(self) if monitor else None
        # the open victims of a rule's step 3 (by index) with their processors, and those
        self._open_masks: list[tuple[int, int]] = []
        self._open_bits = 0
        self.completed = 0
        cap = tuple(c if c is not None else w
                    for c, w in zip(policy.capacities, workload.capacities, strict=True))
        self.cap = cap
        k = len(cap)
        self.used = [0] * k
        self.owner = [-1] * cap[0]  # processor -> the job holding its cpu
        self.resident = [0] * cap[0]  # processor -> jobs with processes there
        # the same as bit masks (bit p: processor p), so that a pass tests and counts sets
        # of processors without visiting each: held cpus, claimed ones, and (under
        # `resident`) those at the limit and those over it
        self.all_bits = (1 << cap[0]) - 1
        self.busy_bits = self.claim_bits = self.full_bits = self.over_bits = 0
        self._bits_of: dict[int, tuple[tuple[int, ...], int]] = {}  # job -> (procs, mask)
        # claims (the module's doc), in the order they were made; per resource after cpus:
        # what claims hold of the free resources, what they still wait for, and what
        # checkpointing jobs hold (always at least what claims wait for)
        self.claims: dict[int, _Claim] = {}
        self.claim_of = [-1] * cap[0]  # processor -> the job claiming it
        self.claimed, self.outstanding, self.checkpointing = [0] * k, [0] * k, [0] * k
        self.lives: list[JobLife | None] = [None] * len(workload.jobs)
        # the monitor's own books, from the lives (told of their moves)
        self.books = Books(len(cap), cap[0], rules.resident)
        self.waiting: list[int] = []  # pending, suspended and stopped, in the last pass's order
        self.running: set[int] = set()  # holding cpus: dispatching, running, checkpointing
        self.events: list[tuple[int, int, int, int, int]] = []  # (t, kind, index, version, seq)
        self.version = [0] * len(workload.jobs)
        self.timer_at: int | None = None
        self.passes = self.preemptions = 0
        self.max_passes: int | None = None  # a pass past it stops the run (``PassLimit``)
        # processor-seconds claimed while free (held idle for a claim), up to ``idle_at``;
        # the most jobs resident on one processor
        self.held_idle = self.idle_claimed = self.idle_at = self.most_resident = 0
        self.stalled = 0  # preemptions since the last completion
        self.stall_since = 0  # the last completion's time
        self.view = PassState(now=0, queue=[], running=[], capacity=cap, used=self.used)
        self.sizes: dict[int, int] = {}  # `size`: per job, its value in this pass
        # per job, its order key when it reads nothing but the job (`job.size` reads the
        # running jobs): then the same in every pass
        self.static_keys: dict[int, tuple] | None = (
            {} if policy.order_static and not rules.reads_jobs else None)
        # a split rule's sides (``rule_split.py``) per job, in this pass
        self.cand_sides: dict[int, tuple | None] = {}
        self.victim_sides: dict[int, tuple | None] = {}
        # its checks, each with its comparison
        self.checks = () if rules.split is None else tuple(
            (ci, None if op is None else _COMPARE[op], vi) for ci, op, vi in rules.split.checks)

    # -- the event loop -----------------------------------------------------------------------

    def run(self, initial: InitialState | None = None) -> PreemptiveRun:
        placed = self._place(initial) if initial is not None else set()
        if initial is not None and self.monitor and PREEMPTIVE_PASS in initial.checks:
            self.first_checks = FirstPassChecks(self)
            self.recording = True
        arrivals = sorted((j for j in self.workload.jobs if j.index not in placed),
                          key=lambda j: (j.submit, j.index))
        nxt, events = 0, self.events
        while nxt < len(arrivals) or events:
            times = [events[0][0]] if events else []
            if nxt < len(arrivals):
                times.append(arrivals[nxt].submit)
            now = min(times)
            self.held_idle += (now - self.idle_at) * self.idle_claimed
            self.idle_at = now
            # a pass only where something happened (the module's doc): the completion of a
            # job preempted since, or a timer a nearer one replaced, is no event
            happened = False
            while events and events[0][0] == now:
                _, kind, index, version, _ = heapq.heappop(events)
                if kind == _TIMER:
                    if now == self.timer_at:
                        self.timer_at = None
                        happened = True
                elif version == self.version[index]:  # else the job moved on since
                    self._event(kind, index, now)
                    happened = True
            while nxt < len(arrivals) and arrivals[nxt].submit == now:
                job = arrivals[nxt]
                self.lives[job.index] = self._watched(JobLife(job, self._mechanism(job, now)))
                self.waiting.append(job.index)
                nxt += 1
                happened = True
            if not happened:
                continue
            self._pass(now)
            self.idle_claimed = sum(1 for claim in self.claims.values()
                                    for p in claim.processors
                                    if self.owner[p] < 0) if self.claims else 0
            if self.waiting and not self.running and nxt == len(arrivals):
                raise MonitorViolation(
                    f"t={now}: policy {self.policy.name}: {len(self.waiting)} jobs wait, none "
                    "runs and none can start: the policy deadlocks (what waiting jobs hold, "
                    "such as a suspended job's memory, keeps the others out)")
        if self.waiting or self.running:
            raise MonitorViolation(f"policy {self.policy.name}: run ended with "
                                   f"{len(self.waiting)} waiting and {len(self.running)} "
                                   "running jobs")
        return self._result()

    def _place(self, initial: InitialState) -> set[int]:
        """The state's jobs in their phases at its instant, with the machine's books, and a
        pass there (a timer event); the indices of the jobs placed."""
        now = initial.now
        histories = complete_histories(initial)

        def restored(job: Any, phase: Any) -> JobLife:
            h = histories[job.index]
            life = JobLife.restore(job, self._mechanism(job, now), phase, now,
                                   processors=h.processors, size=h.size, acquired=h.acquired,
                                   preemptions=h.preemptions, progress=h.progress,
                                   last_start=h.last_start)
            self.lives[job.index] = self._watched(life)
            return life

        for rj in initial.running:
            index = rj.job.index
            life = restored(rj.job, "running")
            if life.completion_time() < now:
                raise ValueError(f"job {rj.job.id} of the state completed at "
                                 f"{life.completion_time()}, before now {now}")
            self._take(index, life, others_too=True)
            self._dispatch(index, life)  # its completion
        for job in initial.queue:
            if job.index in histories:
                restored(job, "pending")
            else:
                self.lives[job.index] = self._watched(JobLife(job, self._mechanism(job, now)))
        for job in initial.suspended:
            life = restored(job, "suspended")
            for p in life.processors:  # its processes, memory and other resources stay
                self.resident[p] += 1
                self.most_resident = max(self.most_resident, self.resident[p])
            self._limit_bits(life.processors, _mask(life.processors))
            for k in range(1, len(self.used)):
                self.used[k] += job.request[k]
        for job in initial.stopped:
            restored(job, "stopped")
        self.waiting = [job.index for job in (*initial.queue, *initial.suspended,
                                              *initial.stopped)]
        self.idle_at = self.stall_since = now
        self.timer_at = now  # the state's pass: a timer, so that it is an event
        heapq.heappush(self.events, (now, _TIMER, -1, 0, len(self.events)))
        return {*(rj.job.index for rj in initial.running), *self.waiting}

    def _mechanism(self, job: Job, now: int) -> Mechanism:
        """``job``'s mechanism, chosen once: at its submission (a state's job: at the state's
        instant), under the monitor (a condition that fails stops the run: `well-defined`)."""
        self.view.now = now  # the instant the stop names
        return call_policy(self.policy, lambda j, _: self.rules.mechanism(j), job, self.view,
                           "mechanism")

    def _watched(self, life: JobLife) -> JobLife:
        """``life``, its moves told to the monitor's books."""
        if self.monitor:
            life.watch = self.books.moved
        return life

    def _event(self, kind: int, index: int, now: int) -> None:
        life = self._life(index)
        self.version[index] += 1
        if kind == _COMPLETE:
            life.finish(now)
            self._release(index, life, cpus_only=False)
            self._bits_of.pop(index, None)
            if self.static_keys is not None:
                self.static_keys.pop(index, None)
            self.running.discard(index)
            self.completed += 1
            self.stalled, self.stall_since = 0, now
            n = len(self.lives)
            if self.progress is not None and (self.completed % max(1, n // 100) == 0
                                              or self.completed == n):
                self.progress(self.completed, n)
        elif kind == _CHECKPOINTED:
            life.checkpointed(now)
            self._stopped(index, life, released_late=True)
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
        if self.max_passes is not None and self.passes > self.max_passes:
            raise PassLimit(self.policy.name, self.max_passes, now, self.completed,
                            len(self.lives))
        self.view.now = now
        self.sizes.clear()
        self.cand_sides.clear()
        self.victim_sides.clear()
        checks, self.first_checks = self.first_checks, None
        if checks is not None:
            checks.before(now)
        if self.assumed is not None:
            self.assumed.before(now)
        touched: set[int] = set()  # started, resumed or preempted in this pass
        running_before = set(self.running)
        if self.claims:  # 0. claims
            self._start_claims(now, touched)
        step = self._select if self.rules.select else self._by_rule
        order = step(now, touched)
        waiting = set(order)
        preempted = sorted(i for i in running_before
                           if i not in self.running and i not in waiting)
        self.waiting = [i for i in (*order, *preempted) if self._life(i).phase in WAITING]
        if self.recording:
            actions, self.actions = tuple(self.actions), []
            if self.on_pass is not None:
                self.on_pass(now, actions)
            if checks is not None:
                checks.after(now, actions)
                self.recording = self.on_pass is not None
        if self.monitor:
            if self.assumed is not None:
                self.assumed.look()  # before the books count the moves
            self._check(now)
        quantum = self.rules.quantum
        if quantum and self.waiting and (self.timer_at is None or self.timer_at > now + quantum):
            self.timer_at = now + quantum
            heapq.heappush(self.events, (now + quantum, _TIMER, -1, 0, len(self.events)))

    def _by_rule(self, now: int, touched: set[int]) -> list[int]:
        """Steps 1 to 3 of the module's doc; the waiting jobs in policy order."""
        order = self._ordered([i for i in self.waiting if i not in touched])
        open_order = [i for i in order if i not in self.claims]
        for index in open_order:  # 1. resume: where its processors are neither held nor claimed
            life = self._life(index)
            if life.phase == "suspended" and not (
                    self._bits(index, life) & (self.busy_bits | self.claim_bits)):
                self._resume(index, life, now, touched)
        free = self._free_bits()  # a start takes the lowest
        count = free.bit_count()
        for index in open_order:  # 2. start
            life = self._life(index)
            if life.phase not in ("pending", "stopped"):
                continue
            if self._fit(life, count):
                procs = tuple(_lowest(free, self._cpus(life)))
                self._start(index, life, procs, now, touched)
                free &= ~_mask(procs)
                count -= len(procs)
            elif self.policy.backfill == "none":
                break
        if self.rules.may_preempt is not never:  # 3. preempt
            open_ = self._open_victims(touched)
            self._set_open(open_)
            for index in open_order:
                life = self._life(index)
                if not open_:
                    break
                # a job of ``open_order`` not touched in this pass is still waiting, unclaimed
                if index not in touched and self._try_preempt(index, life, now, touched,
                                                              open_):
                    open_ = [v for v in open_ if v not in touched]
                    self._set_open(open_)
        return order

    def _ordered(self, indices: Iterable[int]) -> list[int]:
        """``indices`` in the policy's order (its key of the job's ``JobLife``, then submit
        time, then file order), the key computed with the state now."""
        lives = [self._life(i) for i in indices]
        if self.rules.reads_jobs:  # else no formula looks at them
            self.view.queue = [self._life(i).job for i in self.waiting]
            self.view.running = [self._running_view(i) for i in sorted(self.running)]
        self.view.memo.clear()
        cache = self.static_keys
        if cache is None:
            keys = self._keys(lives)
        else:  # a job's key, computed once, is its key in every pass
            missing = [life for life in lives if life.job.index not in cache]
            for life, key in zip(missing, self._keys(missing), strict=True):
                cache[life.job.index] = key
            keys = [cache[life.job.index] for life in lives]
        keys.sort()
        return [key[-1] for key in keys]

    def _keys(self, lives: list[JobLife]) -> list[tuple]:
        """The policy's key of each of ``lives`` now, then its submit time and index: keys
        differ, and sorted they are the order."""
        fn, view = self.policy.order_key, self.view
        if fn is None:
            return [(life.job.submit, life.job.index) for life in lives]
        try:
            return [fn(life, view) + (life.job.submit, life.job.index)  # type: ignore[arg-type]
                    for life in lives]
        except Exception:  # noqa: BLE001 - again one by one, to report it as it is
            return [call_policy(self.policy, fn, life, view, "order key")  # type: ignore[arg-type]
                    + (life.job.submit, life.job.index) for life in lives]

    def _running_view(self, index: int) -> RunningJob:
        life = self._life(index)
        start = life.last_start if life.last_start is not None else life.since
        return RunningJob(life.job, start, life.alloc())

    # -- fitting --------------------------------------------------------------------------------

    def _usable(self, p: int, leaving: frozenset[int] = frozenset()) -> bool:
        """Processor ``p`` can take one more job's processes (after ``leaving`` go)."""
        limit = self.rules.resident
        return limit is None or self.resident[p] - (self.owner[p] in leaving) < limit

    def _usable_bits(self, leaving: int = 0) -> int:
        """The processors that can take one more job's processes once the jobs holding the
        processors ``leaving`` go (``_usable``, as a mask)."""
        if self.rules.resident is None:
            return self.all_bits
        return (self.all_bits & ~self.full_bits & ~leaving) | (leaving & ~self.over_bits)

    def _free_bits(self) -> int:
        """The processors neither held nor claimed where a job can go."""
        return self.all_bits & ~self.busy_bits & ~self.claim_bits & self._usable_bits()

    def _bits(self, index: int, life: JobLife) -> int:
        """The mask of ``life``'s processors, kept while it keeps the same ones."""
        procs = life.processors
        cached = self._bits_of.get(index)
        if cached is not None and cached[0] is procs:
            return cached[1]
        bits = _mask(procs)
        self._bits_of[index] = (procs, bits)
        return bits

    def _bits_all(self, indices: Iterable[int]) -> int:
        out = 0
        for i in indices:
            out |= self._bits(i, self._life(i))
        return out

    def _limit_bits(self, procs: tuple[int, ...], bits: int) -> None:
        """Under `resident`: whether each of ``procs`` (the mask ``bits``) is at the limit,
        or over it, again."""
        limit = self.rules.resident
        if limit is None:
            return
        resident = self.resident
        # few processors are at the limit: build their masks only
        full = _mask(p for p in procs if resident[p] >= limit)
        over = _mask(p for p in procs if resident[p] > limit) if full else 0
        self.full_bits = (self.full_bits & ~bits) | full
        self.over_bits = (self.over_bits & ~bits) | over

    def _free(self, k: int) -> int:
        """Resource ``k`` (after cpus) neither held nor claimed."""
        return self.cap[k] - self.used[k] - self.claimed[k]

    def _cpus(self, life: JobLife) -> int:
        """The cpus a waiting job starts on (at least; `leftover` may add): a stopped
        migratable job's size, else the policy's `size` (its request without one)."""
        if life.phase == "stopped" and life.mechanism != "malleable":
            return life.size
        if self.rules.size is None:
            return life.job.request[0]
        index = life.job.index
        n = self.sizes.get(index)
        if n is None:
            n = self.sizes[index] = self._sized(life)
        return n

    def _sized(self, life: JobLife) -> int:
        """The policy's `size` of ``life`` now, checked against the job's range."""
        n = call_policy(self.policy, self.rules.size, life, self.view, "size")  # type: ignore[arg-type]
        job = life.job
        if not job.min_procs <= n <= min(job.max_procs, self.cap[0]):
            raise MonitorViolation(
                f"t={self.view.now}: policy {self.policy.name}: size {n} of job {job.id} "
                f"outside its range [{job.min_procs}, {min(job.max_procs, self.cap[0])}]",
                "size-bounds")
        return n

    def _fit(self, life: JobLife, free: int, freed: tuple[int, ...] = ()) -> bool:
        """A pending or stopped job fits on ``free`` processors (a count) if its other
        resources fit too (``freed``: per resource, what preempted jobs give back)."""
        request, n = life.job.request, self._cpus(life)
        if free < n:
            return False
        for k in range(1, len(request)):
            if request[k] > self._free(k) + (freed[k] if freed else 0):
                return False
        return True

    # -- transitions, with the machine's books ---------------------------------------------------

    def _life(self, index: int) -> JobLife:
        life = self.lives[index]
        assert life is not None
        return life

    def _take(self, index: int, life: JobLife, others_too: bool) -> None:
        for p in life.processors:
            self.owner[p] = index
        self.busy_bits |= self._bits(index, life)
        self.used[0] += life.size
        if others_too:
            for p in life.processors:
                self.resident[p] += 1
                if self.resident[p] > self.most_resident:
                    self.most_resident = self.resident[p]
            self._limit_bits(life.processors, self._bits(index, life))
            for k in range(1, len(self.used)):
                self.used[k] += life.job.request[k]
        self.running.add(index)

    def _release(self, index: int, life: JobLife, cpus_only: bool) -> None:
        for p in life.processors:
            self.owner[p] = -1
        self.busy_bits &= ~self._bits(index, life)
        self.used[0] -= life.size
        if not cpus_only:
            for p in life.processors:
                self.resident[p] -= 1
            self._limit_bits(life.processors, self._bits(index, life))
            for k in range(1, len(self.used)):
                self.used[k] -= life.job.request[k]

    def _start(self, index: int, life: JobLife, procs: tuple[int, ...], now: int,
               touched: set[int]) -> None:
        life.start(now, procs, dispatch=self._seconds(self.rules.dispatch, life, "cost dispatch"))
        self._take(index, life, others_too=True)
        self._dispatch(index, life)
        touched.add(index)
        if self.recording:
            self.actions.append(Action("start", life.job.id, life.processors))

    def _resume(self, index: int, life: JobLife, now: int, touched: set[int]) -> None:
        life.resume(now, dispatch=self._seconds(self.rules.resume, life, "cost resume"))
        self._take(index, life, others_too=False)  # its processes and memory stayed there
        self._dispatch(index, life)
        touched.add(index)
        if self.recording:
            self.actions.append(Action("resume", life.job.id, life.processors))

    def _seconds(self, fn: Any, life: JobLife, what: str) -> int:
        """A cost in whole seconds: floored, at least 0. A cost that would end its phase
        past MAX_TIME (10^15 s, the times schedc holds exactly: a float metric of a later
        one would be wrong, or overflow) stops the run, naming the job and the clause; a
        constant one is refused before (rule 4 of dsl/params.py)."""
        value = call_policy(self.policy, fn, life, self.view, what)  # type: ignore[arg-type]
        seconds = max(0, math.floor(value))
        now = self.view.now
        if seconds and seconds > MAX_TIME - now:
            shown = f"{seconds:,}" if seconds <= MAX_TIME else f"{float(value):.6g}" if (
                seconds < 2 ** 1000) else f"at least 10^{len(str(seconds)) - 1:,}"
            raise MonitorViolation(
                f"t={now}: policy {self.policy.name}: `{what}` is {shown} s for job "
                f"{life.job.id}: its {what.split()[-1]} would end past 10^15 s, the times "
                "schedc holds exactly (docs/reference/limits.md)")
        return seconds

    def _dispatch(self, index: int, life: JobLife) -> None:
        self.version[index] += 1
        if life.phase == "dispatching":
            assert life.phase_end is not None
            self._push(life.phase_end, _DISPATCHED, index)
        else:
            self._schedule_completion(index, life)

    def _preempt(self, index: int, life: JobLife, now: int, touched: set[int]) -> None:
        self.version[index] += 1
        self.preemptions += 1
        self.stalled += 1
        if self.stalled > self.stall:
            raise MonitorViolation(
                f"t={now}: policy {self.policy.name}: {self.stall:,} preemptions and no "
                f"job completed since t={self.stall_since}: the policy livelocks, preempting "
                "jobs before they can end (protect a job's first minutes with `keep`, cap "
                "`limit preemptions`, or checkpoint instead of requeue)")
        touched.add(index)
        if self.recording:  # the processors it held (a requeue forgets them)
            kind = "requeue" if life.mechanism == "requeue" else (
                "suspend" if life.mechanism == "suspend" else "checkpoint")
            self.actions.append(Action(kind, life.job.id, life.processors))
        if life.mechanism == "suspend":
            life.suspend(now)
            self._release(index, life, cpus_only=True)
        elif life.mechanism in ("checkpoint", "malleable"):
            life.checkpoint(now, self._seconds(self.rules.checkpoint, life, "cost checkpoint"))
            if life.phase == "stopped":
                self._stopped(index, life, released_late=False)
                return
            for k in range(1, len(self.cap)):
                self.checkpointing[k] += life.job.request[k]
            assert life.phase_end is not None
            self._push(life.phase_end, _CHECKPOINTED, index)
            return  # it keeps its processors busy until then
        else:
            self._release(index, life, cpus_only=False)
            life.requeue(now)  # it restarts anywhere
        self.running.discard(index)

    def _stopped(self, index: int, life: JobLife, released_late: bool) -> None:
        """A checkpointed job releases everything; what it held past its preemption goes
        first to the claims waiting for it (the module's doc)."""
        self._release(index, life, cpus_only=False)
        self.running.discard(index)
        if released_late:
            for k in range(1, len(self.cap)):
                left = life.job.request[k]
                self.checkpointing[k] -= left
                for claim in self.claims.values():
                    if not left:
                        break
                    t = min(left, claim.outstanding[k])
                    claim.outstanding[k] -= t
                    self.outstanding[k] -= t
                    self.claimed[k] += t
                    left -= t
            self.waiting.append(index)

    # -- claims ----------------------------------------------------------------------------------

    def _claim_or_start(self, index: int, life: JobLife, procs: tuple[int, ...], now: int,
                        touched: set[int]) -> None:
        """Start (resume) ``life`` on ``procs`` now if they and its other resources are free,
        else claim them (the module's doc)."""
        suspended = life.phase == "suspended"
        request = life.job.request
        free_now = all(self.owner[p] < 0 for p in procs)
        if free_now and (suspended or all(request[k] <= self._free(k)
                                          for k in range(1, len(request)))):
            if suspended:
                self._resume(index, life, now, touched)
            else:
                self._start(index, life, procs, now, touched)
            return
        outstanding = [0] * len(self.cap)
        if not suspended:  # a suspended job holds its other resources already
            for k in range(1, len(request)):
                booked = min(request[k], self._free(k))
                self.claimed[k] += booked
                outstanding[k] = request[k] - booked
                self.outstanding[k] += outstanding[k]
        for p in procs:
            self.claim_of[p] = index
        self.claim_bits |= _mask(procs)
        self.claims[index] = _Claim(procs, outstanding)
        touched.add(index)
        if self.recording:
            self.actions.append(Action("claim", life.job.id, tuple(procs)))

    def _start_claims(self, now: int, touched: set[int]) -> None:
        for index, claim in list(self.claims.items()):
            if any(claim.outstanding) or any(self.owner[p] >= 0 for p in claim.processors):
                continue
            del self.claims[index]
            for p in claim.processors:
                self.claim_of[p] = -1
            self.claim_bits &= ~_mask(claim.processors)
            life = self._life(index)
            if life.phase == "suspended":
                self._resume(index, life, now, touched)
                continue
            for k in range(1, len(self.cap)):
                self.claimed[k] -= life.job.request[k]
            self._start(index, life, claim.processors, now, touched)

    # -- preemption by a rule --------------------------------------------------------------------

    def _preemptible(self, v: int, touched: set[int]) -> bool:
        """Running job ``v`` may be preempted now: running (not dispatching or
        checkpointing), of a mechanism that preempts, under the limit, not protected, not
        started in this pass."""
        rules, victim = self.rules, self._life(v)
        return not (v in touched or victim.phase != "running" or victim.mechanism == "none"
                    or (rules.limit is not None and victim.preemptions.total() >= rules.limit)
                    or call_policy(self.policy, rules.keep, victim, self.view, "keep"))  # type: ignore[arg-type]

    def _open_victims(self, touched: set[int]) -> list[int]:
        """The running jobs any candidate may preempt in this pass, in the victims' order
        (the rule then decides, pair by pair)."""
        out = [v for v in self.running if self._preemptible(v, touched)]
        out.sort(key=lambda v: (call_policy(self.policy, self.rules.victim_key,  # type: ignore[arg-type]
                                            self._life(v), self.view, "victims order"), v))
        return out

    def _set_open(self, open_: list[int]) -> None:
        """The open victims' processors, for a suspended candidate: each one's and all."""
        self._open_masks = [(v, self._bits(v, self._life(v))) for v in sorted(open_)]
        self._open_bits = 0
        for _, bits in self._open_masks:
            self._open_bits |= bits

    def _try_preempt(self, index: int, cand: JobLife, now: int, touched: set[int],
                     open_: list[int]) -> bool:
        """Preempt for ``cand`` if victims it may preempt make room (the module's doc)."""
        if cand.phase == "suspended":
            mine = self._bits(index, cand)
            held = mine & self.busy_bits
            # none of its processors claimed, each held one held by an open victim (running:
            # the processors it holds are its own), and the rule for each of those holders
            if mine & self.claim_bits or held & ~self._open_bits:
                return False
            chosen = [v for v, bits in self._open_masks if bits & held]
            if not all(self._pair(index, cand, v) for v in chosen):
                return False
        else:
            if not self._fits_after(cand, open_):
                return False  # not even every open victim would make room: no rule to ask
            chosen = []
            for v in open_:
                if not self._pair(index, cand, v):
                    continue
                chosen.append(v)
                if self._fits_after(cand, chosen):
                    break
            else:
                return False
            for v in reversed(list(chosen)):  # no victim the start does not need
                rest = [u for u in chosen if u != v]
                if self._fits_after(cand, rest):
                    chosen = rest
        gone = set(chosen)
        for v in chosen:
            self._preempt(v, self._life(v), now, touched)
        if cand.phase == "suspended":
            procs = cand.processors
        else:
            # processors free now first, then those of victims still being checkpointed
            busy = frozenset(v for v in chosen if self._life(v).phase == "checkpointing")
            usable = [p for p, o in enumerate(self.owner) if self.claim_of[p] < 0 and (
                o < 0 or o in gone) and self._usable(p, busy)]
            usable.sort(key=lambda p: (self.owner[p] >= 0, p))
            procs = tuple(sorted(usable[:self._cpus(cand)]))
            assert len(procs) == self._cpus(cand), "the victims freed what the start needs"
        self._claim_or_start(index, cand, procs, now, touched)
        return True

    def _pair(self, index: int, cand: JobLife, v: int) -> bool:
        """The rule for (``cand``, running job ``v``): by side when it splits, each job's
        side computed once per pass (``rule_split.py``), else whole."""
        split = self.rules.split
        if split is not None:
            c = self.cand_sides.get(index, _UNSEEN)
            if c is _UNSEEN:
                c = self._side(self.cand_sides, index, cand, split.cand)
            w = self.victim_sides.get(v, _UNSEEN)
            if w is _UNSEEN:
                w = self._side(self.victim_sides, v, self._life(v), split.victim)
            if c is not None and w is not None:
                for ci, compare, vi in self.checks:
                    if compare is None:
                        if not (c[ci] if ci is not None else w[vi]):  # type: ignore[index]
                            return False
                    elif not compare(c[ci], w[vi]):  # type: ignore[index]
                        return False
                return True
        return _pair(self.policy, self.rules.may_preempt, cand, self._life(v), self.view)

    def _side(self, cache: dict[int, tuple | None], index: int, life: JobLife,
              fn: Any) -> tuple | None:
        """A job's values of one side of a split rule in this pass; None if one has no
        value (the whole rule then decides its pairs, failing as it would)."""
        if fn is None:
            return ()
        if index in cache:
            return cache[index]
        try:
            values = fn(life, self.view)
        except Exception:  # noqa: BLE001 - the whole rule reports it, if it reads it
            values = None
        cache[index] = values
        return values

    def _fits_after(self, cand: JobLife, victims: list[int]) -> bool:
        """Whether pending or stopped ``cand`` fits once ``victims`` are preempted (a
        checkpointed one: once its checkpoint ends)."""
        request, n = cand.job.request, self._cpus(cand)
        if self.rules.resident is None and not self.claims:
            # any free processor will do: count the cpus held
            cpus = self.used[0] - sum(self._life(v).size for v in victims)
            if self.cap[0] - cpus < n:
                return False
            if len(request) == 1:
                return True
        leaving = [v for v in victims if self._life(v).mechanism != "suspend"]
        # the victims (running) hold their own processors: those free up, unclaimed ones
        # count where their processes leave room under `resident`
        free = ((~self.busy_bits | self._bits_all(victims)) & ~self.claim_bits
                & self._usable_bits(self._bits_all(leaving)))
        freed = [0] * len(self.cap)
        for v in leaving:
            for k, r in enumerate(self._life(v).job.request):
                freed[k] += r
        return self._fit(cand, free.bit_count(), tuple(freed))

    # -- preemption by the order -----------------------------------------------------------------

    def _select(self, now: int, touched: set[int]) -> list[int]:
        """The selection of the module's doc; the waiting jobs in policy order."""
        optional = [v for v in sorted(self.running) if self._preemptible(v, touched)]
        active = [i for i in self.waiting if i not in touched and i not in self.claims]
        claimants = [i for i in self.waiting if i in self.claims]  # they wait on, committed
        order = self._ordered([*active, *optional])
        k_all = range(1, len(self.cap))
        # what stays taken whatever is selected: the processors of running jobs that stay,
        # claimed processors; per other resource, what is held or claimed except by optional
        # running jobs that a preemption releases (requeued, checkpointed), and except what
        # checkpointing jobs release to no claim
        optional_set = set(optional)
        taken = self.claim_bits | self._bits_all(
            v for v in self.running
            if v not in optional_set and self._life(v).phase != "checkpointing")
        budget = [0] * len(self.cap)
        for k in k_all:
            released = sum(self._life(v).job.request[k] for v in optional
                           if self._life(v).mechanism != "suspend")
            budget[k] = (self._free(k) + released + self.checkpointing[k]
                         - self.outstanding[k])
        count = 0  # cpus selected pending and stopped jobs take, anywhere in ``avail``
        # where a pending or stopped job may go: not taken, not claimed, and under the
        # `resident` limit (counted before this pass's preemptions: a suspended victim stays
        # resident, and one that leaves only makes room); and how many
        avail = self._usable_bits() & ~taken
        n_avail = avail.bit_count()
        selected: list[int] = []
        strict = False  # `backfill none` met a job that does not fit: no start after it
        for i in order:
            life = self._life(i)
            request = life.job.request
            if strict and life.phase not in ("running", "suspended"):
                continue
            if life.phase in ("running", "suspended"):
                own = self._bits(i, life)
                need = [0] * len(self.cap) if (life.phase == "suspended"
                                               or life.mechanism == "suspend") else request
                mine = (avail & own).bit_count()
                ok = (not taken & own and count <= n_avail - mine
                      and all(need[k] <= budget[k] for k in k_all))
                if ok:
                    taken |= own
                    avail &= ~own
                    n_avail -= mine
            else:
                need = request
                ok = (count + self._cpus(life) <= n_avail
                      and all(need[k] <= budget[k] for k in k_all))
                if ok:
                    count += self._cpus(life)
            if ok:
                selected.append(i)
                for k in k_all:
                    budget[k] -= need[k]
            elif self.policy.backfill == "none":
                strict = True
        if self.rules.subset is not None:
            selected = self._subset(order, selected, n_avail, budget)
        chosen = set(selected)
        for v in optional:  # the running jobs left out
            if v not in chosen:
                self._preempt(v, self._life(v), now, touched)
        # pending and stopped jobs: processors free now first, then being checkpointed
        open_bits = self.all_bits & ~taken & ~self.claim_bits & self._usable_bits()
        starting = [i for i in selected if self._life(i).phase in ("pending", "stopped")]
        sizes = {i: self._cpus(self._life(i)) for i in starting}
        if self.rules.leftover is not None:
            free_now = (open_bits & ~self.busy_bits).bit_count()
            self._give_leftover(starting, sizes, free_now - sum(sizes.values()))
        pool = [*_lowest(open_bits & ~self.busy_bits), *_lowest(open_bits & self.busy_bits)
                ] if starting else []
        at = 0
        for i in selected:
            life = self._life(i)
            if life.phase == "running":
                continue
            if life.phase == "suspended":
                procs = life.processors
            else:
                n = sizes[i]
                procs = tuple(sorted(pool[at:at + n]))
                at += n
                assert len(procs) == n, "the selection counted the processors"
            self._claim_or_start(i, life, procs, now, touched)
        return [*claimants, *(i for i in order if i not in optional_set)]

    def _subset(self, order: list[int], selected: list[int], cpus: int, budget: list[int]
                ) -> list[int]:
        """The SUBSET variant (papers/003, LSF-RTC-ADSUBSET): of the pending and stopped jobs
        the first fit selected, keep the first N' (``adaptive.committed``, L the jobs in the
        system), then add the other waiting jobs whose sizes best fill the cpus left (a
        subset sum, ``adaptive.fill``) and whose other resources fit. ``cpus``: where
        pending and stopped jobs may go (neither claimed nor held by running and suspended
        jobs that stay, under the `resident` limit); ``budget`` (changed in place):
        per resource after cpus, what is left after the selection."""
        starters = [i for i in selected if self._life(i).phase in ("pending", "stopped")]
        keep = committed(len(starters), len(self.waiting) + len(self.running),
                         self.rules.subset or 1)
        k_all = range(1, len(self.cap))
        dropped = set(starters[keep:])
        for i in dropped:
            for k in k_all:
                budget[k] += self._life(i).job.request[k]
        kept = [i for i in selected if i not in dropped]
        free = cpus - sum(self._cpus(self._life(i)) for i in kept
                          if self._life(i).phase in ("pending", "stopped"))
        chosen = set(kept)
        others = [i for i in order if i not in chosen and self._life(i).phase in (
            "pending", "stopped") and all(self._life(i).job.request[k] <= budget[k]
                                          for k in k_all)]
        sizes = [self._cpus(self._life(i)) for i in others]
        for j in fill(sizes, free):
            i = others[j]
            request = self._life(i).job.request
            if all(request[k] <= budget[k] for k in k_all):
                chosen.add(i)
                for k in k_all:
                    budget[k] -= request[k]
        return [i for i in order if i in chosen]

    def _give_leftover(self, starting: list[int], sizes: dict[int, int], leftover: int
                       ) -> None:
        """`leftover`: the free processors no selected job takes go to the jobs starting now
        whose size may change (pending ones, stopped malleable ones), up to their maximum
        (``adaptive.give_leftover``)."""
        resizable = [i for i in starting if self._life(i).phase == "pending"
                     or self._life(i).mechanism == "malleable"]
        if leftover <= 0 or not resizable:
            return
        jobs = [self._life(i).job for i in resizable]
        got = [sizes[i] for i in resizable]
        maxima = [min(job.max_procs, self.cap[0]) for job in jobs]
        speedup = None
        if self.rules.leftover == "efficient":
            def speedup(j: int, n: int) -> float:
                m = jobs[j].moldable
                return float(n) if m is None else m.speedup.speedup(n)
        give_leftover(got, maxima, leftover, speedup)
        for i, n in zip(resizable, got, strict=True):
            sizes[i] = n

    # -- the monitor and the result --------------------------------------------------------------

    def _check(self, now: int) -> None:
        """What every pass leaves, derived again from the jobs' lives: job by job as they
        move (``preemptive_books.py``), from scratch when that finds something amiss."""
        books = self.books
        if books.update(self.lives, self.running, self.waiting):
            self._check_books(now, books.used, books.checkpointing)
        else:
            books.reset()  # the next pass counts every job again
            self._check_all(now)

    def _check_all(self, now: int) -> None:
        """What every pass leaves, derived again from all the jobs' lives."""
        used = [0] * len(self.cap)
        owner: dict[int, int] = {}
        resident = [0] * len(self.owner)
        checkpointing = [0] * len(self.cap)
        # the jobs that hold anything: running ones, and suspended ones among the waiting
        for index in (*self.running, *self.waiting):
            life = self._life(index)
            alloc = life.alloc()
            for k, a in enumerate(alloc):
                used[k] += a
            if life.phase == "checkpointing":
                for k in range(1, len(alloc)):
                    checkpointing[k] += alloc[k]
            if life.phase in HOLDS_CPUS:
                for p in life.processors:
                    if p in owner:
                        raise MonitorViolation(f"t={now}: processor {p} held by jobs "
                                               f"{owner[p]} and {life.job.id}", "capacity")
                    owner[p] = life.job.id
            if alloc[0] or life.phase == "suspended":
                for p in life.processors:
                    resident[p] += 1
        self._check_books(now, used, checkpointing)
        limit = self.rules.resident
        if limit is not None and max(resident, default=0) > limit:
            raise MonitorViolation(f"t={now}: more than {limit} jobs resident on a processor",
                                   "capacity")

    def _check_books(self, now: int, used: list[int], checkpointing: list[int]) -> None:
        """The claims, and the loop's books against ``used`` and ``checkpointing`` as
        derived from the lives."""
        claimed, outstanding = [0] * len(self.cap), [0] * len(self.cap)
        seen: set[int] = set()
        for index, claim in self.claims.items():
            life = self._life(index)
            if life.phase not in WAITING or not seen.isdisjoint(claim.processors):
                raise MonitorViolation(f"t={now}: job {life.job.id} claims processors "
                                       "another job claims, or claims from its "
                                       f"{life.phase} phase", "capacity")
            seen.update(claim.processors)
            for p in claim.processors:
                holder = self.owner[p]
                if holder >= 0 and self._life(holder).phase != "checkpointing":
                    raise MonitorViolation(f"t={now}: processor {p} claimed by job "
                                           f"{life.job.id} is held by running job "
                                           f"{self._life(holder).job.id}", "capacity")
            if life.phase != "suspended":
                for k in range(1, len(self.cap)):
                    claimed[k] += life.job.request[k] - claim.outstanding[k]
                    outstanding[k] += claim.outstanding[k]
        for k, (u, c) in enumerate(zip(used, self.cap, strict=True)):
            if u != self.used[k] or claimed[k] != self.claimed[k] or (
                    outstanding[k] != self.outstanding[k]
                    or checkpointing[k] != self.checkpointing[k]):
                raise MonitorViolation(f"t={now}: policy {self.policy.name}: resource "
                                       f"{self.workload.resources[k]}: the books differ from "
                                       "the jobs' lives", "capacity")
            if u + claimed[k] > c or outstanding[k] > checkpointing[k]:
                raise MonitorViolation(f"t={now}: policy {self.policy.name}: resource "
                                       f"{self.workload.resources[k]} in use {u} and claimed "
                                       f"{claimed[k]} of {c}", "capacity")

    def _result(self) -> PreemptiveRun:
        records, preempted, processors = [], [], []
        for life in self.lives:
            assert life is not None and life.phase == "completed"
            first = next((s.start for s in life.segments), life.job.submit)
            end = life.segments[-1].end if life.segments else life.job.submit
            # the cpus of its last run (a moldable job's size, not its request)
            cpus = next((len(s.processors) for s in reversed(life.segments)
                         if s.phase == "running"), life.job.request[0])
            records.append(JobRecord(life.job, first, end, (cpus, *life.job.request[1:])))
            spent = {phase: sum(s.end - s.start for s in life.segments if s.phase == phase)
                     for phase in ("running", "suspended", "stopped")}
            preempted.append(Preempted(
                ran=spent["running"] - life.lost_time, cpu_time=life.acquired - life.lost,
                suspensions=life.preemptions["suspend"], requeues=life.preemptions["requeue"],
                suspended=spent["suspended"], lost=life.lost, overhead=life.overhead,
                segments=tuple(life.segments), checkpoints=life.preemptions["checkpoint"],
                stopped=spent["stopped"]))
            processors.append(tuple(sorted({p for s in life.segments if s.phase == "running"
                                            for p in s.processors})))
        schedule = Schedule(records=tuple(records), capacities=self.cap,
                            resources=self.workload.resources, policy_name=self.policy.name,
                            passes=self.passes, workload=self.workload,
                            preempted=tuple(preempted), processors=tuple(processors),
                            preemption_totals=PreemptionTotals(self.held_idle,
                                                               self.most_resident),
                            departures=(() if self.assumed is None
                                        else tuple(self.assumed.found.values())))
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


def _mask(procs: Iterable[int]) -> int:
    """The bit mask of a set of processors."""
    bits = 0
    for p in procs:
        bits |= 1 << p
    return bits


def _lowest(bits: int, n: int | None = None) -> list[int]:
    """The ``n`` lowest processors of the mask ``bits`` (all of them without ``n``), in
    increasing order."""
    out: list[int] = []
    while bits and (n is None or len(out) < n):
        low = bits & -bits
        out.append(low.bit_length() - 1)
        bits ^= low
    return out
