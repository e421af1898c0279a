"""Student t quantiles, written out (no scipy): the sweep's confidence intervals over seeds
(`runtime/tools/sweep/summary.py`) and the experiments' batch means (`experiments/stats.py`).

The t distribution's CDF is 1 - I_x(nu/2, 1/2) / 2 for t > 0, with x = nu / (nu + t^2) and
I the regularized incomplete beta function, evaluated by its continued fraction (modified
Lentz); the quantile is found by bisection on that CDF to machine precision. Checked in the
tests against tabulated values (t_{0.975,19} = 2.093024) and the closed forms for 1, 2 and 4
degrees of freedom.
"""

from __future__ import annotations

import math

_TINY = 1e-300  # keeps Lentz's denominators away from 0
_EPS = 1e-16  # relative change at which the continued fraction has converged
_MAX_TERMS = 10_000

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
