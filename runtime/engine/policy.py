"""What the simulator needs from a compiled policy.

The DSL compiles a policy IR into a ``RuntimePolicy``: plain callables generated from the IR
(see ``schedc.dsl.semantics.python_code``), plus the facts the simulator uses to skip work (which
expressions are static). Tests may also build a ``RuntimePolicy`` by hand.

Every callable takes ``(job, state)``: ``job`` is a ``Job`` of the queue, ``state`` the
``PassState`` of the pass in progress (read-only for the callable).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from attrs import frozen

from schedc.dsl.semantics.pass_state import PassState
from schedc.runtime.engine.lifecycle import JobLife, Mechanism
from schedc.runtime.jobs import Job

__all__ = ["PassState", "PreemptionRules", "RuntimeInvariant", "RuntimePolicy", "RuntimeTuning"]

BackfillKind = Literal["none", "first_fit", "best", "when"]


KeyFn = Callable[[Job, PassState], tuple]
NumFn = Callable[[Job, PassState], float]
IntFn = Callable[[Job, PassState], int]
BoolFn = Callable[[Job, PassState], bool]


@frozen
class RuntimeInvariant:
    text: str  # the invariant's source text
    location: str  # file:line:col
    check: BoolFn  # evaluated for each job started, with the state right after it started
    reads_state: bool = True  # it reads now, queue, running or machine (not only the job)


@frozen
class RuntimePolicy:
    name: str
    resources: tuple[str, ...]  # names in vector order; resources[0] == "cpus"
    capacities: tuple[int | None, ...]  # declared by the policy's machine, None = from trace/CLI
    depth: int | None  # reservations per pass; None = all (conservative)
    backfill: BackfillKind
    order_key: KeyFn | None = None  # None = FCFS; the simulator appends (submit, index)
    order_static: bool = True  # the key depends only on the job and params
    score: NumFn | None = None  # backfill "best": the candidate with the smallest score starts
    size: IntFn | None = None  # None = rigid: the cpus request
    # `size choose N in [LOW, HIGH]`: ``size`` is HIGH; of N sizes spread evenly over
    # [LOW, max(LOW, HIGH)] the job gets the one that completes first in the pass's plan
    size_low: IntFn | None = None
    size_choices: int | None = None
    size_fixed: bool = False  # a job's size is chosen at its first visit and kept
    # backfill "when": after the D-th reservation a job starts iff it fits the free resources
    # now and this holds (the reservations are not consulted)
    backfill_when: BoolFn | None = None
    # `reserve D per KEY`: the depth counts, per key value, the reservations of jobs whose
    # key (at their visit) is that value
    reserve_key: Callable[[Job, PassState], int | bool] | None = None
    # `or when COND`: a job that does not fit and is past the depth is reserved if this holds
    reserve_when: BoolFn | None = None
    # `slack EXPR`: the reserved job's slack in seconds (a number; the walk floors it and
    # takes 0 for a negative one); None: reservations are held at their earliest fits
    slack: NumFn | None = None
    invariants: tuple[RuntimeInvariant, ...] = ()
    # True when no expression reads now, queue, running or machine state: then a pass after
    # submissions alone only has to consider the new jobs (see simulator.py for the proof).
    state_free: bool = True
    # The job labels (`job.user`...) some formula reads: a trace's other label columns need
    # not be converted (None: all of them)
    labels_read: tuple[str, ...] | None = None
    # A self-tuning dynP policy (papers/001): the simulator runs its candidates' passes
    tuning: RuntimeTuning | None = None
    # A preemptive policy (papers/003): run by ``preemptive.py``, its ``order_key`` a
    # function of a ``JobLife``; None: run to completion by ``simulator.py``
    preemption: PreemptionRules | None = None

    @property
    def selective(self) -> bool:
        """Reservations per key or by condition: the depth is not one global count."""
        return self.reserve_key is not None or self.reserve_when is not None

    def active(self, name: str | None) -> RuntimePolicy:
        """The policy whose pass runs first from a state naming ``name`` as its active
        candidate: that candidate of a dynP policy (itself when unknown: the simulator
        reports it), else this policy."""
        if self.tuning is None or name is None:
            return self
        return next((c for c in self.tuning.candidates if c.name == name), self)


@frozen
class RuntimeTuning:
    """Self-tuning dynP (``ir.Tuning``): the candidates (planning policies, each with the
    tuned policy's own invariants added), the plan metric (a name of
    ``plan_metrics.METRICS``), the decider (simple | advanced) and when a step happens
    (submit | change). The tuned ``RuntimePolicy`` itself has its first candidate's fields,
    its own name and invariants, and this."""

    candidates: tuple[RuntimePolicy, ...]
    metric: str
    decider: str
    step: str


def never(cand: JobLife, victim: JobLife, state: PassState) -> bool:
    return False


def _unprotected(life: JobLife, state: PassState) -> bool:
    return False


def _youngest_first(life: JobLife, state: PassState) -> Any:
    # the victim that ran least since its last start, as Slurm's youngest_first and LSF's
    # LEAST_RUN_TIME: it loses the least if requeued
    return (life.since_start(state.now),)


def _free(life: JobLife, state: PassState) -> int:
    return 0


@frozen
class SplitRule:
    """A preemption rule by side (``rule_split.py``): each job's values computed once per
    pass, then the checks (``(ci, op, vi)``: cand[ci] true, victim[vi] true, or cand[ci] op
    victim[vi])."""

    cand: Callable[[JobLife, PassState], tuple] | None
    victim: Callable[[JobLife, PassState], tuple] | None
    checks: tuple[tuple[int | None, str | None, int | None], ...]


@frozen
class PreemptionRules:
    """What a preemptive pass needs beyond the policy's order and fit
    (``runtime/engine/preemptive.py``). The callables read the pass's ``PassState``; its
    jobs are ``JobLife`` records (what each has run so far), as are the arguments of a
    preemptive policy's ``order_key``."""

    mechanism: Callable[[Job], Mechanism] = lambda job: "none"  # chosen at its submission
    # may ``cand`` (waiting) preempt ``victim`` (running) now?
    may_preempt: Callable[[JobLife, JobLife, PassState], bool] = never
    keep: Callable[[JobLife, PassState], bool] = _unprotected  # protected now: never a victim
    # victims are taken in this key's order (then by job index)
    victim_key: Callable[[JobLife, PassState], tuple] = _youngest_first
    # seconds to start (or restart) and to resume a job: floored, at least 0
    dispatch: Callable[[JobLife, PassState], Any] = _free
    resume: Callable[[JobLife, PassState], Any] = _free
    # seconds a checkpointing job keeps its processors busy while it is written out
    checkpoint: Callable[[JobLife, PassState], Any] = _free
    limit: int | None = None  # the most preemptions of one job (LSF's MAX_JOB_PREEMPT)
    resident: int | None = None  # the most jobs with processes on one processor (the paper: 5)
    quantum: int | None = None  # a pass every quantum seconds while some job waits
    # `preempt by order`: each pass selects, in the policy's order over every active job
    # (running ones too), the jobs that run; running jobs left out are preempted
    select: bool = False
    # `size EXPR` with `preempt by order`: the cpus a pending (or stopped malleable) job is
    # selected at; None: its request
    size: Callable[[JobLife, PassState], int] | None = None
    # `leftover`: the free processors a selection leaves go one at a time to the jobs it
    # starts: "equal" to the smallest allocation, "efficient" to the job most efficient
    # after the step; None: none given out
    leftover: str | None = None
    subset: int | None = None  # `subset DELTA`: papers/003's SUBSET variant
    split: SplitRule | None = None  # ``may_preempt`` by side, when it splits
    # some formula reads the queue or the running jobs (`job.size` looks among those): a
    # pass then shows them to it; else it need not build them
    reads_jobs: bool = True
