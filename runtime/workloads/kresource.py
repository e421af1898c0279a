"""K-resource workloads after Leinberger, Karypis & Kumar (papers/004, section 3.1).

The paper extends a single-resource workload (the Feitelson 1996 model's job sizes and run
times) with three parameters:

1. K, the number of resources (the paper: 2, 4, 8). Here a machine of K resources of equal
   capacity, the source machine's processors: `cpus`, `r2`, ..., `rK` (the names
   `schedc run --resources K` gives a policy's machine).
2. The relationship of a job's K requirements: "a set of K random numbers was drawn from a
   uniform random variable and then scaled with the job size ... a similar method was used
   for the exponential distribution". The paper does not say how a draw is scaled. We draw
   x_1..x_K (uniform on (0, 1], or exponential of mean 1) and ask for
   R_i = max(1, ceil(size x x_i / max_k x_k)): the job's largest requirement is its size in
   the source, so every job fits the machine and its dominant share is the trace's, while the
   distribution sets how the others compare to it (exponential draws leave most of them
   small, as the paper says).
3. The load: Poisson arrivals whose rate is calibrated so that FCFS/FF-EASY reaches a target
   average ready-queue length (the paper: 64, 128, 256). ``tools/calibrate.py`` finds that
   rate by bisection on the mean inter-arrival time, simulating the baseline policy at each
   step (it runs the simulator, which reads workloads: so it lives above both).

Sizes, run times and estimates come from a real or model trace (``schedc workload
kresource --from TRACE``), in its order; a job's arrival gap is a unit exponential draw times
the mean inter-arrival, so one seed gives the same jobs at every rate and only the time axis
is stretched (the queue length then changes smoothly with the rate, which the bisection
needs).

Everything is drawn from ``random.Random(seed)``: the same source, spec and seed give the
same table, byte for byte.
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Sequence

from attrs import frozen

from schedc.runtime.atomicio import open_atomic
from schedc.runtime.jobs import Job
from schedc.runtime.workloads.workload import Workload

DISTRIBUTIONS = ("uniform", "exponential")


@frozen
class SourceJob:
    """What the generator takes from the source trace."""

    size: int  # processors: the largest requirement of the K
    run_time: int
    estimate: int


@frozen
class Draws:
    """The random part of a K-resource workload, independent of the arrival rate."""

    k: int
    distribution: str
    seed: int
    gaps: tuple[float, ...]  # unit-mean exponential inter-arrival gaps
    requests: tuple[tuple[int, ...], ...]  # the K requirements of each job


def draw(source: Sequence[SourceJob], k: int, distribution: str, seed: int) -> Draws:
    """Requirement vectors and unit arrival gaps for ``source``'s jobs."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"K must be an integer >= 1, got {k!r}")
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"unknown distribution `{distribution}` (one of "
                         f"{', '.join(DISTRIBUTIONS)})")
    rng = random.Random(seed)
    gaps = []
    requests = []
    for job in source:
        gaps.append(rng.expovariate(1.0))
        if distribution == "uniform":
            xs = [1.0 - rng.random() for _ in range(k)]  # (0, 1]: no zero draw
        else:
            xs = [rng.expovariate(1.0) for _ in range(k)]
        top = max(xs)
        # x / top first: <= 1 exactly, so the product never rounds above the size
        requests.append(tuple(max(1, math.ceil(job.size * (x / top))) for x in xs))
    return Draws(k, distribution, seed, tuple(gaps), tuple(requests))


def resource_names(k: int) -> tuple[str, ...]:
    return ("cpus", *(f"r{i}" for i in range(2, k + 1)))


def workload(source: Sequence[SourceJob], draws: Draws, capacity: int,
             mean_interarrival: float, name: str = "k-resource") -> Workload:
    """The jobs arriving by a Poisson process of mean gap ``mean_interarrival`` seconds."""
    if not mean_interarrival > 0 or not math.isfinite(mean_interarrival):
        raise ValueError(f"the mean inter-arrival must be a finite number > 0, got "
                         f"{mean_interarrival!r}")
    jobs = []
    clock = 0.0
    for i, (job, gap, req) in enumerate(zip(source, draws.gaps, draws.requests, strict=True)):
        clock += gap * mean_interarrival
        jobs.append(Job(i + 1, i, math.floor(clock), min(job.run_time, job.estimate),
                        job.estimate, req))
    return Workload(jobs=tuple(jobs), resources=resource_names(draws.k),
                    capacities=(capacity,) * draws.k, skipped={}, source=name, header={})


def source_jobs(trace: Workload, limit: int | None = None) -> tuple[SourceJob, ...]:
    """Sizes, run times and estimates of the trace's jobs (its first ``limit``)."""
    jobs = trace.jobs if limit is None else trace.jobs[:limit]
    return tuple(SourceJob(j.request[0], j.run_time, j.estimate) for j in jobs)


def write_table(w: Workload, path: str | os.PathLike[str], comment: str = "") -> None:
    """A job table `schedc run --resources K` reads; the capacities in a `# capacity` line,
    so no --capacity is needed (atomic write)."""
    with open_atomic(path, newline="") as out:
        if comment:
            out.write(f"# {comment}\n")
        caps = " ".join(f"{r}={c}" for r, c in zip(w.resources, w.capacities, strict=True))
        out.write(f"# capacity {caps}\n")
        out.write(",".join(("id", "submit", "run_time", "estimate", *w.resources)) + "\n")
        for j in w.jobs:
            out.write(",".join(map(str, (j.id, j.submit, j.run_time, j.estimate,
                                         *j.request))) + "\n")


def offered_gap(source: Sequence[SourceJob], capacity: int) -> float:
    """The mean inter-arrival at which the jobs' largest requirements offer a load of 1
    (their mean size x run time over the capacity): where a calibration starts."""
    return max(1.0, sum(j.size * j.run_time for j in source) / len(source) / capacity)
