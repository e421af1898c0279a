"""Schedule quality metrics and the per-job CSV.

Definitions (``run`` is the run time actually run, ``resp`` = end - submit):

* slowdown = resp / max(run, 1) (a zero-length job would divide by zero);
* bounded slowdown = max(1, resp / max(run, tau)) (tau = 10 s unless `--bsld-tau`);
* utilisation = sum(cpus x run) / (cpus capacity x makespan), makespan = last end - first
  submit;
* ARTwW = sum(procs x resp) / sum(procs): response time weighted by width, eq. (2) of
  Grothklags & Streit (papers/001), normalised by the total width;
* SLDwA = sum(area x sld) / sum(area), area = procs x run: slowdown weighted by area, as in
  the same paper (jobs with zero area weigh nothing);
* mean queue length = the time average of the number of waiting jobs over the makespan,
  sum(wait) / makespan (the integral of the queue length is the sum of the waits): the load
  measure of Leinberger et al. (papers/004 section 3.1);
* weighted response = sum(weight x resp) / sum(weight), weight = run x the mean over the K
  resources of alloc / capacity: papers/004's weighted average response time, whose weight is
  "the product of its resource requirement and execution time" (normalised by the total
  weight, so it is in seconds; gains between policies on one workload are the same);
* categories: Srinivasan et al. (papers/000) group jobs into "10 categories with
  exponentially increasing intervals" of weight = requested processors x actual run time,
  without giving the bounds. We use decades, fixed so that categories compare across
  traces and policies: category c holds area in [10^c, 10^(c+1)), category 0 also holds
  area < 10 (including 0), category 9 everything >= 10^9 procs x s. The weight is the
  trace's (its recorded request and run time), not the schedule's: a moldable job that ran
  on another size stays in its category, so categories compare across rigid and moldable
  runs of one trace.

Times are reported in seconds. A table whose times count smaller units (``# time-unit
1/100 s``, ``Workload.time_unit``) is simulated in those integers, exactly; its time metrics
are then converted to seconds, the bounded-slowdown threshold stays in seconds and the area
categories count procs x seconds (slowdown's guard stays one unit: it only avoids a division
by zero).

What papers report besides the means (`MetricOptions`, `schedc run --bsld-tau, --warmup,
--cooldown`):

* bounded slowdown threshold: tau (`--bsld-tau`, default 10 s), max(1, resp / max(run, tau));
  the tables' label says the tau used;
* percentiles of wait, response and bounded slowdown (median, 90th, 95th, 99th): the
  **nearest rank** definition, the value of rank ceil(p n / 100) (at least 1) of the n values
  in ascending order, so always one job's own value (exact: an integer wait stays one), the
  median being the lower median; one sort per quantity;
* warm-up and cool-down: jobs left out of every metric but still simulated. Jobs are taken in
  submit order (ties: file order); a warm-up of N jobs leaves out the first N, of T seconds
  those submitted less than T after the first submit; a cool-down the last N, or those
  submitted less than T before the last submit (a job in both counts as warm-up). Every other
  metric (utilisation, makespan and mean queue length included) is computed on the measured
  jobs alone, as if the others had not been there; `jobs` stays the number simulated,
  `measured` the number counted, `warmup_jobs` and `cooldown_jobs` those left out;
* width x length categories, as in Srinivasan, Kettimuthu, Subramani and Sadayappan,
  "Characterization of backfilling strategies for parallel job scheduling" (ICPP workshops
  2002), after Mu'alem and Feitelson's short/long, narrow/wide split: short when the job ran
  at most 1 h (<= 3600 s), narrow on at most 8 processors; the categories short narrow, short
  wide, long narrow, long wide (`CLASSES`), with their jobs, mean response and mean bounded
  slowdown. As for the area categories, the recorded run time and requested processors
  decide (a moldable job keeps its category);
* per-user fairness over the jobs with a known user (`Job.user != -1`): each user's mean
  bounded slowdown, then over the users their population standard deviation (divided by the
  number of users), min, max and max / min (at least 1); None when no measured job has a
  user.
"""

from __future__ import annotations

import math
import os
import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from fractions import Fraction
from functools import reduce
from itertools import compress, repeat
from operator import add, attrgetter, itemgetter, mul, sub

import attrs
from attrs import frozen

from schedc.runtime.atomicio import write_atomic
from schedc.runtime.engine.schedule import Schedule
from schedc.runtime.jobs import Job

NCATEGORIES = 10
BSLD_THRESHOLD = 10  # seconds: the default tau of bounded slowdown
PERCENTILES = (("median", 50), ("p90", 90), ("p95", 95), ("p99", 99))
# Srinivasan et al. 2002's width x length categories (see the module's doc)
SHORT_RUN = 3600  # seconds: short when the recorded run time is at most this
NARROW_PROCS = 8  # narrow when it requested at most this many processors
CLASSES = ("short narrow", "short wide", "long narrow", "long wide")  # 2 x long + wide
_SECONDS = {"s": 1, "min": 60, "h": 3600, "d": 86400}  # the language's duration units
_CUT = re.compile(r"([0-9]+)(s|min|h|d)?")
_TAU = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(s|min|h|d)?")


@frozen
class Cut:
    """Jobs left out of the metrics at one end of the run, in submit order: the first (or
    last) ``amount`` jobs (``by`` "jobs"), or those submitted less than ``amount`` seconds
    after the first submit (before the last) (``by`` "seconds")."""

    amount: int
    by: str = "jobs"

    def __str__(self) -> str:
        return f"{self.amount} jobs" if self.by == "jobs" else f"{self.amount} s"


def parse_cut(text: str) -> Cut:
    """`--warmup`/`--cooldown`: N jobs, or a duration as a .pol file writes one (90s, 30min,
    2h, 1d); raises ValueError with the reason."""
    found = _CUT.fullmatch(text.strip())
    if found is None:
        raise ValueError(f"{text!r} is neither a number of jobs (e.g. 100) nor a duration "
                         "(e.g. 86400s, 12h, 2d)")
    number, unit = int(found[1]), found[2]
    return Cut(number) if unit is None else Cut(number * _SECONDS[unit], "seconds")


def parse_tau(text: str) -> int | float:
    """`--bsld-tau`: seconds (a whole or decimal number), or a duration (1min); more than 0.
    A whole number of seconds is an int (exact, as the default 10)."""
    found = _TAU.fullmatch(text.strip())
    if found is None:
        raise ValueError(f"{text!r} is not a number of seconds (e.g. 10, 2.5 or 1min)")
    value = Fraction(found[1]) * _SECONDS[found[2] or "s"]
    if value <= 0:
        raise ValueError(f"{text!r} is not more than 0 seconds")
    return int(value) if value.denominator == 1 else float(value)


@frozen
class MetricOptions:
    """How a run is measured: bounded slowdown's tau (seconds) and the jobs left out."""

    bsld_tau: int | float = BSLD_THRESHOLD
    warmup: Cut | None = None
    cooldown: Cut | None = None


def left_out(jobs: Sequence[Job], options: MetricOptions, unit: Fraction = Fraction(1)
             ) -> tuple[list[bool] | None, int, int]:
    """Which of ``jobs`` the metrics count (None: all), and how many the warm-up and the
    cool-down leave out. ``unit``: seconds per unit of the jobs' times."""
    n = len(jobs)
    if n == 0 or (options.warmup is None and options.cooldown is None):
        return None, 0, 0
    order = sorted(range(n), key=lambda i: (jobs[i].submit, jobs[i].index))
    submits = [jobs[i].submit for i in order]  # ascending

    def count(cut: Cut | None, last: bool) -> int:
        if cut is None:
            return 0
        if cut.by == "jobs":
            return min(cut.amount, n)
        span = cut.amount if unit == 1 else Fraction(cut.amount) / unit
        if last:  # submitted after last - span
            return n - bisect_right(submits, submits[-1] - span)
        return bisect_left(submits, submits[0] + span)  # before first + span

    warm = count(options.warmup, False)
    cool = min(count(options.cooldown, True), n - warm)
    keep = [True] * n
    for i in order[:warm]:
        keep[i] = False
    for i in order[n - cool:] if cool else ():
        keep[i] = False
    return keep, warm, cool


# bisect_right(_DECADES, area) is area_category(area): the number of bounds 10 .. 10^9 <= area
_DECADES = tuple(10**c for c in range(1, NCATEGORIES))
_JOB, _START, _END, _ALLOC = attrgetter("job"), attrgetter("start"), attrgetter("end"), \
    attrgetter("alloc")
_SUBMIT, _REQUEST, _FIRST = attrgetter("submit"), attrgetter("request"), itemgetter(0)
_RUN = attrgetter("run_time")


def area_category(area: int) -> int:
    """Decade of ``area`` (procs x run time), clamped to 0..9."""
    return min(NCATEGORIES - 1, max(0, len(str(area)) - 1)) if area > 0 else 0


@frozen
class Metrics:
    jobs: int
    skipped: int
    mean_wait: float
    max_wait: int | float  # a float in seconds for a workload in smaller units
    mean_response: float
    mean_slowdown: float
    mean_bounded_slowdown: float
    utilisation: float
    makespan: int | float
    artww: float
    sldwa: float
    mean_queue: float
    weighted_response: float
    category_jobs: tuple[int, ...]  # jobs per area category
    category_mean_response: tuple[float | None, ...]  # None for an empty category
    # the fields below came later: to_dict appends them, so older keys keep their places
    measured: int = 0  # jobs the metrics count (jobs - warmup_jobs - cooldown_jobs)
    warmup_jobs: int = 0
    cooldown_jobs: int = 0
    bsld_tau: int | float = BSLD_THRESHOLD  # seconds
    median_wait: int | float = 0
    p90_wait: int | float = 0
    p95_wait: int | float = 0
    p99_wait: int | float = 0
    median_response: int | float = 0
    p90_response: int | float = 0
    p95_response: int | float = 0
    p99_response: int | float = 0
    median_bounded_slowdown: float = 0.0
    p90_bounded_slowdown: float = 0.0
    p95_bounded_slowdown: float = 0.0
    p99_bounded_slowdown: float = 0.0
    users: int = 0  # users with a known id among the measured jobs
    user_bsld_std: float | None = None  # of the users' mean bounded slowdowns
    user_bsld_min: float | None = None
    user_bsld_max: float | None = None
    user_bsld_max_over_min: float | None = None
    class_jobs: tuple[int, ...] = (0,) * len(CLASSES)  # jobs per width x length category
    class_mean_response: tuple[float | None, ...] = (None,) * len(CLASSES)
    class_mean_bounded_slowdown: tuple[float | None, ...] = (None,) * len(CLASSES)

    def to_dict(self) -> dict[str, object]:
        """Stable keys, in field order, for JSON output (tuples as lists)."""
        return {f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v
                for f in attrs.fields(Metrics)}


def compute_metrics(schedule: Schedule, options: MetricOptions | None = None) -> Metrics:
    """The schedule's metrics (see the module's doc), measured as ``options`` say."""
    options = options or MetricOptions()
    recs = schedule.records
    simulated = len(recs)
    skipped = schedule.workload.skipped_total
    unit = schedule.workload.time_unit  # seconds per unit of the workload's times
    keep, warm, cool = left_out(list(map(_JOB, recs)), options, unit)
    ran = schedule.ran() if schedule.preempted is not None else None
    if keep is not None:  # record order kept: the sums fold in the same order
        recs = tuple(compress(recs, keep))
        ran = None if ran is None else list(compress(ran, keep))
    n = len(recs)
    tau = options.bsld_tau
    if n == 0:
        return Metrics(simulated, skipped, 0.0, 0, 0.0, 0.0, 0.0, 0.0, 0, 0.0, 0.0, 0.0, 0.0,
                       (0,) * NCATEGORIES, (None,) * NCATEGORIES, measured=0,
                       warmup_jobs=warm, cooldown_jobs=cool, bsld_tau=tau)
    # Column-wise at C speed (attrgetter/map/reduce, no Python-level loop per record): the
    # same operations on the same values as a per-record loop, and the float sums are
    # left folds in record order, so every result is bit-identical to that loop.
    jobs = list(map(_JOB, recs))
    submits = list(map(_SUBMIT, jobs))
    starts = list(map(_START, recs))
    ends = list(map(_END, recs))
    procs = list(map(_FIRST, map(_ALLOC, recs)))
    # what each job ran: a preempted job's end - start also counts its suspended time
    runs = list(map(sub, ends, starts)) if ran is None else ran
    waits = list(map(sub, starts, submits))
    resps = list(map(sub, ends, submits))
    sum_wait = sum(waits)
    max_wait = max(0, max(waits))
    sum_resp = sum(resps)
    bsld = tau if unit == 1 else tau / unit
    # ``x if x > k else k`` is max(x, k) (equal values are equal numbers) without the cost
    # of calling the max builtin
    slds = [resp / (run if run > 1 else 1) for resp, run in zip(resps, runs, strict=True)]
    sum_sld = reduce(add, slds, 0.0)
    bslds = [resp / (run if run > bsld else bsld) for resp, run in zip(resps, runs, strict=True)]
    bounded = [b if b > 1.0 else 1.0 for b in bslds]
    if unit != 1:  # resp / (tau / unit) is a Fraction: floats for JSON (the sums are floats)
        bounded = list(map(float, bounded))
    sum_bsld = reduce(add, bounded, 0.0)
    areas = list(map(mul, procs, runs))
    if schedule.preempted is not None:  # a size that changed between runs: its cpu time
        useful = [p.cpu_time for p in schedule.preempted]
        if keep is not None:
            useful = list(compress(useful, keep))
        areas = [a if u is None else u for a, u in zip(areas, useful, strict=True)]
    busy = sum(areas)
    width = sum(procs)
    width_resp = sum(map(mul, procs, resps))
    area_sld = reduce(add, map(mul, areas, slds), 0.0)
    # weight = requested procs x actual run time, as recorded (see the module's doc)
    recorded = map(mul, map(_FIRST, map(_REQUEST, jobs)), map(_RUN, jobs))
    cats = map(bisect_right, repeat(_DECADES),
               recorded if unit == 1 else (a * unit for a in recorded))
    cat_n = [0] * NCATEGORIES
    cat_resp = [0] * NCATEGORIES
    for c, resp in zip(cats, resps, strict=True):
        cat_n[c] += 1
        cat_resp[c] += resp
    classes = _classes(jobs, unit, resps, bounded)
    first = min(submits)
    makespan = max(ends) - first
    # the mean share of the K resources each job held, times its run time
    inverse = [1.0 / (c * len(schedule.capacities)) for c in schedule.capacities]
    weights = [run * sum(map(mul, r.alloc, inverse)) for run, r in zip(runs, recs, strict=True)]
    total_weight = reduce(add, weights, 0.0)
    weight_resp = reduce(add, map(mul, weights, resps), 0.0)
    metrics = Metrics(
        jobs=simulated,
        skipped=skipped,
        mean_wait=sum_wait / n,
        max_wait=max_wait,
        mean_response=sum_resp / n,
        mean_slowdown=sum_sld / n,
        mean_bounded_slowdown=sum_bsld / n,
        utilisation=busy / (schedule.capacities[0] * makespan) if makespan > 0 else 0.0,
        makespan=makespan,
        artww=width_resp / width,
        sldwa=area_sld / busy if busy > 0 else 0.0,
        mean_queue=sum_wait / makespan if makespan > 0 else 0.0,
        weighted_response=weight_resp / total_weight if total_weight > 0 else 0.0,
        category_jobs=tuple(cat_n),
        category_mean_response=tuple(cat_resp[c] / cat_n[c] if cat_n[c] else None
                                     for c in range(NCATEGORIES)),
        measured=n, warmup_jobs=warm, cooldown_jobs=cool, bsld_tau=tau,
        **_percentiles("wait", waits), **_percentiles("response", resps),
        **_percentiles("bounded_slowdown", bounded),
        **_fairness(jobs, bounded), **classes,
    )
    return metrics if unit == 1 else _in_seconds(metrics, unit)


def _percentiles(name: str, values: Sequence[int | float]) -> dict[str, int | float]:
    """The nearest-rank percentiles of ``values`` (not empty) as ``Metrics`` fields."""
    ordered = sorted(values)
    n = len(ordered)
    return {f"{key}_{name}": ordered[max(1, -(-p * n // 100)) - 1] for key, p in PERCENTILES}


def _classes(jobs: Sequence[Job], unit: Fraction, resps: Sequence[int],
             bounded: Sequence[float]) -> dict[str, tuple]:
    """The width x length categories' fields: by recorded run time and requested cpus."""
    short = SHORT_RUN if unit == 1 else SHORT_RUN / unit
    count = [0] * len(CLASSES)
    resp_sum = [0] * len(CLASSES)
    bsld_sum = [0.0] * len(CLASSES)
    for job, resp, b in zip(jobs, resps, bounded, strict=True):
        k = 2 * (job.run_time > short) + (job.request[0] > NARROW_PROCS)
        count[k] += 1
        resp_sum[k] += resp
        bsld_sum[k] += b
    return {"class_jobs": tuple(count),
            "class_mean_response": tuple(r / c if c else None
                                         for r, c in zip(resp_sum, count, strict=True)),
            "class_mean_bounded_slowdown": tuple(b / c if c else None
                                                 for b, c in zip(bsld_sum, count, strict=True))}


def _fairness(jobs: Sequence[Job], bounded: Sequence[float]) -> dict[str, int | float | None]:
    """The spread of the users' mean bounded slowdowns (jobs of unknown user left out)."""
    sums: dict[int, list] = {}
    for job, b in zip(jobs, bounded, strict=True):
        if job.user != -1:
            entry = sums.setdefault(job.user, [0.0, 0])
            entry[0] += b
            entry[1] += 1
    if not sums:
        return {"users": 0}
    means = [total / count for total, count in (sums[u] for u in sorted(sums))]
    k = len(means)
    mean = math.fsum(means) / k
    low, high = min(means), max(means)
    return {"users": k, "user_bsld_std": math.sqrt(math.fsum((m - mean) ** 2 for m in means) / k),
            "user_bsld_min": low, "user_bsld_max": high, "user_bsld_max_over_min": high / low}


def _in_seconds(m: Metrics, unit: Fraction) -> Metrics:
    """``m``'s times, counted in units of ``unit`` seconds, in seconds."""
    def s(x: float | None) -> float | None:
        return None if x is None else float(x * unit)

    return attrs.evolve(
        m, mean_wait=s(m.mean_wait), max_wait=s(m.max_wait), mean_response=s(m.mean_response),
        makespan=s(m.makespan), artww=s(m.artww), weighted_response=s(m.weighted_response),
        category_mean_response=tuple(map(s, m.category_mean_response)),
        class_mean_response=tuple(map(s, m.class_mean_response)),
        **{f"{key}_{name}": s(getattr(m, f"{key}_{name}")) for key, _ in PERCENTILES
           for name in ("wait", "response")})


# a preemptive run's jobs CSV ends with these: times suspended, checkpointed and requeued,
# seconds suspended and stopped, processor-seconds of work lost to requeues and held by
# dispatch and checkpoint costs
PREEMPTION_COLUMNS = ("suspensions", "checkpoints", "requeues", "suspended_time",
                      "stopped_time", "lost_work", "overhead")


def write_jobs_csv(schedule: Schedule, path: str | os.PathLike[str],
                   header: Sequence[str] = ()) -> None:
    """One row per job, file order; extra resources as extra columns, then the processor
    ids the job ran on (`allocated_resources`, Batsim's "0-3 8": spaces, never a comma or a
    quote, so no CSV quoting); atomic write. ``header``: comment lines first (a run's
    provenance).

    A job's size (`procs`), `run_time` and `estimate` are those of the run (a moldable job's
    on the size it got); `requested_*` are as recorded in the workload (`requested_run_time`
    the run time the file recorded, even past the estimate, `requested_estimate` the
    estimate as read); `ended` says how the job ended: `completed`, or `killed` at its
    estimate (`--overrun kill`); then the labels (`user`, `group`...) some job has. Comment
    lines `# capacity: {...}` (and `# time-unit: "..."`
    for a table in smaller units) make the file a job table that `--workload` reads back
    (``csv_table.py``)."""
    import json

    from schedc.dsl.ir import LABEL_ATTRS
    from schedc.runtime.results.allocation import processor_runs, runs_text
    from schedc.runtime.workloads.overrun import killed

    extra = schedule.resources[1:]
    processors = processor_runs(schedule)
    preempted = schedule.preempted  # a preemptive run: what preemption did to each job
    ran = schedule.ran()
    workload = schedule.workload
    ends = killed(workload)
    machine = dict(zip(schedule.resources, schedule.capacities, strict=True))
    # the labels some job has (user, group...): a policy that reads them reads them back
    labels = [a for a in LABEL_ATTRS if any(getattr(j, a) != -1 for j in workload.jobs)]

    def fill(out) -> None:  # type: ignore[no-untyped-def]
        out.writelines(header)
        out.write(f"# capacity: {json.dumps(machine)}\n")
        if workload.time_unit != 1:
            out.write(f"# time-unit: {json.dumps(f'{workload.time_unit} s')}\n")
        out.write(",".join(("job_id", "submit", "start", "end", "procs", "wait", "response",
                            "run_time", "estimate", "requested_procs", "requested_run_time",
                            "requested_estimate", "ended", *labels, *extra,
                            "allocated_resources", *(PREEMPTION_COLUMNS if preempted else ())))
                  + "\n")
        for k, (r, ids) in enumerate(zip(schedule.records, processors, strict=True)):
            j = r.job
            i = j.index
            row: tuple = (j.id, j.submit, r.start, r.end, r.alloc[0], r.start - j.submit,
                          r.end - j.submit, ran[k], estimate_on(j, r.alloc[0]), j.procs,
                          workload.recorded_run(i), workload.recorded_estimate(i),
                          "killed" if ends[i] else "completed",
                          *(getattr(j, a) for a in labels), *r.alloc[1:], runs_text(ids))
            if preempted:
                p = preempted[k]
                row += (p.suspensions, p.checkpoints, p.requeues, p.suspended, p.stopped,
                        p.lost, p.overhead)
            out.write(",".join(map(str, row)) + "\n")

    write_atomic(path, fill)


def estimate_on(job: Job, n: int) -> int:
    """The job's estimate on n cpus (a job a state already moved keeps its own)."""
    m = job.moldable
    return job.estimate if m is None or m.base is not None else job.estimate_at(n)
