"""Schedule quality metrics and the per-job CSV.

Definitions (``run`` is the run time actually run, ``resp`` = end - submit):

* slowdown = resp / max(run, 1) (a zero-length job would divide by zero);
* bounded slowdown = max(1, resp / max(run, 10)) (10 s threshold);
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
are then converted to seconds, the bounded-slowdown threshold stays 10 s and the area
categories count procs x seconds (slowdown's guard stays one unit: it only avoids a division
by zero).
"""

from __future__ import annotations

import os
from bisect import bisect_right
from collections.abc import Sequence
from fractions import Fraction
from functools import reduce
from itertools import repeat
from operator import add, attrgetter, itemgetter, mul, sub

import attrs
from attrs import frozen

from schedc.runtime.atomicio import write_atomic
from schedc.runtime.jobs import Job
from schedc.runtime.schedule import Schedule

NCATEGORIES = 10
BSLD_THRESHOLD = 10


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

    def to_dict(self) -> dict[str, object]:
        """Stable keys, in this order, for JSON output."""
        return {
            "jobs": self.jobs,
            "skipped": self.skipped,
            "mean_wait": self.mean_wait,
            "max_wait": self.max_wait,
            "mean_response": self.mean_response,
            "mean_slowdown": self.mean_slowdown,
            "mean_bounded_slowdown": self.mean_bounded_slowdown,
            "utilisation": self.utilisation,
            "makespan": self.makespan,
            "artww": self.artww,
            "sldwa": self.sldwa,
            "mean_queue": self.mean_queue,
            "weighted_response": self.weighted_response,
            "category_jobs": list(self.category_jobs),
            "category_mean_response": list(self.category_mean_response),
        }


def compute_metrics(schedule: Schedule) -> Metrics:
    recs = schedule.records
    n = len(recs)
    skipped = schedule.workload.skipped_total
    if n == 0:
        return Metrics(0, skipped, 0.0, 0, 0.0, 0.0, 0.0, 0.0, 0, 0.0, 0.0, 0.0, 0.0,
                       (0,) * NCATEGORIES, (None,) * NCATEGORIES)
    # Column-wise at C speed (attrgetter/map/reduce, no Python-level loop per record): the
    # same operations on the same values as a per-record loop, and the float sums are
    # left folds in record order, so every result is bit-identical to that loop.
    jobs = list(map(_JOB, recs))
    submits = list(map(_SUBMIT, jobs))
    starts = list(map(_START, recs))
    ends = list(map(_END, recs))
    procs = list(map(_FIRST, map(_ALLOC, recs)))
    runs = list(map(sub, ends, starts))
    waits = list(map(sub, starts, submits))
    resps = list(map(sub, ends, submits))
    sum_wait = sum(waits)
    max_wait = max(0, max(waits))
    sum_resp = sum(resps)
    unit = schedule.workload.time_unit  # seconds per unit of the workload's times
    bsld = BSLD_THRESHOLD if unit == 1 else BSLD_THRESHOLD / unit
    # ``x if x > k else k`` is max(x, k) (equal values are equal numbers) without the cost
    # of calling the max builtin
    slds = [resp / (run if run > 1 else 1) for resp, run in zip(resps, runs, strict=True)]
    sum_sld = reduce(add, slds, 0.0)
    bslds = [resp / (run if run > bsld else bsld) for resp, run in zip(resps, runs, strict=True)]
    sum_bsld = reduce(add, [b if b > 1.0 else 1.0 for b in bslds], 0.0)
    areas = list(map(mul, procs, runs))
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
    first = min(submits)
    makespan = max(ends) - first
    # the mean share of the K resources each job held, times its run time
    inverse = [1.0 / (c * len(schedule.capacities)) for c in schedule.capacities]
    weights = [run * sum(map(mul, r.alloc, inverse)) for run, r in zip(runs, recs, strict=True)]
    total_weight = reduce(add, weights, 0.0)
    weight_resp = reduce(add, map(mul, weights, resps), 0.0)
    metrics = Metrics(
        jobs=n,
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
    )
    return metrics if unit == 1 else _in_seconds(metrics, unit)


def _in_seconds(m: Metrics, unit: Fraction) -> Metrics:
    """``m``'s times, counted in units of ``unit`` seconds, in seconds."""
    def s(x: float | None) -> float | None:
        return None if x is None else float(x * unit)

    return attrs.evolve(
        m, mean_wait=s(m.mean_wait), max_wait=s(m.max_wait), mean_response=s(m.mean_response),
        makespan=s(m.makespan), artww=s(m.artww), weighted_response=s(m.weighted_response),
        category_mean_response=tuple(map(s, m.category_mean_response)))


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
    estimate (`--overrun kill`). Comment lines `# capacity: {...}` (and `# time-unit: "..."`
    for a table in smaller units) make the file a job table that `--workload` reads back
    (``csv_table.py``)."""
    import json

    from schedc.runtime.allocation import processor_runs, runs_text
    from schedc.runtime.workloads.overrun import killed

    extra = schedule.resources[1:]
    processors = processor_runs(schedule)
    workload = schedule.workload
    ends = killed(workload)
    machine = dict(zip(schedule.resources, schedule.capacities, strict=True))

    def fill(out) -> None:  # type: ignore[no-untyped-def]
        out.writelines(header)
        out.write(f"# capacity: {json.dumps(machine)}\n")
        if workload.time_unit != 1:
            out.write(f"# time-unit: {json.dumps(f'{workload.time_unit} s')}\n")
        out.write(",".join(("job_id", "submit", "start", "end", "procs", "wait", "response",
                            "run_time", "estimate", "requested_procs", "requested_run_time",
                            "requested_estimate", "ended", *extra, "allocated_resources"))
                  + "\n")
        for r, ids in zip(schedule.records, processors, strict=True):
            j = r.job
            i = j.index
            row = (j.id, j.submit, r.start, r.end, r.alloc[0], r.start - j.submit,
                   r.end - j.submit, r.end - r.start, estimate_on(j, r.alloc[0]), j.procs,
                   workload.recorded_run(i), workload.recorded_estimate(i),
                   "killed" if ends[i] else "completed", *r.alloc[1:], runs_text(ids))
            out.write(",".join(map(str, row)) + "\n")

    write_atomic(path, fill)


def estimate_on(job: Job, n: int) -> int:
    """The job's estimate on n cpus (a job a state already moved keeps its own)."""
    m = job.moldable
    return job.estimate if m is None or m.base is not None else job.estimate_at(n)
