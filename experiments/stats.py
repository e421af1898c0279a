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

Student t quantiles: the t distribution's CDF is 1 - I_x(nu/2, 1/2) / 2 for t > 0, with
x = nu / (nu + t^2) and I the regularized incomplete beta function, evaluated by its
continued fraction (modified Lentz); the quantile is found by bisection on that CDF to
machine precision. Checked in the tests against tabulated values (t_{0.975,19} = 2.093024)
and the closed forms for 1, 2 and 4 degrees of freedom.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

from attrs import frozen

_TINY = 1e-300  # keeps Lentz's denominators away from 0
_EPS = 1e-16  # relative change at which the continued fraction has converged
_MAX_TERMS = 10_000


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


# --- Student t ----------------------------------------------------------------------------


def regularized_beta(x: float, a: float, b: float) -> float:
    """I_x(a, b), the regularized incomplete beta function, for 0 <= x <= 1 and a, b > 0."""
    if not (a > 0 and b > 0):
        raise ValueError(f"regularized_beta: a and b must be > 0, got {a!r}, {b!r}")
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"regularized_beta: x must be in [0, 1], got {x!r}")
    if x in (0.0, 1.0):
        return x
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    # the continued fraction converges fast below the mean (a + 1) / (a + b + 2); above it,
    # the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) brings x there
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(x, a, b) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(1.0 - x, b, a) / b


def _beta_fraction(x: float, a: float, b: float) -> float:
    """The continued fraction of I_x(a, b) by the modified Lentz method (Numerical Recipes
    6.4, betacf)."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _MAX_TERMS):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),  # even step
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):  # odd
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1.0) < _EPS:
            return h
    raise ArithmeticError(f"incomplete beta: no convergence for x={x}, a={a}, b={b}")


def t_upper_tail(t: float, df: float) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom, t >= 0."""
    if t < 0:
        raise ValueError(f"t_upper_tail: t must be >= 0, got {t!r}")
    return 0.5 * regularized_beta(df / (df + t * t), df / 2.0, 0.5)


def t_quantile(p: float, df: float) -> float:
    """The p quantile of Student's t with ``df`` > 0 degrees of freedom, 0 < p < 1.

    Bisection on the upper tail (accurate far out, where 1 - CDF would cancel) until the
    bracket is one float wide: about 60 steps of one incomplete beta each.
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"t_quantile: p must be in (0, 1), got {p!r}")
    if not (math.isfinite(df) and df > 0):
        raise ValueError(f"t_quantile: df must be a finite number > 0, got {df!r}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    tail = 1.0 - p
    if tail == 0.5:
        return 0.0
    low, high = 0.0, 1.0
    while t_upper_tail(high, df) > tail:  # the tail falls with t: double until past it
        low, high = high, 2.0 * high
    while True:
        mid = (low + high) / 2.0
        if mid in (low, high):  # adjacent floats: as close as a double gets
            return high
        if t_upper_tail(mid, df) > tail:
            low = mid
        else:
            high = mid
