"""Seeded synthetic moldable workloads after the model of paper 002 (Chhabra & Singh, "An
Improved Adaptive Space-Sharing Scheduling Policy for Non-dedicated Heterogeneous Clusters",
section 5.2 "Parallel Workload Model" and eq. 9).

Each job has three drawn components, as in the paper:

- arrival: inter-arrival times with mean ``mean_interarrival`` and coefficient of variation
  ``cv_interarrival``. The paper uses a Poisson process (exponential, CV_a = 1) and varies CV_a
  in its sensitivity study without naming the distribution for CV_a != 1; we use the two-stage
  hyper-exponential below for CV > 1 and a gamma draw for CV < 1 (see ``variate``).
- service demand: "the total time required to execute the job in a dedicated environment,
  independent of how many processors are used" (d_j = t_j * p_j, no overheads), drawn from a
  two-stage hyper-exponential with mean D and CV_s (paper: D = 16, CV_s = 4). We count it in
  BPU-seconds, the work on one processor of speed 1 BPU (Basic Processor Unit, paper 002
  section 5.1), so a job given BPUs totalling B runs demand / B seconds.
- maximum parallelism Pmax: uniform integer in [pmax_low, pmax_high] (paper: 1..32).

Two-stage hyper-exponential with balanced means (mean m, CV c >= 1): with probability
p1 = (1 + sqrt((c^2 - 1) / (c^2 + 1))) / 2 an exponential of rate mu1 = 2 p1 / m, otherwise
one of rate mu2 = 2 (1 - p1) / m. "Balanced" means p1 / mu1 == p2 / mu2 == m / 2: each branch
carries half the mean, which pins the one free parameter of the H2 fit to two moments.

Offered utilisation is eq. 9 of the paper:

    Average utilization = (Job arrival rate * Mean service demand) / Number of processors

(``offered_utilisation``, whose docstring says how the denominator generalises to BPUs).

Everything is drawn from ``random.Random`` seeded from ``SyntheticSpec.seed`` (no numpy), so
the same spec gives the same jobs, and the same bytes from ``write_csv_table``.
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Iterable, Sequence
from pathlib import Path

from attrs import frozen

from schedc.dsl.number_text import MAX_CAPACITY, MAX_TIME, bound_text, short
from schedc.runtime.atomicio import open_atomic

HEADER = "id,submit,demand,pmax"


# The spec's ranges (docs/reference/limits.md): means up to 10^15 s and CVs up to 1000 keep
# every draw a finite float (an H2 draw reaches about mean * CV^2 * 37); the jobs are held in
# memory.
MAX_JOBS = 10**7
MAX_CV = 1000.0


def _need_int(where: str, value: object, low: int, high: int | None = None) -> None:
    # bool is an int subclass; True as a job count is a mistake, not 1.
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{where}: got {value!r}, needs an integer >= {low}")
    if high is not None and value > high:
        raise ValueError(f"{where}: got {short(str(value))}, needs an integer in "
                         f"[{low}, {bound_text(high)}]: the supported range "
                         "(docs/reference/limits.md)")


def _need_positive(where: str, value: object, high: float | None = None) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or value <= 0:  # type: ignore[arg-type]
        raise ValueError(f"{where}: got {value!r}, needs a finite number > 0")
    if high is not None and value > high:  # type: ignore[operator]
        raise ValueError(f"{where}: got {value!r}, needs a number in "
                         f"(0, {bound_text(int(high))}]: the supported range "
                         "(docs/reference/limits.md)")


# kw_only: five numbers in a row (two means, two CVs, a count) are easy to swap positionally,
# and it lets pmax_high (required) follow pmax_low (defaulted) in the paper's order.
@frozen(kw_only=True)
class SyntheticSpec:
    jobs: int  # number of jobs
    mean_interarrival: float  # seconds; 1 / arrival rate (lambda in paper 002)
    cv_interarrival: float  # CV_a; 1.0 = Poisson arrivals (the paper's default)
    mean_demand: float  # D, BPU-seconds (paper 002 table 1: 16)
    cv_demand: float  # CV_s (paper 002 table 1: 4)
    pmax_low: int = 1
    pmax_high: int  # paper 002: Pmax uniform in 1..32
    seed: int = 0

    def __attrs_post_init__(self) -> None:
        _need_int("SyntheticSpec.jobs", self.jobs, 1, MAX_JOBS)
        _need_positive("SyntheticSpec.mean_interarrival", self.mean_interarrival, MAX_TIME)
        _need_positive("SyntheticSpec.cv_interarrival", self.cv_interarrival, MAX_CV)
        _need_positive("SyntheticSpec.mean_demand", self.mean_demand, MAX_TIME)
        _need_positive("SyntheticSpec.cv_demand", self.cv_demand, MAX_CV)
        _need_int("SyntheticSpec.pmax_low", self.pmax_low, 1, MAX_CAPACITY)
        _need_int("SyntheticSpec.pmax_high", self.pmax_high, 1, MAX_CAPACITY)
        if self.pmax_high < self.pmax_low:
            raise ValueError(
                f"SyntheticSpec.pmax_high: got {self.pmax_high!r}, "
                f"needs an integer >= pmax_low ({self.pmax_low})"
            )
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ValueError(f"SyntheticSpec.seed: got {self.seed!r}, needs an integer")


@frozen(slots=True)
class SyntheticJob:
    id: int  # 1..jobs, in submit order
    submit: int  # seconds since the start of the stream, non-decreasing with id
    demand: float  # BPU-seconds, > 0
    pmax: int  # most processors the job can use, pmax_low..pmax_high


def exponential(rng: random.Random, mean: float) -> float:
    """One exponential draw with the given mean (>= 0; 0.0 only if ``rng.random()`` is 0.0).

    Written out instead of ``rng.expovariate`` so the stream depends only on
    ``Random.random``, which Python guarantees stable across versions.
    """
    return -mean * math.log(1.0 - rng.random())


def hyperexponential(rng: random.Random, mean: float, cv: float) -> float:
    """One draw of the two-stage hyper-exponential (H2) with balanced means.

    p1 = (1 + sqrt((cv^2 - 1) / (cv^2 + 1))) / 2, mu1 = 2 p1 / mean, mu2 = 2 (1 - p1) / mean:
    with probability p1 an exponential of rate mu1, else one of rate mu2. Its mean is ``mean``
    and its coefficient of variation ``cv``; cv == 1 gives p1 = 1/2, mu1 = mu2, the
    exponential. Needs mean > 0 and cv >= 1 (an H2 cannot have CV < 1).
    """
    _need_positive("hyperexponential mean", mean)
    if not (isinstance(cv, int | float) and math.isfinite(cv) and cv >= 1.0):
        raise ValueError(f"hyperexponential cv: got {cv!r}, needs a finite number >= 1")
    c2 = cv * cv
    p1 = (1.0 + math.sqrt((c2 - 1.0) / (c2 + 1.0))) / 2.0
    if rng.random() < p1:
        return exponential(rng, mean / (2.0 * p1))  # 1 / mu1
    return exponential(rng, mean / (2.0 * (1.0 - p1)))  # 1 / mu2; p1 < 1 for finite cv


def variate(rng: random.Random, mean: float, cv: float) -> float:
    """A non-negative draw with the given mean and coefficient of variation.

    cv == 1: exponential (paper 002's arrivals). cv > 1: the balanced H2 (paper 002's service
    demand). cv < 1: the paper is silent; we use the gamma distribution with shape 1 / cv^2 and
    scale mean * cv^2, which has exactly that mean and CV for any cv (Erlang-k is its
    integer-shape case, reaching only cv = 1/sqrt(k)) and costs O(1) per draw.
    """
    _need_positive("variate mean", mean)
    _need_positive("variate cv", cv)
    if cv == 1.0:
        return exponential(rng, mean)
    if cv > 1.0:
        return hyperexponential(rng, mean, cv)
    return rng.gammavariate(1.0 / (cv * cv), mean * cv * cv)


def _stream(seed: int, name: str) -> random.Random:
    # One generator per component, seeded from (seed, name): changing the arrival process
    # (e.g. sweeping mean_interarrival for a utilisation curve) leaves demands and Pmax the same
    # (common random numbers), and a str seed hashes with SHA-512, stable across runs/versions.
    return random.Random(f"schedc.synthetic:{seed}:{name}")


def generate(spec: SyntheticSpec) -> tuple[SyntheticJob, ...]:
    """The ``spec.jobs`` jobs of ``spec``, in submit order; the same spec gives the same jobs.

    Job i is submitted at the sum of the first i inter-arrival draws (the stream starts at 0 with
    no arrival there, as a Poisson process does), rounded to the nearest integer second. The sum
    is kept in full precision and only each submit is rounded, so rounding errors do not
    accumulate, and since rounding is monotone the submits stay non-decreasing (jobs less than
    a second apart may share a submit second).
    """
    arrivals = _stream(spec.seed, "arrivals")
    demands = _stream(spec.seed, "demands")
    widths = _stream(spec.seed, "pmax")
    jobs: list[SyntheticJob] = []
    clock = 0.0
    for i in range(1, spec.jobs + 1):
        clock += variate(arrivals, spec.mean_interarrival, spec.cv_interarrival)
        demand = 0.0
        while demand <= 0.0:  # a draw of exactly 0.0 (probability ~2^-53) would be no job
            demand = variate(demands, spec.mean_demand, spec.cv_demand)
        pmax = widths.randint(spec.pmax_low, spec.pmax_high)
        jobs.append(SyntheticJob(i, round(clock), demand, pmax))
    return tuple(jobs)


def total_computing_power(
    bpus: Sequence[float], local_loads: Sequence[float] | None = None
) -> float:
    """Sum over processors of BPU_k * (1 - Local_load_k): paper 002 eq. 6 summed, as in eq. 7.

    Without ``local_loads`` the machine is dedicated (all loads 0). Loads are fractions in
    [0, 1) (paper 002 draws them uniform in 0..30%).
    """
    loads = [0.0] * len(bpus) if local_loads is None else list(local_loads)
    if len(loads) != len(bpus):
        raise ValueError(f"local_loads: got {len(loads)} values, needs one per processor "
                         f"({len(bpus)})")
    for k, (bpu, load) in enumerate(zip(bpus, loads, strict=True)):
        _need_positive(f"bpus[{k}]", bpu)
        if not (isinstance(load, int | float) and 0.0 <= load < 1.0):
            raise ValueError(f"local_loads[{k}]: got {load!r}, needs a number in [0, 1)")
    return math.fsum(b * (1.0 - x) for b, x in zip(bpus, loads, strict=True))


def offered_utilisation(spec: SyntheticSpec, total_power: float) -> float:
    """Paper 002 eq. 9: arrival rate * mean service demand / machine size.

    Eq. 9 reads "Average utilization = (Job arrival rate * Mean service demand) / Number of
    processors". Here the arrival rate is 1 / ``spec.mean_interarrival`` (the long-run rate for
    any arrival CV) and the denominator is ``total_power``, in BPUs, since demand is in
    BPU-seconds. Pass the number of processors to apply eq. 9 verbatim (the paper's 64, although
    its cluster has 32 x 1 + 32 x 2 = 96 BPUs), the sum of BPUs for the utilisation of the
    dedicated heterogeneous machine, or ``total_computing_power`` with local loads for the share
    of the power left by background work (eqs. 6-7).
    """
    _need_positive("total_power", total_power)
    return spec.mean_demand / (spec.mean_interarrival * total_power)


def interarrival_for_utilisation(
    target_utilisation: float, mean_demand: float, total_power: float
) -> float:
    """The mean inter-arrival time (seconds) at which eq. 9 gives ``target_utilisation``.

    Solves U = (1 / T) * D / P for T: T = D / (U * P). Used to sweep utilisation with the
    other workload parameters fixed.
    """
    _need_positive("target_utilisation", target_utilisation)
    _need_positive("mean_demand", mean_demand)
    _need_positive("total_power", total_power)
    return mean_demand / (target_utilisation * total_power)


def write_csv_table(jobs: Iterable[SyntheticJob], path: str | os.PathLike[str]) -> None:
    """Write ``id,submit,demand,pmax`` rows to ``path``, whole or not at all.

    The demand is written with ``repr`` (shortest string that reads back as the same float), so
    ``read_synthetic_table`` returns equal jobs. The file goes to a temporary file in the same
    folder, then ``os.replace`` moves it over ``path`` (``atomicio.open_atomic``).
    """
    with open_atomic(path) as out:
        out.write(HEADER + "\n")
        for job in jobs:
            out.write(f"{job.id},{job.submit},{job.demand!r},{job.pmax}\n")


def write_schedc_table(jobs: Iterable[SyntheticJob], path: str | os.PathLike[str],
                       time_scale: int = 1) -> None:
    """The jobs as a moldable job table that ``schedc run --workload`` reads
    (``runtime/workloads/csv_table.py``): each job recorded on its Pmax processors of 1 BPU for
    ceil(demand / Pmax) seconds (paper 002: d = t * p, no overheads), so linear speedup, any
    size from 1 to Pmax; the estimate is the run time (the papers' schedulers know it).
    Times in units of 1/``time_scale`` s, recorded in a ``# time-unit`` line (the reader
    reports seconds). Written whole or not at all."""
    with open_atomic(path) as out:
        if time_scale != 1:
            out.write(f"# time-unit 1/{time_scale} s\n")
        out.write("id,submit,run_time,estimate,cpus,min_size,max_size,speedup\n")
        for job in jobs:
            run = max(1, math.ceil(job.demand / job.pmax))
            out.write(f"{job.id},{job.submit},{run},{run},{job.pmax},1,{job.pmax},linear\n")


def _parse_row(cells: list[str]) -> SyntheticJob:
    # Returns the job or raises ValueError with a message (no location; the caller adds it).
    if len(cells) != 4:
        raise ValueError(f"expected 4 columns ({HEADER}), found {len(cells)}")
    values: list[int] = []
    for name, cell in (("id", cells[0]), ("submit", cells[1]), ("pmax", cells[3])):
        try:
            values.append(int(cell))
        except ValueError:
            raise ValueError(f"{name} {cell!r} is not an integer") from None
    ident, submit, pmax = values
    try:
        demand = float(cells[2])
    except ValueError:
        raise ValueError(f"demand {cells[2]!r} is not a number") from None
    if ident < 1:
        raise ValueError(f"id {ident} must be >= 1")
    if submit < 0:
        raise ValueError(f"submit {submit} must be >= 0")
    if not (math.isfinite(demand) and demand > 0):
        raise ValueError(f"demand {cells[2]!r} must be a finite number > 0")
    if pmax < 1:
        raise ValueError(f"pmax {pmax} must be >= 1")
    return SyntheticJob(ident, submit, demand, pmax)


def read_synthetic_table(path: str | os.PathLike[str]) -> tuple[SyntheticJob, ...]:
    """The jobs of a table written by ``write_csv_table``.

    Raises ValueError "path:line: message" for a wrong header, a malformed row, a duplicate id
    or a submit earlier than the row before (the generator's order, which simulators rely on).
    """
    name = str(path)
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    if not lines or lines[0].strip() != HEADER:
        got = repr(lines[0]) if lines else "an empty file"
        raise ValueError(f"{name}:1: expected header {HEADER!r}, got {got}")
    jobs: list[SyntheticJob] = []
    seen: set[int] = set()
    for lineno, line in enumerate(lines[1:], 2):
        try:
            job = _parse_row([c.strip() for c in line.split(",")])
            if job.id in seen:
                raise ValueError(f"duplicate id {job.id}")
            if jobs and job.submit < jobs[-1].submit:
                raise ValueError(f"submit {job.submit} is before the previous row's "
                                 f"{jobs[-1].submit}")
        except ValueError as err:
            raise ValueError(f"{name}:{lineno}: {err}") from None
        seen.add(job.id)
        jobs.append(job)
    return tuple(jobs)
