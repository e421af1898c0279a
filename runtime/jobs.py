"""Job records as the simulator sees them.

A job's ``request`` is a vector with one entry per machine resource, in the order of the
policy's machine (``cpus`` is always first). ``run_time`` is what the job really runs; the
scheduler never reads it, only the event loop does.
"""

from __future__ import annotations

import functools
import math

from attrs import evolve, frozen

from schedc.runtime.speedup import Speedup


@frozen(slots=True)
class Moldable:
    """A job that may run on any size in [min_procs, max_procs]; its run time and estimate
    on n cpus follow from ``speedup`` and the values recorded at its request (``Job``)."""

    min_procs: int
    max_procs: int
    speedup: Speedup
    # (cpus, estimate) as recorded, once the job was moved to another size: times are always
    # scaled from there, so that they do not drift by rounding
    base: tuple[int, int] | None = None


def _whole_seconds(t: float) -> int:
    # up to the next second (a job never ends before its work is done), but not for a float
    # error: 100.00000000001 s is 100 s
    return math.ceil(t - 1e-9)


@functools.lru_cache(maxsize=1 << 16)
def _sequential(speedup: Speedup, estimate: int, p: int) -> int:
    # cached: a policy may read every queued job's work at every visit (fair share)
    return max(1, _whole_seconds(speedup.time_at(estimate, p, 1)))


@functools.lru_cache(maxsize=1 << 16)
def _estimate_at(speedup: Speedup, estimate: int, p: int, n: int) -> int:
    # cached: every visit of a moldable job asks for its estimate on the size it would get
    return max(1, _whole_seconds(speedup.time_at(estimate, p, n)))


@frozen(slots=True)
class Job:
    id: int  # the trace's job number
    index: int  # position in the workload file (file order, the last tie-breaker)
    submit: int  # seconds
    # seconds actually run: capped at the estimate, unless `--overrun extend` let it run on
    run_time: int
    estimate: int  # requested time, >= 1 s
    request: tuple[int, ...]  # per resource, machine order; request[0] is cpus
    moldable: Moldable | None = None  # None: rigid (a size rule changes only the cpus)
    # who submitted it and where (SWF fields 12-16; ``dsl.ir.LABEL_ATTRS``): -1 is unknown
    user: int = -1
    group: int = -1
    executable: int = -1
    queue: int = -1
    partition: int = -1

    @property
    def procs(self) -> int:
        return self.request[0]

    @property
    def min_procs(self) -> int:
        return self.request[0] if self.moldable is None else self.moldable.min_procs

    @property
    def max_procs(self) -> int:
        return self.request[0] if self.moldable is None else self.moldable.max_procs

    @property
    def work(self) -> int:
        """Effective sequential time by the estimate (cpu-seconds on one cpu): a moldable
        job's estimate scaled to 1 cpu by its speedup (paper 000's L); a rigid job's area."""
        m = self.moldable
        if m is None:
            return self.request[0] * self.estimate
        p, estimate = m.base or (self.request[0], self.estimate)
        return _sequential(m.speedup, estimate, p)

    def estimate_at(self, n: int) -> int:
        """The estimate on ``n`` cpus (``at_size(n).estimate``, without building the job)."""
        m = self.moldable
        if m is None or n == self.request[0]:
            return self.estimate
        if m.base is not None:
            raise ValueError(f"job {self.id} was already moved to {self.request[0]} cpus")
        return _estimate_at(m.speedup, self.estimate, self.request[0], n)

    def at_size(self, n: int) -> Job:
        """The job as it runs on ``n`` cpus: a moldable job's run time and estimate scale by
        its speedup (whole seconds, estimate >= 1 s, still killed at its estimate unless it
        ran past it as recorded: `--overrun extend`); a rigid job keeps its times."""
        if n == self.request[0]:
            return self
        request = (n, *self.request[1:])
        m = self.moldable
        if m is None:
            return evolve(self, request=request)
        if m.base is not None:
            raise ValueError(f"job {self.id} was already moved to {self.request[0]} cpus")
        p = self.request[0]
        estimate = self.estimate_at(n)
        run_time = _whole_seconds(m.speedup.time_at(self.run_time, p, n))
        if self.run_time <= self.estimate:  # killed at its estimate on any size, as recorded
            run_time = min(estimate, run_time)  # (a job over it, `--overrun extend`, stays over)
        return evolve(self, request=request, estimate=estimate, run_time=run_time,
                      moldable=evolve(m, base=(p, self.estimate)))

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
