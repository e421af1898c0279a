"""Standard Workload Format (v2.2) reader and writer.

Reading is column-wise for speed: the data lines are joined and split once, and each needed
field is converted with ``map(int, ...)`` over a column slice (a per-line loop costs about
5 us a line, too slow for LANL-CM5's 122k lines). Only when that fast path meets a bad line
(wrong field count or a non-integer) do we fall back to the per-line reader, which reports the
line and column, or skips and counts the line in lenient mode.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from schedc.runtime.atomicio import write_atomic
from schedc.runtime.jobs import Job
from schedc.runtime.workload import Workload, WorkloadError

if TYPE_CHECKING:
    from schedc.runtime.schedule import Schedule

NFIELDS = 18
# 0-based SWF fields we read: id, submit, run, alloc procs, used mem, req procs, req time, req mem
F_ID, F_SUBMIT, F_RUN, F_PROCS, F_USED_MEM, F_REQ_PROCS, F_REQ_TIME, F_REQ_MEM = (
    0, 1, 3, 4, 6, 7, 8, 9)
NEEDED = (F_ID, F_SUBMIT, F_RUN, F_PROCS, F_USED_MEM, F_REQ_PROCS, F_REQ_TIME, F_REQ_MEM)
SUPPORTED = ("cpus", "memory")


def read_swf(
    path: str | os.PathLike[str],
    resources: tuple[str, ...] = ("cpus",),
    capacities: Mapping[str, int | None] | None = None,
    lenient: bool = False,
) -> Workload:
    name = str(path)
    caps = dict(capacities or {})
    text = _read_text(name)
    lines = text.split("\n")
    header = _header(lines)
    capacity = _capacities(name, resources, caps, header)
    numbered = [(i, ln) for i, ln in enumerate(lines, 1) if ln and not ln.startswith(";")
                and not ln.isspace()]
    skipped: dict[str, int] = {}
    cols = _columns_fast(numbered)
    if cols is None:
        cols = _columns_slow(name, numbered, lenient, skipped)
    jobs = _admit(cols, resources, capacity, skipped)
    return Workload(jobs=jobs, resources=tuple(resources), capacities=capacity,
                    skipped=dict(sorted(skipped.items())), source=name, header=header)


def _read_text(name: str) -> str:
    try:
        raw = gzip.open(name).read() if name.endswith(".gz") else Path(name).read_bytes()
    except (OSError, EOFError) as exc:  # missing file, bad gzip stream
        raise WorkloadError(name, None, None, f"cannot read the workload: {exc}") from None
    return raw.decode("utf-8", errors="replace")


def _header(lines: list[str]) -> dict[str, str]:
    """``; Key: value`` comment lines (the SWF header); later duplicates win."""
    out: dict[str, str] = {}
    for ln in lines:
        if ln.startswith(";") and ":" in ln:
            key, _, value = ln[1:].partition(":")
            key = key.strip()
            if key and " " not in key:
                out[key] = value.strip()
    return out


def _capacities(name: str, resources: tuple[str, ...], caps: dict[str, int | None],
                header: dict[str, str]) -> tuple[int, ...]:
    out = []
    for res in resources:
        if res not in SUPPORTED:
            raise WorkloadError(name, None, None, f"SWF has no resource `{res}`",
                                help="an SWF trace describes `cpus` and `memory` only")
        given = caps.get(res)
        if given is None and res == "cpus":
            for key in ("MaxProcs", "MaxNodes"):  # DESIGN: MaxProcs, else MaxNodes
                if header.get(key, "").lstrip("-").isdigit() and int(header[key]) > 0:
                    given = int(header[key])
                    break
        if given is None:
            raise WorkloadError(name, None, None, f"machine size unknown for `{res}`",
                                help=f"give it with --capacity {res}=N")
        if given < 1:
            raise WorkloadError(name, None, None, f"capacity of `{res}` must be >= 1",
                                help=f"got {res}={given}")
        out.append(int(given))
    return tuple(out)


def _columns_fast(numbered: list[tuple[int, str]]) -> list[list[int]] | None:
    """The needed fields as int columns, or None if any line is malformed."""
    tokens = " ".join(ln for _, ln in numbered).split()
    if len(tokens) != NFIELDS * len(numbered):
        return None
    try:
        return [list(map(int, tokens[f::NFIELDS])) for f in NEEDED]
    except ValueError:
        return None


def _columns_slow(name: str, numbered: list[tuple[int, str]], lenient: bool,
                  skipped: dict[str, int]) -> list[list[int]]:
    cols: list[list[int]] = [[] for _ in NEEDED]
    for lineno, ln in numbered:
        parts = ln.split()
        bad: tuple[int, str, str] | None = None
        if len(parts) != NFIELDS:
            col = _field_col(ln, min(len(parts), NFIELDS)) if len(parts) > NFIELDS else len(ln) + 1
            bad = (col, f"expected {NFIELDS} fields, found {len(parts)}",
                   "an SWF data line has 18 whitespace-separated fields")
        else:
            values = []
            for f in NEEDED:
                try:
                    values.append(int(parts[f]))
                except ValueError:
                    bad = (_field_col(ln, f), f"field {f + 1} is not an integer: `{parts[f]}`",
                           "SWF fields are integers; -1 means unknown")
                    break
        if bad is not None:
            if lenient:
                skipped["malformed line"] = skipped.get("malformed line", 0) + 1
                continue
            col, msg, hint = bad
            raise WorkloadError(name, lineno, col, msg, help=hint + " (or read with lenient mode)",
                                source_line=ln)
        for c, v in zip(cols, values, strict=True):
            c.append(v)
    return cols


def _field_col(line: str, field: int) -> int:
    """1-based column where the 0-based whitespace-separated ``field`` starts."""
    pos, n = 0, -1
    while True:
        while pos < len(line) and line[pos].isspace():
            pos += 1
        n += 1
        if n == field or pos >= len(line):
            return pos + 1
        while pos < len(line) and not line[pos].isspace():
            pos += 1


def _admit(cols: list[list[int]], resources: tuple[str, ...], capacity: tuple[int, ...],
           skipped: dict[str, int]) -> tuple[Job, ...]:
    ids, submits, runs, procs, used_mem, req_procs, req_time, req_mem = cols
    want_mem = "memory" in resources
    mem_at = resources.index("memory") if want_mem else -1
    jobs: list[Job] = []
    for i in range(len(ids)):
        p = procs[i] if procs[i] >= 1 else req_procs[i]  # field 5, else field 8
        run = runs[i]
        reason = None
        if run < 0:
            reason = "run time < 0"
        elif p < 1:
            reason = "procs < 1"
        if reason is None:
            if want_mem:
                per = req_mem[i] if req_mem[i] > 0 else max(used_mem[i], 0)
                request = tuple(p * per if r == mem_at else p for r in range(len(resources)))
            else:
                request = (p,)
            for r, (need, cap) in enumerate(zip(request, capacity, strict=True)):
                if need > cap:
                    reason = f"{resources[r]} request > capacity"
                    break
        if reason is not None:
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        est = req_time[i] if req_time[i] > 0 else run
        if est < 1:
            est = 1  # DESIGN: never less than 1 s
        jobs.append(Job(ids[i], len(jobs), submits[i], run if run < est else est, est, request))
    return tuple(jobs)


def write_swf(schedule: Schedule, path: str | os.PathLike[str]) -> None:
    """Write the simulated schedule as an SWF v2.2 log (atomically)."""
    write_atomic(path, lambda out: _write(schedule, out))


def _write(schedule: Schedule, out: TextIO) -> None:
    mem_at = schedule.resources.index("memory") if "memory" in schedule.resources else -1
    out.write("; Version: 2.2\n")
    out.write("; Computer: schedc simulation\n")
    out.write(f"; Note: schedule of policy {schedule.policy_name} on {schedule.workload.source}\n")
    out.write(f"; MaxJobs: {len(schedule.records)}\n")
    out.write(f"; MaxRecords: {len(schedule.records)}\n")
    out.write(f"; MaxProcs: {schedule.capacities[0]}\n")
    out.write(f"; MaxNodes: {schedule.capacities[0]}\n")
    for rec in schedule.records:
        job = rec.job
        procs = rec.alloc[0]
        mem = rec.alloc[mem_at] // procs if mem_at >= 0 else -1
        fields = (job.id, job.submit, rec.start - job.submit, rec.end - rec.start, procs, -1,
                  mem, job.procs, job.estimate, mem, 1, -1, -1, -1, -1, -1, -1, -1)
        out.write(" ".join(map(str, fields)) + "\n")
