"""Standard Workload Format (v2.2) reader and writer.

Reading is column-wise for speed: the data lines are split once as bytes, and each needed
field is converted with ``map(int, ...)`` over a column slice (a per-line loop costs about
5 us a line, too slow for LANL-CM5's 122k lines). Only when that fast path meets a bad line
(wrong field count or a non-integer) do we fall back to the per-line reader, which reports the
line and column, or skips and counts the line in lenient mode. The fast path also hands over
to the per-line reader when a job may break an input assumption of the proofs (a negative id
or submit, a repeated id: ``runtime/workloads/assumptions.py``), so that the error points at
its line.
"""

from __future__ import annotations

import os
import types
from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from itertools import compress, count, repeat

import attrs

from schedc.dsl.ir import LABEL_ATTRS
from schedc.dsl.number_text import MAX_VALUE
from schedc.runtime.gc_paused import paused_gc
from schedc.runtime.jobs import Job
from schedc.runtime.workloads.assumptions import JobIdentity, Problem, count_skip, reject
from schedc.runtime.workloads.workload import (
    VALUE_HELP,
    Workload,
    WorkloadError,
    capacity_problem,
    int_cell,
    read_source,
    whole_number,
)

NFIELDS = 18
# 0-based SWF fields we read: id, submit, run, alloc procs, used mem, req procs, req time, req mem
F_ID, F_SUBMIT, F_RUN, F_PROCS, F_USED_MEM, F_REQ_PROCS, F_REQ_TIME, F_REQ_MEM = (
    0, 1, 3, 4, 6, 7, 8, 9)
# user, group, executable, queue, partition (fields 12-16): the jobs' labels (``Job.user``...)
F_LABELS = (11, 12, 13, 14, 15)
F_STATUS = 10  # 1 completed, 0 failed, 5 cancelled, -1 unknown: what `--swf-out` writes back
# field 11 of a partial execution: one stretch of a job a preemptive scheduler stopped and
# continued (the archive's logs with `; Preemption: Yes` or `Double`); schedc reads whole jobs
PARTIAL = {2: "a part to be continued", 3: "the last part, completed",
           4: "the last part, failed"}
NEEDED = (F_ID, F_SUBMIT, F_RUN, F_PROCS, F_USED_MEM, F_REQ_PROCS, F_REQ_TIME, F_REQ_MEM,
          F_STATUS, *F_LABELS)
SUPPORTED = ("cpus", "memory")


def read_swf(
    path: str | os.PathLike[str],
    resources: tuple[str, ...] = ("cpus",),
    capacities: Mapping[str, int | None] | None = None,
    lenient: bool = False,
    labels: Collection[str] | None = None,
) -> Workload:
    """``labels``: the job labels to read (None: all); the others are -1, unknown."""
    name = str(path)
    caps = dict(capacities or {})
    raw = read_source(name)
    with paused_gc():
        body_at = _header_end(raw)
        raw_header = raw[:body_at].decode("utf-8", errors="replace")
        header = _header(raw_header)
        capacity = _capacities(name, resources, caps, header, raw_header)
        skipped: dict[str, int] = {}
        cols = _columns_fast(raw[body_at:], "memory" in resources, labels)
        lines = None
        if cols is None or _suspect(cols):  # the careful path knows the lines to point at
            text = raw.decode("utf-8", errors="replace").split("\n")
            cols, numbers = _columns_slow(name, text, lenient, skipped)
            lines = _Lines(name, text, numbers, lenient)
        jobs, runs, unrequested, status = _admit(cols, resources, capacity, skipped, lines)
    return Workload(jobs=jobs, resources=tuple(resources), capacities=capacity,
                    skipped=dict(sorted(skipped.items())), source=name, header=header,
                    recorded_runs=runs, unrequested=unrequested, recorded_status=status)


def _header_end(raw: bytes) -> int:
    """Offset just past the leading block of comment (``;``) and blank lines."""
    pos = 0
    while pos < len(raw):
        nl = raw.find(b"\n", pos)
        nl = len(raw) if nl < 0 else nl
        line = raw[pos:nl].strip()
        if line and not line.startswith(b";"):
            return pos
        pos = nl + 1
    return len(raw)


def _header(text: str) -> dict[str, str]:
    """``; Key: value`` comment lines (the SWF header); later duplicates win."""
    out: dict[str, str] = {}
    for ln in text.split("\n"):
        ln = ln.strip()
        if ln.startswith(";") and ":" in ln:
            key, _, value = ln[1:].partition(":")
            key = key.strip()
            if key and " " not in key:
                out[key] = value.strip()
    return out


def _header_capacity(name: str, raw_header: str, header: dict[str, str]) -> int | None:
    """The cpus of the header's MaxProcs, else MaxNodes (DESIGN), if a positive number; one
    beyond what the engine holds is an error at its line."""
    for key in ("MaxProcs", "MaxNodes"):
        text = header.get(key, "")
        if not (text.isascii() and text.isdigit()) or int(text[:20]) == 0:
            continue
        number = whole_number(text)  # None: more digits than schedc reads
        problem = (capacity_problem("cpus", number) if number is not None else
                   f"the capacity of `cpus` has {len(text):,} digits: outside the supported "
                   "range [1, 10^15]")
        if problem is None:
            return number
        lines = raw_header.split("\n")
        at = max(i for i, ln in enumerate(lines)
                 if ln.strip().startswith(";") and ln.strip()[1:].partition(":")[0].strip()
                 == key)
        raise WorkloadError(name, at + 1, lines[at].rfind(text) + 1, f"{key}: {problem}",
                            help=VALUE_HELP, source_line=lines[at])
    return None


def _capacities(name: str, resources: tuple[str, ...], caps: dict[str, int | None],
                header: dict[str, str], raw_header: str = "") -> tuple[int, ...]:
    out = []
    for res in resources:
        if res not in SUPPORTED:
            raise WorkloadError(name, None, None, f"SWF has no resource `{res}`",
                                help="an SWF trace describes `cpus` and `memory` only")
        given = caps.get(res)
        if given is not None and capacity_problem(res, given):
            raise WorkloadError(name, None, None, capacity_problem(res, given), help=VALUE_HELP)
        if given is None and res == "cpus":
            given = _header_capacity(name, raw_header, header)
        if given is None:
            raise WorkloadError(name, None, None, f"machine size unknown for `{res}`",
                                help=f"give it with --capacity {res}=N")
        if given < 1:
            raise WorkloadError(name, None, None, f"capacity of `{res}` must be >= 1",
                                help=f"got {res}={given}")
        out.append(int(given))
    return tuple(out)


def _columns_fast(body: bytes, memory: bool,
                  labels: Collection[str] | None = None) -> list[list[int]] | None:
    """The needed fields as int columns, or None if any line is malformed or not plain.

    Each newline becomes a ``|`` token, so a well-formed body is exactly 19 tokens a line with
    ``|`` at every 19th place: that proves every line has 18 fields without a per-line loop.
    Columns we do not need (memory without a memory resource, requested procs when every
    line has allocated procs) are filled with zeros instead of converted, labels not in
    ``labels`` with -1 (unknown). Any other oddity
    (blank or comment line in the middle, a non-integer) sends us to the per-line reader,
    which knows line numbers.
    """
    if b"_" in body:  # `1_000`, which ``int`` reads: the per-line reader refuses it there
        return None
    tokens = body.replace(b"\n", b" | ").split()
    if tokens and tokens[-1] != b"|":
        tokens.append(b"|")  # last line without a newline
    width = NFIELDS + 1
    nlines = len(tokens) // width
    if len(tokens) != width * nlines or tokens[NFIELDS::width].count(b"|") != nlines:
        return None
    try:
        cols = [list(map(int, tokens[f::width])) for f in (F_ID, F_SUBMIT, F_RUN, F_PROCS)]
        cols.append([0] * nlines if not memory else list(map(int, tokens[F_USED_MEM::width])))
        procs = cols[3]
        if min(procs, default=1) < 1:
            cols.append(list(map(int, tokens[F_REQ_PROCS::width])))
        else:
            cols.append([0] * nlines)  # never read: every line has allocated procs
        cols.append(list(map(int, tokens[F_REQ_TIME::width])))
        cols.append([0] * nlines if not memory else list(map(int, tokens[F_REQ_MEM::width])))
        cols.append(_same_or_ints(tokens[F_STATUS::width]))
        cols += [_same_or_ints(tokens[f::width]) if labels is None or name in labels
                 else [-1] * nlines for f, name in zip(F_LABELS, LABEL_ATTRS, strict=True)]
    except ValueError:
        return None
    # beyond what the engine holds: the per-line reader says where
    if not all(min(c, default=0) >= -MAX_VALUE and max(c, default=0) <= MAX_VALUE
               for c in cols):
        return None
    return cols


def _same_or_ints(column: list[bytes]) -> list[int]:
    """``list(map(int, column))``; a column of one repeated value (often -1 for every job:
    labels a trace does not record) in a fifth of the time."""
    if column and column.count(column[0]) == len(column):
        return [int(column[0])] * len(column)
    return list(map(int, column))


def _suspect(cols: list[list[int]]) -> bool:
    """Whether a job may break an input assumption (a negative id or submit, a repeated id)
    or a line is a partial execution: then the careful path checks each job where it can
    point at its line."""
    ids, submits, status = cols[0], cols[1], cols[NEEDED.index(F_STATUS)]
    return (min(ids, default=0) < 0 or min(submits, default=0) < 0 or len(set(ids)) < len(ids)
            or bool(_where(PARTIAL.__contains__, status)))


def _columns_slow(name: str, lines: list[str], lenient: bool,
                  skipped: dict[str, int]) -> tuple[list[list[int]], list[int]]:
    """The needed fields as int columns, and the 1-based line of each row."""
    cols: list[list[int]] = [[] for _ in NEEDED]
    numbers: list[int] = []
    for lineno, ln in enumerate(lines, 1):
        if not ln.strip() or ln.lstrip().startswith(";"):
            continue
        parts = ln.split()
        bad: tuple[int, str, str] | None = None
        if len(parts) != NFIELDS:
            col = _field_col(ln, min(len(parts), NFIELDS)) if len(parts) > NFIELDS else len(ln) + 1
            bad = (col, f"expected {NFIELDS} fields, found {len(parts)}",
                   "an SWF data line has 18 whitespace-separated fields")
        else:
            values = []
            for f in NEEDED:
                value, problem = int_cell(parts[f], f"field {f + 1}")
                if value is None:
                    hint = ("SWF fields are integers; -1 means unknown"
                            if problem.endswith("`") else VALUE_HELP)
                    bad = (_field_col(ln, f), problem, hint)
                    break
                values.append(value)
        if bad is not None:
            if lenient:
                count_skip(skipped, "malformed line")
                continue
            col, msg, hint = bad
            raise WorkloadError(name, lineno, col, msg, source_line=ln,
                                help=hint + " (or pass --lenient to skip and count such lines)")
        for c, v in zip(cols, values, strict=True):
            c.append(v)
        numbers.append(lineno)
    return cols, numbers


@attrs.frozen
class _Lines:
    """Where the careful path's rows came from: what a located error needs."""

    name: str
    text: list[str]  # the file's lines
    numbers: list[int]  # the 1-based line of each row
    lenient: bool

    def vet(self, ids: list[int], submits: list[int], rows: Iterable[int],
            skipped: dict[str, int], status: list[int]) -> set[int]:
        """The rows (in file order) whose job breaks an input assumption, or that are a
        partial execution: counted in ``skipped`` when lenient, else the first one raises
        its located error."""
        identity = JobIdentity()
        dropped = set()
        for i in rows:
            lineno = self.numbers[i]
            if status[i] in PARTIAL:  # before its id: a part repeats its job's number
                line = self.text[lineno - 1]
                reject(_partial(ids[i], status[i]), self.name, lineno,
                       _field_col(line, F_STATUS), line, self.lenient, skipped)
                dropped.add(i)
                continue
            problem = identity.vet(ids[i], submits[i], lineno)
            if problem is not None:
                line = self.text[lineno - 1]
                col = _field_col(line, F_ID if problem.field == "id" else F_SUBMIT)
                reject(problem, self.name, lineno, col, line, self.lenient, skipped)
                dropped.add(i)
        return dropped


def _partial(jid: int, status: int) -> Problem:
    return Problem(
        "status", f"job {jid}: this line is a partial execution (status {status}: "
        f"{PARTIAL[status]})",
        "schedc reads whole jobs, one line each: give the trace's condensed version, or keep "
        "a `Preemption: Double` trace's summary lines", "partial execution (status 2-4)")


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
           skipped: dict[str, int], lines: _Lines | None = None
           ) -> tuple[tuple[Job, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Apply DESIGN's skip and estimate rules, then (careful path: ``lines``) check the input
    assumptions of the jobs that pass them; list comprehensions, as this runs per line.
    Returns the jobs (killed at their estimate), their recorded run times, the indices of
    the jobs with no requested time and their recorded statuses (field 11)."""
    ids, submits, runs, procs, used_mem, req_procs, req_time, req_mem, status, *labels = cols
    # allocated procs (field 5), else requested procs (field 8)
    low = _where((1).__gt__, procs)
    if low:
        procs = list(procs)
        for i in low:
            procs[i] = req_procs[i]
    req_cols = [procs]
    if "memory" in resources:
        # Per-processor memory: requested (field 10), else used (field 7), unknown -> 0.
        mem = [p * (r if r > 0 else max(u, 0))
               for p, r, u in zip(procs, req_mem, used_mem, strict=True)]
        by_name = {"cpus": procs, "memory": mem}
        req_cols = [by_name[r] for r in resources]
    # One tuple per distinct request (a trace has a few hundred), not one per job: fewer
    # objects to make, hold and free.
    distinct: dict[tuple[int, ...], tuple[int, ...]] = {}
    requests = [distinct.setdefault(r, r) for r in zip(*req_cols, strict=True)]
    # Find the few bad lines column by column (a per-job test costs ~1 us x 122k jobs).
    bad = set(_where((0).__gt__, runs))  # run < 0
    for k, cap in enumerate(capacity):
        bad.update(_where(cap.__lt__, req_cols[k]))  # request > capacity
    bad.update(low and _where((1).__gt__, procs))  # procs < 1 even after the fallback
    for i in sorted(bad):
        _skip_reason(runs[i], requests[i], resources, capacity, skipped)
    if lines is not None:  # else the fast path saw no job that could break an assumption
        bad |= lines.vet(ids, submits, (i for i in range(len(ids)) if i not in bad), skipped,
                         status)
    if bad:
        keep = [True] * len(ids)
        for i in bad:
            keep[i] = False
        ids, submits, runs, req_time, requests, status, *labels = (
            list(compress(c, keep)) for c in (ids, submits, runs, req_time, requests, status,
                                               *labels))
    unrequested: list[int] = []
    if min(req_time, default=1) > 0:
        ests = req_time  # every line has a requested time
    else:
        unrequested = _where((1).__gt__, req_time)
        ests = [q if q > 0 else (r if r > 0 else 1) for q, r in zip(req_time, runs, strict=True)]
    caps = [r if r < e else e for r, e in zip(runs, ests, strict=True)]  # killed at its estimate
    # the archive writes -1 for unknown; any negative label is unknown (proofs assume >= -1)
    labels = [col if min(col, default=0) >= -1 else [v if v >= -1 else -1 for v in col]
              for col in labels]
    jobs = _make_jobs(ids, range(len(ids)), submits, caps, ests, requests,
                      repeat(None, len(ids)), *labels)
    return jobs, tuple(runs), tuple(unrequested), tuple(status)


_JOB_FIELDS = ("id", "index", "submit", "run_time", "estimate", "request", "moldable", "user",
               "group", "executable", "queue", "partition")
_JOB_SLOTS = [Job.__dict__.get(name) for name in _JOB_FIELDS]
# Filling the slots column by column through their descriptors (C-level ``map``) builds the
# same Job objects as ``Job(...)`` in about half the time: attrs' frozen __init__ makes seven
# ``object.__setattr__`` calls a job. Only valid while Job is a plain slots class with exactly
# these fields and no validators or converters; otherwise we call Job() as usual.
_FAST_JOBS = (
    tuple(a.name for a in attrs.fields(Job)) == _JOB_FIELDS
    and all(a.validator is None and a.converter is None for a in attrs.fields(Job))
    and all(isinstance(d, types.MemberDescriptorType) for d in _JOB_SLOTS)
    and not hasattr(Job, "__attrs_post_init__")
)


def _make_jobs(*columns: Sequence[object]) -> tuple[Job, ...]:
    """``tuple(map(Job, *columns))``, faster (see _FAST_JOBS)."""
    if not _FAST_JOBS:
        return tuple(map(Job, *columns))
    jobs = list(map(object.__new__, repeat(Job, len(columns[0]))))
    for slot, column in zip(_JOB_SLOTS, columns, strict=True):
        deque(map(slot.__set__, jobs, column), maxlen=0)  # type: ignore[union-attr]
    return tuple(jobs)


def _where(test: Callable[[int], bool], column: Iterable[int]) -> list[int]:
    """Indices of the values that pass ``test``, at C speed (no Python-level loop)."""
    return list(compress(count(), map(test, column)))


def _skip_reason(run: int, request: tuple[int, ...], resources: tuple[str, ...],
                 capacity: tuple[int, ...], skipped: dict[str, int]) -> None:
    reason = None
    if run < 0:
        reason = "run time < 0"
    elif request[0] < 1:
        reason = "procs < 1"
    else:
        for name, need, cap in zip(resources, request, capacity, strict=True):
            if need > cap:
                reason = f"{name} request > capacity"
                break
    if reason is not None:
        count_skip(skipped, reason)
