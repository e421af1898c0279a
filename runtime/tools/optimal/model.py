"""The quasi off-line problem as a CP-SAT model, at 1-second resolution (no time-scaling).

Each waiting job is an interval [s, s + estimate) with s >= now, on one cumulative per
resource that also holds the running jobs as fixed intervals [now, estimated end). ARTwW
(the paper's eq. 2 over the sum of widths) and SLDwA both equal sum(w s) plus a constant,
over a constant: the model minimises sum(w s), so one optimum serves both metrics.

ortools is imported inside ``_cp_sat`` only: `schedc run` never loads it. `solve` runs the
event search (`search.py`) beside it.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from attrs import frozen

from schedc.runtime.gc_paused import paused_gc
from schedc.runtime.tools.optimal.bound import slice_bound
from schedc.runtime.tools.optimal.grid_bound import grid_bound
from schedc.runtime.tools.optimal.instance import Instance, identical_jobs, weighted_starts
from schedc.runtime.tools.optimal.local_search import anneal
from schedc.runtime.tools.optimal.search import Incumbent, SearchResult, applicable, event_search

STATUS = {"OPTIMAL": "optimal", "FEASIBLE": "feasible"}  # anything else: "unknown"
GRID_SHARE = 1 / 6  # of the time limit, at most, for the grid bound's LP (with a hint only)
SOLO_SHARE = 1 / 10  # of the time limit: the event search alone, before CP-SAT joins it
# seconds the event search runs alone before the annealing (`local_search.py`) joins it for
# the rest of SOLO_SHARE: the instances it ends at once (10 jobs, within 0.06 s) lose nothing
ANNEAL_AFTER = 0.1
# CP-SAT joins only when this much time is left: importing ortools (and pandas, which it
# imports) takes 0.5-0.8 s the first time, building the model a few tenths more at 100 jobs
IMPORT_SECONDS = 1.0
CP_SAT_SECONDS = 0.2
# literals of the left-justified constraints (jobs x (jobs + running ends)) at most: 200
# jobs made 40,000, seconds to build and more for CP-SAT's presolve, in a second's limit
LEFT_LITERALS = 10_000


@frozen
class Solution:
    status: str  # optimal, feasible or unknown
    weighted: int | None  # sum(w s) of the plan found
    bound: int | None  # proven lower bound of sum(w s)
    seconds: float  # wall time of the solve
    starts: dict[int, int]  # job index -> start (empty when unknown)
    solver: str = "cp-sat"  # what gave the verdict: "event search" (search.py) or "cp-sat"


def artww_of(instance: Instance, weighted: int) -> Fraction:
    """ARTwW of a plan whose sum(w s) is ``weighted``."""
    widths = sum(j.request[0] for j in instance.jobs)
    rest = sum(j.request[0] * (j.estimate - j.submit) for j in instance.jobs)
    return Fraction(weighted + rest, widths) if widths else Fraction(0)


def sldwa_of(instance: Instance, weighted: int) -> Fraction:
    area = sum(j.request[0] * j.estimate for j in instance.jobs)
    rest = sum(j.request[0] * (j.estimate - j.submit) for j in instance.jobs)
    return Fraction(weighted + rest, area) if area else Fraction(0)


def solve(instance: Instance, *, time_limit: float, workers: int,
          hint: Mapping[int, int] | None = None, left: bool = True,
          search: bool = True) -> Solution:
    """The optimal plan of ``instance`` within ``time_limit`` seconds; ``hint`` (a feasible
    plan, e.g. the best policy's) is the search's first solution and an upper bound.

    The event search (`search.py`) runs in a thread for the whole time; CP-SAT joins it in
    this thread after SOLO_SHARE of the time unless the search has ended by then, with
    ``workers`` - 1 workers (at least one: the search keeps a core; CP-SAT releases the GIL
    while it solves); from ANNEAL_AFTER until then, annealing over job orders looks for
    better plans in this thread. Each plan CP-SAT finds is the search's new upper bound.
    The first to end decides: the search's end proves the best plan known optimal (CP-SAT
    is stopped, or never starts); CP-SAT's end (proof or time limit) stops the search, and
    the better plan of the two is kept with CP-SAT's bound."""
    # the solvers make millions of tuples and lists, none in a cycle, and each full
    # collection also walks every object the caller holds, such as a run's schedules: a
    # small instance solved after big ones took a fifth of a second in the collector alone
    with paused_gc():
        return _solve(instance, time_limit=time_limit, workers=workers, hint=hint, left=left,
                      search=search)


def _solve(instance: Instance, *, time_limit: float, workers: int,
           hint: Mapping[int, int] | None, left: bool, search: bool) -> Solution:
    begin = time.perf_counter()
    deadline = begin + time_limit
    if not (search and applicable(instance)):
        if not _cp_sat_fits(deadline):
            return Solution("unknown", None, None, time.perf_counter() - begin, {})
        return _cp_sat(instance, time_limit=time_limit, workers=workers, hint=hint, left=left,
                       begin=begin)
    best = Incumbent(instance)
    if hint is not None:
        best.offer(hint)
    control = _Control()
    searched: list[SearchResult] = []
    failed: list[BaseException] = []
    done = threading.Event()

    def run_search() -> None:
        try:
            searched.append(event_search(instance, best, begin + time_limit,
                                         stop=control.ended))
            if searched[0].complete:
                control.stop()  # CP-SAT stops, or never starts
        except BaseException as error:  # noqa: BLE001 - raised again in the caller's thread
            failed.append(error)
        finally:
            done.set()

    thread = threading.Thread(target=run_search, name="schedc-event-search", daemon=True)
    thread.start()
    cp = None
    solo_end = begin + time_limit * SOLO_SHARE
    if not done.wait(min(ANNEAL_AFTER, time_limit * SOLO_SHARE)):
        # better plans, for the search's pruning and CP-SAT's hint and upper bound; the two
        # threads share the GIL meanwhile
        anneal(instance, best, solo_end, stop=done.is_set)
    if not done.wait(max(0.0, solo_end - time.perf_counter())) and not _cp_sat_fits(deadline):
        # too little time left for CP-SAT to begin: annealing until the end instead, and
        # the best plan known is the answer (not proved optimal unless the search ends)
        anneal(instance, best, deadline, stop=done.is_set)
        done.wait(max(0.0, deadline - time.perf_counter()))
        control.ended.set()
    elif not done.is_set():
        try:
            # the search keeps one of the workers' cores: with 2, CP-SAT on 1 proved LANL-CM5
            # t=30091778 (20 jobs) in 9.5 s through the search, which 2 left unproven at 10 s,
            # and the 40-job gaps at 60 s stayed within their run-to-run spread
            # (docs/explanation/optimal-solver.md)
            cp = _cp_sat(instance, time_limit=time_limit, workers=max(1, workers - 1),
                         hint=best.plan()[0], left=left, begin=begin, plans=best.offer,
                         control=control)
        finally:
            control.ended.set()  # the search stops at its next look
    thread.join()
    if failed:
        raise failed[0]
    plan, weighted = best.plan()
    if searched[0].complete and plan is not None:
        return Solution("optimal", weighted, weighted, time.perf_counter() - begin, plan,
                        "event search")
    if cp is None:  # the search stopped before CP-SAT began: a time limit of almost nothing
        cp = Solution("unknown", None, None, time.perf_counter() - begin, {})
    if plan is None or (cp.weighted is not None and cp.weighted <= weighted):
        return cp
    # the search's plan beats CP-SAT's: kept, with the bound CP-SAT proved (or the slice
    # bound, when CP-SAT found nothing)
    bound = min(weighted, cp.bound if cp.bound is not None else slice_bound(instance))
    return Solution("feasible", weighted, bound, time.perf_counter() - begin, plan,
                    "event search")


class _Control:
    """Between the two threads: CP-SAT's solver once it exists, and its end."""

    def __init__(self) -> None:
        self.ended = threading.Event()
        self._lock = threading.Lock()
        self._solver: Any = None
        self._stopped = False

    def started(self, solver: Any) -> None:
        with self._lock:
            self._solver = solver
            if self._stopped:
                solver.stop_search()

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            if self._solver is not None:
                self._solver.stop_search()

    @property
    def stopped(self) -> bool:
        return self._stopped


def _cp_sat_fits(deadline: float) -> bool:
    """Whether CP-SAT can begin and do something before ``deadline``."""
    needed = CP_SAT_SECONDS
    if "ortools.sat.python.cp_model" not in sys.modules:
        needed += IMPORT_SECONDS
    return deadline - time.perf_counter() >= needed


class _OutOfTime(Exception):
    """The model's building reached the deadline."""


def _cp_sat(instance: Instance, *, time_limit: float, workers: int,
            hint: Mapping[int, int] | None, left: bool, begin: float,
            plans: Callable[[dict[int, int]], None] | None = None,
            control: _Control | None = None) -> Solution:
    """CP-SAT on the model, until ``begin`` + ``time_limit``; ``plans`` is given each plan it
    finds, ``control`` may stop it. Unknown when the model is not built by then."""
    try:
        return _build_and_solve(instance, time_limit=time_limit, workers=workers, hint=hint,
                                left=left, begin=begin, plans=plans, control=control)
    except _OutOfTime:
        return Solution("unknown", None, None, time.perf_counter() - begin, {})


def _build_and_solve(instance: Instance, *, time_limit: float, workers: int,
                     hint: Mapping[int, int] | None, left: bool, begin: float,
                     plans: Callable[[dict[int, int]], None] | None,
                     control: _Control | None) -> Solution:
    from ortools.sat.python import cp_model

    deadline = begin + time_limit
    # times relative to now: small domains and coefficients keep the LP relaxation sharp
    now, horizon = instance.now, instance.horizon - instance.now
    model = cp_model.CpModel()
    starts, intervals = {}, {}
    for job in instance.jobs:
        s = model.new_int_var(0, horizon - job.estimate, f"s{job.index}")
        starts[job.index] = s
        intervals[job.index] = model.new_fixed_size_interval_var(s, job.estimate,
                                                                 f"i{job.index}")
    for k, cap in enumerate(instance.capacities):
        ivs, demands = [], []
        for rj in instance.running:
            if rj.alloc[k] and rj.expected_end > now:
                ivs.append(model.new_fixed_size_interval_var(0, rj.expected_end - now, ""))
                demands.append(rj.alloc[k])
        for job in instance.jobs:
            if job.request[k]:
                ivs.append(intervals[job.index])
                demands.append(job.request[k])
        if ivs:
            model.add_cumulative(ivs, demands, cap)
        # jobs wider than half the machine never overlap each other: a redundant, strong
        # disjunction
        wide = [intervals[j.index] for j in instance.jobs if 2 * j.request[k] > cap]
        if len(wide) > 1:
            model.add_no_overlap(wide)
    # identical jobs (request and estimate) are interchangeable: plan them in index order
    groups = identical_jobs(instance)
    for same in groups.values():
        for a, b in zip(same, same[1:], strict=False):
            model.add(starts[a] <= starts[b])
    if left and _left_literals(instance) <= LEFT_LITERALS:
        _left_justified(model, instance, starts, deadline)
    objective = sum(j.request[0] * starts[j.index] for j in instance.jobs)
    widths = sum(j.request[0] for j in instance.jobs)
    low = slice_bound(instance)
    if hint is not None:
        ordered = _symmetric_hint(instance, hint, groups)
        upper = weighted_starts(instance, ordered)
        model.add(objective <= upper - now * widths)
        for index, s in ordered.items():
            model.add_hint(starts[index], s - now)
        # the LP needs the hint's bound to keep its grid short (a start beyond it is useless)
        seconds = min(time_limit * GRID_SHARE, deadline - time.perf_counter())
        if (control is None or not control.stopped) and seconds > 0:
            low = max(low, grid_bound(instance, upper, seconds) or low)
    model.add(objective >= low - now * widths)
    model.minimize(objective)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(0.0, deadline - time.perf_counter())
    solver.parameters.num_workers = workers
    # one full-problem worker searches the objective's lower bound (the gap is the bound's:
    # the hint is within a few per cent of the optimum); LNS workers improve the plan
    solver.parameters.subsolvers.append("objective_lb_search")
    callback = None
    if plans is not None:
        callback = _plan_callback(cp_model, starts, now, plans)
    if control is not None:
        control.started(solver)
        if control.stopped:
            return Solution("unknown", None, None, time.perf_counter() - begin, {})
    code = solver.solve(model, callback)
    seconds = time.perf_counter() - begin
    status = STATUS.get(solver.status_name(code), "unknown")
    if status == "unknown":
        return Solution(status, None, None, seconds, {})
    found = {i: now + int(solver.value(s)) for i, s in starts.items()}
    weighted = weighted_starts(instance, found)
    bound = weighted if status == "optimal" else min(
        weighted, now * widths - int(-solver.best_objective_bound // 1))
    return Solution(status, weighted, bound, seconds, found)


def _plan_callback(cp_model: Any, starts: Mapping[int, Any], now: int,
                  plans: Callable[[dict[int, int]], None]) -> Any:
    """A CP-SAT solution callback giving each plan found (absolute starts) to ``plans``."""

    class PlanCallback(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self) -> None:
            plans({i: now + int(self.value(s)) for i, s in starts.items()})

    return PlanCallback()


def _left_literals(instance: Instance) -> int:
    """The literals `_left_justified` makes: per job, one per point it may start at."""
    ends = {rj.expected_end for rj in instance.running if rj.expected_end > instance.now}
    return len(instance.jobs) * (len(instance.jobs) + len(ends))


def _left_justified(model: Any, instance: Instance, starts: Mapping[int, Any],
                    deadline: float) -> None:
    """Each job starts now, when a running job ends, or when another waiting job ends: a
    plan's starts can be moved left to such points without conflict or loss (the objective
    is regular), so an optimum of this form exists. Left out past ``deadline``."""
    now = instance.now
    ends = sorted({rj.expected_end - now for rj in instance.running if rj.expected_end > now})
    for job in instance.jobs:
        if time.perf_counter() > deadline:
            raise _OutOfTime
        s = starts[job.index]
        choices = []
        for t in (0, *ends):
            lit = model.new_bool_var("")
            model.add(s == t).only_enforce_if(lit)
            choices.append(lit)
        for other in instance.jobs:
            if other is not job:
                lit = model.new_bool_var("")
                model.add(s == starts[other.index] + other.estimate).only_enforce_if(lit)
                choices.append(lit)
        model.add_bool_or(choices)


def _symmetric_hint(instance: Instance, hint: Mapping[int, int],
                    groups: Mapping[tuple[tuple[int, ...], int], list[int]]) -> dict[int, int]:
    """The hint with each group of identical jobs' starts sorted in index order: the same
    plan up to swapping identical jobs, so it satisfies the symmetry constraints."""
    ordered = dict(hint)
    for same in groups.values():
        for index, s in zip(same, sorted(hint[i] for i in same), strict=True):
            ordered[index] = s
    return ordered
