"""A simulated schedule written as an SWF v2.2 log (`--swf-out`): the jobs as the trace
gave them, with the simulated waits and runs, and the run's provenance in the header."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from schedc.runtime.atomicio import write_atomic

if TYPE_CHECKING:
    from schedc.runtime.engine.schedule import Schedule


def write_swf(schedule: Schedule, path: str | os.PathLike[str],
              provenance: Mapping[str, Any] | None = None) -> None:
    """Write the simulated schedule as an SWF v2.2 log (atomically); ``provenance`` (a run's
    facts) as header comments `; Schedc-KEY: VALUE`, VALUE in JSON, after the standard ones.
    Field 11 (status) keeps SWF's meaning: 0 (failed) for a job the run ended at its estimate
    (`--overrun kill`: the trace records a longer run); a job that ran its recorded time
    ended as the trace says it did (0 failed, 1 completed, 5 cancelled...), 1 where the trace
    does not say (-1, or not an SWF trace)."""
    write_atomic(path, lambda out: _write(schedule, out, provenance or {}))


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
    out.write(f"; MaxJobs: {len(schedule.records)}\n")
    out.write(f"; MaxRecords: {len(schedule.records)}\n")
    out.write(f"; MaxProcs: {schedule.capacities[0]}\n")
    out.write(f"; MaxNodes: {schedule.capacities[0]}\n")
    for rec in schedule.records:
        job = rec.job
        procs = rec.alloc[0]
        mem = rec.alloc[mem_at] // procs if mem_at >= 0 else -1
        fields = (job.id, job.submit, rec.start - job.submit, rec.end - rec.start, procs, -1,
                  mem, job.procs, job.estimate, mem, _status(ends[job.index], statuses, job.index),
                  job.user,
                  job.group, job.executable,
                  job.queue, job.partition, -1, -1)
        out.write(" ".join(map(str, fields)) + "\n")


def _status(killed: bool, recorded: Sequence[int], index: int) -> int:
    """A job's SWF status in the simulated schedule (see ``write_swf``)."""
    if killed:
        return 0
    return recorded[index] if recorded and recorded[index] >= 0 else 1
