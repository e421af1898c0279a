"""The outcome of a simulation: when each job ran and what it held."""

from __future__ import annotations

from typing import TYPE_CHECKING

from attrs import frozen

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


@frozen
class Schedule:
    records: tuple[JobRecord, ...]  # file order: records[i].job is workload.jobs[i]
    capacities: tuple[int, ...]
    resources: tuple[str, ...]
    policy_name: str
    passes: int  # scheduling passes run
    workload: Workload
    tuning: TuningRecord | None = None  # a self-tuning dynP policy's steps and switches
    # A heterogeneous cluster's processor ids per record (the ones it chose by power, in
    # id order); None: ids are derived after the run (`runtime/results/allocation.py`)
    processors: tuple[tuple[int, ...], ...] | None = None
