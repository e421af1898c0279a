"""Job records as the simulator sees them.

A job's ``request`` is a vector with one entry per machine resource, in the order of the
policy's machine (``cpus`` is always first). ``run_time`` is what the job really runs; the
scheduler never reads it, only the event loop does.
"""

from __future__ import annotations

from attrs import frozen


@frozen(slots=True)
class Job:
    id: int  # the trace's job number
    index: int  # position in the workload file (file order, the last tie-breaker)
    submit: int  # seconds
    run_time: int  # seconds actually run, already capped at the estimate
    estimate: int  # requested time, >= 1 s
    request: tuple[int, ...]  # per resource, machine order; request[0] is cpus

    @property
    def procs(self) -> int:
        return self.request[0]

    @property
    def area(self) -> int:
        return self.request[0] * self.estimate


@frozen(slots=True)
class RunningJob:
    job: Job
    start: int
    # what it holds, per resource (the request unless a size rule changed cpus)
    alloc: tuple[int, ...]

    @property
    def expected_end(self) -> int:
        """When the scheduler must assume it ends: start + estimate (it is killed there)."""
        return self.start + self.job.estimate

    @property
    def end(self) -> int:
        """When it really ends (only the event loop may read this)."""
        return self.start + self.job.run_time
