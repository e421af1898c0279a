"""CSV job table reader: ``id,submit,run_time,estimate`` then one column per machine resource.

Columns are found by name in the header line, so their order is free and extra columns (say a
``memory`` column when the machine only has cpus) are ignored. Values are plain integers
(no quoting). The skip and estimate rules are those of SWF (see ``swf._admit``'s twin below).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from schedc.runtime.jobs import Job
from schedc.runtime.workload import Workload, WorkloadError, read_source

BASE = ("id", "submit", "run_time", "estimate")


def read_jobtable(
    path: str | os.PathLike[str],
    resources: tuple[str, ...] = ("cpus",),
    capacities: Mapping[str, int | None] | None = None,
    lenient: bool = False,
) -> Workload:
    name = str(path)
    caps = dict(capacities or {})
    raw = read_source(name, "job table")
    lines = raw.decode("utf-8", errors="replace").splitlines()
    if not lines or not lines[0].strip():
        raise WorkloadError(name, 1, 1, "empty job table",
                            help="the first line names the columns: " + ",".join(BASE + resources))
    names = [c.strip() for c in lines[0].split(",")]
    where: list[int] = []
    for col in BASE + tuple(resources):
        if col not in names:
            raise WorkloadError(name, 1, len(lines[0]) + 1, f"missing column `{col}`",
                                help="the header needs " + ",".join(BASE + resources),
                                source_line=lines[0])
        where.append(names.index(col))
    capacity = []
    for res in resources:
        cap = caps.get(res)
        if cap is None or cap < 1:
            raise WorkloadError(name, None, None, f"machine size unknown for `{res}`",
                                help=f"give it with --capacity {res}=N")
        capacity.append(int(cap))
    skipped: dict[str, int] = {}
    jobs: list[Job] = []
    for lineno, ln in enumerate(lines[1:], 2):
        if not ln.strip() or ln.lstrip().startswith("#"):
            continue
        cells = ln.split(",")
        values: list[int] = []
        bad: tuple[int, str] | None = None
        if len(cells) != len(names):
            bad = (len(ln) + 1, f"expected {len(names)} columns, found {len(cells)}")
        else:
            for k in where:
                try:
                    values.append(int(cells[k]))
                except ValueError:
                    col = sum(len(c) + 1 for c in cells[:k]) + 1
                    bad = (col, f"column `{names[k]}` is not an integer: `{cells[k].strip()}`")
                    break
        if bad is not None:
            if lenient:
                skipped["malformed line"] = skipped.get("malformed line", 0) + 1
                continue
            raise WorkloadError(name, lineno, bad[0], bad[1],
                                help="each row holds integers, one per header column "
                                "(or read with lenient mode)", source_line=ln)
        jid, submit, run, est, *request = values
        reason = None
        if run < 0:
            reason = "run time < 0"
        elif request[0] < 1:
            reason = "procs < 1"
        else:
            for r, (need, cap) in enumerate(zip(request, capacity, strict=True)):
                if need < 0:
                    reason = f"{resources[r]} request < 0"
                    break
                if need > cap:
                    reason = f"{resources[r]} request > capacity"
                    break
        if reason is not None:
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        est = est if est > 0 else run
        est = max(est, 1)  # DESIGN: never less than 1 s
        jobs.append(Job(jid, len(jobs), submit, min(run, est), est, tuple(request)))
    return Workload(jobs=tuple(jobs), resources=tuple(resources), capacities=tuple(capacity),
                    skipped=dict(sorted(skipped.items())), source=name, header={})
