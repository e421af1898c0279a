"""A lower bound of sum(w s) that CP-SAT's relaxation does not find: split every waiting
job into w unit-width slices of its estimate, free to start apart, on the cpus as w
separate processors, each free from now or from the estimated end of the running job on
it. Minimising the slices' total start is then P, NC_inc || sum C_j (minus a constant),
solved exactly by shortest-first onto the earliest free processor (Kaspi & Montreuil 1988;
Schmidt 2000, section 4); every plan of the jobs is a plan of the slices, so it bounds
sum(w s) from below."""

from __future__ import annotations

import heapq

from schedc.runtime.optimal.instance import Instance


def slice_bound(instance: Instance) -> int:
    """A lower bound of sum(w s) over the plans of ``instance`` (absolute times)."""
    now = instance.now
    free = [now] * (instance.capacities[0] - sum(rj.alloc[0] for rj in instance.running
                                                 if rj.expected_end > now))
    for rj in instance.running:
        if rj.expected_end > now:
            free += [rj.expected_end] * rj.alloc[0]
    heapq.heapify(free)
    total = 0
    for job in sorted(instance.jobs, key=lambda j: j.estimate):
        for _ in range(job.request[0]):
            t = heapq.heappop(free)
            total += t
            heapq.heappush(free, t + job.estimate)
    return total
