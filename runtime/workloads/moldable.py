"""Turning a rigid trace moldable, as Srinivasan et al. (papers/000, section 2.2) do.

Range factor RF >= 1: a job that ran on p of the machine's n cpus may run on any size in

    min = floor((1 - 1/RF) p) + 1        max = floor((n - p) / RF) + p

(the paper's formulas, floored to whole cpus: RF = 1 gives [1, n], a large RF shrinks the
range to [p, p]; for an integer RF the floored min equals p - (p - 1)/RF rounded up, so it
never exceeds p). Its speedup is Downey's with average parallelism A = max and the given
sigma; the run time and estimate recorded at p fix the effective sequential time
L = T(p) S(p), and on x cpus the job runs L / S(x) (``Job.at_size``).

Load factor LF (percent): inter-arrival times are scaled by 100 / LF, so LF = 125 offers
1.25 times the load; submit times stay whole seconds (rounded), in the same order, and the
earliest stays where it was (so none moves below time 0).
"""

from __future__ import annotations

import math
from fractions import Fraction

import attrs
from attrs import frozen

from schedc.runtime.jobs import Job, Moldable
from schedc.runtime.speedup import Downey
from schedc.runtime.workloads.workload import Workload


@frozen
class MoldableSpec:
    range_factor: float | None = None  # RF >= 1; None: the jobs stay rigid
    sigma: float = 0.0  # Downey's sigma for every job (0: linear up to A)
    load_factor: float = 100.0  # percent of the trace's load

    def __attrs_post_init__(self) -> None:
        if self.range_factor is not None and not self.range_factor >= 1:
            raise ValueError(f"the range factor must be >= 1, got {self.range_factor}")
        if not self.sigma >= 0:
            raise ValueError(f"sigma must be >= 0, got {self.sigma}")
        if not self.load_factor > 0:
            raise ValueError(f"the load factor must be > 0 (percent), got {self.load_factor}")


def size_range(p: int, n: int, range_factor: float) -> tuple[int, int]:
    """[min, max] of a job recorded on p of n cpus (exact rational arithmetic)."""
    rf = Fraction(range_factor)
    lo = math.floor((1 - 1 / rf) * p) + 1
    hi = math.floor((n - p) / rf) + p
    return min(lo, p), max(hi, p)


def make_moldable(workload: Workload, spec: MoldableSpec) -> Workload:
    """The workload with ``spec``'s ranges, speedups and load (jobs keep ids and order)."""
    n = workload.capacities[0]
    scale = Fraction(100) / Fraction(spec.load_factor)
    # scaled from the earliest submit (the first job's in a sorted trace): a job submitted
    # before the first one would otherwise move below it, maybe below time 0
    first = min((j.submit for j in workload.jobs), default=0)
    jobs = []
    for job in workload.jobs:
        changes: dict[str, object] = {}
        if scale != 1:
            changes["submit"] = first + round((job.submit - first) * scale)
        if spec.range_factor is not None:
            lo, hi = size_range(job.procs, n, spec.range_factor)
            changes["moldable"] = Moldable(lo, hi, Downey(float(hi), spec.sigma))
        jobs.append(attrs.evolve(job, **changes) if changes else job)
    return attrs.evolve(workload, jobs=tuple(jobs), transform=describe(spec))


def describe(spec: MoldableSpec) -> str:
    """How the workload was changed, for reports (empty when it was not)."""
    parts = []
    if spec.range_factor is not None:
        parts.append(f"moldable: RF {spec.range_factor:g}, Downey sigma {spec.sigma:g}")
    if spec.load_factor != 100:
        parts.append(f"load {spec.load_factor:g}%")
    return ", ".join(parts)


__all__ = ["Job", "MoldableSpec", "describe", "make_moldable", "size_range"]
