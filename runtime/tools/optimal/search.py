"""An exact search for the quasi off-line problem, beside CP-SAT: a chronological branch and
bound over the instants where a job can start, which proves instances CP-SAT leaves open
(instances where CP-SAT's lower bound does not move, this search may end in a few nodes).

The search walks time forward from now. At each event (now, then each next end of a running
or planned job) it chooses which waiting jobs start there, every set that fits, and moves to
the next end. Every plan whose starts are all events is walked, and for this regular
objective such a plan is optimal (`model._left_justified`). What it skips, each rule
sound because the plans it drops are never optimal or are walked elsewhere:

- identical jobs (request and estimate) are one type with a count: sets are multisets;
- left shift: a job that fits in what is left at an event cannot start at the next event
  (nothing changes in between, so it could start a whole interval earlier: a better plan);
- a short job that fits in what is left and would end by the next event is started (the
  same plan with it started is better);
- a state dominated by one met before: the same instant and jobs left, no lower cost, and a
  hold of every resource by the planned jobs still running no smaller at any instant
  (`_Search._dominated`; it prunes most of the nodes of instances with repeated states);
- a state, or a partial set of jobs starting at an instant, whose cost so far plus a lower
  bound of the jobs left (`_bound`: the slice bound of `bound.py` on the cpus as they free
  up, or the narrow jobs' slice bound plus the wide jobs one at a time) reaches the best
  plan known.

Plans are sums of width x start (the model's objective); the bounds are on the first
resource, fits are checked on every resource. Children are walked best bound first."""

from __future__ import annotations

import bisect
import itertools
import operator
import threading
import time
from collections.abc import Mapping

from attrs import frozen

from schedc.runtime.tools.optimal.bound import MASK, SHIFT, slices_total
from schedc.runtime.tools.optimal.instance import Instance, identical_jobs, weighted_starts

WIDE_ORDERS = 5  # wide jobs left up to which the bound tries all their orders
MEMO_LIMIT = 250_000  # states and bounds remembered, each (about 0.1 GB); beyond, none added
# states kept per (instant, jobs left), at most: a few hundred there made the search slower
FRONT_LIMIT = 32
CHECK_EVERY = 64  # nodes, or bounds computed, between two looks at the clock


@frozen
class SearchResult:
    complete: bool  # the search ended: no plan is better than the incumbent's
    nodes: int


class Incumbent:
    """The best plan known, shared by the search and CP-SAT's thread."""

    def __init__(self, instance: Instance) -> None:
        self.instance = instance
        self._lock = threading.Lock()
        self.weighted: int | None = None  # sum(w s) of the plan, absolute times
        self._starts: dict[int, int] | None = None

    def offer(self, starts: Mapping[int, int]) -> None:
        """Keep ``starts`` (job index -> start) if it is better than the plan kept."""
        weighted = weighted_starts(self.instance, starts)
        with self._lock:
            if self.weighted is None or weighted < self.weighted:
                self.weighted, self._starts = weighted, dict(starts)

    def plan(self) -> tuple[dict[int, int] | None, int | None]:
        with self._lock:
            return self._starts, self.weighted


class _OutOfTime(Exception):
    pass


def event_search(instance: Instance, best: Incumbent, deadline: float,
                 stop: threading.Event | None = None) -> SearchResult:
    """Look for plans of ``instance`` better than ``best``'s (which it updates, and which
    others may update meanwhile) until ``deadline`` (perf_counter) or ``stop``; complete:
    none is better than ``best``'s plan at the end."""
    search = _Search(instance, best, deadline, stop)
    try:
        search.walk(0, search.counts, (), 0, 0)
    except _OutOfTime:
        return SearchResult(False, search.nodes)
    return SearchResult(True, search.nodes)


def applicable(instance: Instance) -> bool:
    """Every waiting job fits the empty machine (else no plan exists for the search)."""
    return all(r <= c for j in instance.jobs for r, c in zip(j.request, instance.capacities,
                                                             strict=True))


class _Search:
    def __init__(self, instance: Instance, best: Incumbent, deadline: float,
                 stop: threading.Event | None) -> None:
        self.instance = instance
        now = instance.now
        self.caps = instance.capacities
        self.k = len(self.caps)
        members = identical_jobs(instance)
        self.types = sorted(members)  # (request, estimate)
        self.members = [members[t] for t in self.types]
        self.counts = tuple(len(m) for m in self.members)
        self.width = [r[0] for r, _ in self.types]
        self.length = [p for _, p in self.types]
        self.spt = sorted(range(len(self.types)), key=lambda i: self.length[i])
        # wide jobs (over half the first resource) never run beside each other
        self.wide = [i for i in self.spt if 2 * self.width[i] > self.caps[0]]
        self.narrow_spt = [i for i in self.spt if i not in self.wide]
        # running jobs as (relative end, alloc), ended ones left out
        self.running = sorted((rj.expected_end - now, rj.alloc) for rj in instance.running
                              if rj.expected_end > now)
        self.run_ends = sorted({e for e, _ in self.running})
        self.never = (self.run_ends[-1] if self.run_ends else 0) + sum(
            p * n for p, n in zip(self.length, self.counts, strict=True)) + 1
        self.requests = [r for r, _ in self.types]
        # per number of running ends passed: the groups still held, and their cpus
        self._groups: list[list[int]] = []
        self._busy: list[int] = []
        for passed in range(len(self.run_ends) + 1):
            held: dict[int, int] = {}
            for e, alloc in self.running:
                if e > (self.run_ends[passed - 1] if passed else 0) and alloc[0]:
                    held[e] = held.get(e, 0) + alloc[0]
            self._groups.append([e << SHIFT | c for e, c in held.items()])
            self._busy.append(sum(held.values()))
        self.resources = range(self.k)
        if self.k == 1:
            widths = self.width
            self.fits = lambda i, free: widths[i] <= free[0]
        else:
            self.fits = lambda i, free: all(map(operator.le, self.requests[i], free))
        total = sum(w * n for w, n in zip(self.width, self.counts, strict=True))
        # sum(w s) relative to now is the absolute one minus now x the total width
        self.shift = now * total
        self.incumbent = best
        self.upper: float = float("inf")  # the incumbent's sum(w s), relative to now
        self._refresh()
        self.stop = stop
        # (instant, jobs left) -> (cost, hold) of the states met there that no other
        # dominates (`_dominated`)
        self.fronts: dict[tuple, list[tuple[int, tuple]]] = {}
        self.kept = 0
        self.dominance = all(self.width)
        if self.k == 1:
            self._le = operator.le
        else:
            self._le = lambda a, b: all(map(operator.le, a, b))
        self.bounds: dict[tuple, tuple[int, bool]] = {}  # (bound, both bounds tried)
        self.deadline = deadline
        self.nodes = 0
        self.bounded = 0  # bounds computed: one node's sets may need millions (`_sets`)

    # -- the walk ------------------------------------------------------------------------

    def walk(self, t: int, counts: tuple[int, ...], active: tuple[tuple[int, int], ...],
             cost: int, blocked: int, path: tuple = ()) -> None:
        """Expand the state at event ``t``: ``active`` holds (end, type) of the planned jobs
        still running after ``t``, by end; ``blocked`` is the bit set of types that cannot
        start at ``t`` (left shift); ``cost`` is sum(w s) of the jobs planned."""
        self.nodes += 1
        if self.nodes % CHECK_EVERY == 1:
            self._look_at_the_clock()
            self._refresh()
        free = self._free(t, active)
        fits, length, width = self.fits, self.length, self.width
        candidates = [i for i, n in enumerate(counts) if n and not blocked >> i & 1
                      and fits(i, free)]
        base = self.next_end(t)  # the next event if nothing starts at t
        if active and active[0][0] < base:
            base = active[0][0]
        waiting = sum(width[i] * n for i, n in enumerate(counts))
        children = []
        sets = self._sets(candidates, counts, free, t, cost, active)
        for chosen, left, started, first_end in sets:
            t2 = first_end if first_end < base else base
            ncost = cost + t * started
            # every job left starts at t2 or later
            if ncost + (waiting - started) * t2 >= self.upper:
                continue
            ncounts = list(counts)
            for i, n in chosen:
                ncounts[i] -= n
            ncounts = tuple(ncounts)
            if not any(ncounts):  # every job planned (counted: a job may need no cpu)
                self.incumbent.offer(self.plan_of(path + ((t, chosen),)))
                self._refresh()
                continue
            if t2 == self.never:
                continue  # nothing will ever free a cpu: the jobs left never start
            if any(ncounts[i] and t + length[i] <= t2 and fits(i, left) for i in candidates):
                continue  # one more would end by t2 in what is left: started, it is better
            nblocked = 0
            for i, n in enumerate(ncounts):
                if n and fits(i, left):
                    nblocked |= 1 << i
            ends = [a for a in active if a[0] > t2]
            for i, n in chosen:
                if t + length[i] > t2:
                    ends += [(t + length[i], i)] * n
            nactive = tuple(sorted(ends))
            bound = ncost + self._bound(t2, ncounts, nactive, self.upper - ncost)
            if bound < self.upper and not self._dominated(t2, ncounts, nactive, nblocked,
                                                          ncost):
                children.append((bound, t2, ncounts, nactive, ncost, nblocked, chosen))
        children.sort(key=lambda c: c[0])
        for bound, t2, ncounts, nactive, ncost, nblocked, chosen in children:
            if bound >= self.upper:
                break
            self.walk(t2, ncounts, nactive, ncost, nblocked, path + ((t, chosen),))

    def _sets(self, candidates: list[int], counts: tuple[int, ...], free: list[int], t: int,
              cost: int, active: tuple[tuple[int, int], ...]):
        """Every multiset of the candidate types that fits ``free``, larger ones first, as
        (((type, n), ...), what is left, its width, the first end among its jobs). A partial
        set whose jobs started at ``t`` already bring the bound (every job left starting
        at ``t`` or later) to the best plan's cost is not extended."""
        out: list[tuple] = []
        chosen: list[tuple[int, int]] = []
        requests, width, length, resources = self.requests, self.width, self.length, \
            self.resources
        left_counts = list(counts)

        def hopeless(started: int, ends: list[tuple[int, int]]) -> bool:
            base = cost + t * started
            rest = tuple(left_counts)
            if not any(rest):
                return base >= self.upper
            running = tuple(sorted([a for a in active if a[0] > t] + ends))
            return base + self._bound(t, rest, running, self.upper - base) >= self.upper

        def extend(at: int, left: list[int], started: int, first_end: int,
                   ends: list[tuple[int, int]]) -> None:
            if at == len(candidates):
                out.append((tuple(chosen), left, started, first_end))
                return
            i = candidates[at]
            req = requests[i]
            most = counts[i]
            for r in resources:
                if req[r] and left[r] // req[r] < most:
                    most = left[r] // req[r]
            end = t + length[i]
            for n in range(most, 0, -1):
                left_counts[i] = counts[i] - n
                more = ends + [(end, i)] * n
                if not hopeless(started + width[i] * n, more):
                    chosen.append((i, n))
                    extend(at + 1, [x - q * n for x, q in zip(left, req, strict=True)],
                           started + width[i] * n, end if end < first_end else first_end,
                           more)
                    chosen.pop()
            left_counts[i] = counts[i]
            extend(at + 1, left, started, first_end, ends)

        extend(0, list(free), 0, self.never, [])
        return out

    # -- dominance -----------------------------------------------------------------------

    def _steps(self, t: int, active: tuple[tuple[int, int], ...]) -> tuple:
        """The planned jobs' hold from ``t`` as a step function: (a summary of it on the
        first resource, all of it, ((end, what is still held after it), ...)), per resource
        when there are several. A hold below another has each term of its summary no larger
        (the quick test of `_dominated`): area, first moment, last instant held."""
        width = self.width
        area = moment = 0
        last = t
        for e, i in active:
            if width[i]:
                area += width[i] * (e - t)
                moment += width[i] * (e - t) * (e - t)
                last = e
        summary = (area, moment, last)
        if self.k == 1:
            held = sum(width[i] for _, i in active)
            total, steps = held, []
            for e, i in active:
                held -= width[i]
                if steps and steps[-1][0] == e:
                    steps[-1] = (e, held)
                else:
                    steps.append((e, held))
            return summary, total, tuple(steps)
        requests = self.requests
        held = [sum(requests[i][r] for _, i in active) for r in self.resources]
        total, steps = tuple(held), []
        for e, i in active:
            held = [h - q for h, q in zip(held, requests[i], strict=True)]
            if steps and steps[-1][0] == e:
                steps[-1] = (e, tuple(held))
            else:
                steps.append((e, tuple(held)))
        return summary, total, tuple(steps)

    def _dominated(self, t: int, counts: tuple[int, ...], active: tuple[tuple[int, int], ...],
                   blocked: int, cost: int) -> bool:
        """Whether a state met before at ``t`` with the same jobs left, at no higher cost,
        holds no more of any resource at any instant than ``active``; else the state joins
        those met, and the ones it dominates leave them.

        Why a dominated state B may go, though the state A that dominates it has other
        events and other jobs held back: take an optimal plan through B. A's path followed
        by the plan's starts from B on is a plan (A frees every resource no later), no
        worse, so optimal; and every optimal plan keeps the search's rules, each of which
        drops only plans that one move makes strictly better (every width is positive:
        `self.dominance`). So the search walks that plan through A, unless a state further
        on drops it again, and further on there are only finitely many. With a job of width
        0 a move may gain nothing: then only a state met again exactly (same planned jobs
        running, same jobs held back) at no lower cost is dropped."""
        mine = self._steps(t, active)
        key = (t, counts) if self.dominance else (t, counts, active, blocked)
        front = self.fronts.get(key)
        if front is None:
            if self.kept < MEMO_LIMIT:
                self.fronts[key] = [(cost, mine)]
                self.kept += 1
            return False
        below = self._below
        area, moment, last = mine[0]
        for seen, steps in front:  # by cost
            if seen > cost:
                break
            a, m, e = steps[0]
            if a <= area and m <= moment and e <= last and below(steps, mine):
                return True
        if self.kept < MEMO_LIMIT:
            kept = [(c, s) for c, s in front if not (
                cost <= c and area <= s[0][0] and moment <= s[0][1] and last <= s[0][2]
                and below(mine, s))]
            if len(kept) < FRONT_LIMIT:
                bisect.insort(kept, (cost, mine), key=operator.itemgetter(0))
            self.kept += len(kept) - len(front)
            self.fronts[key] = kept
        return False

    def _below(self, a: tuple, b: tuple) -> bool:
        """Hold ``a`` is at most hold ``b`` at every instant (both from the same ``t``): at
        ``t`` and after each end of ``b``, the only instants where ``b`` drops."""
        le = self._le
        if not le(a[1], b[1]):
            return False
        a_steps, held, at, n = a[2], a[1], 0, len(a[2])
        for e, hb in b[2]:
            while at < n and a_steps[at][0] <= e:
                held = a_steps[at][1]
                at += 1
            if not le(held, hb):
                return False
        return True

    # -- the machine ---------------------------------------------------------------------

    def _free(self, t: int, active) -> list[int]:
        free = list(self.caps)
        for e, alloc in self.running:
            if e > t:
                for r in range(self.k):
                    free[r] -= alloc[r]
        for _, i in active:
            req = self.types[i][0]
            for r in range(self.k):
                free[r] -= req[r]
        return free

    def next_end(self, t: int) -> int:
        """The first running job's end after ``t`` (``never`` if none)."""
        at = bisect.bisect_right(self.run_ends, t)
        return self.run_ends[at] if at < len(self.run_ends) else self.never

    def _look_at_the_clock(self) -> None:
        if time.perf_counter() > self.deadline or (self.stop and self.stop.is_set()):
            raise _OutOfTime

    def _bound(self, t: int, counts: tuple[int, ...], active, enough: float) -> int:
        """A lower bound of sum(w s) of the jobs left, all starting at ``t`` or later, on the
        cpus as the running and planned jobs free them: the slice bound (`bound.py`) of all
        of them, or, if larger, the slice bound of the narrow ones plus the wide ones (over
        half the cpus: one at a time) in their best order, each from the first instant it
        fits beside the running and planned jobs. The second is tried only when the first
        stays below ``enough``. The clock is looked at here too: the sets of one node
        (`_sets`) are many on a long queue (60 jobs of KTH-SP2: 28 s in one node)."""
        self.bounded += 1
        if self.bounded % CHECK_EVERY == 0:
            self._look_at_the_clock()
        key = (t, counts, active)
        known = self.bounds.get(key)
        if known is not None and (known[1] or known[0] >= enough):
            return known[0]
        # cpu groups as one int each, (free from) << SHIFT | cpus: sorted is time order
        groups = list(self.running_groups(t))
        busy = self.running_busy(t)
        width = self.width
        for e, i in active:
            groups.append(e << SHIFT | width[i])
            busy += width[i]
        if self.caps[0] > busy:
            groups.append(t << SHIFT | (self.caps[0] - busy))
        groups.sort()
        total = known[0] if known is not None else self._slices(groups, counts, self.spt)
        whole = total >= enough or not any(counts[i] for i in self.wide)
        if not whole:
            total = max(total, self._slices(groups, counts, self.narrow_spt)
                        + self._one_at_a_time(groups, counts))
            whole = True
        if known is not None or len(self.bounds) < MEMO_LIMIT:
            self.bounds[key] = (total, whole)
        return total

    def _slices(self, groups: list[int], counts: tuple[int, ...], order: list[int]) -> int:
        """The slice bound of the jobs of the types in ``order`` (shortest first) on the cpu
        ``groups`` (sorted)."""
        return slices_total(groups, ((self.length[i], self.width[i] * counts[i])
                                     for i in order if counts[i]))

    def _one_at_a_time(self, groups: list[int], counts: tuple[int, ...]) -> int:
        """A lower bound of sum(w s) of the wide jobs left: they run one at a time, each
        from the first instant as many cpus are free in ``groups`` (sorted); the best
        order when there are few of them, else each at that instant."""
        jobs = []
        for i in self.wide:
            if counts[i]:
                free, release = 0, None
                for g in groups:
                    free += g & MASK
                    if free >= self.width[i]:
                        release = g >> SHIFT
                        break
                jobs += [(release, self.width[i], self.length[i])] * counts[i]
        if len(jobs) > WIDE_ORDERS:
            return sum(r * w for r, w, _ in jobs)
        best = None
        for order in set(itertools.permutations(jobs)):
            at, cost = 0, 0
            for release, w, p in order:
                at = max(at, release)
                cost += w * at
                at += p
            if best is None or cost < best:
                best = cost
        return best or 0

    def running_groups(self, t: int) -> list[int]:
        """The running jobs' cpus still held after ``t``, as groups (see `_bound`)."""
        at = bisect.bisect_right(self.run_ends, t)
        return self._groups[at]

    def running_busy(self, t: int) -> int:
        return self._busy[bisect.bisect_right(self.run_ends, t)]

    def _refresh(self) -> None:
        """The incumbent's cost as this search's upper bound (another thread may lower it)."""
        weighted = self.incumbent.weighted
        if weighted is not None and weighted - self.shift < self.upper:
            self.upper = weighted - self.shift

    def plan_of(self, path: tuple) -> dict[int, int]:
        """Job index -> absolute start: the members of a type take its starts in order."""
        starts_of: list[list[int]] = [[] for _ in self.types]
        for t, chosen in path:
            for i, n in chosen:
                starts_of[i] += [t] * n
        now = self.instance.now
        plan = {}
        for members, starts in zip(self.members, starts_of, strict=True):
            for index, s in zip(members, sorted(starts), strict=True):
                plan[index] = now + s
        return plan
