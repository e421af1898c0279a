"""A lower bound of sum(w s) that CP-SAT's relaxation does not find: split every waiting
job into w unit-width slices of its estimate, free to start apart, on the cpus as w
separate processors, each free from now or from the estimated end of the running job on
it. Minimising the slices' total start is then P, NC_inc || sum C_j (minus a constant),
solved exactly by shortest-first onto the earliest free processor (Kaspi & Montreuil 1988;
Schmidt 2000, section 4); every plan of the jobs is a plan of the slices, so it bounds
sum(w s) from below."""

from __future__ import annotations

import heapq
from collections.abc import Iterable

from schedc.runtime.tools.optimal.instance import Instance

SHIFT, MASK = 24, (1 << 24) - 1  # a group of cpus packed in one int: (free from) << SHIFT | cpus


def slice_bound(instance: Instance) -> int:
    """A lower bound of sum(w s) over the plans of ``instance`` (absolute times)."""
    now = instance.now
    held: dict[int, int] = {}
    for rj in instance.running:
        if rj.expected_end > now and rj.alloc[0]:
            held[rj.expected_end] = held.get(rj.expected_end, 0) + rj.alloc[0]
    free = instance.capacities[0] - sum(held.values())
    groups = [end << SHIFT | cpus for end, cpus in held.items()]
    if free > 0:
        groups.append(now << SHIFT | free)
    jobs = sorted(instance.jobs, key=lambda j: j.estimate)
    return slices_total(sorted(groups), ((j.estimate, j.request[0]) for j in jobs))


def slices_total(groups: list[int], jobs: Iterable[tuple[int, int]]) -> int:
    """The least sum of the slices' starts: ``jobs`` (estimate, slices), shortest first, each
    slice on the cpu free first among ``groups`` (packed, sorted; left unchanged)."""
    groups = list(groups)
    pop, push = heapq.heappop, heapq.heappush
    total = 0
    for estimate, need in jobs:
        p = estimate << SHIFT
        while need:
            g = pop(groups)
            cpus = g & MASK
            if cpus > need:
                total += (g >> SHIFT) * need
                push(groups, g - need)
                push(groups, (g - cpus + need) + p)
                break
            total += (g >> SHIFT) * cpus
            need -= cpus
            push(groups, g + p)
    return total
