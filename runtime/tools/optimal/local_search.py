"""Better plans, fast, by simulated annealing over job orders: the upper bound the event
search prunes with and the hint CP-SAT starts from.

A plan is decoded from an order by the serial schedule generation scheme (each job in turn
at the earliest instant from its release on where it fits for its whole estimate, on every
resource); for this regular objective some order decodes to an optimum, so the walk over
orders can reach one. A move takes a job out of the order and puts it elsewhere, or swaps
two jobs (never two identical ones: the same plan); a worse order is kept with Metropolis'
probability, at a temperature falling linearly to nothing by the deadline. Every better plan
goes to the shared ``Incumbent``. Nothing here proves anything: it only finds plans.

Why: on instances of 20 to 40 jobs CP-SAT's plans can stay a few percent above what this
finds in a second or two (benchmarks/bench_optimal.py measures both)."""

from __future__ import annotations

import bisect
import math
import random
import time
from collections.abc import Callable, Sequence

from schedc.runtime.tools.optimal.instance import Instance, identical_jobs
from schedc.runtime.tools.optimal.search import Incumbent, applicable

START_TEMPERATURE = 0.002  # of the first plan's sum(w (s - now)): a worse plan by that is kept
# with probability 1/e at the start (tried 0.0005 to 0.01 on the 40-job benchmark instance)
CHECK_EVERY = 8  # moves between two looks at the clock (a move of 200 jobs takes about 1 ms)


class SerialDecoder:
    """Orders of ``instance``'s waiting jobs -> plans (job index -> start)."""

    def __init__(self, instance: Instance) -> None:
        now = instance.now
        self.now = now
        self.k = len(instance.capacities)
        self.jobs = {j.index: (j.request, j.estimate, max(now, j.submit))
                     for j in instance.jobs}
        # the free vector from now on: steps up at the running jobs' estimated ends
        releases: dict[int, list[int]] = {}
        for rj in instance.running:
            if rj.expected_end > now:
                held = releases.setdefault(rj.expected_end, [0] * self.k)
                for k in range(self.k):
                    held[k] += rj.alloc[k]
        free = [c - sum(r[k] for r in releases.values())
                for k, c in enumerate(instance.capacities)]
        self.times = [now]
        self.free = [[f] for f in free]
        for end in sorted(releases):
            self.times.append(end)
            for k in range(self.k):
                free[k] += releases[end][k]
                self.free[k].append(free[k])

    def starts(self, order: Sequence[int]) -> tuple[dict[int, int], int]:
        """The serial plan of ``order`` and its sum(w (s - now))."""
        if self.k == 1:
            return self._starts_one(order)
        times = self.times[:]
        free = [f[:] for f in self.free]
        ks = range(self.k)
        starts: dict[int, int] = {}
        total = 0
        for index in order:
            request, estimate, release = self.jobs[index]
            i = bisect.bisect_right(times, release) - 1  # release >= now = times[0]
            while True:  # the first segment from which the job fits for its estimate
                if all(free[k][i] >= request[k] for k in ks):
                    start = max(times[i], release)
                    end = start + estimate
                    j = i + 1
                    while j < len(times) and times[j] < end and all(
                            free[k][j] >= request[k] for k in ks):
                        j += 1
                    if j == len(times) or times[j] >= end:
                        break
                    i = j  # segment j is too full: the job starts after it at the earliest
                i += 1
            if times[i] < start:  # the release splits segment i
                i += 1
                times.insert(i, start)
                for k in ks:
                    free[k].insert(i, free[k][i - 1])
            last = bisect.bisect_left(times, end)
            if last == len(times) or times[last] != end:
                times.insert(last, end)
                for k in ks:
                    free[k].insert(last, free[k][last - 1])
            for k in ks:
                if request[k]:
                    column = free[k]
                    for q in range(i, last):
                        column[q] -= request[k]
            starts[index] = start
            total += request[0] * (start - self.now)
        return starts, total

    def _starts_one(self, order: Sequence[int]) -> tuple[dict[int, int], int]:
        """``starts`` on one resource: the same walk on flat lists, 5 times faster."""
        times = self.times[:]
        free = self.free[0][:]
        starts: dict[int, int] = {}
        total = 0
        now = self.now
        for index in order:
            request, estimate, release = self.jobs[index]
            w = request[0]
            i = bisect.bisect_right(times, release) - 1
            n = len(times)
            while True:
                if free[i] >= w:
                    start = times[i] if times[i] > release else release
                    end = start + estimate
                    j = i + 1
                    while j < n and times[j] < end and free[j] >= w:
                        j += 1
                    if j == n or times[j] >= end:
                        break
                    i = j
                i += 1
            if times[i] < start:
                i += 1
                times.insert(i, start)
                free.insert(i, free[i - 1])
            last = bisect.bisect_left(times, end)
            if last == len(times) or times[last] != end:
                times.insert(last, end)
                free.insert(last, free[last - 1])
            for q in range(i, last):
                free[q] -= w
            starts[index] = start
            total += w * (start - now)
        return starts, total


def anneal(instance: Instance, best: Incumbent, deadline: float,
           stop: Callable[[], bool] | None = None, seed: int = 0,
           max_moves: int | None = None) -> int:
    """Improve ``best`` by annealing until ``deadline`` (perf_counter) or ``stop()``, from
    its plan's order (or shortest first, when it has none); return the moves made. With
    ``max_moves`` the temperature falls with the moves, not the clock, and the walk is the
    same on every machine (for tests)."""
    if len(instance.jobs) < 2 or not applicable(instance):
        return 0
    plan, _ = best.plan()
    decode = SerialDecoder(instance)
    if plan is None:
        order = sorted(decode.jobs, key=lambda i: (decode.jobs[i][1], i))
    else:
        order = sorted(plan, key=lambda i: (plan[i], i))
    current, value = decode.starts(order)
    lowest = value
    best.offer(current)
    if len(identical_jobs(instance)) < 2:  # every order is the same plan
        return 0
    shape = {i: (request, estimate) for i, (request, estimate, _) in decode.jobs.items()}
    rng = random.Random(seed)
    n = len(order)
    began = time.perf_counter()
    span = max(deadline - began, 1e-9)
    temperature = START_TEMPERATURE * max(value, 1)
    moves = 0
    cooling = temperature
    while True:
        if moves % CHECK_EVERY == 0:
            clock = time.perf_counter()
            if clock >= deadline or (stop is not None and stop()):
                return moves
            cooling = temperature * (1 - (clock - began) / span)
        if max_moves is not None:
            if moves >= max_moves:
                return moves
            cooling = temperature * (1 - moves / max_moves)
        moves += 1
        a, b = rng.randrange(n), rng.randrange(n)
        if shape[order[a]] == shape[order[b]]:
            continue
        trial = order[:]
        if rng.random() < 0.5:
            trial.insert(b, trial.pop(a))
        else:
            trial[a], trial[b] = trial[b], trial[a]
        starts, v = decode.starts(trial)
        if v <= value or (cooling > 0 and rng.random() < math.exp((value - v) / cooling)):
            order, value = trial, v
            if v < lowest:
                lowest = v
                best.offer(starts)

