"""Standard Workload Format (v2.2) reader and writer.

Reading is column-wise for speed: the data lines are split once as bytes, and each needed
field is converted with ``map(int, ...)`` over a column slice (a per-line loop costs about
5 us a line, too slow for LANL-CM5's 122k lines). Only when that fast path meets a bad line
(wrong field count or a non-integer) do we fall back to the per-line reader, which reports the
line and column, or skips and counts the line in lenient mode. The fast path also hands over
to the per-line reader when a job may break an input assumption of the proofs (a negative id
or submit, a repeated id: ``runtime/workloads/assumptions.py``), so that the error points at
its line.

Partial executions. A preemptive machine's log may record a job in parts: lines under the
job's number with status (field 11) 2, "this partial execution will be continued", then one
with 3, "the last partial execution, job completed", or 4, "... job failed". The header
``; Preemption: Double`` says each such job also has a summary line (status 0, 1 or 5).
schedc reads each such job as ONE job, at the place of its first line, and keeps its parts as
its history (``Workload.parts``, by job id; a ``Part``'s start is its submit plus its wait):

- Without a summary line the parts are the job: its submit, labels and processors are its
  first part's, its run time their sum, its requested time and memory the most any part
  gives (-1 where none does), its status 1 after a last part of status 3, 0 after one of 4.
  The parts must agree on their processors (field 5, else 8): a job read from its parts alone
  runs at one size for their summed time, so parts of different sizes are an error at the
  first part that differs. A log whose parts change size needs its summary lines.
- Under ``; Preemption: Double`` a line of status 0, 1 or 5 with the number of a job in parts
  is its summary, before or after its parts: the job is the summary line, as if the parts
  were not there, and its parts are only its history (they may differ in size). Its run
  time must be the sum of its parts' (where all are known), and its status may not say
  completed (1) after a failed last part (4) or failed (0) after a completed one (3).
  Without that header such a line repeats the job's number: an error.
- A part after the job's last part (status 3 or 4) is an error, and so is a job whose parts
  never end (its last one has status 2: a log cut short); ``--lenient`` keeps such a job as
  far as it ran, with status -1 (unknown).
- Each mistake is located (the field it concerns, on its line); ``--lenient`` skips and
  counts the job (a part after the last part: that line) under its reason instead.
"""

from __future__ import annotations

import os
import types
from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from itertools import compress, count, repeat

import attrs

from schedc.dsl.ir import LABEL_ATTRS
from schedc.dsl.number_text import MAX_VALUE, read_int
from schedc.runtime.gc_paused import paused_gc
from schedc.runtime.jobs import Job
from schedc.runtime.workloads.assumptions import JobIdentity, count_skip, reject
from schedc.runtime.workloads.workload import (
    VALUE_HELP,
    Part,
    Workload,
    WorkloadError,
    capacity_problem,
    int_cell,
    read_source,
    value_problem,
    whole_number,
)

NFIELDS = 18
# 0-based SWF fields we read: id, submit, run, alloc procs, used mem, req procs, req time, req mem
F_ID, F_SUBMIT, F_RUN, F_PROCS, F_USED_MEM, F_REQ_PROCS, F_REQ_TIME, F_REQ_MEM = (
    0, 1, 3, 4, 6, 7, 8, 9)
# user, group, executable, queue, partition (fields 12-16): the jobs' labels (``Job.user``...)
F_LABELS = (11, 12, 13, 14, 15)
F_STATUS = 10  # 1 completed, 0 failed, 5 cancelled, -1 unknown: what `--swf-out` writes back
F_WAIT = 2  # read for a part's start only
# field 11 of a partial execution: one stretch of a job a preemptive scheduler stopped and
# continued (the archive's logs with `; Preemption: Yes` or `Double`): read grouped, one job
PARTIAL = {2: "to be continued", 3: "the last part, completed", 4: "the last part, failed"}
NEEDED = (F_ID, F_SUBMIT, F_RUN, F_PROCS, F_USED_MEM, F_REQ_PROCS, F_REQ_TIME, F_REQ_MEM,
          F_STATUS, *F_LABELS)
# where each of those is in a row of columns
_ID, _SUBMIT, _RUN, _PROCS, _USED_MEM, _REQ_PROCS, _REQ_TIME, _REQ_MEM, _STATUS = range(9)
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
        parts: dict[int, tuple[Part, ...]] = {}
        if cols is None or _suspect(cols):  # the careful path knows the lines to point at
            text = raw.decode("utf-8", errors="replace").split("\n")
            cols, numbers = _columns_slow(name, text, lenient, skipped)
            lines = _Lines(name, text, numbers, lenient)
            double = header.get("Preemption", "").lower() == "double"
            cols, numbers, parts = _Parts(lines, cols, double, capacity[0]).group(skipped)
            lines = attrs.evolve(lines, numbers=numbers)
        jobs, runs, unrequested, status = _admit(cols, resources, capacity, skipped, lines)
        if parts:  # the histories of the jobs admitted
            parts = {j.id: parts[j.id] for j in jobs if j.id in parts}
    return Workload(jobs=jobs, resources=tuple(resources), capacities=capacity,
                    skipped=dict(sorted(skipped.items())), source=name, header=header,
                    recorded_runs=runs, unrequested=unrequested, recorded_status=status,
                    parts=parts)


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
    or a line is a partial execution: then the careful path groups the parts and checks each
    job where it can point at its line."""
    ids, submits, status = cols[_ID], cols[_SUBMIT], cols[_STATUS]
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
            skipped: dict[str, int]) -> set[int]:
        """The rows (in file order) whose job breaks an input assumption: counted in
        ``skipped`` when lenient, else the first one raises its located error."""
        identity = JobIdentity()
        dropped = set()
        for i in rows:
            lineno = self.numbers[i]
            problem = identity.vet(ids[i], submits[i], lineno)
            if problem is not None:
                line = self.text[lineno - 1]
                col = _field_col(line, F_ID if problem.field == "id" else F_SUBMIT)
                reject(problem, self.name, lineno, col, line, self.lenient, skipped)
                dropped.add(i)
        return dropped


@attrs.frozen
class _Trouble:
    """A mistake in a job's parts: where it is, what it is, and what --lenient does."""

    row: int  # the row whose line the caret points at
    field: int  # the 0-based SWF field it points at
    message: str
    help: str
    reason: str | None  # its count in ``skipped`` under --lenient; None: kept, not counted
    drop: tuple[int, ...]  # the rows --lenient skips


_SIZES_HELP = ("a job read from its parts alone runs at one size for their summed run time; "
               "a log whose parts change size needs a summary line per job, under the header "
               "`; Preemption: Double`")
_LAST_HELP = ("a job's parts are status 2 lines (to be continued) ending with one of status 3 "
              "(completed) or 4 (failed)")


class _Parts:
    """The careful path's rows with each job recorded in parts made one row (see the module
    doc): ``group`` gives the new columns, each row's line, and the parts of each job."""

    def __init__(self, lines: _Lines, cols: list[list[int]], double: bool, cpus: int) -> None:
        self.lines, self.cols, self.double, self.cpus = lines, cols, double, cpus
        self.numbers = lines.numbers
        self.troubles: list[_Trouble] = []

    def group(self, skipped: dict[str, int]
              ) -> tuple[list[list[int]], list[int], dict[int, tuple[Part, ...]]]:
        cols = self.cols
        ids, status = cols[_ID], cols[_STATUS]
        parts_of: dict[int, list[int]] = {}  # job id -> its part rows, in file order
        last: dict[int, int] = {}  # job id -> its last part's row (status 3 or 4)
        for i, (jid, st) in enumerate(zip(ids, status, strict=True)):
            if st not in PARTIAL or jid < 0:  # a negative id is `_Lines.vet`'s to refuse
                continue
            if jid in last:
                self._trouble(i, F_STATUS, f"job {jid}: a part after its last part (line "
                              f"{self.numbers[last[jid]]}, status {status[last[jid]]})",
                              _LAST_HELP + ": renumber this line if it is another job",
                              "part after the last part", (i,))
                continue
            parts_of.setdefault(jid, []).append(i)
            if st != 2:
                last[jid] = i
        if not parts_of:
            self._settle(skipped)
            return cols, self.numbers, {}
        summary: dict[int, int] = {}  # job id -> its summary line's row (Double)
        for i, jid in enumerate(ids):
            if status[i] in PARTIAL or jid not in parts_of:
                continue
            if not self.double:
                self._trouble(
                    i, F_ID, f"job {jid} is recorded in parts (line "
                    f"{self.numbers[parts_of[jid][0]]}) and again on this line (status "
                    f"{status[i]})", "a job in parts has a summary line only in a log headed "
                    "`; Preemption: Double`: add the header if this line sums the parts up, "
                    "else renumber one of the jobs", "repeated id", (i,))
            elif jid not in summary:  # a second summary repeats the id: `_Lines.vet`'s
                summary[jid] = i
        for jid, rows in parts_of.items():
            self._check(jid, rows, summary.get(jid), last.get(jid))
        dropped = self._settle(skipped)
        return self._merge(parts_of, summary, last, dropped)

    def _check(self, jid: int, rows: list[int], summary: int | None, last: int | None) -> None:
        """The troubles of one job's parts (and summary)."""
        cols = self.cols
        everything = (*rows, *(() if summary is None else (summary,)))
        self._check_parts(jid, rows, summary, everything)
        if last is not None and len(rows) == 1 and summary is None:
            self._trouble(rows[0], F_STATUS,
                          f"job {jid}: its only part is a last part (status "
                          f"{cols[_STATUS][rows[0]]}), with no part of status 2 before it",
                          "a job that ran in one stretch is one line of status 1 (completed) "
                          "or 0 (failed); a log that begins in the middle of a job starts this "
                          "way: pass --lenient to keep such jobs as recorded", None, ())
        if last is None:
            self._trouble(rows[-1], F_STATUS,
                          f"job {jid}: its last part (status 2) is to be continued, but no "
                          "part of it follows", _LAST_HELP + "; a log cut short ends this way: "
                          "pass --lenient to keep what such jobs ran", None, ())
        runs = [cols[_RUN][i] for i in rows]
        known = min(runs) >= 0
        if summary is None:
            sizes = [self._procs(i) for i in rows]
            differ = next((k for k, n in enumerate(sizes) if n != sizes[0]), None)
            if differ is not None:
                i = rows[differ]
                field = F_PROCS if cols[_PROCS][i] >= 1 else F_REQ_PROCS
                self._trouble(i, field, f"job {jid}: this part has {sizes[differ]} processors, "
                              f"its first part (line {self.numbers[rows[0]]}) "
                              f"{sizes[0]}", _SIZES_HELP, "parts of different sizes", everything)
            elif known and value_problem(sum(runs), "") is not None:
                self._trouble(rows[-1], F_RUN, f"job {jid}: its parts' run times sum to "
                              f"{sum(runs)}: outside the supported range [-10^15, 10^15]",
                              VALUE_HELP, "run time out of range", everything)
            return
        said = cols[_RUN][summary]
        if known and said >= 0 and said != sum(runs):
            at = ", ".join(str(self.numbers[i]) for i in rows)
            self._trouble(summary, F_RUN, f"job {jid}: the summary's run time {said} is not its "
                          f"{len(rows)} parts' sum, {sum(runs)} (lines {at})",
                          "under `; Preemption: Double` a job's summary line totals its parts' "
                          "run times: correct the summary or a part",
                          "summary disagrees with its parts", everything)
        ended = None if last is None else cols[_STATUS][last]
        was = cols[_STATUS][summary]
        if (was, ended) in ((1, 4), (0, 3)):
            words = {0: "failed", 1: "completed", 3: "completed", 4: "failed"}
            self._trouble(summary, F_STATUS, f"job {jid}: the summary says {words[was]} "
                          f"(status {was}), its last part (line {self.numbers[last or 0]}) "
                          f"{words[ended]} (status {ended})",
                          "a completed job's last part has status 3, a failed one's status 4: "
                          "correct the summary or the part",
                          "summary disagrees with its parts", everything)

    def _check_parts(self, jid: int, rows: list[int], summary: int | None,
                     everything: tuple[int, ...]) -> None:
        """Each part on its own and against the one before: its times known (-1) or at
        least 0, the job's submit time, no more processors than the machine (where the job
        fits it: else the job is skipped as any other), no overlap with the part before."""
        cols = self.cols
        first = rows[0] if summary is None else summary
        whose = (f"its first part's (line {self.numbers[first]})" if summary is None else
                 f"its summary's (line {self.numbers[first]})")
        fits = self._procs(first) <= self.cpus
        before: tuple[int, int] | None = None  # the previous part's row and its end
        for i in rows:
            wait = self._wait(i)
            for field, value, what in ((F_RUN, cols[_RUN][i], "run time"),
                                       (F_WAIT, wait, "wait time")):
                if value < -1:
                    self._trouble(i, field, f"job {jid}: this part's {what} is {value}",
                                  f"a part's {what} is at least 0, or -1 when unknown",
                                  "part with a negative time", everything)
            if cols[_SUBMIT][i] != cols[_SUBMIT][first]:
                self._trouble(i, F_SUBMIT, f"job {jid}: this part's submit time "
                              f"{cols[_SUBMIT][i]} is not {whose}, {cols[_SUBMIT][first]}",
                              "each part of a job gives the job's submit time; its wait time "
                              "says when the part started", "parts disagree on the submit "
                              "time", everything)
            if fits and self._procs(i) > self.cpus:
                field = F_PROCS if cols[_PROCS][i] >= 1 else F_REQ_PROCS
                self._trouble(i, field, f"job {jid}: this part ran on {self._procs(i)} "
                              f"processors, more than the machine's {self.cpus}",
                              "a part records processors the job held: at most the machine's "
                              "(`; MaxProcs`, or --capacity cpus=N)", "part larger than the "
                              "machine", everything)
            if wait < 0 or cols[_RUN][i] < 0 or cols[_SUBMIT][i] < 0:
                before = None  # its times unknown: the next part is compared with none
                continue
            start = cols[_SUBMIT][i] + wait
            if before is not None and start < before[1]:
                self._trouble(i, F_WAIT, f"job {jid}: this part starts at {start}, before its "
                              f"previous part (line {self.numbers[before[0]]}) ends at "
                              f"{before[1]}", "a job runs one part at a time, in the file's "
                              "order: its wait time (field 3) says when the part started",
                              "overlapping parts", everything)
            before = (i, start + cols[_RUN][i])

    def _wait(self, i: int) -> int:
        """A part's wait time (field 3: read for parts only), -1 where unknown."""
        value = read_int(self.lines.text[self.numbers[i] - 1].split()[F_WAIT])
        return -1 if value is None else value

    def _procs(self, i: int) -> int:
        """A row's processors by the readers' rule: allocated (field 5), else requested."""
        procs = self.cols[_PROCS][i]
        return procs if procs >= 1 else self.cols[_REQ_PROCS][i]

    def _trouble(self, row: int, field: int, message: str, help: str, reason: str | None,
                 drop: tuple[int, ...]) -> None:
        self.troubles.append(_Trouble(row, field, message, help, reason, drop))

    def _settle(self, skipped: dict[str, int]) -> set[int]:
        """Strict: raise the first trouble in file order. Lenient: count each, and give the
        rows to skip."""
        if not self.troubles:
            return set()
        lines = self.lines
        if not lines.lenient:
            first = min(self.troubles, key=lambda t: self.numbers[t.row])
            lineno = self.numbers[first.row]
            line = lines.text[lineno - 1]
            hint = "" if first.reason is None else (
                " (or pass --lenient to skip and count such "
                f"{'lines' if first.drop == (first.row,) else 'jobs'})")
            raise WorkloadError(lines.name, lineno, _field_col(line, first.field),
                                first.message, help=first.help + hint, source_line=line)
        dropped: set[int] = set()
        for trouble in self.troubles:
            if trouble.reason is not None and not dropped.issuperset(trouble.drop):
                count_skip(skipped, trouble.reason)
            dropped.update(trouble.drop)
        return dropped

    def _merge(self, parts_of: dict[int, list[int]], summary: dict[int, int],
               last: dict[int, int], dropped: set[int]
               ) -> tuple[list[list[int]], list[int], dict[int, tuple[Part, ...]]]:
        """One row per job in parts, at its first line; the other rows as they were."""
        cols = self.cols
        merged: dict[int, list[int]] = {}  # the row a job takes -> its values
        members: set[int] = set()  # rows folded into a job
        parts: dict[int, tuple[Part, ...]] = {}
        for jid, rows in parts_of.items():
            group = [*rows, *(() if jid not in summary else (summary[jid],))]
            if dropped.intersection(group):
                continue
            members.update(group)
            merged[min(group)] = self._job(rows, summary.get(jid), last.get(jid))
            parts[jid] = tuple(map(self._part, rows))
        out: list[list[int]] = [[] for _ in cols]
        numbers: list[int] = []
        for i in range(len(self.numbers)):
            if i in dropped or (i in members and i not in merged):
                continue
            values = merged.get(i) or [c[i] for c in cols]
            for column, value in zip(out, values, strict=True):
                column.append(value)
            numbers.append(self.numbers[i])
        return out, numbers, parts

    def _job(self, rows: list[int], summary: int | None, last: int | None) -> list[int]:
        """A job's row: its summary line's, else made from its parts."""
        cols = self.cols
        if summary is not None:
            return [c[summary] for c in cols]
        values = [c[rows[0]] for c in cols]
        runs = [cols[_RUN][i] for i in rows]
        values[_RUN] = sum(runs) if min(runs) >= 0 else -1
        for k in (_USED_MEM, _REQ_TIME, _REQ_MEM):
            values[k] = max(cols[k][i] for i in rows)
        values[_STATUS] = -1 if last is None else {3: 1, 4: 0}[cols[_STATUS][last]]
        return values

    def _part(self, i: int) -> Part:
        lineno = self.numbers[i]
        wait, submit = self._wait(i), self.cols[_SUBMIT][i]
        known = wait >= 0 and submit >= 0
        return Part(line=lineno, start=submit + wait if known else None,
                    run=self.cols[_RUN][i], procs=self._procs(i), status=self.cols[_STATUS][i])


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
        bad |= lines.vet(ids, submits, (i for i in range(len(ids)) if i not in bad), skipped)
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
