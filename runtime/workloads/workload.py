"""A workload: the jobs of a trace or table, the machine they ran on, and what was skipped."""

from __future__ import annotations

import difflib
import gzip
import re
import zlib
from collections.abc import Sequence
from fractions import Fraction

from attrs import field, frozen

from schedc.dsl.diagnostics import Diagnostic, DiagnosticError, read_limited
from schedc.dsl.number_text import (
    MAX_CAPACITY,
    MAX_VALUE,
    bound_text,
    range_problem,
    read_int,
    short,
)
from schedc.runtime.jobs import Job


@frozen
class Part:
    """One partial execution of a job as a log recorded it: an SWF line with status 2 (to be
    continued), 3 (the last part, completed) or 4 (the last part, failed); ``swf.py`` reads a
    job's parts as one job and keeps them here, its history."""

    line: int  # the part's line in the file
    start: int | None  # its submit + wait (fields 2 and 3); None where either is unknown
    run: int  # its run time (field 4)
    procs: int  # its processors (field 5, else 8)
    status: int  # 2, 3 or 4

    @property
    def end(self) -> int | None:
        return None if self.start is None else self.start + self.run


@frozen
class Workload:
    jobs: tuple[Job, ...]  # file order; jobs[i].index == i
    resources: tuple[str, ...]  # resources[0] == "cpus"
    capacities: tuple[int, ...]  # one per resource
    skipped: dict[str, int] = field(factory=dict)  # reason -> count
    source: str = ""  # the file it came from
    header: dict[str, str] = field(factory=dict)  # SWF header lines ("MaxProcs" -> "100")
    transform: str = ""  # how the jobs were changed after reading (moldable, load), if at all
    # seconds per unit of the file's times (a table's `# time-unit 1/100 s`): the simulation
    # runs in the file's integers, exactly; metrics are reported in seconds
    time_unit: Fraction = Fraction(1)
    # What the file recorded, by job index, where the jobs run otherwise: each job's run
    # time before it was capped at its estimate (`--overrun`, ``overrun.py``), and its
    # estimate as read. Empty: the jobs are as recorded (a generated or state workload).
    recorded_runs: tuple[int, ...] = ()
    recorded_estimates: tuple[int, ...] = ()
    # an SWF trace's status of each job (field 11: 1 completed, 0 failed, 5 cancelled, -1)
    recorded_status: tuple[int, ...] = ()
    # indices of the jobs whose file gave no requested time: their estimate is their run
    # time (a perfect one)
    unrequested: tuple[int, ...] = ()
    # how jobs that ran past their estimate run (``overrun.MODES``): kill is as read
    overrun: str = "kill"
    # the jobs an SWF log recorded in parts (partial executions), by job id: each one's parts
    # in file order (``swf.py``); empty when every job is one line
    parts: dict[int, tuple[Part, ...]] = field(factory=dict)

    def part_counts(self) -> tuple[int, int, int]:
        """Of these jobs, how many were read from parts, from how many part lines, and how
        many of them have no last part (kept under --lenient as far as they ran)."""
        if not self.parts:
            return 0, 0, 0
        histories = [self.parts[j.id] for j in self.jobs if j.id in self.parts]
        return (len(histories), sum(map(len, histories)),
                sum(1 for h in histories if h[-1].status == 2))

    @property
    def no_estimate(self) -> int:
        """How many jobs have no requested time (of these jobs: a prefix keeps indices)."""
        n = len(self.jobs)
        return sum(1 for i in self.unrequested if i < n)

    def recorded_run(self, index: int) -> int:
        """The run time the file recorded for job ``index`` (uncapped)."""
        runs = self.recorded_runs
        return runs[index] if runs else self.jobs[index].run_time

    def recorded_estimate(self, index: int) -> int:
        """The estimate job ``index`` had as read (before `--overrun estimate` raised it)."""
        ests = self.recorded_estimates
        return ests[index] if ests else self.jobs[index].estimate

    @property
    def skipped_total(self) -> int:
        return sum(self.skipped.values())


class WorkloadError(DiagnosticError):
    """A user mistake in a workload file or its machine: a located diagnostic, rendered like a
    compiler one (its ``str`` stays the short one-block form that logs and tests read)."""

    def __init__(
        self,
        path: str,
        line: int | None,
        col: int | None,
        message: str,
        help: str | None = None,
        source_line: str | None = None,
    ) -> None:
        super().__init__([_located(path, line, col, message, help, source_line)])
        self.path = path
        self.line = line
        self.col = col
        self.message = message
        self.help = help
        self.source_line = source_line

    @property
    def diagnostic(self) -> Diagnostic:
        return self.diagnostics[0]

    def __reduce__(self) -> tuple:  # picklable: it crosses the experiments' worker processes
        return (type(self), (self.path, self.line, self.col, self.message, self.help,
                             self.source_line))

    def __str__(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}"
            if self.col is not None:
                where += f":{self.col}"
        out = [f"{where}: {self.message}"]
        if self.source_line is not None:
            out.append(f"  | {self.source_line}")
            if self.col is not None:
                out.append("  | " + " " * (self.col - 1) + "^")
        if self.help:
            out.append(f"help: {self.help}")
        return "\n".join(out)


# The value a column points at: an SWF field, a CSV cell (quoted, or up to a comma), a JSON
# string or number; the caret underlines all of it.
_TOKEN = re.compile(r'"[^"]*"?|[^\s,"\]}]*')


def _located(path: str, line: int | None, col: int | None, message: str, help: str | None,
             source_line: str | None) -> Diagnostic:
    end_col = None
    if col is not None and source_line is not None:
        token = _TOKEN.match(source_line[col - 1:])
        end_col = col + max(1, len(token.group()) if token else 1)
    return Diagnostic(message, path, line, col, line if end_col else None, end_col, help,
                      source=source_line)


def whole_number(text: str) -> int | None:
    """``text`` as an integer >= 0 if it is plain ASCII digits (``str.isdigit`` also accepts
    digits such as ``²`` that ``int`` refuses), at most ``number_text.MAX_DIGITS`` of them; else
    None."""
    return read_int(text) if text.isascii() and text.isdigit() else None


def value_problem(value: int, what: str, low: int = -MAX_VALUE, high: int = MAX_VALUE
                  ) -> str | None:
    """A message if a workload's integer ``value`` is outside what the engine holds."""
    return range_problem(value, low, high, what)


# A heterogeneous cluster (`--speeds`, papers/002) keeps each processor's speed, load and
# holder: 300000000x1 was a list of 300 million floats.
MAX_PROCESSORS = 1 << 16
MAX_SPEED = 10**6  # BPU of one processor
_SPEED_GROUP = re.compile(r"\s*([0-9]+)\s*x\s*([0-9]+(?:\.[0-9]+)?)\s*")


def speeds_problem(text: str) -> str | None:
    """A message if `--speeds` (or a sweep's `speeds`) ``text`` asks for more processors or
    faster ones than the engine holds; None otherwise (its format is `parse_speeds`'s to
    check). Call it before ``parse_speeds``, which makes one float per processor."""
    total = 0
    for part in text.split(","):
        found = _SPEED_GROUP.fullmatch(part)
        if found is None:
            continue
        count, speed = found.groups()
        if len(count) > 12:
            return (f"speeds {short(text)}: a count of {len(count):,} digits, more than the "
                    f"{MAX_PROCESSORS:,} processors a heterogeneous cluster holds")
        total += int(count)
        if len(speed.partition(".")[0]) > 12 or float(speed) > MAX_SPEED:
            return (f"speeds {short(text)}: a speed of {short(speed)} BPU is outside the "
                    f"supported range (0, {bound_text(MAX_SPEED)}]")
    if total > MAX_PROCESSORS:
        return (f"speeds {short(text)}: {short(f'{total:,}')} processors, more than the "
                f"{MAX_PROCESSORS:,} a heterogeneous cluster holds")
    return None


VALUE_HELP = ("schedc holds a workload's integers (times, requests, ids, labels) from -10^15 "
              "to 10^15 and capacities from 1 to 10^15 (docs/reference/limits.md)")


def int_cell(text: str, what: str) -> tuple[int | None, str | None]:
    """A workload's integer cell (ASCII digits with an optional sign, ``what`` naming it in
    a message): its value, or None and why not (not an integer: `1_000`, `١٢`, `x`; or
    beyond what the engine holds)."""
    value = read_int(text)
    if value is None:
        digits = text.strip().lstrip("+-")
        if digits.isascii() and digits.isdigit():  # only too long
            return None, (f"{what} has {len(digits):,} digits: outside the supported range "
                          f"[-10^15, 10^15]")
        return None, f"{what} is not an integer: `{short(text.strip())}`"
    problem = value_problem(value, what)
    return (None, problem) if problem else (value, None)


def capacity_problem(name: str, value: int) -> str | None:
    """A message if ``value`` is not a capacity the engine holds (1 to MAX_CAPACITY): for
    `--capacity`, a sweep's `[capacity]`, a file's header."""
    return range_problem(value, 1, MAX_CAPACITY, f"the capacity of `{name}`")


def choices_help(name: str, options: Sequence[str], listing: str) -> str:
    """"did you mean `x`? <listing>: a, b, c" for a name that is not among ``options``."""
    close = difflib.get_close_matches(name, options, n=1)
    return (f"did you mean `{close[0]}`? " if close else "") + f"{listing}: {', '.join(options)}"


# The most bytes read from one input (after decompression): each is read whole into memory.
# The Parallel Workloads Archive's largest traces hold a few hundred MB.
MAX_BYTES = {"workload": 512 << 20, "job table": 512 << 20, "state": 64 << 20}


def read_source(name: str, what: str = "workload") -> bytes:
    """The file's bytes, gunzipped if it ends in ``.gz``; unreadable, not a regular file or
    larger than ``MAX_BYTES[what]`` -> WorkloadError."""
    try:
        data = read_limited(name, MAX_BYTES.get(what, MAX_BYTES["workload"]), what,
                            gunzip=name.endswith(".gz"))
    except DiagnosticError as exc:
        found = exc.diagnostics[0]
        raise WorkloadError(name, None, None, found.message, help=found.help) from None
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:  # a damaged or unfinished .gz
        raise WorkloadError(name, None, None, f"cannot read the {what}: {exc}",
                            help="the file ends in .gz but is not a whole gzip stream: "
                            "check it with `gzip -t`, or rename it if it is not compressed"
                            ) from None
    except OSError as exc:  # missing, unreadable
        raise WorkloadError(name, None, None, f"cannot read the {what}: {exc}",
                            help="check the path and the file's permissions") from None
    # a UTF-8 byte-order mark (some spreadsheets write one) is no part of the first line
    return data[3:] if data.startswith(b"\xef\xbb\xbf") else data
