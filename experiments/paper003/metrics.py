"""What papers/003 measures of a run, and how the seeds are summarised.

The paper tags the first 200 jobs of a longer Poisson stream and runs until all of them have
left (section 6). Of the tagged jobs only:

- mean response time: the mean of end - submit;
- makespan: "the maximum completion time of any job in the set of jobs under consideration,
  assuming that the first job arrives at time zero", i.e. the last tagged completion minus
  the first tagged submit.

The stream must not end before the tagged jobs have left, or the last of them would run on
an emptier machine than in the paper. A stream covers the tagged jobs when its last arrival
comes after their last completion: every later arrival comes later still, so no job past the
stream's end could have changed a tagged job's times (the simulation is causal), and the
tagged metrics are those of an endless stream.

A cell is summarised over seeds by its mean with a Student t interval (as `schedc sweep`'s
summary), its median, and where the paper's single value falls among the seeds.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from attrs import frozen

from schedc.runtime.tools.sweep.summary import interval

CONFIDENCE = 0.95


@frozen
class Tagged:
    """The tagged jobs' metrics of one run."""

    jobs: int
    mean_response: float  # seconds
    makespan: int  # last tagged completion - first tagged submit, seconds
    last_end: int  # the last tagged completion (absolute time)


def tagged_metrics(times: Sequence[tuple[int, int]], tagged: int) -> Tagged:
    """``times``: (submit, end) of every job in submit order; the first ``tagged`` count."""
    if not 1 <= tagged <= len(times):
        raise ValueError(f"tagged_metrics: {tagged} tagged jobs of {len(times)}")
    first = times[:tagged]
    responses = [end - submit for submit, end in first]
    last_end = max(end for _, end in first)
    first_submit = min(submit for submit, _ in first)
    return Tagged(tagged, math.fsum(responses) / tagged, last_end - first_submit, last_end)


def covers(times: Sequence[tuple[int, int]], tagged: Tagged) -> bool:
    """Whether the stream's last arrival comes after the tagged jobs' last completion."""
    return max(submit for submit, _ in times) > tagged.last_end


def left_after_stream(times: Sequence[tuple[int, int]], tagged: int) -> int:
    """Tagged jobs that completed at or after the stream's last arrival (0 when covered)."""
    last_submit = max(submit for submit, _ in times)
    return sum(1 for _, end in times[:tagged] if end >= last_submit)


@frozen
class Summary:
    """One metric of one cell over the seeds."""

    seeds: int
    mean: float
    low: float | None  # the mean's confidence interval (None for one seed)
    high: float | None
    median: float
    sd: float | None  # sample standard deviation over seeds (None for one seed)
    minimum: float
    maximum: float

    def to_json(self) -> dict[str, float | int | None]:
        return {"seeds": self.seeds, "mean": self.mean, "ci_low": self.low,
                "ci_high": self.high, "median": self.median, "sd": self.sd,
                "min": self.minimum, "max": self.maximum}


def summarise(values: Sequence[float], confidence: float = CONFIDENCE) -> Summary:
    """Mean with its Student t interval, median, spread."""
    if not values:
        raise ValueError("summarise: no values")
    mean, low, high = interval(list(values), confidence)
    sd = statistics.stdev(values) if len(values) > 1 else None
    return Summary(len(values), mean, low, high, statistics.median(values), sd,
                   min(values), max(values))


def share_at_most(values: Sequence[float], x: float) -> float:
    """The fraction of ``values`` at most ``x``: where one experiment's value (the paper's)
    falls among the seeds. Near 0 or 1: the paper's value is unusual under our model."""
    if not values:
        raise ValueError("share_at_most: no values")
    return sum(1 for v in values if v <= x) / len(values)


def paired_ratio(numerator: Sequence[float], denominator: Sequence[float],
                 confidence: float = CONFIDENCE) -> tuple[float, float | None, float | None]:
    """mean(numerator) / mean(denominator), and an interval for it from the per-seed
    differences (the same workloads: paired): (mean(a) - mean(b) +- half width) / mean(b)."""
    if len(numerator) != len(denominator) or not numerator:
        raise ValueError("paired_ratio: two lists of the same non-zero length")
    base = math.fsum(denominator) / len(denominator)
    diff, low, high = interval([a - b for a, b in zip(numerator, denominator, strict=True)],
                               confidence)
    if low is None or high is None:
        return 1 + diff / base, None, None
    return 1 + diff / base, 1 + low / base, 1 + high / base
