"""Seeded workloads after the model of paper 003 (Parsons & Sevcik, "Implementing
Multiprocessor Scheduling Disciplines", section 6 and 6.1).

The machine. The paper runs on 16 workstations and assumes "that each processor corresponds
to eight processors in reality. Thus, all processor allocations are multiples of eight, and
the minimum allocation is eight processors" (section 6): 128 processors allocated in nodes of
8. Here schedc's processors (``cpus``) are the paper's 16 **nodes**: the table says
``# capacity cpus=16`` and a job of size n holds n nodes, 8n processors. Sizes, loads and
allocations then count nodes, exactly as the paper's schedulers did, and a policy needs no
rule to keep allocations multiples of 8.

Service demand D: "specified in terms of the amount of computation required on a single
processor" (section 5), the "sequential service demand" (section 6.2, a job of 265,000 s),
drawn from a hyper-exponential of mean 8000 s and CV 4 whose quartiles are 1230, 2985 and
6100 s (section 6.1 and its footnote 7). The balanced-means two-stage hyper-exponential of
``synthetic.hyperexponential`` (reused here) has quartiles 1228, 2984 and 6099 s, so it is the
form the paper used. D counts seconds on **one real processor**, not on one node: a job on n
nodes runs T(n) = D / S(8n), where S is its speedup on real processors ("Scaling the number
of processors in this way affects the synthetic application in determining the amount of
time it should execute", section 6).

Speedup, two classes (section 6.1), drawn per job independently of its sizes and demand:

- "good", 75% of the jobs: "99.9% of the work is perfectly parallelizable (corresponding to a
  speedup of 114 on 128 processors)": Amdahl's law with serial fraction f = 0.001 on real
  processors, S(128) = 113.6.
- "poor", 25%: "a speedup of 6.4 on 8 processors and a speedup of 9.3 on 128 processors". No
  Amdahl fraction gives both (f = 0.0357 from S(8) gives S(128) = 23.1); the paper's curve is
  in its reference [Par97], not at hand. Downey's low-variance model with A = 9.3 and
  sigma = A / 14 = 0.66428... gives both exactly: S(8) = 8A / (A + 7 sigma / 2) = 6.4, and
  S(n) = A for n >= 2A - 1 = 17.6.

In node units a job's speedup is S_node(n) = T(1) / T(n) = S(8n) / S(8), written in the
table's ``speedup`` column (``runtime/speedup.py``; no new model):

- good: Amdahl is closed under this rescaling: S(8n) / S(8) is Amdahl's law in n with serial
  fraction f' = f / (f + (1 - f) / 8) = 0.0079443..., written ``amdahl(f')`` with f' in full.
- poor: S(8n) is Downey's curve, which is not; the job's own run times in seconds,
  ``measured(1:T(1), 2:T(2), 3:T(3))``. T(n) for n >= 3 (24 processors and more) all equal
  D / 9.3, and ``measured`` clamps beyond its last size, so these three points are T(n) for
  every n in 1..16, exactly.

Sizes (section 6.1), in nodes: the minimum allocation uniform on 1..16, the maximum 16, and
"the processor allocation size used for rigid disciplines ... from a uniform distribution
between the minimum and the maximum": the job's **request** (the table's ``cpus``) uniform
on [min, 16]. The table makes every job moldable on [min, 16]: a rigid policy runs it on its
request, a ``size`` policy anywhere in its range, its times scaled by its speedup.

Times: each job is recorded at its request, run time = estimate = ceil(T(request)) whole
seconds (at least 1; the estimate is exact, as with the paper's service-demand knowledge).

Arrivals: a Poisson process (section 6), "using an arrival rate that reflects a
moderately-heavy load", which the paper does not give: ``mean_interarrival`` is a parameter,
or is derived from an offered load (``interarrival_for_load``):

    load = arrival rate * E[nodes held x seconds held] / 16 nodes

with every job at its request (``at="request"``: the work of the rigid disciplines, and what
``schedc workload info`` reports as the offered load of the table), or at its minimum
(``at="minimum"``: the least a job can cost, where the adaptive disciplines go at heavy
load). E[n T(n)] = mean demand x E[n / S(8n)], the second factor summed exactly over the two
classes and the sizes (``node_seconds_per_demand``): 0.4322 at the request, 0.3294 at the
minimum, against 1/8 = 0.125 for perfect speedup. So with the paper's mean demand a load of 1
at the requests is a mean inter-arrival of 216.1 s.

Everything is drawn from ``random.Random`` streams seeded from (seed, component): the same
spec gives the same jobs, and the same bytes from ``write_table``; changing the arrival rate
leaves demands, classes and sizes the same (common random numbers).
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Iterable
from typing import Literal

from attrs import frozen

from schedc.dsl.number_text import MAX_TIME
from schedc.runtime.atomicio import open_atomic
from schedc.runtime.speedup import Amdahl, Downey, Measured, Speedup, format_speedup
from schedc.runtime.workloads.synthetic import (
    MAX_CV,
    MAX_JOBS,
    _need_int,
    _need_positive,
    exponential,
    hyperexponential,
)

NODES = 16  # the paper's 16 workstations, schedc's cpus
PROCS_PER_NODE = 8  # "each processor corresponds to eight processors in reality"
GOOD_SERIAL = 0.001  # good jobs: 99.9% of the work perfectly parallel (Amdahl, real processors)
POOR_A = 9.3  # poor jobs: Downey's A, S(n) = 9.3 from 2A - 1 = 17.6 processors on
POOR_SIGMA = POOR_A / 14  # the sigma with S(8) = 8A / (A + 3.5 sigma) = 6.4 exactly
GOOD = Amdahl(GOOD_SERIAL)
POOR = Downey(POOR_A, POOR_SIGMA)
# "mean of 8000 seconds (2.2 hours) and coefficient of variation (CV) of 4", section 6.1
MEAN_DEMAND = 8000.0
CV_DEMAND = 4.0
GOOD_SHARE = 0.75

HEADER = "id,submit,run_time,estimate,cpus,min_size,max_size,speedup"
LoadAt = Literal["request", "minimum"]


# kw_only: as SyntheticSpec, numbers in a row are easy to swap positionally
@frozen(kw_only=True)
class ParsonsSevcikSpec:
    jobs: int  # number of jobs
    mean_interarrival: float  # seconds; Poisson arrivals (the paper gives no rate)
    seed: int = 0
    mean_demand: float = MEAN_DEMAND  # seconds on one real processor
    cv_demand: float = CV_DEMAND  # >= 1: a hyper-exponential
    good_share: float = GOOD_SHARE  # the share of jobs with good speedup, in [0, 1]

    def __attrs_post_init__(self) -> None:
        _need_int("ParsonsSevcikSpec.jobs", self.jobs, 1, MAX_JOBS)
        _need_positive("ParsonsSevcikSpec.mean_interarrival", self.mean_interarrival,
                       MAX_TIME)
        _need_positive("ParsonsSevcikSpec.mean_demand", self.mean_demand, MAX_TIME)
        _need_positive("ParsonsSevcikSpec.cv_demand", self.cv_demand, MAX_CV)
        if self.cv_demand < 1.0:
            raise ValueError(f"ParsonsSevcikSpec.cv_demand: got {self.cv_demand!r}, needs a "
                             "number >= 1 (a hyper-exponential)")
        share = self.good_share
        if (isinstance(share, bool) or not isinstance(share, int | float)
                or not 0.0 <= share <= 1.0):
            raise ValueError(f"ParsonsSevcikSpec.good_share: got {share!r}, needs a number "
                             "in [0, 1]")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ValueError(f"ParsonsSevcikSpec.seed: got {self.seed!r}, needs an integer")


def real_speedup(good: bool) -> Speedup:
    """The class's speedup on real processors (section 6.1)."""
    return GOOD if good else POOR


def run_seconds(demand: float, good: bool, nodes: int) -> float:
    """T(n) = D / S(8n): the run time on ``nodes`` nodes of a job of sequential demand D."""
    return demand / real_speedup(good).speedup(PROCS_PER_NODE * nodes)


# f' = f / (f + (1 - f) / 8): S(8n) / S(8) of Amdahl(f) is Amdahl(f') in n
GOOD_NODE_SERIAL = GOOD_SERIAL / (GOOD_SERIAL + (1.0 - GOOD_SERIAL) / PROCS_PER_NODE)


@frozen(slots=True)
class ParsonsSevcikJob:
    id: int  # 1..jobs, in submit order
    submit: int  # seconds since the start of the stream, non-decreasing with id
    demand: float  # seconds on one real processor, > 0
    good: bool  # speedup class: good (Amdahl 0.001) or poor (Downey 9.3)
    min_nodes: int  # 1..16; the maximum is always NODES
    nodes: int  # the request (rigid size), min_nodes..16

    def seconds_on(self, nodes: int) -> float:
        """The job's run time on ``nodes`` nodes (8 x nodes processors)."""
        return run_seconds(self.demand, self.good, nodes)

    def speedup(self) -> Speedup:
        """Its speedup in node units, S(8n) / S(8), as the job table writes it."""
        if self.good:
            return Amdahl(GOOD_NODE_SERIAL)
        times = [(n, self.seconds_on(n)) for n in range(1, NODES + 1)]
        while len(times) > 1 and times[-1][1] == times[-2][1]:
            times.pop()  # equal to the point before: `measured` clamps past its last size
        return Measured(tuple(times))

    @property
    def run_time(self) -> int:
        """Whole seconds at its request (also its estimate), at least 1."""
        return max(1, math.ceil(self.seconds_on(self.nodes)))


def _stream(seed: int, name: str) -> random.Random:
    # as synthetic._stream: one generator per component, a str seed hashed with SHA-512
    return random.Random(f"schedc.parsons_sevcik:{seed}:{name}")


def generate(spec: ParsonsSevcikSpec) -> tuple[ParsonsSevcikJob, ...]:
    """The ``spec.jobs`` jobs of ``spec``, in submit order; the same spec gives the same jobs.

    Job i is submitted at the sum of the first i exponential gaps, rounded to the nearest
    second (as ``synthetic.generate``: the sum kept in full precision, submits non-decreasing).
    """
    arrivals = _stream(spec.seed, "arrivals")
    demands = _stream(spec.seed, "demands")
    classes = _stream(spec.seed, "classes")
    sizes = _stream(spec.seed, "sizes")
    jobs: list[ParsonsSevcikJob] = []
    clock = 0.0
    for i in range(1, spec.jobs + 1):
        clock += exponential(arrivals, spec.mean_interarrival)
        demand = 0.0
        while demand <= 0.0:  # a draw of exactly 0.0 (probability ~2^-53) would be no job
            demand = hyperexponential(demands, spec.mean_demand, spec.cv_demand)
        good = classes.random() < spec.good_share
        low = sizes.randint(1, NODES)
        jobs.append(ParsonsSevcikJob(i, round(clock), demand, good, low,
                                     sizes.randint(low, NODES)))
    return tuple(jobs)


def node_seconds_per_demand(good_share: float = GOOD_SHARE, at: LoadAt = "request") -> float:
    """E[n / S(8n)]: a job's expected node-seconds per second of demand, at its request
    (n uniform on [min, 16], min uniform on 1..16) or at its minimum, over the two classes.
    Exact: a finite sum over the model's distributions, not a sample."""
    def mean_over_sizes(model: Speedup) -> float:
        total = 0.0
        for low in range(1, NODES + 1):
            held = range(low, NODES + 1) if at == "request" else (low,)
            total += math.fsum(n / model.speedup(PROCS_PER_NODE * n) for n in held) / len(held)
        return total / NODES

    if at not in ("request", "minimum"):
        raise ValueError(f"at: got {at!r}, needs 'request' or 'minimum'")
    return good_share * mean_over_sizes(GOOD) + (1.0 - good_share) * mean_over_sizes(POOR)


def offered_load(spec: ParsonsSevcikSpec, at: LoadAt = "request") -> float:
    """Arrival rate x E[nodes x seconds held] / 16 nodes (the module doc's formula)."""
    per_job = spec.mean_demand * node_seconds_per_demand(spec.good_share, at)
    return per_job / (spec.mean_interarrival * NODES)


def interarrival_for_load(load: float, mean_demand: float = MEAN_DEMAND,
                          good_share: float = GOOD_SHARE, at: LoadAt = "request") -> float:
    """The mean inter-arrival (seconds) at which ``offered_load`` is ``load``."""
    _need_positive("load", load)
    _need_positive("mean_demand", mean_demand)
    return mean_demand * node_seconds_per_demand(good_share, at) / (load * NODES)


def write_table(jobs: Iterable[ParsonsSevcikJob], path: str | os.PathLike[str],
                comment: str = "") -> None:
    """The jobs as a moldable job table that ``schedc run --workload`` reads
    (``runtime/workloads/csv_table.py``): ``# capacity cpus=16`` (nodes), then each job at its
    request with its range [min, 16] and its speedup in node units (quoted: ``measured`` has
    commas). ``comment`` (one line) heads the table. Written whole or not at all."""
    with open_atomic(path, newline="") as out:
        if comment:
            out.write(f"# {comment}\n")
        out.write(f"# cpus are nodes of {PROCS_PER_NODE} processors (papers/003 section 6)\n")
        out.write(f"# capacity cpus={NODES}\n")
        out.write(HEADER + "\n")
        for job in jobs:
            run = job.run_time
            out.write(f'{job.id},{job.submit},{run},{run},{job.nodes},{job.min_nodes},'
                      f'{NODES},"{format_speedup(job.speedup())}"\n')
