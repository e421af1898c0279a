"""A sweep's summary across seeds: per configuration (the input columns other than the seed),
for every numeric metric M, the mean over the configuration's runs that succeeded and its
95% Student t confidence interval (`M_mean`, `M_ci_low`, `M_ci_high`; the interval is
empty for one run, where it is undefined, not zero-wide), and `runs`, how many runs it
averages."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from schedc.runtime.results.student_t import t_quantile

CONFIDENCE = 0.95


def interval(values: Sequence[float], confidence: float = CONFIDENCE
             ) -> tuple[float, float | None, float | None]:
    """(mean, low, high) of the mean of ``values``: mean -+ t_{(1+c)/2, n-1} s / sqrt(n);
    low and high None for one value (n - 1 = 0 degrees of freedom: no interval)."""
    n = len(values)
    if n == 1:
        return values[0], None, None
    if all(v == values[0] for v in values):  # runs nothing random changed
        return values[0], values[0], values[0]  # (not a mean rounded an ulp away)
    mean = math.fsum(values) / n
    variance = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    half = t_quantile((1.0 + confidence) / 2.0, n - 1) * math.sqrt(variance / n)
    return mean, mean - half, mean + half


def summarise(rows: Sequence[Mapping[str, Any]], inputs: Sequence[str],
              metrics: Sequence[str]) -> tuple[list[str], list[dict[str, Any]]]:
    """The summary's columns and rows (in the order of the configurations' first rows) from
    the results' rows (``inputs`` includes "seed", which is averaged over)."""
    group = [c for c in inputs if c != "seed"]
    configurations: dict[tuple, list[Mapping[str, Any]]] = {}
    for row in rows:
        configurations.setdefault(tuple(row[c] for c in group), []).append(row)
    columns = [*group, *(f"{m}_{s}" for m in metrics for s in ("mean", "ci_low", "ci_high")),
               "runs"]
    out = []
    for config, members in configurations.items():
        ok = [r for r in members if r["status"] == "ok"]
        row: dict[str, Any] = dict(zip(group, config, strict=True))
        for m in metrics:
            values = [float(r[m]) for r in ok if isinstance(r.get(m), int | float)]
            mean, low, high = interval(values) if values else (None, None, None)
            row.update({f"{m}_mean": mean, f"{m}_ci_low": low, f"{m}_ci_high": high})
        row["runs"] = len(ok)
        out.append(row)
    return columns, out
