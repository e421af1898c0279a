"""The quasi off-line instance of papers/001 (section 4): at ``now`` the waiting jobs are
fixed; the running jobs hold their allocations until their estimated ends (the paper's
free-resource steps). Built from a state's machine, or from a simulated run at an instant.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Mapping, Sequence

from attrs import evolve, frozen

from schedc.runtime.engine.machine import Machine
from schedc.runtime.engine.schedule import Schedule
from schedc.runtime.jobs import Job, RunningJob
from schedc.runtime.workloads.state_file import InitialState


@frozen
class Instance:
    now: int
    resources: tuple[str, ...]
    capacities: tuple[int, ...]
    running: tuple[RunningJob, ...]  # each holds its alloc on [now, expected_end)
    jobs: tuple[Job, ...]  # the waiting jobs (rigid: request and estimate as planned)

    @property
    def horizon(self) -> int:
        """A safe latest end: the serial schedule of any order ends by then (every running
        job has ended by the latest estimated end, then the jobs one after another)."""
        last = max((rj.expected_end for rj in self.running), default=self.now)
        return max(last, self.now) + sum(j.estimate for j in self.jobs)


# What the solvers hold exactly: the slice bound packs a group of cpus in 24 bits, and every
# sum(width x start) of a plan (CP-SAT's int64 objective, the metrics' floats) below 2^53
MAX_CPUS = (1 << 24) - 1
MAX_OBJECTIVE = 1 << 53


def too_large(instance: Instance) -> str | None:
    """Why the solvers cannot plan ``instance`` exactly (None: they can)."""
    if instance.capacities and instance.capacities[0] > MAX_CPUS:
        return (f"the machine has {instance.capacities[0]:,} {instance.resources[0]}: the "
                f"solvers plan at most {MAX_CPUS:,}")
    widest = sum(j.request[0] for j in instance.jobs) * instance.horizon
    if widest >= MAX_OBJECTIVE:
        return (f"at t={instance.now} the waiting jobs' widths times the horizon "
                f"({instance.horizon:,} s) reach {widest:.3g}: the solvers' objective "
                "holds at most 2^53")
    return None


def weighted_starts(instance: Instance, starts: Mapping[int, int]) -> int:
    """sum(width x start) of a plan (job index -> start): the objective both solvers
    minimise."""
    return sum(j.request[0] * starts[j.index] for j in instance.jobs)


def identical_jobs(instance: Instance) -> dict[tuple[tuple[int, ...], int], list[int]]:
    """(request, estimate) -> the indices of the waiting jobs with it, in instance order:
    jobs of one group are interchangeable in any plan."""
    groups: dict[tuple[tuple[int, ...], int], list[int]] = {}
    for job in instance.jobs:
        groups.setdefault((job.request, job.estimate), []).append(job.index)
    return groups


def instance_of(machine: Machine, now: int, resources: Sequence[str]) -> Instance:
    """The instance a machine (``machine_at``) holds at ``now``."""
    return Instance(now, tuple(resources), tuple(machine.cap), tuple(machine.running),
                    tuple(sorted(machine.queue, key=lambda j: j.index)))


def moldable_jobs(instance: Instance) -> list[Job]:
    """Waiting jobs whose size a policy may choose: the model plans rigid jobs only."""
    return [j for j in instance.jobs if j.moldable is not None]


def queue_sizes(schedule: Schedule) -> dict[int, int]:
    """Each submission instant -> how many jobs wait right before its pass (submitted by
    then and not started before it)."""
    jobs = [r.job for r in schedule.records]
    submits = sorted(j.submit for j in jobs)
    starts = sorted(r.start for r in schedule.records)
    return {t: bisect.bisect_right(submits, t) - bisect.bisect_left(starts, t)
            for t in sorted(set(submits))}


def sample_steps(schedule: Schedule, steps: int, seed: int, min_jobs: int, max_jobs: int
                 ) -> list[int]:
    """``steps`` submission instants whose queue holds ``min_jobs``..``max_jobs`` jobs, drawn
    with ``seed`` (the same for the same run), in time order."""
    fits = [t for t, n in queue_sizes(schedule).items() if min_jobs <= n <= max_jobs]
    return sorted(random.Random(seed).sample(fits, min(steps, len(fits))))


def state_at(schedule: Schedule, t: int, source: str) -> InitialState:
    """The run's machine at instant ``t``, before its pass: running are the jobs started
    before ``t`` that end after it, waiting those submitted by ``t`` and not started before."""
    running, queued = [], []
    for r in schedule.records:
        if r.start < t < r.end:
            running.append(r)
        elif r.job.submit <= t <= r.start:
            queued.append(r.job)
    # a job past its estimate (`--overrun extend`) as the pass at ``t`` plans it: ending at
    # t + 1 (``Machine.extend_overdue``)
    held = [RunningJob(evolve(r.job, index=i, estimate=max(r.job.estimate, t + 1 - r.start)),
                       r.start, r.alloc) for i, r in enumerate(running)]
    base = len(held)
    waiting = tuple(evolve(j, index=base + i) for i, j in enumerate(queued))
    return InitialState(now=t, resources=schedule.resources, capacities=schedule.capacities,
                        running=tuple(held), queue=waiting, source=f"{source} at t={t}")
