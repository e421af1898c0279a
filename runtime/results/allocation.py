"""Which processors each job ran on: ids 0 .. cpus-1 of resource 0, derived from a finished
`Schedule`.

The engine counts processors; it never names them, so naming them after the run cannot
change a scheduling decision. At each instant the jobs that end free their ids first, then
the jobs that start take the lowest free ids: those of zero run time first, each freeing
them at once (it holds them over an empty interval, overlapping no other job; the simulator
may have started it, and seen it end, before another job started at the same instant on its
cpus), then the others one after another in file order. The running jobs of a replayed
state (`run --state`) started before its instant, and all still run there, so the same
sweep from their starts gives them ids too.

A heterogeneous cluster (`--speeds`, papers/002) chooses its processors by power while it
runs: there the ids are the cluster's own (`Schedule.processors`), not derived here.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Iterable, Sequence
from itertools import chain

from schedc.runtime.engine.schedule import Schedule


def processor_sets(schedule: Schedule) -> tuple[tuple[int, ...], ...]:
    """One sorted tuple of processor ids per record, in record order."""
    if schedule.processors is not None:
        return schedule.processors
    return tuple(tuple(chain.from_iterable(range(a, a + c) for a, c in mine))
                 for mine in processor_runs(schedule))


def processor_runs(schedule: Schedule) -> tuple[tuple[tuple[int, int], ...], ...]:
    """`processor_sets` as runs of consecutive ids, (first, count) in id order: what the
    jobs CSV and the Gantt chart need, without a Python object per processor (LANL-CM5's
    jobs hold 100 of its 1,024 cpus on average)."""
    if schedule.processors is not None:
        return tuple(tuple(intervals(ids)) for ids in schedule.processors)
    records = schedule.records
    # Free ids as sorted, disjoint, non-adjacent runs [a, b): a wide job takes or frees a
    # few runs, not one heap operation per processor
    free: list[list[int]] = [[0, schedule.capacities[0]]]
    holding: list[tuple[int, int]] = []  # (end, record) of the jobs holding ids: a heap
    runs: list[list[tuple[int, int]]] = [[] for _ in records]
    pop, push = heapq.heappop, heapq.heappush
    for start, _, i in sorted((r.start, r.end > r.start, i) for i, r in enumerate(records)):
        while holding and holding[0][0] <= start:  # finishes at or before this start first
            _release(free, runs[pop(holding)[1]])
        n = records[i].alloc[0]
        taken = _take(free, n)
        if taken is None:
            raise ValueError(f"job {records[i].job.id} starts at {start} on {n} cpus, but "
                             f"only {sum(b - a for a, b in free)} are free: the schedule "
                             "overcommits")
        runs[i] = taken
        if records[i].end > start:
            push(holding, (records[i].end, i))
        else:  # zero run time: free at once
            _release(free, taken)
    return tuple(tuple((a, b - a) for a, b in mine) for mine in runs)


def _take(free: list[list[int]], n: int) -> list[tuple[int, int]] | None:
    """The n lowest free ids as runs, removed from ``free``; None if fewer are free."""
    taken: list[tuple[int, int]] = []
    k = 0
    while n > 0:
        if k == len(free):  # ``free`` is unchanged: only a last, partial run changes it
            return None
        a, b = free[k]
        if b - a <= n:
            taken.append((a, b))
            n -= b - a
            k += 1
        else:
            taken.append((a, a + n))
            free[k][0] = a + n
            n = 0
    del free[:k]
    return taken


def _release(free: list[list[int]], runs: list[tuple[int, int]]) -> None:
    """Put ``runs`` back into ``free``, merging adjacent runs."""
    for a, b in runs:
        k = bisect.bisect_left(free, [a, b])
        if k > 0 and free[k - 1][1] == a:  # joins the run before it
            free[k - 1][1] = b
            if k < len(free) and free[k][0] == b:  # and the run after it
                free[k - 1][1] = free[k][1]
                del free[k]
        elif k < len(free) and free[k][0] == b:
            free[k][0] = a
        else:
            free.insert(k, [a, b])


def procset_text(ids: Iterable[int]) -> str:
    """Batsim's interval-set text: sorted ids, runs of consecutive ids as `A-B`, separated by
    one space (`0-3 8`); the empty set is the empty string."""
    return runs_text(intervals(ids))


def runs_text(runs: Sequence[tuple[int, int]]) -> str:
    """`procset_text` of runs (first, count) in id order."""
    return " ".join(str(a) if c == 1 else f"{a}-{a + c - 1}" for a, c in runs)


def intervals(ids: Iterable[int]) -> list[tuple[int, int]]:
    """Runs of consecutive ids as (first, count): one Gantt bar each."""
    ordered = sorted(ids)
    if ordered and ordered[-1] - ordered[0] + 1 == len(ordered):  # one run: the usual case
        return [(ordered[0], len(ordered))]
    runs: list[tuple[int, int]] = []
    for p in ordered:
        if runs and runs[-1][0] + runs[-1][1] == p:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((p, 1))
    return runs
