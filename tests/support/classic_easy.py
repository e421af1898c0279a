"""Classic EASY backfilling (Lifka; Mu'alem & Feitelson), written from scratch as an oracle.

Deliberately shares nothing with ``schedc.runtime.engine.simulator``: its own event loop, its own
running list (re-sorted when needed), the textbook shadow-time / extra-processors rule.
Any number of resources (vectors compared resource by resource). Returns the start time of
each job, by the job's position in the workload.

Same instants as DESIGN: finishes, then submissions, then one pass; a zero-run-time job
ending where it started makes another pass at that instant. A job may run past its estimate
(`--overrun extend`): while it does, the pass plans it to end one second later.
"""

from __future__ import annotations

import heapq

from schedc.runtime.workloads.workload import Workload


def _fits(need, have) -> bool:
    return all(n <= h for n, h in zip(need, have, strict=True))


def _minus(a, b) -> list[int]:
    return [x - y for x, y in zip(a, b, strict=True)]


def classic_easy_starts(workload: Workload) -> list[int]:
    jobs = workload.jobs
    arrivals = sorted(range(len(jobs)), key=lambda i: (jobs[i].submit, i))
    start = [-1] * len(jobs)
    ends: list[tuple[int, int]] = []  # heap of (real end, position)
    running: dict[int, tuple[int, tuple[int, ...]]] = {}  # position -> (estimated end, req)
    queue: list[int] = []  # FCFS: submit, then file order (arrivals are in that order)
    free = list(workload.capacities)
    a = 0

    def begin(pos: int, t: int) -> None:
        nonlocal free
        free = _minus(free, jobs[pos].request)
        start[pos] = t
        running[pos] = (t + jobs[pos].estimate, jobs[pos].request)
        heapq.heappush(ends, (t + jobs[pos].run_time, pos))

    while a < len(arrivals) or ends:
        t = min(jobs[arrivals[a]].submit if a < len(arrivals) else ends[0][0],
                ends[0][0] if ends else jobs[arrivals[a]].submit)
        while ends and ends[0][0] == t:
            _, pos = heapq.heappop(ends)
            free = [f + r for f, r in zip(free, running.pop(pos)[1], strict=True)]
        while a < len(arrivals) and jobs[arrivals[a]].submit == t:
            queue.append(arrivals[a])
            a += 1
        # One pass. First the head(s) of the queue, in order, while they fit.
        while queue and _fits(jobs[queue[0]].request, free):
            begin(queue.pop(0), t)
        if not queue:
            continue
        # The head waits: its shadow time is the first estimated end at which, counting every
        # release at or before it, it fits; "extra" is what is left then.
        head = jobs[queue[0]]
        avail = list(free)
        shadow = None
        # a job past its estimate (`--overrun extend`) is planned to end a second from now
        for est_end, req in sorted((max(e, t + 1), r) for e, r in running.values()):
            if shadow is not None and est_end > shadow:
                break
            avail = [x + r for x, r in zip(avail, req, strict=True)]
            if _fits(head.request, avail):
                shadow = est_end
        assert shadow is not None
        extra = _minus(avail, head.request)
        # Backfill: a later job may start if it fits now and either ends by the shadow time
        # or fits in the extra resources.
        for pos in list(queue[1:]):
            job = jobs[pos]
            if not _fits(job.request, free):
                continue
            ends_early = t + job.estimate <= shadow
            if not ends_early and not _fits(job.request, extra):
                continue
            queue.remove(pos)
            if not ends_early:
                extra = _minus(extra, job.request)
            begin(pos, t)
    return start
