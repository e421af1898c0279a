"""What a policy's formulas read in a pass: the job, the machine and the queue.

The language owns this interface; the runtime's ``Job`` and ``RunningJob``
(``runtime/jobs.py``) implement the first two protocols, its ``JobLife``
(``runtime/engine/lifecycle.py``) the third, and the simulator keeps one ``PassState`` up to
date as jobs start. The symbolic twin is ``dsl/verify/symbolic.py``'s ``SymState``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from typing import Protocol

from attrs import define, field


class JobView(Protocol):
    """A queued job as a formula reads it (``job.id``, ``job.estimate``, ...)."""

    id: int
    index: int  # position in the workload (file order)
    submit: int
    estimate: int
    request: tuple[int, ...]  # per resource; request[0] is cpus
    # who submitted it and where (``ir.LABEL_ATTRS``), -1 when unknown
    user: int
    group: int
    executable: int
    queue: int
    partition: int

    @property
    def procs(self) -> int: ...
    @property
    def min_procs(self) -> int: ...
    @property
    def max_procs(self) -> int: ...
    @property
    def work(self) -> int: ...
    @property
    def area(self) -> int: ...


class RunningView(Protocol):
    """A running job: the job, its start and what it holds per resource."""

    job: JobView
    start: int
    alloc: tuple[int, ...]


class ActiveView(Protocol):
    """A job of a preemptive policy as its formulas read it (a variable of kind "active":
    the `job` of its order keys, `keep`, costs and `size`, `cand` and `victim` of its rule):
    the job and what it has run so far (``ir.ACTIVE_ATTRS``). Every value is exact, as the
    verifier's: ints, and the fraction of its work done as a ``Fraction``."""

    job: JobView
    phase: str  # "suspended" for `job.suspended`
    preemptions: Counter[str]  # per kind; `job.preemptions` is their total

    def acquired_at(self, now: int) -> int: ...
    def since_start(self, now: int) -> int: ...
    def progress_at(self, now: int) -> Fraction: ...


def is_active(obj: object) -> bool:
    """Whether a variable is bound to an active job of a preemptive policy."""
    return hasattr(obj, "progress_at")


def is_running(obj: object) -> bool:
    """Whether an aggregate variable is bound to a running job (else a queued one; an active
    job has ``alloc`` too: ask ``is_active`` first)."""
    return hasattr(obj, "alloc")


@define(slots=True)
class PassState:
    """The machine and queue as a pass sees them; updated by the simulator as jobs start."""

    now: int
    queue: Sequence[JobView]  # in policy order
    running: Sequence[RunningView]
    capacity: tuple[int, ...]
    used: list[int]  # per resource, current
    # Values of job-independent aggregates (sums over the queue...), valid while the state
    # keeps its ``stamp`` (see schedc.dsl.semantics.numbers.memo)
    memo: dict = field(factory=dict)
    memo_stamp: tuple = ()
    # Per resource: the processors' speeds in BPU and their speeds less the background load
    # (papers/002); both the capacity on a dedicated homogeneous machine (runtime/engine/cluster.py)
    bpu: list[float] = field(factory=list)
    power: list[float] = field(factory=list)

    def __attrs_post_init__(self) -> None:
        if not self.bpu:
            self.bpu = [float(c) for c in self.capacity]
        if not self.power:
            self.power = list(self.bpu)

    def free(self, k: int) -> int:
        return self.capacity[k] - self.used[k]


#: The state a constant expression is folded in: time 0, no job, no resource.
CONSTANT_STATE = PassState(0, (), (), (), [])
