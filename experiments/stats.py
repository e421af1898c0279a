"""Confidence intervals by batch means, with Student t quantiles written out (no scipy).

The method (Law & Kelton, "Simulation Modeling and Analysis", section 9.5.3): one long run of
a simulation gives correlated observations (here each job's response time, in arrival
order). Dropping the start of the run (the transient: the machine starts empty) and cutting
the rest into b consecutive batches of equal size gives b batch means that are nearly
independent and nearly normal when the batches are long enough, so the classic interval

    grand mean +- t_{1 - alpha/2, b - 1} * s / sqrt(b)

(s the sample standard deviation of the batch means) applies to them. The lag-1
autocorrelation of the batch means checks the "nearly independent": close to 0 is good; a
clearly positive value means the batches are too short and the interval too narrow.

Student t quantiles come from `schedc.runtime.results.student_t` (the sweep's intervals over seeds
use them too).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

from attrs import frozen

from schedc.runtime.results.student_t import t_quantile


@frozen
class BatchMeans:
    mean: float  # grand mean: the mean of the batch means
    half_width: float  # of the confidence interval: mean +- half_width
    batches: int
    batch_size: int  # observations per batch
    dropped: int  # observations left over at the end (fewer than one per batch)
    transient: int  # observations dropped at the start (the warm-up)
    confidence: float
    lag1: float | None  # lag-1 autocorrelation of the batch means; None if they are all equal
    batch_means: tuple[float, ...]


def batch_means(values: Sequence[float], batches: int = 20, warmup: float = 0.1,
                confidence: float = 0.95) -> BatchMeans:
    """Batch-means confidence interval of the mean of ``values`` (in observation order).

    The first ``warmup`` fraction (to the nearest job, halves up: 0.1 of 600 is 60 and 1/31
    of 217,000 is 7,000, though neither fraction is exact in binary) is the transient and
    dropped; the rest is cut into
    ``batches`` consecutive batches of equal size, the few values left over at the end
    (``dropped``) unused. Raises ValueError for batches < 2, warmup outside [0, 1),
    confidence outside (0, 1), a value that is not finite, or fewer values after the
    warm-up than batches.
    """
    _check_arguments(batches, warmup, confidence)
    data = [float(v) for v in values]
    if not all(math.isfinite(v) for v in data):
        raise ValueError("batch_means: every value must be a finite number")
    transient = math.floor(len(data) * Fraction(warmup) + Fraction(1, 2))
    kept = len(data) - transient
    if kept < batches:
        raise ValueError(f"batch_means: {kept} values after the warm-up ({len(data)} given, "
                         f"{transient} dropped), need at least one per batch ({batches})")
    size = kept // batches
    means = tuple(math.fsum(data[start:start + size]) / size
                  for start in range(transient, transient + batches * size, size))
    grand = math.fsum(means) / batches
    deviations = [m - grand for m in means]
    variance = math.fsum(d * d for d in deviations) / (batches - 1)
    t = t_quantile((1.0 + confidence) / 2.0, batches - 1)
    return BatchMeans(mean=grand, half_width=t * math.sqrt(variance / batches),
                      batches=batches, batch_size=size, dropped=kept - batches * size,
                      transient=transient, confidence=confidence,
                      lag1=lag1_autocorrelation(means), batch_means=means)


def _check_arguments(batches: int, warmup: float, confidence: float) -> None:
    if isinstance(batches, bool) or not isinstance(batches, int) or batches < 2:
        raise ValueError(f"batch_means: batches must be an integer >= 2, got {batches!r}")
    if not (isinstance(warmup, int | float) and 0.0 <= warmup < 1.0):
        raise ValueError(f"batch_means: warmup must be a fraction in [0, 1), got {warmup!r}")
    if not (isinstance(confidence, int | float) and 0.0 < confidence < 1.0):
        raise ValueError(f"batch_means: confidence must be in (0, 1), got {confidence!r}")


def lag1_autocorrelation(series: Sequence[float]) -> float | None:
    """sum (x_i - m)(x_{i+1} - m) / sum (x_i - m)^2; None for a constant series (0 / 0)."""
    if len(series) < 2:
        raise ValueError("lag1_autocorrelation: needs at least 2 values")
    m = math.fsum(series) / len(series)
    d = [x - m for x in series]
    denominator = math.fsum(x * x for x in d)
    if denominator == 0.0:
        return None
    return math.fsum(a * b for a, b in zip(d[:-1], d[1:], strict=True)) / denominator
