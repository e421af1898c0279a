"""A run's jobs as Batsim's `jobs.csv` (`--jobs-out-format batsim`), which evalys
(`JobSet.from_csv`) and Batsim's other tools read.

The columns and their meaning are Batsim's: times in seconds (a workload in smaller units is
converted), `requested_time` the walltime (our estimate on the size the job got),
`requested_number_of_resources` the processors it got, `allocated_resources` their ids as an
interval set ("0-3 8", `runtime/results/allocation.py`), `stretch` = turnaround / execution time
(inf for a job of zero run time that waited, nan for one that did not, as Batsim's division
gives), `consumed_energy` -1 (not measured, Batsim's value when energy is off), `metadata`
empty. A job the run ended at its estimate (`--overrun kill`, the file recording a longer
run) is `COMPLETED_WALLTIME_REACHED` with `success` 0, as Batsim ends a job at its walltime;
every other job is `COMPLETED_SUCCESSFULLY`, `success` 1. No `#` provenance lines: pandas'
`read_csv`, which evalys calls as it is, would take
them for rows.

A preemptive run (``Schedule.preempted``) keeps one row per job, so that evalys's per-job
numbers are the run's metrics: `starting_time` its first start, `finish_time` its
completion, `execution_time` the seconds it ran (the jobs CSV's `run_time`: never suspended,
stopped, dispatching or checkpointing time, nor a stretch whose work a requeue lost), so
`execution_time` is not `finish_time - starting_time` for a preempted job;
`allocated_resources` every processor it ran on; `metadata` its preemptions as
space-separated `key=value` pairs, the jobs CSV's preemption columns
(`docs/reference/formats/jobs-csv.md` says why not Batsim's killed-and-resubmitted rows).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

from schedc.runtime.atomicio import write_atomic
from schedc.runtime.engine.schedule import Preempted, Schedule
from schedc.runtime.results.allocation import processor_runs, runs_text
from schedc.runtime.results.metrics import estimate_on
from schedc.runtime.workloads.overrun import killed

COLUMNS = ("job_id", "workload_name", "submission_time", "requested_number_of_resources",
           "requested_time", "success", "final_state", "starting_time", "execution_time",
           "finish_time", "waiting_time", "turnaround_time", "stretch", "allocated_resources",
           "consumed_energy", "metadata")
# a preempted job's `metadata` keys: the jobs CSV's preemption columns, named alike
METADATA_KEYS = ("suspensions", "checkpoints", "requeues", "suspended_time", "stopped_time",
                 "lost_work", "overhead")


def write_batsim_jobs(schedule: Schedule, path: str | os.PathLike[str]) -> None:
    """One row per job, file order (atomic write)."""
    unit = Fraction(schedule.workload.time_unit)
    name = _workload_name(schedule.workload.source)
    processors = processor_runs(schedule)
    ends = killed(schedule.workload)
    preempted = schedule.preempted
    runs = schedule.ran()  # end - start, but a preempted job's time running

    def t(x: int) -> str:  # seconds: whole for a trace in seconds, exact decimals otherwise
        return str(x) if unit == 1 else repr(float(x * unit))

    def fill(out) -> None:  # type: ignore[no-untyped-def]
        out.write(",".join(COLUMNS) + "\n")
        for k, (r, ids, cut) in enumerate(zip(schedule.records, processors, ends, strict=True)):
            j = r.job
            run, turnaround = runs[k], r.end - j.submit
            stretch = repr(turnaround / run) if run else ("inf" if turnaround else "nan")
            out.write(",".join((
                str(j.id), name, t(j.submit), str(r.alloc[0]), t(estimate_on(j, r.alloc[0])),
                *(("0", "COMPLETED_WALLTIME_REACHED") if cut else
                  ("1", "COMPLETED_SUCCESSFULLY")), t(r.start), t(run), t(r.end),
                t(r.start - j.submit), t(turnaround), stretch, runs_text(ids), "-1",
                "" if preempted is None else preemption_metadata(preempted[k], t),
            )) + "\n")

    write_atomic(path, fill)


def preemption_metadata(p: Preempted, t: Callable[[int], str]) -> str:
    """A preempted job's `metadata`: the jobs CSV's preemption columns as `key=value`
    pairs separated by spaces (no comma or quote: the field needs no CSV quoting), the
    times and processor-seconds written by ``t`` (in seconds)."""
    values = (str(p.suspensions), str(p.checkpoints), str(p.requeues), t(p.suspended),
              t(p.stopped), t(p.lost), t(p.overhead))
    return " ".join(f"{key}={value}" for key, value in zip(METADATA_KEYS, values, strict=True))


def _workload_name(source: str) -> str:
    """The workload file's name without its suffixes, with no character CSV would quote."""
    name = Path(source).name if source else "workload"
    for suffix in (".gz", ".swf", ".csv", ".json"):
        name = name.removesuffix(suffix)
    cleaned = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    return cleaned or "workload"
