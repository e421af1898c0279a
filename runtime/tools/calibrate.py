"""The load calibration of K-resource workloads (papers/004, section 3.1): the mean
inter-arrival at which a baseline policy (FCFS/FF-EASY in the paper) keeps a target number
of jobs waiting on average, found by bisection on the log of the gap, simulating the
baseline at each step (``workloads/kresource.py`` makes the workload at a given gap)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from attrs import frozen

from schedc.runtime.engine.policy import RuntimePolicy
from schedc.runtime.workloads.kresource import Draws, SourceJob, offered_gap, workload


@frozen
class Calibration:
    mean_interarrival: float  # seconds
    queue_length: float  # the baseline's mean queue length at that rate
    steps: tuple[tuple[float, float], ...]  # (mean inter-arrival, queue length) tried


def calibrate(queue_length_at: Callable[[float], float], target: float, start: float,
              tolerance: float = 0.03, max_steps: int = 30) -> Calibration:
    """The mean inter-arrival at which ``queue_length_at`` (the baseline policy's mean queue
    length, decreasing in the gap) is within ``tolerance`` (relative) of ``target``: a
    bracket by doubling or halving from ``start``, then bisection on the log of the gap.
    Raises ValueError if no gap within ``max_steps`` simulations gets close enough."""
    if not target > 0:
        raise ValueError(f"the target queue length must be > 0, got {target!r}")
    steps: list[tuple[float, float]] = []

    def measure(gap: float) -> float:
        q = queue_length_at(gap)
        steps.append((gap, q))
        return q

    def close(q: float) -> bool:
        return abs(q - target) <= tolerance * target

    def done(gap: float, q: float) -> Calibration:
        return Calibration(gap, q, tuple(steps))

    gap, q = start, measure(start)
    if close(q):
        return done(gap, q)
    # bracket [low, high]: the queue at `low` is above the target, at `high` below
    factor = 2.0 if q > target else 0.5
    while True:
        previous = gap
        gap *= factor
        if len(steps) >= max_steps:
            raise ValueError(_no_rate(target, steps))
        q = measure(gap)
        if close(q):
            return done(gap, q)
        if (q > target) != (factor > 1):
            break  # crossed the target
    low, high = (previous, gap) if factor > 1 else (gap, previous)
    while len(steps) < max_steps:
        gap = math.sqrt(low * high)
        q = measure(gap)
        if close(q):
            return done(gap, q)
        if q > target:
            low = gap
        else:
            high = gap
    raise ValueError(_no_rate(target, steps))


def calibrate_rate(baseline: RuntimePolicy, source: Sequence[SourceJob], draws: Draws,
                   capacity: int, target: float, tolerance: float = 0.03) -> Calibration:
    """The paper's load calibration: the mean inter-arrival at which ``baseline`` (FF-EASY
    in the paper) keeps ``target`` jobs waiting on average, from the offered-load-1 gap."""
    from schedc.runtime.engine.simulator import simulate
    from schedc.runtime.results.metrics import compute_metrics

    def queue_length_at(gap: float) -> float:
        schedule = simulate(baseline, workload(source, draws, capacity, gap))
        return compute_metrics(schedule).mean_queue

    return calibrate(queue_length_at, target, offered_gap(source, capacity), tolerance)


def _no_rate(target: float, steps: Sequence[tuple[float, float]]) -> str:
    best = min(steps, key=lambda s: abs(s[1] - target))
    return (f"no arrival rate gave a mean queue length within reach of {target:g} in "
            f"{len(steps)} simulations (closest: {best[1]:.4g} at a mean inter-arrival of "
            f"{best[0]:.4g} s)")
