"""CSV job table reader: ``id,submit,run_time,estimate`` then one column per machine resource.

Columns are found by name in the header line, so their order is free and extra columns (say a
``memory`` column when the machine only has cpus) are ignored. Comment lines (``#``) may come
before the header; one of the form ``# capacity cpus=256 r2=256`` gives the machine's
capacities (the policy's machine block and ``--capacity`` override it), as an SWF header's
MaxProcs does. One of the form ``# time-unit 1/100 s`` says the table's times count
hundredths of a second (`schedc workload generate --time-scale 100`): the simulation runs
in those integers, exactly, and the metrics are converted to seconds (``metrics.py``).
Values are integers; cells may
be quoted as CSV allows. The skip and estimate rules are those of SWF (see ``swf._admit``'s
twin below).

Labels: optional columns ``user``, ``group``, ``executable``, ``queue`` and ``partition``
(anywhere, none required) give who submitted each job and where, as SWF's fields 12-16 do.
A column of integers is taken as it is (a negative value is -1, unknown); a column with any
other text (user names such as ``alice``) numbers its distinct texts from 1 in the order of
their first appearance. An empty cell, or a missing column, is -1.

Moldable jobs: with ``min_size`` and ``max_size`` columns every row's job may run on any size
in [min_size, max_size] (which must hold its ``cpus`` request and fit the machine), its run
time and estimate, recorded at its request, scaled by the ``speedup`` column (a
``runtime/speedup.py`` spec such as ``"downey(32, 1)"``, quoted because of its comma;
default ``linear``). A row with min_size = max_size runs only on that size: a size rule
must give it exactly that (a job of a table without these columns is rigid: a size rule may
give it any size in [1, capacity], its run time unchanged).
"""

from __future__ import annotations

import csv
import difflib
import json
import os
from collections.abc import Mapping
from fractions import Fraction

from attrs import evolve

from schedc.dsl.ir import LABEL_ATTRS
from schedc.dsl.number_text import (
    MAX_CAPACITY,
    MAX_VALUE,
    RANGE_HELP,
    number_problem,
    parse_real,
    range_problem,
    read_int,
    short,
)
from schedc.runtime.jobs import Job, Moldable
from schedc.runtime.speedup import SpeedupError, parse_speedup
from schedc.runtime.workloads.assumptions import LENIENT_HINT, JobIdentity, count_skip, reject
from schedc.runtime.workloads.workload import (
    VALUE_HELP,
    Workload,
    WorkloadError,
    capacity_problem,
    int_cell,
    read_source,
    whole_number,
)

BASE = ("id", "submit", "run_time", "estimate")
MOLDABLE = ("min_size", "max_size")
LABELS = LABEL_ATTRS  # optional: who submitted the job and where (``Job.user``...)
# The columns of a `--jobs-out` table that hold a job as its workload recorded it: such a
# table reads back as the workload it was run on (``metrics.write_jobs_csv``)
# a `# time-unit`: seconds per unit of the table's times
MIN_TIME_UNIT, MAX_TIME_UNIT = Fraction(1, 10**12), Fraction(10**12)
JOBS_OUT = {"id": "job_id", "cpus": "requested_procs", "run_time": "requested_run_time",
            "estimate": "requested_estimate"}


def read_csv_table(
    path: str | os.PathLike[str],
    resources: tuple[str, ...] = ("cpus",),
    capacities: Mapping[str, int | None] | None = None,
    lenient: bool = False,
) -> Workload:
    name = str(path)
    caps = dict(capacities or {})
    raw = read_source(name, "job table")
    lines = raw.decode("utf-8", errors="replace").splitlines()
    head = 0  # comment lines before the header; numbers below count from the file's start
    while head < len(lines) and lines[head].lstrip().startswith("#"):
        head += 1
    unit = Fraction(1)
    for lineno, text in enumerate(lines[:head], 1):
        for res, cap in _capacity_line(name, lineno, text).items():
            if caps.get(res) is None:
                caps[res] = cap
        unit = _time_unit_line(name, lineno, text) or unit
    offset, lines = head, lines[head:]
    if not lines or not lines[0].strip():
        raise WorkloadError(name, 1 + offset, 1, "empty job table",
                            help="the first line names the columns: " + ",".join(BASE + resources))
    header = _cells(name, 1 + offset, lines[0])
    names = [c.strip() for c in header]
    moldable = all(c in names for c in MOLDABLE)
    if not moldable and any(c in names for c in MOLDABLE):
        raise WorkloadError(name, 1 + offset, 1, "a moldable job table needs both `min_size` and "
                            "`max_size`", help="add the missing column, or drop the other",
                            source_line=lines[0])
    sized = [names.index(c) for c in MOLDABLE] if moldable else []
    speedup_col = names.index("speedup") if moldable and "speedup" in names else None
    label_cols = {a: names.index(a) for a in LABELS if a in names}
    label_cells: list[list[str]] = []  # per admitted job, its label cells as written
    # a jobs table `schedc run --jobs-out` wrote: its jobs as the workload recorded them
    alias = JOBS_OUT if all(c in names for c in JOBS_OUT.values()) else {}
    wanted = [alias.get(c, c) for c in BASE + tuple(resources)]
    missing = [c for c in wanted if c not in names]
    if missing:
        shown = ", ".join(f"`{c}`" for c in missing)
        hints = [f"`{n}` -> `{c}`" for c in missing
                 for n in difflib.get_close_matches(c, names, n=1, cutoff=0.7)]
        raise WorkloadError(name, 1 + offset, len(lines[0]) + 1,
                            f"missing column{'s' if len(missing) > 1 else ''} {shown}",
                            help=(f"did you mean {', '.join(hints)}? " if hints else "")
                            + "the header needs " + ",".join(BASE + resources),
                            source_line=lines[0])
    _no_repeats(name, 1 + offset, lines[0], header, names,
                {*wanted, *MOLDABLE, "speedup", *LABELS})
    where = [names.index(c) for c in wanted]
    capacity = []
    for res in resources:
        cap = caps.get(res)
        if cap is None or cap < 1:
            raise WorkloadError(name, None, None, f"machine size unknown for `{res}`",
                                help=f"give it with --capacity {res}=N")
        if capacity_problem(res, cap):
            raise WorkloadError(name, None, None, capacity_problem(res, cap), help=VALUE_HELP)
        capacity.append(int(cap))
    skipped: dict[str, int] = {}
    jobs: list[Job] = []
    runs: list[int] = []  # as recorded: a job over its estimate is capped in ``jobs``
    unrequested: list[int] = []  # indices of the jobs with no requested time
    # ids >= 0 and distinct, submits >= 0 (runtime/workloads/assumptions.py)
    identity = JobIdentity()
    for lineno, ln in enumerate(lines[1:], 2 + offset):
        if not ln.strip() or ln.lstrip().startswith("#"):
            continue
        cells, values, bad = _row(name, lineno, ln, names, where + sized)
        if bad is not None:
            if lenient:
                count_skip(skipped, "malformed line")
                continue
            raise WorkloadError(name, lineno, bad[0], bad[1],
                                help=bad[2] + " (or skip and count such rows with --lenient)",
                                source_line=ln)
        lo_hi = values[len(where):]
        jid, submit, run, est, *request = values[:len(where)]
        shape = None
        if moldable:
            try:
                shape = _moldable(name, lineno, ln, cells, speedup_col, lo_hi, request[0],
                                  capacity[0])
            except WorkloadError:
                if not lenient:
                    raise
                count_skip(skipped, "malformed line")
                continue
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
            count_skip(skipped, reason)
            continue
        problem = identity.vet(jid, submit, lineno)
        if problem is not None:
            col = _cell_col(ln, cells, where[BASE.index(problem.field)])
            reject(problem, name, lineno, col, ln, lenient, skipped)
            continue
        if est <= 0:
            unrequested.append(len(jobs))
            est = run
        est = max(est, 1)  # DESIGN: never less than 1 s
        jobs.append(Job(jid, len(jobs), submit, min(run, est), est, tuple(request), shape))
        runs.append(run)
        label_cells.append([cells[k].strip() for k in label_cols.values()])
    if label_cols:
        columns = [_labels([row[c] for row in label_cells]) for c in range(len(label_cols))]
        jobs = [evolve(job, **dict(zip(label_cols, values, strict=True)))
                for job, *values in zip(jobs, *columns, strict=True)]
    return Workload(jobs=tuple(jobs), resources=tuple(resources), capacities=tuple(capacity),
                    skipped=dict(sorted(skipped.items())), source=name, header={},
                    time_unit=unit, recorded_runs=tuple(runs),
                    unrequested=tuple(unrequested))


_ROW_HELP = "each row holds integers, one per header column"


def _row(name: str, lineno: int, line: str, names: list[str], read: list[int]
         ) -> tuple[list[str], list[int], tuple[int, str, str] | None]:
    """A data row's cells and the integers of its columns ``read``, or what is wrong with
    it: (column, message, help)."""
    try:
        cells = _cells(name, lineno, line) if '"' in line else line.split(",")
    except WorkloadError as exc:
        return [], [], (1, exc.message, exc.help or _ROW_HELP)
    if len(cells) != len(names):
        return cells, [], (len(line) + 1, f"expected {len(names)} columns, found {len(cells)}",
                           _ROW_HELP)
    values = []
    for k in read:
        value, problem = int_cell(cells[k], f"column `{names[k]}`")
        if value is None:
            shape = problem.endswith("`")  # not an integer, rather than out of range
            return cells, [], (_cell_col(line, cells, k), problem,
                               _ROW_HELP if shape else VALUE_HELP)
        values.append(value)
    return cells, values, None


def _cells(name: str, lineno: int, line: str) -> list[str]:
    """The cells of a line as CSV reads them (quotes), a cell too long for it an error."""
    try:
        return next(csv.reader([line]))
    except csv.Error as exc:  # "field larger than field limit (131072)"
        raise WorkloadError(name, lineno, 1, f"cannot read the row: {exc}",
                            help="a cell holds a number or a label of at most "
                            f"{csv.field_size_limit():,} characters", source_line=line) from None


def _no_repeats(name: str, lineno: int, line: str, header: list[str], names: list[str],
                read: set[str]) -> None:
    """A column the reader reads named twice is an error at its second place: which one
    would hold the value?"""
    for k, column in enumerate(names):
        if column in read and names.index(column) < k:
            raise WorkloadError(name, lineno, _cell_col(line, header, k),
                                f"column `{column}` is named twice (columns "
                                f"{names.index(column) + 1} and {k + 1})",
                                help="rename or remove one of them", source_line=line)


def _labels(cells: list[str]) -> list[int]:
    """One label column's values: integers as they are (any negative is -1, unknown), or, if
    some cell is not an integer (a user name), each distinct text numbered from 1 in the order
    of first appearance; an empty cell is -1 either way."""
    values = [read_int(c) if c else -1 for c in cells]
    if all(v is not None and v <= MAX_VALUE for v in values):
        return [max(v, -1) for v in values]  # type: ignore[type-var]
    numbers: dict[str, int] = {}
    return [numbers.setdefault(c, len(numbers) + 1) if c else -1 for c in cells]


def _moldable(name: str, lineno: int, line: str, cells: list[str], speedup_col: int | None,
              lo_hi: list[int], procs: int, cpus: int) -> Moldable | None:
    """The row's moldable shape (None: the row is skipped for its request anyway)."""
    lo, hi = lo_hi
    if not 1 <= lo <= procs <= hi <= cpus:
        if procs < 1 or procs > cpus:
            return None  # the row is skipped for its request; no second complaint
        raise WorkloadError(name, lineno, 1, f"sizes [{lo}, {hi}] must hold the request "
                            f"{procs} and fit the {cpus} cpus",
                            help="min_size <= cpus <= max_size <= capacity" + LENIENT_HINT,
                            source_line=line)
    text = cells[speedup_col].strip() if speedup_col is not None else "linear"
    try:
        speedup = parse_speedup(text or "linear")
    except SpeedupError as exc:
        col = _cell_col(line, cells, speedup_col) if speedup_col is not None else 1
        raise WorkloadError(name, lineno, col, str(exc), help=exc.help + LENIENT_HINT,
                            source_line=line) from None
    return Moldable(lo, hi, speedup)


def _cell_col(line: str, cells: list[str], k: int) -> int:
    """1-based column where cell ``k`` of ``line`` starts."""
    if '"' not in line:
        return sum(len(c) + 1 for c in cells[:k]) + 1
    # quoted cells: their text no longer adds up to the line; find each after the last
    pos = 0
    for cell in cells[:k + 1]:
        at = line.find(cell, pos)
        if at < 0:  # a doubled quote inside a cell: no exact place
            return 1
        pos = at + len(cell)
    return pos - len(cells[k]) + 1


def _time_unit_line(name: str, lineno: int, text: str) -> Fraction | None:
    """``# time-unit 1/100 s`` -> 1/100 (seconds per unit of the table's times); any other
    comment -> None."""
    words = text.lstrip()[1:].split()
    if words and words[0] == "time-unit:":
        words = ["time-unit", *_json_words(name, lineno, text, str)]
    if not words or words[0] != "time-unit":
        return None
    if len(words) == 3 and number_problem(words[1]):
        raise WorkloadError(name, lineno, 1, f"bad time unit: {number_problem(words[1])}",
                            help=RANGE_HELP, source_line=text)
    unit = parse_real(words[1]) if len(words) == 3 and words[2] == "s" else None
    if unit is not None and unit > 0 and range_problem(unit, MIN_TIME_UNIT, MAX_TIME_UNIT,
                                                       "the time unit"):
        raise WorkloadError(name, lineno, 1, range_problem(unit, MIN_TIME_UNIT, MAX_TIME_UNIT,
                                                           "the time unit") + " s",
                            help="a unit from a picosecond to 10^12 s keeps the metrics' "
                            "seconds within floating point (docs/reference/limits.md)",
                            source_line=text)
    if unit is None or unit <= 0:
        raise WorkloadError(name, lineno, 1, f"bad time unit `{text.strip()}`",
                            help="write `# time-unit 1/100 s` (seconds per unit of the "
                            "table's times: a positive number or fraction, then `s`)",
                            source_line=text)
    return unit


def _json_words(name: str, lineno: int, text: str, kind: type) -> list[str]:
    """The value of a ``# KEY: JSON`` line as the words of its plain form: a dict as
    ``NAME=N`` words, a string split."""
    try:
        value = json.loads(text.partition(":")[2])
    except ValueError:
        value = None
    if not isinstance(value, kind):
        raise WorkloadError(name, lineno, 1, f"bad header line `{text.strip()}`",
                            help="`# capacity: {\"cpus\": 256}` or `# time-unit: \"1/100 s\"`",
                            source_line=text)
    if isinstance(value, dict):
        return [f"{k}={v}" for k, v in value.items()]
    return value.split()


def _capacity_line(name: str, lineno: int, text: str) -> dict[str, int]:
    """``# capacity NAME=N ...`` (or ``# capacity: {"NAME": N}``, as `--jobs-out` writes it)
    -> {NAME: N}; any other comment -> {}."""
    words = text.lstrip()[1:].split()
    if words and words[0] == "capacity:":
        words = ["capacity", *_json_words(name, lineno, text, dict)]
    if not words or words[0] != "capacity":
        return {}
    found: dict[str, int] = {}
    for word in words[1:]:
        res, _, value = word.partition("=")
        number = whole_number(value)
        at = text.find(word)  # the `NAME=N` form, else the JSON form's "NAME"
        if res and value.isascii() and value.isdigit() and (
                number is None or number > MAX_CAPACITY):  # (0 is a bad capacity below)
            problem = (capacity_problem(res, number) if number is not None else
                       f"the capacity of `{res}` has {len(value):,} digits: outside the "
                       "supported range [1, 10^15]")
            raise WorkloadError(name, lineno, (at if at >= 0 else 0) + 1, problem,
                                help=VALUE_HELP, source_line=text)
        if not res or number is None or number < 1:
            raise WorkloadError(name, lineno, (at if at >= 0 else max(0, text.find(f'"{res}"')))
                                + 1,
                                f"bad capacity `{short(word)}`",
                                help="write `# capacity cpus=256 r2=256`: names and "
                                "positive integers", source_line=text)
        found[res] = number
    return found
