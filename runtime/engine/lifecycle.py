"""One job's life under preemption: its phases, what each holds, and its work (papers/003).

A rigid run-to-completion job is started once and ends ``run_time`` later; the event loop
needs nothing more. A preemptive policy also suspends, checkpoints, restarts, resizes and
requeues jobs, each at a cost, and a job's progress then depends on its whole history. This
module is that history as a state machine, one ``JobLife`` per job, apart from any policy:

======================  ===========  ==========================  =============================
phase                   progresses   holds cpus                  holds its other resources
======================  ===========  ==========================  =============================
``pending``             no           no                          no
``dispatching``         no           yes (its processors)        yes
``running``             yes          yes                         yes
``suspended``           no           no: lent to other jobs      yes, on its processors
``checkpointing``       no           yes (busy writing it out)   yes
``stopped``             no           no                          no
``completed``           (done)       no                          no
======================  ===========  ==========================  =============================

The transitions, each taken at an instant ``now`` and checked (a wrong one is a bug of the
caller and raises ``LifecycleError``):

- ``start``: pending or stopped -> dispatching (for the dispatch cost; 0: running at once).
  From pending at the job's size (a moldable job: any size in [min, max]); from stopped, a
  ``checkpoint`` job at the size it had (migratable), a ``malleable`` one at any size in
  [min, max] (the paper's MIG and MALL).
- ``dispatched``: dispatching -> running, when the cost has elapsed.
- ``suspend``: running -> suspended (mechanism ``suspend``, the paper's simple preemption).
- ``resume``: suspended -> dispatching or running, on the same processors: a suspended job
  has nowhere else to go.
- ``checkpoint``: running -> checkpointing (mechanisms ``checkpoint`` and ``malleable``):
  the work done so far is saved; ``checkpointed`` then releases everything (-> stopped).
- ``requeue``: dispatching, running or suspended -> pending (mechanism ``requeue``, Slurm's
  REQUEUE): back to its last saved work (none: from scratch), the rest booked as lost.
- ``finish``: running -> completed, exactly when its work is done.

Work is a fraction of the job's whole work, kept exactly (``Fraction``): running for ``d``
seconds on ``n`` cpus adds ``d / T(n)``, where ``T(n)`` is the job's run time on ``n`` cpus
(``Job.at_size``: its recorded run time at its own size, scaled by its speedup elsewhere).
A job completes when the fraction reaches 1, at the first whole second where it does (a job
never ends before its work is done). ``acquired`` is the processor time it has run (the
paper's acquired service), ``since_start`` the time since its last start or resume (the
paper's residual run time).

A job met in a machine state (``schedc run --state``, a counterexample) begins its life in
the phase the state gives it, with its history (``JobLife.restore``): running, suspended,
stopped or pending, its service acquired, preemptions and work done so far. A restored
stopped job knows the size of its last run but not where it ran (no processors until it
starts again).
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction
from typing import Literal, get_args

from attrs import frozen

from schedc.runtime.jobs import Job

Phase = Literal["pending", "dispatching", "running", "suspended", "checkpointing", "stopped",
                "completed"]
PHASES: tuple[Phase, ...] = get_args(Phase)
# how a running job may be preempted: ``none`` never
Mechanism = Literal["none", "suspend", "checkpoint", "malleable", "requeue"]
MECHANISMS: tuple[Mechanism, ...] = get_args(Mechanism)
# what a preemption is booked as, per job
Preemption = Literal["suspend", "checkpoint", "requeue"]

HOLDS_CPUS: frozenset[Phase] = frozenset({"dispatching", "running", "checkpointing"})
HOLDS_OTHERS: frozenset[Phase] = HOLDS_CPUS | {"suspended"}
# phases that end by themselves when their cost has elapsed
TIMED: frozenset[Phase] = frozenset({"dispatching", "checkpointing"})


class LifecycleError(RuntimeError):
    """A transition the job's phase or mechanism does not allow (a bug of the caller)."""


@frozen(slots=True)
class Segment:
    """One stretch of a job's life in one phase: [start, end) on ``processors``."""

    phase: Phase
    start: int
    end: int
    processors: tuple[int, ...]  # the ones it held (suspended: the ones it keeps its memory on)


class JobLife:
    """One job's phase, processors and work; the transitions of the module's doc."""

    __slots__ = ("job", "mechanism", "phase", "since", "processors", "done", "saved",
                 "acquired", "last_start", "phase_end", "preemptions", "lost", "lost_time",
                 "overhead", "segments", "_unsaved", "_unsaved_time", "_times", "_kept_size",
                 "watch")

    def __init__(self, job: Job, mechanism: Mechanism = "none") -> None:
        if mechanism not in MECHANISMS:
            raise LifecycleError(f"unknown mechanism {mechanism!r}")
        self.job = job
        self.mechanism: Mechanism = mechanism
        self.phase: Phase = "pending"
        self.since = job.submit  # when the current phase began
        # held now; when suspended or stopped, the ones it last ran on (their count: its size)
        self.processors: tuple[int, ...] = ()
        self.done = Fraction(0)  # of its work
        self.saved = Fraction(0)  # at its last checkpoint
        self.acquired = 0  # processor-seconds run
        self.last_start: int | None = None  # its last start or resume, once running
        self.phase_end: int | None = None  # when a timed phase ends
        self.preemptions: Counter[Preemption] = Counter()
        self.lost = 0  # processor-seconds run whose work a requeue threw away
        self.lost_time = 0  # the seconds of those runs
        self.overhead = 0  # processor-seconds held while dispatching or checkpointing
        self.segments: list[Segment] = []
        self._unsaved = 0  # processor-seconds run since the last save (a requeue loses them)
        self._unsaved_time = 0  # and their seconds
        self._times: dict[int, int] = {}  # T(n) by size
        # a stopped job restored from a state knows the size of its last run, not where
        self._kept_size = 0
        # a list told of each transition (the life itself, appended): what a monitor that
        # keeps its books job by job looks at again
        self.watch: list[JobLife] | None = None

    @classmethod
    def restore(cls, job: Job, mechanism: Mechanism, phase: Phase, now: int, *,
                processors: tuple[int, ...] = (), size: int = 0, acquired: int = 0,
                preemptions: int = 0, progress: Fraction = Fraction(0),
                last_start: int | None = None) -> JobLife:
        """A job met at ``now`` in ``phase`` (a machine state: ``runtime/workloads/
        state_file.py``'s ``History``), with ``acquired`` processor-seconds run,
        ``preemptions`` booked under its mechanism's kind, and ``progress`` of its work done:

        - ``running`` on ``processors`` since ``last_start`` (<= now; progress: at then);
        - ``suspended`` on ``processors`` (its size), since ``now``;
        - ``stopped`` since ``now``, at ``size`` (where it ran is not known: no processors);
        - ``pending`` since ``now`` (a requeued job, if it ran before).

        The work done before ``now`` counts as saved (the state knows of no run since a
        save): a requeue loses only what runs after ``now``. Its segments start at ``now``
        (running: at ``last_start``)."""
        life = cls(job, mechanism)
        if phase not in ("running", "suspended", "stopped", "pending"):
            raise LifecycleError(f"job {job.id}: a restored job is running, suspended, "
                                 f"stopped or pending, not {phase}")
        if not 0 <= progress < 1 or acquired < 0 or preemptions < 0:
            raise LifecycleError(f"job {job.id}: restored with progress {progress}, "
                                 f"acquired {acquired}, {preemptions} preemptions")
        if preemptions:
            kind: Preemption | None = {"suspend": "suspend", "checkpoint": "checkpoint",
                                       "malleable": "checkpoint", "requeue": "requeue"
                                       }.get(mechanism)  # type: ignore[assignment]
            if kind is None:
                raise LifecycleError(f"job {job.id}: of mechanism {mechanism}, it was never "
                                     "preempted")
            life.preemptions[kind] = preemptions
        holds = phase in ("running", "suspended")
        if holds != bool(processors) or len(set(processors)) != len(processors):
            raise LifecycleError(f"job {job.id}: {phase} on {processors}: a running or "
                                 "suspended job holds distinct processors, no other any")
        if phase == "suspended" and mechanism != "suspend" or phase == "stopped" and (
                mechanism not in ("checkpoint", "malleable")):
            raise LifecycleError(f"job {job.id}: {phase} under mechanism {mechanism}")
        if phase == "stopped" and size < 1:
            raise LifecycleError(f"job {job.id}: stopped at size {size}")
        life.phase = phase
        life.processors = tuple(processors)
        life._kept_size = size if phase == "stopped" else 0
        life.done = life.saved = Fraction(progress)
        life.acquired = acquired
        life.last_start = last_start
        life.since = now
        if phase == "running":
            if last_start is None or last_start > now:
                raise LifecycleError(f"job {job.id}: running since {last_start}, not by {now}")
            life.since = last_start
        return life

    # -- what it holds and how far it is ------------------------------------------------------

    @property
    def size(self) -> int:
        """The cpus of its current (or, suspended or stopped, last) allocation; 0 before."""
        return len(self.processors) or self._kept_size

    def alloc(self) -> tuple[int, ...]:
        """Per resource, what it holds now: cpus only in dispatching, running and
        checkpointing; its other resources also when suspended."""
        if self.phase not in HOLDS_OTHERS:
            return (0,) * len(self.job.request)
        cpus = self.size if self.phase in HOLDS_CPUS else 0
        return (cpus, *self.job.request[1:])

    def time_at(self, n: int) -> int:
        """T(n): its whole run time on ``n`` cpus."""
        t = self._times.get(n)
        if t is None:
            t = self._times[n] = self.job.at_size(n).run_time
        return t

    def progress_at(self, now: int) -> Fraction:
        """The fraction of its work done by ``now`` (running on: counted to ``now``)."""
        self._check_time(now)
        if self.phase != "running":
            return self.done
        t = self.time_at(self.size)
        if t == 0:
            return Fraction(1)
        return min(Fraction(1), self.done + Fraction(now - self.since, t))

    def acquired_at(self, now: int) -> int:
        """The processor-seconds it has run by ``now`` (running on: counted to ``now``)."""
        if self.phase != "running":
            return self.acquired
        return self.acquired + (now - self.since) * self.size

    def since_start(self, now: int) -> int:
        """Seconds since its last start or resume (0 if it never ran)."""
        return 0 if self.last_start is None else now - self.last_start

    def completion_time(self) -> int:
        """When it completes if it runs on undisturbed (running only)."""
        self._expect("completion_time", "running")
        t = self.time_at(self.size)
        left = (1 - self.done) * t
        return self.since + math.ceil(left)

    # -- transitions ---------------------------------------------------------------------------

    def start(self, now: int, processors: tuple[int, ...], dispatch: int = 0) -> None:
        """Pending or stopped -> dispatching on ``processors`` (for ``dispatch`` seconds; 0:
        running at once)."""
        self._expect("start", "pending", "stopped")
        n = len(processors)
        if len(set(processors)) != n or n == 0:
            raise LifecycleError(f"job {self.job.id}: start on {processors}: give distinct "
                                 "processors")
        if self.phase == "stopped" and self.mechanism == "checkpoint" and n != self.size:
            raise LifecycleError(f"job {self.job.id}: a migratable job restarts at its size "
                                 f"{self.size}, not {n}")
        if not self.job.min_procs <= n <= self.job.max_procs and not (
                self.phase == "stopped" and self.mechanism == "checkpoint"):
            raise LifecycleError(f"job {self.job.id}: size {n} outside "
                                 f"[{self.job.min_procs}, {self.job.max_procs}]")
        self._close(now)
        self.processors = tuple(processors)
        self._kept_size = 0
        self._enter_dispatch(now, dispatch)

    def resume(self, now: int, dispatch: int = 0) -> None:
        """Suspended -> dispatching (or running) on the processors it kept."""
        self._expect("resume", "suspended")
        self._close(now)
        self._enter_dispatch(now, dispatch)

    def dispatched(self, now: int) -> None:
        """Dispatching -> running, when its dispatch cost has elapsed."""
        self._expect("dispatched", "dispatching")
        self._at_phase_end(now)
        self._close(now)
        self._run(now)

    def suspend(self, now: int) -> None:
        """Running -> suspended: its cpus go to others, its other resources stay held."""
        self._preempt(now, "suspend", "suspend")
        self.phase = "suspended"

    def checkpoint(self, now: int, cost: int = 0) -> None:
        """Running -> checkpointing for ``cost`` seconds (0: stopped at once); its work so
        far is saved."""
        self._preempt(now, "checkpoint", "checkpoint", "malleable")
        self.saved = self.done
        self._unsaved = self._unsaved_time = 0
        if cost < 0:
            raise LifecycleError(f"job {self.job.id}: negative checkpoint cost {cost}")
        self.phase, self.phase_end = "checkpointing", now + cost
        if cost == 0:
            self.checkpointed(now)

    def checkpointed(self, now: int) -> None:
        """Checkpointing -> stopped: everything released."""
        self._expect("checkpointed", "checkpointing")
        self._at_phase_end(now)
        self._close(now)
        self.phase, self.phase_end = "stopped", None

    def requeue(self, now: int) -> None:
        """Dispatching, running or suspended -> pending, back to its last saved work; the
        processor time run since is booked as lost."""
        self._expect("requeue", "dispatching", "running", "suspended")
        if self.mechanism != "requeue":
            raise LifecycleError(f"job {self.job.id}: requeue needs mechanism requeue, not "
                                 f"{self.mechanism}")
        if self.phase == "running":
            self._advance(now)
        self._close(now)
        self.preemptions["requeue"] += 1
        self.lost += self._unsaved
        self.lost_time += self._unsaved_time
        self._unsaved = self._unsaved_time = 0
        self.done = self.saved
        self.phase, self.phase_end = "pending", None
        self.processors = ()  # it holds nothing and restarts anywhere

    def finish(self, now: int) -> None:
        """Running -> completed, at its completion time."""
        if now != self.completion_time():
            raise LifecycleError(f"job {self.job.id}: finishes at {self.completion_time()}, "
                                 f"not {now}")
        self._advance(now)
        self.done = Fraction(1)
        self._close(now)
        self.phase = "completed"

    # -- steps ---------------------------------------------------------------------------------

    def _expect(self, action: str, *phases: Phase) -> None:
        if self.phase not in phases:
            raise LifecycleError(f"job {self.job.id}: {action} from {self.phase} (allowed from "
                                 f"{', '.join(phases)})")

    def _check_time(self, now: int) -> None:
        if now < self.since:
            raise LifecycleError(f"job {self.job.id}: time {now} before its {self.phase} "
                                 f"phase began at {self.since}")

    def _at_phase_end(self, now: int) -> None:
        if now != self.phase_end:
            raise LifecycleError(f"job {self.job.id}: {self.phase} ends at {self.phase_end}, "
                                 f"not {now}")

    def _close(self, now: int) -> None:
        """The current phase's segment ends at ``now`` (and is booked); every transition
        passes here."""
        self._check_time(now)
        if self.watch is not None:
            self.watch.append(self)
        if self.phase in TIMED:
            self.overhead += (now - self.since) * self.size
        if self.phase not in ("pending", "completed"):
            self.segments.append(Segment(self.phase, self.since, now, self.processors))
        self.since = now

    def _enter_dispatch(self, now: int, dispatch: int) -> None:
        if dispatch < 0:
            raise LifecycleError(f"job {self.job.id}: negative dispatch cost {dispatch}")
        if dispatch == 0:
            self._run(now)
        else:
            self.phase, self.phase_end = "dispatching", now + dispatch

    def _run(self, now: int) -> None:
        self.phase, self.phase_end, self.last_start = "running", None, now

    def _advance(self, now: int) -> None:
        """Running: its work and service up to ``now``."""
        ran = now - self.since
        self.done = self.progress_at(now)
        self.acquired += ran * self.size
        self._unsaved += ran * self.size
        self._unsaved_time += ran

    def _preempt(self, now: int, kind: Preemption, *mechanisms: Mechanism) -> None:
        self._expect(kind, "running")
        if self.mechanism not in mechanisms:
            raise LifecycleError(f"job {self.job.id}: {kind} needs mechanism "
                                 f"{' or '.join(mechanisms)}, not {self.mechanism}")
        self._advance(now)
        if self.done >= 1:
            raise LifecycleError(f"job {self.job.id}: preempted at {now}, when its work is done")
        self._close(now)
        self.preemptions[kind] += 1
