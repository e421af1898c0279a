"""The outcome of a simulation: when each job ran and what it held."""

from __future__ import annotations

from typing import TYPE_CHECKING

from attrs import frozen

from schedc.runtime.engine.lifecycle import Segment
from schedc.runtime.jobs import Job
from schedc.runtime.workloads.workload import Workload

if TYPE_CHECKING:
    from schedc.runtime.engine.tuning import TuningRecord


@frozen(slots=True)
class JobRecord:
    job: Job
    start: int
    end: int  # start + job.run_time
    alloc: tuple[int, ...]  # per resource, what it held

    @property
    def wait(self) -> int:
        return self.start - self.job.submit

    @property
    def response(self) -> int:
        return self.end - self.job.submit


@frozen(slots=True)
class Preempted:
    """What preemption did to one job of a preemptive run (``preemptive.py``)."""

    ran: int  # seconds it ran (its run time on its size: never the suspended time)
    suspensions: int
    requeues: int
    suspended: int  # seconds suspended
    lost: int  # processor-seconds run whose work a requeue threw away
    overhead: int  # processor-seconds held while dispatching or checkpointing (the costs)
    segments: tuple[Segment, ...]  # its life, phase by phase
    checkpoints: int = 0  # preemptions by checkpoint (then stopped: migratable)
    stopped: int = 0  # seconds stopped after a checkpoint, until it started again
    # processor-seconds of useful work (its runs but those a requeue lost): its area when
    # its size changed between runs (adaptive and malleable); None: ``ran`` x its cpus
    cpu_time: int | None = None


@frozen(slots=True)
class PreemptionTotals:
    """What a preemptive run measured beyond its jobs' lives (``preemptive.py``)."""

    held_idle: int  # processor-seconds free but claimed: idle, held for a job to start
    most_resident: int  # the most jobs with processes on one processor at any time


@frozen(slots=True)
class Departure:
    """The first pass of a preemptive run that starts from a state schedc verify's proofs do
    not cover (``preemptive_checks.Assumptions``): which assumption (``kind``), when, the
    job, and the sentence a run warning says."""

    kind: str
    time: int
    job: int
    message: str


@frozen
class Schedule:
    records: tuple[JobRecord, ...]  # file order: records[i].job is workload.jobs[i]
    capacities: tuple[int, ...]
    resources: tuple[str, ...]
    policy_name: str
    passes: int  # scheduling passes run
    workload: Workload
    tuning: TuningRecord | None = None  # a self-tuning dynP policy's steps and switches
    # Per record, the processor ids a heterogeneous cluster chose (by power) or a preemptive
    # job ran on, in id order; None: ids are derived after the run (`results/allocation.py`)
    processors: tuple[tuple[int, ...], ...] | None = None
    # A preemptive run's per-record ``Preempted`` (then a record's start is its first start
    # and its end its completion); None: every job ran from start to end
    preempted: tuple[Preempted, ...] | None = None
    preemption_totals: PreemptionTotals | None = None
    # a preemptive run's passes outside what schedc verify's proofs assume, each kind once
    departures: tuple[Departure, ...] = ()

    def ran(self) -> list[int]:
        """Per record, the seconds the job ran (end - start unless it was preempted)."""
        if self.preempted is not None:
            return [p.ran for p in self.preempted]
        return [r.end - r.start for r in self.records]
