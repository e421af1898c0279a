"""Random workloads (tiny, long-queue, odd-input), the bundled trace's prefix, and the job
tables (CSV) that `schedc run --workload` reads back."""

from __future__ import annotations

import random
import tempfile
from collections.abc import Sequence
from pathlib import Path

import attrs

from schedc.runtime.jobs import Job, Moldable
from schedc.runtime.run import bundled_trace
from schedc.runtime.speedup import format_speedup, parse_speedup
from schedc.runtime.workloads.load import load_workload
from schedc.runtime.workloads.moldable import MoldableSpec, make_moldable
from schedc.runtime.workloads.workload import Workload

from .generate import LABELS

SPEEDUPS = ("linear", "amdahl(0.1)", "amdahl(0.5)", "downey(8, 1)", "downey(32, 0.5)")


def random_workload(rng: random.Random, resources: Sequence[str],
                    fixed: Sequence[int | None], kind: str, moldable: bool) -> Workload:
    """Jobs the CSV reader would accept, on ``resources`` (``fixed`` capacities kept):

    * ``tiny``: a machine of a few units, 15 to 40 jobs in bursts, zero run times: the
      instants where a pass sees a full machine, an exact fit, an empty queue;
    * ``long``: 100 cpus (unless fixed) and 130 to 180 jobs, mostly of one cpu, arriving
      within a minute for hours: a queue of 100+ jobs, as many running jobs as cpus;
    * ``odd``: a tiny workload with inputs the verifier assumes away (repeated or negative
      ids, negative submit times): the readers reject them, or skip and count them under
      `--lenient` (``through_reader``).

    ``moldable``: every job gets a range around its request and a speedup model (a job table
    is all moldable or all rigid)."""
    small = kind in ("tiny", "odd")
    caps = tuple(f if f is not None else (rng.choice((1, 2, 3, 4, 8)) if small else
                                          (100 if k == 0 else rng.choice((64, 100, 128))))
                 for k, f in enumerate(fixed))
    n = rng.randint(15, 40) if small else rng.randint(130, 180)
    jobs, t = [], 0
    for i in range(n):
        if small:
            t += rng.choice((0, 0, 0, 1, 2, 5, 30))
            est = rng.choice((1, 2, 3, 5, 10, 60, 100, 1000))
            procs = min(rng.randint(1, caps[0]), rng.randint(1, caps[0]))
            submit = t
        else:
            est = rng.choice((100, 600, 3600, 7200))
            procs = 1 if rng.random() < 0.7 else rng.randint(1, min(caps[0], 16))
            submit = rng.randint(0, 60)
        run = est if rng.random() < 0.5 else rng.randint(0, est)
        request = (procs, *(rng.randint(0, c) if rng.random() < 0.7 else 0 for c in caps[1:]))
        shape = None
        if moldable:
            lo, hi = rng.randint(1, procs), rng.randint(procs, caps[0])
            shape = Moldable(lo, hi, parse_speedup(rng.choice(SPEEDUPS)))
        # labels by position, not drawn: a seed's other draws stay as they were; few values,
        # so that `x.user == job.user` often holds
        jobs.append(Job(i + 1, i, submit, run, est, request, shape, user=i % 3 - 1,
                        group=i % 2, queue=i % 4 - 1, partition=(i // 5) % 2))
    if kind == "odd":
        jobs = _odd_inputs(rng, jobs)
    return Workload(tuple(jobs), tuple(resources), caps, source=f"<{kind}>")


def _odd_inputs(rng: random.Random, jobs: list[Job]) -> list[Job]:
    """Repeated ids, and sometimes negative ids or submit times."""
    n = len(jobs)
    shift = -rng.randint(1, 100) if rng.random() < 0.3 else 0
    sign = -1 if rng.random() < 0.3 else 1
    return [attrs.evolve(j, id=sign * rng.randint(1, max(1, n // 3)), submit=j.submit + shift)
            for j in jobs]


def through_reader(w: Workload) -> Workload:
    """``w`` as `schedc run --workload TABLE --lenient` reads it from a job table: a job that
    breaks an input assumption is skipped and counted (ids renumbered by position)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "w.csv"
        path.write_text(workload_csv(w))
        return load_workload(str(path), w.resources, lenient=True)


def has_odd_inputs(w: Workload) -> bool:
    ids = [j.id for j in w.jobs]
    return len(set(ids)) != len(ids) or min(ids, default=0) < 0 or \
        min((j.submit for j in w.jobs), default=0) < 0


def normalised(w: Workload) -> Workload:
    """``w`` with distinct ids 1..n and submit times from 0 (what the verifier assumes)."""
    first = min((j.submit for j in w.jobs), default=0)
    shift = -first if first < 0 else 0
    jobs = tuple(attrs.evolve(j, id=j.index + 1, submit=j.submit + shift) for j in w.jobs)
    return attrs.evolve(w, jobs=jobs)


_TRACE: list[Workload] = []


def trace_prefix(resources: Sequence[str], fixed: Sequence[int | None], n: int,
                 moldable: bool = False) -> Workload:
    """The first ``n`` jobs of the bundled KTH-SP2 trace that fit the machine (as the reader
    skips the others), on ``resources`` (requests 0 beyond cpus); moldable as papers/000
    makes a trace (range factor 2, Downey sigma 0.5)."""
    if not _TRACE:
        _TRACE.append(load_workload(str(bundled_trace())))
    base = _TRACE[0]
    cap0 = fixed[0] if fixed[0] is not None else base.capacities[0]
    zeros = (0,) * (len(resources) - 1)
    jobs: list[Job] = []
    for j in base.jobs:
        if len(jobs) == n:
            break
        if j.procs <= cap0:
            jobs.append(attrs.evolve(j, index=len(jobs), request=(j.procs, *zeros)))
    caps = (cap0, *(f if f is not None else 100 for f in fixed[1:]))
    w = Workload(tuple(jobs), tuple(resources), caps, source=f"<KTH-SP2 first {len(jobs)}>")
    return make_moldable(w, MoldableSpec(2, 0.5)) if moldable else w


def workload_csv(w: Workload) -> str:
    """``w`` as a job table that `schedc run --workload` reads back to the same jobs."""
    moldable = bool(w.jobs) and w.jobs[0].moldable is not None
    caps = " ".join(f"{r}={c}" for r, c in zip(w.resources, w.capacities, strict=True))
    cols = ["id", "submit", "run_time", "estimate", *w.resources]
    cols += ["min_size", "max_size", "speedup"] if moldable else []
    cols += LABELS
    lines = [f"# capacity {caps}", ",".join(cols)]
    for j in w.jobs:
        row = [str(v) for v in (j.id, j.submit, j.run_time, j.estimate, *j.request)]
        if moldable:
            m = j.moldable
            row += [str(m.min_procs), str(m.max_procs), f'"{format_speedup(m.speedup)}"']
        row += [str(getattr(j, a)) for a in LABELS]
        lines.append(",".join(row))
    return "\n".join(lines) + "\n"
