"""How good a plan is: one number per plan (papers/001, section 2 and eq. 2).

A plan gives every waiting job a planned start; with its estimate d (on its allocation) and
its width w (cpus) each job has a planned response r = start + d - submit. The metrics:

* ``artww``: average response time weighted by width, sum(w r) / sum(w) (the paper's eq. 2
  divided by the sum of widths);
* ``sldwa``: average slowdown weighted by area, sum(w d (r / d)) / sum(w d) = sum(w r) /
  sum(w d);
* ``response``: mean response, sum(r) / n;
* ``slowdown``: mean slowdown, sum(r / d) / n;
* ``bounded_slowdown``: mean of max(1, r / max(d, 10 s));
* ``utilisation``: the plan's busy cpu-seconds (running jobs' until their estimated ends,
  plus the waiting jobs') over the cpus times [now, makespan]; higher is better;
* ``makespan``: the latest planned end of any job, running or waiting, minus now.

Every value is exact (a ``Fraction``), so that the decider's ties are ties: two plans with
the same responses have the same value whatever the order of the jobs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction

from attrs import frozen

from schedc.runtime.engine.planning import PlannedJob
from schedc.runtime.jobs import RunningJob

# Bounded slowdown's threshold: jobs shorter than this count as this long (Feitelson et al.)
BOUND = 10


@frozen
class PlanContext:
    """What a metric reads besides the planned jobs: the instant, the cpus and the running
    jobs (their estimated ends)."""

    now: int
    cpus: int
    running: tuple[RunningJob, ...] = ()


MetricFn = Callable[[Sequence[PlannedJob], PlanContext], Fraction]


@frozen
class PlanMetric:
    name: str
    higher_is_better: bool
    fn: MetricFn
    help: str

    def __call__(self, jobs: Sequence[PlannedJob], context: PlanContext) -> Fraction:
        return self.fn(jobs, context)

    def better(self, a: Fraction, b: Fraction) -> bool:
        """``a`` is strictly better than ``b``."""
        return a > b if self.higher_is_better else a < b


def _response(p: PlannedJob) -> int:
    return p.start + p.estimate - p.job.submit


def artww(jobs: Sequence[PlannedJob], context: PlanContext) -> Fraction:
    widths = sum(p.width for p in jobs)
    return Fraction(sum(p.width * _response(p) for p in jobs), widths) if widths else Fraction(0)


def sldwa(jobs: Sequence[PlannedJob], context: PlanContext) -> Fraction:
    area = sum(p.width * p.estimate for p in jobs)
    return Fraction(sum(p.width * _response(p) for p in jobs), area) if area else Fraction(0)


def mean_response(jobs: Sequence[PlannedJob], context: PlanContext) -> Fraction:
    return Fraction(sum(_response(p) for p in jobs), len(jobs)) if jobs else Fraction(0)


def _mean_of_ratios(pairs: list[tuple[int, int]]) -> Fraction:
    """sum(a / b) / n exactly, with one common denominator per distinct b (few: estimates
    repeat) instead of a Fraction addition per job."""
    if not pairs:
        return Fraction(0)
    by_den: dict[int, int] = {}
    for a, b in pairs:
        by_den[b] = by_den.get(b, 0) + a
    return sum((Fraction(a, b) for b, a in sorted(by_den.items())), Fraction(0)) / len(pairs)


def mean_slowdown(jobs: Sequence[PlannedJob], context: PlanContext) -> Fraction:
    return _mean_of_ratios([(_response(p), p.estimate) for p in jobs])


def bounded_slowdown(jobs: Sequence[PlannedJob], context: PlanContext) -> Fraction:
    pairs = []
    for p in jobs:
        r, d = _response(p), max(p.estimate, BOUND)
        pairs.append((r, d) if r > d else (1, 1))
    return _mean_of_ratios(pairs)


def makespan(jobs: Sequence[PlannedJob], context: PlanContext) -> Fraction:
    ends = [p.end for p in jobs] + [rj.expected_end for rj in context.running]
    return Fraction(max(ends, default=context.now) - context.now)


def utilisation(jobs: Sequence[PlannedJob], context: PlanContext) -> Fraction:
    now = context.now
    span = int(makespan(jobs, context))
    if span <= 0:
        return Fraction(0)
    busy = sum(p.width * p.estimate for p in jobs) + sum(
        rj.alloc[0] * max(0, rj.expected_end - now) for rj in context.running)
    return Fraction(busy, context.cpus * span)


METRICS: dict[str, PlanMetric] = {m.name: m for m in (
    PlanMetric("artww", False, artww, "average response time weighted by width"),
    PlanMetric("sldwa", False, sldwa, "average slowdown weighted by area"),
    PlanMetric("response", False, mean_response, "mean response time"),
    PlanMetric("slowdown", False, mean_slowdown, "mean slowdown"),
    PlanMetric("bounded_slowdown", False, bounded_slowdown,
               f"mean bounded slowdown (jobs under {BOUND} s count as {BOUND} s)"),
    PlanMetric("utilisation", True, utilisation,
               "busy cpu-seconds over the cpus from now to the plan's end"),
    PlanMetric("makespan", False, makespan, "time from now to the plan's last end"),
)}
