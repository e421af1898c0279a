"""`schedc workload info`: what a workload holds, before any run.

The facts are those a user checks before trusting a run on a trace: how many jobs were read
(how many of them from partial executions) or skipped, the machine and where its size came
from, the span of submissions, the load offered, how good the estimates are
(``overrun.py``), the sizes, the labels present and the fields the file does not record.
Everything is computed from the workload as read (jobs killed at their estimate,
``Workload.recorded_runs`` for the rest) except ``work_simulated``, which is that of the jobs
in the chosen ``--overrun`` mode: the number `run --json` reports as
``overrun.work_simulated`` for a rigid run on the same file.

Times are in the file's units (seconds unless a table's ``# time-unit`` says otherwise);
only the span is also given in seconds and days.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Collection, Sequence
from fractions import Fraction

from attrs import frozen

from schedc.dsl.ir import LABEL_ATTRS
from schedc.runtime.workloads.overrun import OverrunFacts, apply_overrun, killed, overrun_facts
from schedc.runtime.workloads.workload import Workload, whole_number

QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)
DAY = 86_400


@frozen
class WorkloadInfo:
    """The facts of one workload read in one `--overrun` mode (see the module docstring)."""

    source: str
    format: str  # "swf", "csv", or "" (a workload not read from a file)
    mode: str  # the --overrun mode of ``work_simulated``
    jobs: int
    skipped: dict[str, int]  # reason -> count, sorted
    time_unit: Fraction  # seconds per unit of the file's times
    machine: tuple[tuple[str, int, str], ...]  # (resource, capacity, where it came from)
    first_submit: int | None
    last_submit: int | None
    work_recorded: int  # sum of cpus x recorded (uncapped) run time
    work_capped: int  # the same with run times capped at the estimate
    work_simulated: int  # sum of cpus x run time of the jobs in ``mode``
    killed_at_estimate: int  # jobs ``mode`` ends at their estimate (kill only)
    overrun: OverrunFacts
    ratios: tuple[float, ...]  # run / estimate of the jobs with a requested time, sorted
    sizes: tuple[int, ...]  # cpus requested, sorted
    labels: tuple[tuple[str, int], ...]  # (label, distinct values other than -1)
    unknown_resource: tuple[tuple[str, int], ...]  # (resource, jobs that request 0 of it)
    # jobs an SWF log recorded in parts, their part lines, those without a last part
    # (``Workload.part_counts``)
    partial: tuple[int, int, int] = (0, 0, 0)

    @property
    def span(self) -> int | None:
        """Last submit - first submit, in the file's units."""
        if self.first_submit is None or self.last_submit is None:
            return None
        return self.last_submit - self.first_submit

    @property
    def span_seconds(self) -> int | float | None:
        span = self.span
        if span is None:
            return None
        seconds = span * self.time_unit
        return int(seconds) if seconds.denominator == 1 else round(float(seconds), 6)

    def offered_load(self, work: int) -> float | None:
        """``work`` / (cpus x span of submissions): the share of the cpus the jobs ask for
        while they arrive (None for a span of 0: one instant offers no rate)."""
        span = self.span
        if not span:
            return None
        return work / (self.machine[0][1] * span)

    def ratio_quantile(self, q: float) -> float | None:
        return _quantile(self.ratios, q)

    @property
    def missing(self) -> tuple[str, ...]:
        """The fields no job records: requested times, labels, a resource's requests."""
        out = []
        if self.jobs and self.overrun.no_estimate == self.jobs:
            out.append("requested_time")
        out += [name for name, count in self.labels if count == 0]
        out += [name for name, zero in self.unknown_resource if self.jobs and zero == self.jobs]
        return tuple(out)

    def to_dict(self) -> dict[str, object]:
        """The facts as `--json` prints them: the same keys always, in this order."""
        sizes = self.sizes
        span_seconds = self.span_seconds
        return {
            "workload": self.source,
            "format": self.format,
            "jobs": self.jobs,
            "skipped": dict(self.skipped),
            "skipped_total": sum(self.skipped.values()),
            # N jobs read from M partial executions (SWF status 2, 3, 4)
            "partial_executions": dict(zip(("jobs", "parts", "jobs_without_last_part"),
                                           self.partial, strict=True)),
            "time_unit": str(self.time_unit),
            "machine": {name: {"capacity": cap, "source": where}
                        for name, cap, where in self.machine},
            "time": {
                "first_submit": self.first_submit, "last_submit": self.last_submit,
                "span_seconds": span_seconds,
                "span_days": None if span_seconds is None else round(span_seconds / DAY, 6),
            },
            "offered_load": {
                "recorded": _round(self.offered_load(self.work_recorded), 6),
                "capped_at_estimate": _round(self.offered_load(self.work_capped), 6),
            },
            "work": {"recorded": self.work_recorded, "capped_at_estimate": self.work_capped,
                     "simulated": self.work_simulated, "mode": self.mode},
            # the keys and values of `run --json`'s "overrun" object for a run in this mode
            "overrun": {**self.overrun.to_dict(self.mode),
                        "jobs_killed_at_estimate": self.killed_at_estimate,
                        "work_simulated": self.work_simulated},
            "estimates": {
                "jobs_with_requested_time": self.jobs - self.overrun.no_estimate,
                "jobs_without_requested_time": self.overrun.no_estimate,
                "run_over_estimate": {_name(q): _round(self.ratio_quantile(q), 4)
                                      for q in QUANTILES},
            },
            "sizes": {
                "min": sizes[0] if sizes else None,
                "median": float(statistics.median(sizes)) if sizes else None,
                "max": sizes[-1] if sizes else None,
                "distinct": len(set(sizes)),
                "serial_share": round(sizes.count(1) / len(sizes), 6) if sizes else None,
            },
            "labels": dict(self.labels),
            "missing": {
                "fields": list(self.missing),
                "jobs_without_requested_time": self.overrun.no_estimate,
                "jobs_requesting_none": dict(self.unknown_resource),
            },
        }


def workload_info(workload: Workload, mode: str, given: Collection[str] = ()) -> WorkloadInfo:
    """The facts of ``workload`` (as read: its jobs killed at their estimate) when run in
    ``--overrun mode``; ``given``: the resources whose capacity the command line gave."""
    jobs = workload.jobs
    submits = [j.submit for j in jobs]
    capped = 0
    ratios = []
    unrequested = set(workload.unrequested)
    for job in jobs:
        run = workload.recorded_run(job.index)
        est = workload.recorded_estimate(job.index)
        capped += job.procs * min(run, est)
        if job.index not in unrequested:  # an estimate made up from the run says nothing
            ratios.append(run / est)
    simulated = apply_overrun(workload, mode)
    return WorkloadInfo(
        source=workload.source, format=file_format(workload.source), mode=mode,
        jobs=len(jobs), skipped=dict(sorted(workload.skipped.items())),
        time_unit=workload.time_unit, machine=_machine(workload, given),
        first_submit=min(submits, default=None), last_submit=max(submits, default=None),
        work_recorded=sum(job.procs * workload.recorded_run(job.index) for job in jobs),
        work_capped=capped,
        work_simulated=sum(job.procs * job.run_time for job in simulated.jobs),
        killed_at_estimate=sum(killed(simulated)), overrun=overrun_facts(workload),
        ratios=tuple(sorted(ratios)), sizes=tuple(sorted(j.procs for j in jobs)),
        labels=tuple((name, len({getattr(j, name) for j in jobs} - {-1}))
                     for name in LABEL_ATTRS),
        unknown_resource=tuple(
            (name, sum(1 for j in jobs if j.request[k] == 0))
            for k, name in enumerate(workload.resources) if k > 0),
        partial=workload.part_counts())


def file_format(source: str) -> str:
    if source.endswith((".swf", ".swf.gz")):
        return "swf"
    if source.endswith((".csv", ".csv.gz")):
        return "csv"
    return ""


def _machine(workload: Workload, given: Collection[str]) -> tuple[tuple[str, int, str], ...]:
    """Each resource's capacity and where it came from, by the readers' rule: the command
    line's first, else the SWF header's MaxProcs (then MaxNodes) or the table's line."""
    fmt = file_format(workload.source)
    out = []
    for name, cap in zip(workload.resources, workload.capacities, strict=True):
        if name in given:
            where = "--capacity"
        elif fmt == "swf":
            number = whole_number(workload.header.get("MaxProcs", ""))
            where = "header MaxProcs" if number else "header MaxNodes"
        elif fmt == "csv":
            where = "# capacity line"
        else:
            where = "workload"
        out.append((name, cap, where))
    return tuple(out)


def _quantile(values: Sequence[float], q: float) -> float | None:
    """The q-quantile (nearest rank) of sorted ``values``, as ``OverrunFacts`` takes it."""
    if not values:
        return None
    return values[max(0, math.ceil(round(q * len(values), 9)) - 1)]


def _name(q: float) -> str:
    return f"p{round(q * 100)}"


def _round(x: float | None, digits: int) -> float | None:
    return None if x is None else round(x, digits)
