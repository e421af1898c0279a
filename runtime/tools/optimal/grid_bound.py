"""A second redundant lower bound of sum(w s), from the LP relaxation of a time-indexed
model on a coarse grid: unlike the slice bound it keeps each job's width together in time.

Time (relative to now) is cut into slots, short near now and growing geometrically (a late
start rounded down by 1% loses as little as an early one rounded down by a minute). x[j, k]
says job j starts in slot k, between its earliest start (the running jobs leave its width
free) and its latest in a plan no worse than the hint. The relaxation holds every such plan:
a start in slot k costs w * the least start the slot allows, never more than the plan's
w s, and in each slot u job j covers at least the least area any start in slot k gives it
there (the overlap of [s, s + p) with slot u is unimodal in s, so its least value is at an
end of the range); the running jobs' area in u is exact.

Clique rows add what area alone misses (a job too wide to run beside another leaves the
rest of the cpus idle): in a slot where at most F cpus are free, jobs pairwise wider than F
together (the k widest that fit, for each k) run one at a time, and none of them beside a
job j with w_j + (the narrowest of them) > F; so F x their time plus those jobs' area is at
most F x the slot's length (`clique_rows`).

The LP is solved by GLOP (ortools, imported inside ``_solve_lp``), but the bound is not
GLOP's objective: it is the Lagrangian value of its capacity duals clipped to <= 0, which
bounds the optimum for any such duals whatever GLOP's tolerances, less a margin for the
floating-point sums.
"""

from __future__ import annotations

import bisect
import itertools
import math
import time
from collections.abc import Sequence
from typing import Any

from attrs import frozen

from schedc.runtime.tools.optimal.instance import Instance

# a slot is at most this share of its start (and at least MIN_SLOT long): fine slots near
# now, where the starts of the optimum lie, coarse ones later, so the LP stays small
GROWTH = 0.005
MIN_SLOT = 10
MAX_COLUMNS = 20_000  # above this the grid is coarsened: the LP stays at a few seconds
CHECK_EVERY = 16  # jobs or slots between two looks at the clock while the LP is built
# dual simplex: an order of magnitude faster than the primal default on these LPs; its
# costs perturbed: unperturbed, it cycled until the time limit on a degenerate LP of 5 jobs
# (the hypothesis test's example)
PARAMS = "use_dual_simplex: true perturb_costs_in_dual_simplex: true"
PRIMAL = "use_dual_simplex: false"  # when the dual simplex fails all the same


class _OutOfTime(Exception):
    pass


def _look(deadline: float | None, step: int) -> None:
    """Give up at ``deadline`` (perf_counter), looked at every CHECK_EVERY steps: building
    the LP of 200 jobs took seconds before GLOP's own limit began."""
    if deadline is not None and step % CHECK_EVERY == 0 and time.perf_counter() > deadline:
        raise _OutOfTime


@frozen
class Column:
    job: int  # position in instance.jobs
    cost: int  # w * the slot's earliest start for the job
    width: int
    partial: tuple[tuple[int, int], ...]  # (slot, least area of the job in it) if not full
    full: tuple[int, int]  # slots first..last (inclusive, maybe empty) covered in full


@frozen
class Row:
    """A clique row: sum of factor[job] x the job's area in ``slot`` <= ``rhs``."""
    slot: int
    rhs: int
    factor: dict[int, float]  # job position -> coefficient of its area


def earliest_starts(instance: Instance) -> list[int]:
    """Per waiting job, the first instant (relative to now) from which the running jobs leave
    its width free for good; running jobs only end, so a job never starts before it."""
    cap = instance.capacities[0]
    ends = sorted((rj.expected_end - instance.now, rj.alloc[0]) for rj in instance.running
                  if rj.expected_end > instance.now)
    out = []
    for job in instance.jobs:
        free, t = cap - sum(a for _, a in ends), 0
        for end, alloc in ends:
            if free >= job.request[0]:
                break
            free, t = free + alloc, end
        out.append(t)
    return out


def latest_starts(instance: Instance, earliest: Sequence[int], upper: int) -> list[int]:
    """Per job, the latest start (relative to now) of a plan with sum(w s) <= ``upper``
    (absolute): the other jobs start no earlier than their earliest starts."""
    widths = [j.request[0] for j in instance.jobs]
    rest = upper - instance.now * sum(widths) - sum(w * e for w, e in zip(widths, earliest,
                                                                          strict=True))
    horizon = instance.horizon - instance.now
    return [horizon - j.estimate if w == 0 else min(horizon - j.estimate, e + rest // w)
            for j, w, e in zip(instance.jobs, widths, earliest, strict=True)]


def grid(instance: Instance, end: int, growth: float, min_slot: int) -> list[int]:
    """Slot boundaries from 0 to at least ``end``: geometric, plus the running jobs' ends."""
    points = [0]
    while points[-1] < end:
        points.append(max(points[-1] + min_slot, math.ceil(points[-1] * (1 + growth))))
    ends = {rj.expected_end - instance.now for rj in instance.running}
    return sorted(set(points) | {e for e in ends if 0 < e < points[-1]})


def _overlap(s: int, p: int, a: int, b: int) -> int:
    return max(0, min(s + p, b) - max(s, a))


def column_count(bounds: Sequence[int], earliest: Sequence[int], latest: Sequence[int]
                 ) -> int:
    """How many columns `columns` makes (the slots between each job's earliest and latest
    start), counted without making them."""
    last = len(bounds) - 2
    total = 0
    for lo, hi in zip(earliest, latest, strict=True):
        if lo <= hi:
            first = bisect.bisect_right(bounds, lo) - 1
            total += max(0, min(bisect.bisect_right(bounds, hi) - 1, last) - first + 1)
    return total


def columns(instance: Instance, bounds: Sequence[int], earliest: Sequence[int],
            latest: Sequence[int], deadline: float | None = None) -> list[Column]:
    out = []
    for n, job in enumerate(instance.jobs):
        _look(deadline, n)
        w, p = job.request[0], job.estimate
        for k in range(len(bounds) - 1):
            lo, hi = max(bounds[k], earliest[n]), min(bounds[k + 1] - 1, latest[n])
            if lo > hi:
                continue
            # slots covered in full by every start in [lo, hi]: a >= hi and b <= lo + p
            first = bisect.bisect_left(bounds, hi)
            last = bisect.bisect_right(bounds, lo + p) - 2
            partial = []
            for u in itertools.chain(range(k, min(first, len(bounds) - 1)),
                                     range(max(last + 1, first, k), len(bounds) - 1)):
                a, b = bounds[u], bounds[u + 1]
                if a >= hi + p:
                    break
                least = min(_overlap(lo, p, a, b), _overlap(hi, p, a, b))
                if least:
                    partial.append((u, w * least))
            out.append(Column(n, w * lo, w, tuple(partial), (first, last)))
    return out


def grid_bound(instance: Instance, upper: int, seconds: float, *, growth: float | None = None,
               min_slot: int | None = None) -> int | None:
    """A lower bound of sum(w s) (absolute times) over the plans of ``instance`` whose
    sum(w s) is at most ``upper``, or None when building the LP and GLOP together need more
    than ``seconds``, or GLOP fails. Only the first resource (cpus) is modelled: dropping
    the others relaxes the problem."""
    if not instance.jobs:
        return 0
    deadline = time.perf_counter() + seconds
    growth = GROWTH if growth is None else growth
    min_slot = MIN_SLOT if min_slot is None else min_slot
    earliest = earliest_starts(instance)
    latest = latest_starts(instance, earliest, upper)
    end = max(s + j.estimate for s, j in zip(latest, instance.jobs, strict=True))
    try:
        bounds = grid(instance, end, growth, min_slot)
        while column_count(bounds, earliest, latest) > MAX_COLUMNS:  # counted, not made
            growth, min_slot = growth * 2, min_slot * 2
            bounds = grid(instance, end, growth, min_slot)
        cols = columns(instance, bounds, earliest, latest, deadline)
        room = slot_room(instance, bounds)
        cliques = clique_rows(instance, bounds, deadline)
        duals = _solve_lp(bounds, room, cols, cliques, deadline)
    except _OutOfTime:
        return None
    if duals is None:
        return None
    widths = sum(j.request[0] for j in instance.jobs)
    return instance.now * widths + lagrangian(bounds, room, cols, duals, len(instance.jobs),
                                              cliques)


def slot_room(instance: Instance, bounds: Sequence[int]) -> list[int]:
    """Per slot, the cpu area the running jobs leave free."""
    cap, now = instance.capacities[0], instance.now
    room = []
    for a, b in zip(bounds, bounds[1:], strict=False):
        held = sum(rj.alloc[0] * _overlap(0, rj.expected_end - now, a, b)
                   for rj in instance.running if rj.expected_end > now)
        room.append(cap * (b - a) - held)
    return room


def clique_rows(instance: Instance, bounds: Sequence[int], deadline: float | None = None
                ) -> list[Row]:
    """Per slot, for k = 1, 2, ... while the k widest jobs that fit its free cpus F pairwise
    conflict (any two wider than F together): factor F / w for them (one runs at a time,
    so their rate is F), 1 for the other jobs wider than F minus the narrowest of them (none
    runs beside any of them), rhs F x length. F is the most the running jobs leave free in
    the slot (they only end), so the conflicts and the rhs hold at every instant of it."""
    cap, now = instance.capacities[0], instance.now
    widths = [j.request[0] for j in instance.jobs]
    rows = []
    for u, (a, b) in enumerate(zip(bounds, bounds[1:], strict=False)):
        _look(deadline, u)
        free = cap - sum(rj.alloc[0] for rj in instance.running if rj.expected_end - now >= b)
        fit = sorted((n for n, w in enumerate(widths) if 0 < w <= free), key=lambda n: -widths[n])
        for k in range(1, len(fit) + 1):
            if k > 1 and widths[fit[k - 2]] + widths[fit[k - 1]] <= free:
                break
            narrowest = widths[fit[k - 1]]
            factor = {n: free / widths[n] for n in fit[:k]}
            factor.update({n: 1.0 for n in fit[k:] if widths[n] + narrowest > free})
            if any(f != 1.0 for f in factor.values()) or len(factor) < len(fit):
                rows.append(Row(u, free * (b - a), factor))
    return rows


def _solve_lp(bounds: Sequence[int], room: Sequence[int], cols: Sequence[Column],
              cliques: Sequence[Row], deadline: float) -> list[float] | None:
    """GLOP's capacity duals, or None. A column's full slots enter through prefix sums
    P[j, k] = x[j, first column of j] + ... + x[j, k]: slot u's full coverers are a run of
    consecutive columns of a job, so two entries per job and slot instead of one per
    column and slot."""
    from ortools.linear_solver import pywraplp

    solver = pywraplp.Solver.CreateSolver("GLOP")
    solver.SetSolverSpecificParametersAsString(PARAMS)
    inf = solver.infinity()
    rows = [solver.Constraint(-inf, r) for r in room]
    extra = [solver.Constraint(-inf, r.rhs) for r in cliques]
    in_slot: dict[int, list[tuple[Any, Row]]] = {}
    for row, r in zip(extra, cliques, strict=True):
        in_slot.setdefault(r.slot, []).append((row, r))
    objective = solver.Objective()
    for n, (_, group) in enumerate(itertools.groupby(cols, key=lambda c: c.job)):
        _look(deadline, n)
        mine = list(group)
        prefix, before = [], None
        for col in mine:
            x = solver.NumVar(0, 1, "")
            objective.SetCoefficient(x, col.cost)
            for u, area in col.partial:
                rows[u].SetCoefficient(x, area)
                for row, r in in_slot.get(u, ()):
                    if col.job in r.factor:
                        row.SetCoefficient(x, r.factor[col.job] * area)
            p = solver.NumVar(0, 1, "")
            link = solver.Constraint(0, 0)  # p = before + x
            link.SetCoefficient(p, 1)
            link.SetCoefficient(x, -1)
            if before is not None:
                link.SetCoefficient(before, -1)
            prefix.append(p)
            before = p
        solver.Add(before == 1)
        for u, (first, last) in _coverers(mine).items():
            area = mine[first].width * (bounds[u + 1] - bounds[u])
            for row, f in [(rows[u], 1.0)] + [(row, r.factor[mine[0].job])
                                              for row, r in in_slot.get(u, ())
                                              if mine[0].job in r.factor]:
                row.SetCoefficient(prefix[last], f * area)
                if first > 0:
                    row.SetCoefficient(prefix[first - 1], -f * area)
    objective.SetMinimization()
    solved = (pywraplp.Solver.OPTIMAL, pywraplp.Solver.FEASIBLE)
    for params in (PARAMS, PRIMAL):  # the primal simplex when the dual fails, in the time left
        left = deadline - time.perf_counter()
        if left <= 0:
            return None
        solver.SetSolverSpecificParametersAsString(params)
        solver.SetTimeLimit(max(1, int(left * 1000)))
        if solver.Solve() in solved:
            break
    else:
        return None
    return [min(0.0, r.dual_value()) for r in rows + extra]


def _coverers(mine: Sequence[Column]) -> dict[int, tuple[int, int]]:
    """Slot -> the run (first, last) of one job's columns covering it in full. Both ends of
    a column's full range grow with the column, so the run is found by bisection."""
    firsts = [c.full[0] for c in mine]
    lasts = [c.full[1] for c in mine]
    out = {}
    for u in range(min(firsts), max(lasts) + 1):
        first, last = bisect.bisect_left(lasts, u), bisect.bisect_right(firsts, u) - 1
        if first <= last:
            out[u] = (first, last)
    return out


def lagrangian(bounds: Sequence[int], room: Sequence[int], cols: Sequence[Column],
               duals: Sequence[float], jobs: int, cliques: Sequence[Row] = ()) -> int:
    """min over one column per job of cost - duals . usage, plus duals . rhs: a lower bound
    of the LP (hence of every plan) for any duals <= 0, less a margin for the floating-point
    sums, rounded up (sum(w s) is an integer). ``duals`` holds the slots' capacity rows,
    then ``cliques``' rows."""
    slots = len(room)
    # running sums of dual x slot length: a column's full slots in O(1)
    running, scale = [0.0], 0.0
    for u in range(slots):
        running.append(running[-1] + duals[u] * (bounds[u + 1] - bounds[u]))
    # per job and slot, the clique rows' duals x factors (the job's price of a unit of area
    # there, on top of the capacity row's), and their running sums x slot length
    price = [[0.0] * slots for _ in range(jobs)]
    for d, r in zip(duals[slots:], cliques, strict=True):
        for n, f in r.factor.items():
            price[n][r.slot] += d * f
    extra = []
    for mine in price:
        sums = [0.0]
        for u, q in enumerate(mine):
            sums.append(sums[-1] + q * (bounds[u + 1] - bounds[u]))
        extra.append(sums)
    best = [math.inf] * jobs
    for col in cols:
        first, last = col.full
        mine, sums = price[col.job], extra[col.job]
        full = (running[last + 1] - running[first] + sums[last + 1] - sums[first]
                if last >= first else 0.0)
        usage = sum((duals[u] + mine[u]) * area for u, area in col.partial) + col.width * full
        best[col.job] = min(best[col.job], col.cost - usage)
        scale = max(scale, abs(col.cost) + abs(usage))
    if any(b == math.inf for b in best):
        return 0  # a job with no column: no plan within the upper bound; stay trivially valid
    rhs = [*room, *(r.rhs for r in cliques)]
    total = sum(best) + sum(d * r for d, r in zip(duals, rhs, strict=True))
    scale = jobs * scale + sum(abs(d * r) for d, r in zip(duals, rhs, strict=True))
    # the true value is at least total - margin and sum(w s) is an integer
    return math.ceil(total - 1e-9 * scale - 1e-6)
