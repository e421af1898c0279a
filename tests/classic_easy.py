"""Classic EASY backfilling (Lifka; Mu'alem & Feitelson), written from scratch as an oracle.

Deliberately shares nothing with ``schedc.runtime.simulator``: its own event loop, its own
running list (re-sorted when needed), the textbook shadow-time / extra-processors rule.
Only cpus. Returns the start time of each job, by the job's position in the workload.

Same instants as DESIGN: finishes, then submissions, then one pass; a zero-run-time job
ending where it started makes another pass at that instant.
"""

from __future__ import annotations

import heapq

from schedc.runtime.workload import Workload


def classic_easy_starts(workload: Workload) -> list[int]:
    jobs = workload.jobs
    capacity = workload.capacities[0]
    arrivals = sorted(range(len(jobs)), key=lambda i: (jobs[i].submit, i))
    start = [-1] * len(jobs)
    ends: list[tuple[int, int]] = []  # heap of (real end, position)
    running: dict[int, tuple[int, int]] = {}  # position -> (estimated end, procs)
    queue: list[int] = []  # FCFS: submit, then file order (arrivals are in that order)
    free = capacity
    a = 0
    while a < len(arrivals) or ends:
        t = min(jobs[arrivals[a]].submit if a < len(arrivals) else ends[0][0],
                ends[0][0] if ends else jobs[arrivals[a]].submit)
        while ends and ends[0][0] == t:
            _, pos = heapq.heappop(ends)
            free += running.pop(pos)[1]
        while a < len(arrivals) and jobs[arrivals[a]].submit == t:
            queue.append(arrivals[a])
            a += 1
        # One pass. First the head(s) of the queue, in order, while they fit.
        while queue and jobs[queue[0]].procs <= free:
            pos = queue.pop(0)
            free -= jobs[pos].procs
            start[pos] = t
            running[pos] = (t + jobs[pos].estimate, jobs[pos].procs)
            heapq.heappush(ends, (t + jobs[pos].run_time, pos))
        if not queue:
            continue
        # The head waits: its shadow time is the first estimated end at which, counting every
        # release at or before it, enough processors are free; "extra" is what is left.
        head = jobs[queue[0]]
        avail = free
        shadow = None
        for est_end, procs in sorted(running.values()):
            if shadow is not None and est_end > shadow:
                break
            avail += procs
            if avail >= head.procs:
                shadow = est_end
        assert shadow is not None
        extra = avail - head.procs
        # Backfill: a later job may start if it fits now and either ends by the shadow time
        # or uses only extra processors.
        for pos in list(queue[1:]):
            job = jobs[pos]
            if job.procs > free:
                continue
            ends_early = t + job.estimate <= shadow
            if not ends_early and job.procs > extra:
                continue
            queue.remove(pos)
            free -= job.procs
            if not ends_early:
                extra -= job.procs
            start[pos] = t
            running[pos] = (t + job.estimate, job.procs)
            heapq.heappush(ends, (t + job.run_time, pos))
    return start
