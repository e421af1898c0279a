"""Conservative backfilling on K resources (Mu'alem & Feitelson), written from scratch as an
oracle: at every instant, each waiting job in FCFS order gets the earliest start at which it
fits for its estimate beside the running jobs (held to their estimated ends) and the
reservations of the jobs before it; the jobs whose start is now start. Brute force over the
instants where usage can drop, sharing nothing with ``schedc.runtime``.

Same instants as classic_easy.py: finishes, then submissions, then one pass; a job past its
estimate is held until a second from now, as there.
"""

from __future__ import annotations

import heapq

from schedc.runtime.workloads.workload import Workload

Hold = tuple[int, int, tuple[int, ...]]  # [start, end) holding a request


def _fits(holds: list[Hold], caps: tuple[int, ...], start: int, end: int,
          req: tuple[int, ...]) -> bool:
    # usage over [start, end) peaks at start or where a hold begins inside the window
    for at in {start} | {s for s, _, _ in holds if start < s < end}:
        for k, cap in enumerate(caps):
            if sum(r[k] for s, e, r in holds if s <= at < e) + req[k] > cap:
                return False
    return True


def classic_conservative_starts(workload: Workload) -> list[int]:
    jobs = workload.jobs
    caps = workload.capacities
    arrivals = sorted(range(len(jobs)), key=lambda i: (jobs[i].submit, i))
    start = [-1] * len(jobs)
    ends: list[tuple[int, int]] = []  # heap of (real end, position)
    running: dict[int, Hold] = {}  # position -> (start, estimated end, request)
    queue: list[int] = []
    a = 0
    while a < len(arrivals) or ends:
        t = min([jobs[arrivals[a]].submit] if a < len(arrivals) else [],
                default=ends[0][0] if ends else 0)
        if ends:
            t = min(t, ends[0][0])
        while ends and ends[0][0] == t:
            running.pop(heapq.heappop(ends)[1])
        while a < len(arrivals) and jobs[arrivals[a]].submit == t:
            queue.append(arrivals[a])
            a += 1
        # a job past its estimate (`--overrun extend`) is held until a second from now
        holds = [(t, max(e, t + 1), r) for _, e, r in running.values()]
        for pos in list(queue):
            job = jobs[pos]
            candidates = sorted({t} | {e for _, e, _ in holds if e > t})
            when = next(s for s in candidates
                        if _fits(holds, caps, s, s + job.estimate, job.request))
            holds.append((when, when + job.estimate, job.request))
            if when == t:
                queue.remove(pos)
                start[pos] = t
                running[pos] = (t, t + job.estimate, job.request)
                heapq.heappush(ends, (t + job.run_time, pos))
    return start
