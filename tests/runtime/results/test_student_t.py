"""Student t quantiles (runtime/results/student_t.py) against tables and closed forms."""

from __future__ import annotations

import math

import pytest

from schedc.runtime.results.student_t import regularized_beta, t_quantile


@pytest.mark.parametrize(("p", "df", "expected"), [
    (0.975, 19, 2.093024), (0.975, 9, 2.262157), (0.95, 29, 1.699127),
    (0.975, 1, 12.706205), (0.995, 4, 4.604095), (0.975, 1000, 1.962339)])
def test_t_quantile_against_tables(p: float, df: int, expected: float) -> None:
    assert t_quantile(p, df) == pytest.approx(expected, abs=1e-5)
    assert t_quantile(1 - p, df) == pytest.approx(-expected, abs=1e-5)  # symmetric


@pytest.mark.parametrize("p", [0.55, 0.7, 0.9, 0.975, 0.999])
def test_t_quantile_against_closed_forms(p: float) -> None:
    assert t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-12)
    assert t_quantile(p, 2) == pytest.approx((2 * p - 1) / math.sqrt(2 * p * (1 - p)),
                                             rel=1e-12)
    alpha = 4 * p * (1 - p)
    q = math.cos(math.acos(math.sqrt(alpha)) / 3) / math.sqrt(alpha)
    assert t_quantile(p, 4) == pytest.approx(2 * math.sqrt(q - 1), rel=1e-12)


def test_t_quantile_edges_and_errors() -> None:
    assert t_quantile(0.5, 7) == 0.0
    # many degrees of freedom: the normal quantile
    assert t_quantile(0.975, 1e7) == pytest.approx(1.959964, abs=1e-6)
    for p in (0.0, 1.0, -0.1):
        with pytest.raises(ValueError, match="p must be"):
            t_quantile(p, 5)
    with pytest.raises(ValueError, match="df must be"):
        t_quantile(0.9, 0)


def test_regularized_beta() -> None:
    assert regularized_beta(0.3, 1, 1) == pytest.approx(0.3)  # the uniform CDF
    assert regularized_beta(0.3, 2, 3) == pytest.approx(0.3483)  # sum_{k>=2} C(4,k) .3^k .7^(4-k)
    assert regularized_beta(0.0, 2, 3) == 0.0 and regularized_beta(1.0, 2, 3) == 1.0
