"""Independent checks of a simulated schedule, written without the simulator's code."""

from __future__ import annotations

import math

from schedc.runtime.engine.cluster import Cluster
from schedc.runtime.engine.schedule import Schedule


def assert_feasible(schedule: Schedule, cluster: Cluster | None = None) -> None:
    """Every job ran once, after its submission, for min(run time, estimate), and no resource
    was ever over its capacity (a sweep over start and end events). On a heterogeneous
    ``cluster`` a job's time lies between its time on the fastest processors and on the
    slowest at the highest load."""
    events: list[tuple[int, int, tuple[int, ...]]] = []
    for record in schedule.records:
        job = record.job
        assert record.start >= job.submit, f"job {job.id} starts before its submission"
        if job.moldable is not None:  # any size in its range, times by its speedup model
            m = job.moldable
            assert m.min_procs <= record.alloc[0] <= m.max_procs, f"job {job.id} size"
            assert record.alloc[1:] == job.request[1:], f"job {job.id} holds {record.alloc}"
            job = job.at_size(record.alloc[0])
        else:
            assert record.alloc == job.request, f"job {job.id} holds {record.alloc}"
        assert job.run_time <= job.estimate, f"job {job.id}"
        took = record.end - record.start
        if cluster is None:
            assert took == job.run_time, f"job {job.id}"
        elif job.run_time:
            fast = max(cluster.speeds)
            slow = min(cluster.speeds) * (1 - cluster.max_load)
            assert math.floor(job.run_time / fast) <= took <= math.ceil(job.run_time / slow), (
                f"job {job.id} took {took} for {job.run_time} on 1-BPU cpus")
        if record.end > record.start:
            events.append((record.start, 1, record.alloc))
            events.append((record.end, 0, record.alloc))  # ends sort before starts at a time
    used = [0] * len(schedule.capacities)
    for time, kind, alloc in sorted(events, key=lambda e: (e[0], e[1])):
        sign = 1 if kind == 1 else -1
        for k, amount in enumerate(alloc):
            used[k] += sign * amount
            assert used[k] <= schedule.capacities[k], (
                f"{schedule.resources[k]} overcommitted at t={time}: {used[k]}"
            )


def starts(schedule: Schedule) -> list[int]:
    return [record.start for record in schedule.records]
