"""Which processors each job ran on: ids 0 .. cpus-1 of resource 0, derived from a finished
`Schedule`.

The engine counts processors; it never names them, so naming them after the run cannot
change a scheduling decision. At each instant the jobs that end free their ids first, then
the jobs that start take the lowest free ids, one after another in file order. A job of zero
run time takes ids at its start and frees them at once (it holds them over an empty
interval). The running jobs of a replayed state (`run --state`) started before its instant,
and all still run there, so the same sweep from their starts gives them ids too.

A heterogeneous cluster (`--speeds`, papers/002) chooses its processors by power while it
runs: there the ids are the cluster's own (`Schedule.processors`), not derived here.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable

from schedc.runtime.schedule import Schedule


def processor_sets(schedule: Schedule) -> tuple[tuple[int, ...], ...]:
    """One sorted tuple of processor ids per record, in record order."""
    if schedule.processors is not None:
        return schedule.processors
    records = schedule.records
    ends: list[tuple[int, int]] = []  # (end, record) of the jobs holding ids
    free = list(range(schedule.capacities[0]))  # a heap: lowest id first
    given: list[tuple[int, ...]] = [()] * len(records)
    pop, push = heapq.heappop, heapq.heappush
    for start, i in sorted((r.start, i) for i, r in enumerate(records)):
        while ends and ends[0][0] <= start:  # finishes at or before this start come first
            for p in given[pop(ends)[1]]:
                push(free, p)
        n = records[i].alloc[0]
        if n > len(free):
            raise ValueError(f"job {records[i].job.id} starts at {start} on {n} cpus, but "
                             f"only {len(free)} are free: the schedule overcommits")
        ids = tuple(sorted(pop(free) for _ in range(n)))
        given[i] = ids
        if records[i].end > start:
            push(ends, (records[i].end, i))
        else:  # zero run time: free at once
            for p in ids:
                push(free, p)
    return tuple(given)


def procset_text(ids: Iterable[int]) -> str:
    """Batsim's interval-set text: sorted ids, runs of consecutive ids as `A-B`, separated by
    one space (`0-3 8`); the empty set is the empty string."""
    parts: list[str] = []
    ordered = sorted(ids)
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return " ".join(parts)


def intervals(ids: Iterable[int]) -> list[tuple[int, int]]:
    """Runs of consecutive ids as (first, count): one Gantt bar each."""
    runs: list[tuple[int, int]] = []
    for p in sorted(ids):
        if runs and runs[-1][0] + runs[-1][1] == p:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((p, 1))
    return runs
