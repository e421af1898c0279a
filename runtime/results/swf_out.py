"""A simulated schedule written as an SWF v2.2 log (`--swf-out`): the jobs as the trace
gave them, with the simulated waits and runs, and the run's provenance in the header.

A preemptive run's schedule (``Schedule.preempted``) is written as the archive writes a
preemptive machine's log, headed ``; Preemption: Double``. A job that ran in one stretch (one
``running`` segment) is one line, as in a rigid log. A job that ran in several has a summary
line, then one line per running stretch, a partial execution, in time order: status 2 (to be
continued) for each but the last, 3 (completed) for the last, 4 if the summary says failed.

- The summary: wait = its first start (``JobRecord.start``: its first dispatch, or run) -
  submit; run time = the sum of its running segments, the seconds it held its processors and
  progressed (never the time it was suspended, stopped, dispatching or checkpointing; a
  requeued job's lost stretches included, as they ran); the other fields as for a rigid job.
- A part: the job's number, submit time, requested processors, requested time, memory,
  labels; wait = the segment's start - the job's submit; run time = the segment's length;
  allocated processors = the processors the segment ran on.

So a job's parts sum to its summary's run time, and ``swf.py`` reads the file back as the
same jobs, each job's parts as its history (``Workload.parts``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from schedc.runtime.atomicio import write_atomic

if TYPE_CHECKING:
    from schedc.runtime.engine.lifecycle import Segment
    from schedc.runtime.engine.schedule import Preempted, Schedule


def write_swf(schedule: Schedule, path: str | os.PathLike[str],
              provenance: Mapping[str, Any] | None = None) -> None:
    """Write the simulated schedule as an SWF v2.2 log (atomically); ``provenance`` (a run's
    facts) as header comments `; Schedc-KEY: VALUE`, VALUE in JSON, after the standard ones.
    Field 11 (status) keeps SWF's meaning: 0 (failed) for a job the run ended at its estimate
    (`--overrun kill`: the trace records a longer run); a job that ran its recorded time
    ended as the trace says it did (0 failed, 1 completed, 5 cancelled...), 1 where the trace
    does not say (-1, or not an SWF trace). A preemptive run's schedule is written with its
    partial executions (see the module doc)."""
    write_atomic(path, lambda out: _write(schedule, out, provenance or {}))


def running_stretches(preempted: Preempted) -> tuple[Segment, ...]:
    """A preempted job's running segments, in time order: its partial executions."""
    return tuple(seg for seg in preempted.segments if seg.phase == "running")


def _write(schedule: Schedule, out: TextIO, provenance: Mapping[str, Any]) -> None:
    from schedc.runtime.workloads.overrun import killed

    mem_at = schedule.resources.index("memory") if "memory" in schedule.resources else -1
    ends = killed(schedule.workload)
    statuses = schedule.workload.recorded_status
    out.write("; Version: 2.2\n")
    out.write("; Computer: schedc simulation\n")
    out.write(f"; Note: schedule of policy {schedule.policy_name} on {schedule.workload.source}\n")
    for key, value in provenance.items():
        name = "Version" if key == "schedc" else key  # `; Schedc-Version: "0.1.0"`
        out.write(f"; Schedc-{name}: {json.dumps(value, ensure_ascii=False)}\n")
    stretches = (None if schedule.preempted is None else
                 [running_stretches(p) for p in schedule.preempted])
    lines = len(schedule.records) + sum(len(r) for r in stretches or () if len(r) > 1)
    out.write(f"; MaxJobs: {len(schedule.records)}\n")
    out.write(f"; MaxRecords: {lines}\n")
    out.write(f"; MaxProcs: {schedule.capacities[0]}\n")
    out.write(f"; MaxNodes: {schedule.capacities[0]}\n")
    if stretches is not None:
        out.write("; Preemption: Double\n")
    for number, rec in enumerate(schedule.records):
        job = rec.job
        procs = rec.alloc[0]
        mem = rec.alloc[mem_at] // procs if mem_at >= 0 else -1
        status = _status(ends[job.index], statuses, job.index)
        parts = () if stretches is None else stretches[number]
        run = rec.end - rec.start if stretches is None else sum(s.end - s.start for s in parts)
        fields = (job.id, job.submit, rec.start - job.submit, run, procs, -1,
                  mem, job.procs, job.estimate, mem, status,
                  job.user,
                  job.group, job.executable,
                  job.queue, job.partition, -1, -1)
        out.write(" ".join(map(str, fields)) + "\n")
        if len(parts) > 1:
            for k, seg in enumerate(parts, 1):
                part = 2 if k < len(parts) else 4 if status == 0 else 3
                fields = (job.id, job.submit, seg.start - job.submit, seg.end - seg.start,
                          len(seg.processors), -1, mem, job.procs, job.estimate, mem, part,
                          job.user, job.group, job.executable, job.queue, job.partition, -1, -1)
                out.write(" ".join(map(str, fields)) + "\n")


def _status(killed: bool, recorded: Sequence[int], index: int) -> int:
    """A job's SWF status in the simulated schedule (see ``write_swf``)."""
    if killed:
        return 0
    return recorded[index] if recorded and recorded[index] >= 0 else 1
