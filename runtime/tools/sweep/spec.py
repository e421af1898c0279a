"""A sweep spec (`schedc sweep SPEC.toml`) read with `tomllib` into frozen data, every
mistake a located diagnostic (file:line:col of the key or value, help, a did-you-mean for an
unknown key). Paths are relative to the spec's folder and resolved to absolute paths here,
so that workers on other hosts find the same files; `${VAR}` and `${VAR:-default}` in a path
are read from the environment (the shared traces: `${SCHEDC_TRACES:-../shared/traces}`);
a variable's relative path is relative to the current directory, a default's to the spec's.

What the spec's values mean (which runs they make) is `runs.py`'s job."""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attrs import frozen

from schedc.dsl.diagnostics import Diagnostic, DiagnosticError, did_you_mean, read_limited
from schedc.dsl.number_text import MAX_CAPACITY, MAX_DIGITS, MAX_VALUE, RANGE_HELP, range_problem
from schedc.runtime.tools.sweep.locate import Locator, Path_, Where

TOP_KEYS = ("out", "policies", "params", "workloads", "transforms", "seeds", "capacity",
            "lenient", "metrics", "run", "run_timeout")
# `[metrics]`: how every run is measured, as `run --bsld-tau/--warmup/--cooldown`
METRIC_KEYS = ("bsld_tau", "warmup", "cooldown")
TRANSFORMS = ("load_factor", "range_factor", "sigma", "resources", "speeds",
              "background_load", "limit", "overrun")
RUN_KEYS = ("policy", "workload", "params", "seed", *TRANSFORMS)
BUNDLED = "bundled"
# A sweep's runs at most: each is planned, keyed and listed in memory, its record read back
# for the tables (docs/reference/limits.md gives the time and memory of a sweep of the most)
MAX_RUNS = 100_000
MAX_SPEC_BYTES = 1 << 20  # a spec is a page of TOML
MAX_NESTING = 32  # arrays and inline tables in one another (tomllib recurses per level)
# A transform's values (docs/reference/limits.md): the scaled times and the tables' integers
# stay within what the engine and Parquet's int64 hold (`load_factor` scales times by 100 / it)
RANGES: dict[str, tuple[float, float]] = {"load_factor": (1, 10_000),
                                          "range_factor": (1, 1_000), "sigma": (0, 1_000),
                                          "background_load": (0, 1)}
MAX_RUN_TIMEOUT = 30 * 24 * 3600  # a run's timeout at most (seconds): a month
MAX_SEED = 2**63 - 1  # the tables' int64
Scalar = int | float | str | bool
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@frozen
class PolicyRef:
    text: str  # as written in the spec
    file: str  # absolute
    name: str | None  # FILE.pol:NAME's NAME
    where: Path_  # its place in the spec, for diagnostics


@frozen
class WorkloadRef:
    text: str  # as written
    file: str  # absolute (the bundled trace's path for `bundled`)
    where: Path_


@frozen
class Transforms:
    """One value of each transform (None: not applied)."""

    load_factor: float | None = None
    range_factor: float | None = None
    sigma: float | None = None
    resources: int | str | None = None
    speeds: str | None = None
    background_load: float | None = None
    limit: int | None = None
    overrun: str | None = None  # `--overrun`: None is the default mode

    def items(self) -> list[tuple[str, Scalar]]:
        return [(n, getattr(self, n)) for n in TRANSFORMS if getattr(self, n) is not None]


@frozen
class ExplicitRun:
    """A `[[run]]` table: one policy, one workload, one value of each param and transform."""

    index: int
    policy: PolicyRef
    workload: WorkloadRef
    params: tuple[tuple[str, Scalar], ...]
    transforms: Transforms
    seed: int | None  # None: every seed of `seeds`


@frozen
class Spec:
    file: str  # as given
    folder: str  # absolute: the spec's paths are relative to it
    out: str | None  # absolute, from the spec's `out` (None: not given)
    policies: tuple[PolicyRef, ...]
    params: tuple[tuple[str, tuple[Scalar, ...]], ...]
    workloads: tuple[WorkloadRef, ...]
    transforms: tuple[tuple[str, tuple[Scalar, ...]], ...]
    seeds: tuple[int, ...]
    capacities: tuple[tuple[str, int], ...]
    lenient: bool
    runs: tuple[ExplicitRun, ...]
    locator: Locator
    # `[metrics]` as written (bsld_tau, warmup, cooldown), each checked; () measures as `run`
    measure: tuple[tuple[str, Scalar], ...] = ()
    run_timeout: float | None = None  # seconds a run may take (None: `--run-timeout`'s default)


def read_spec(path: str) -> Spec:
    """The spec at ``path``; raises DiagnosticError with every mistake found."""
    from schedc.runtime.run import require_file

    require_file(path, "sweep spec")
    try:
        text = read_limited(path, MAX_SPEC_BYTES, "sweep spec").decode("utf-8")
    except UnicodeDecodeError:
        raise DiagnosticError([Diagnostic(f"`{path}` is not UTF-8 text", path,
                                          help="save the spec as UTF-8 TOML")]) from None
    except OSError as error:
        raise DiagnosticError([Diagnostic(f"cannot read `{path}`: {error.strerror}", path,
                                          help="check the path and its permissions")]) from None
    beyond = _beyond(path, text)
    if beyond is not None:
        raise DiagnosticError([beyond])
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise DiagnosticError([_syntax_error(path, text, error)]) from None
    except RecursionError:  # nesting `_too_deep` did not see (inside a multi-line string)
        raise DiagnosticError([Diagnostic(
            f"`{path}` nests too deep for the TOML reader", path,
            help="a spec lists values: flatten the nested lists")]) from None
    return _Reader(path, text).spec(data)


_LONG_NUMBER = re.compile(rf"[0-9][0-9_]{{{MAX_DIGITS},}}")


def _beyond(path: str, text: str) -> Diagnostic | None:
    """What tomllib would fail on without a place, found first: a number of more digits
    than schedc reads (`int` refuses past 4,300), arrays or tables nested deeper than
    MAX_NESTING (tomllib recurses per level)."""
    lines = text.splitlines()
    found = _LONG_NUMBER.search(text)
    if found is not None:
        line = text.count("\n", 0, found.start()) + 1
        col = found.start() - (text.rfind("\n", 0, found.start()) + 1) + 1
        return _at(path, lines, Where(line, col, col + len(found.group())),
                   f"a number of {len(found.group()):,} digits: schedc reads at most "
                   f"{MAX_DIGITS:,}", RANGE_HELP)
    deep = _too_deep(lines)
    if deep is not None:
        return _at(path, lines, deep, f"arrays and tables nest more than {MAX_NESTING} levels "
                   "deep here", "a spec lists values: flatten the nested lists")
    return None


def _at(path: str, lines: list[str], where: Where, message: str, help: str) -> Diagnostic:
    return Diagnostic(message, path, where.line, where.col, where.line, where.end_col,
                      help=help, source=lines[where.line - 1])


def _too_deep(lines: list[str]) -> Where | None:
    """The first `[` or `{` of a value nested past MAX_NESTING, strings and comments
    skipped (a multi-line string's inner lines are taken as text, good enough here)."""
    depth = 0
    for number, line in enumerate(lines, 1):
        quote = None
        for col, char in enumerate(line, 1):
            if quote is not None:
                if char == quote and (quote == "'" or line[col - 2:col - 1] != "\\"):
                    quote = None
            elif char in "\"'":
                quote = char
            elif char == "#":
                break
            elif char in "[{":
                depth += 1
                if depth > MAX_NESTING:
                    return Where(number, col, col + 1)
            elif char in "]}":
                depth = max(0, depth - 1)
    return None


def _syntax_error(path: str, text: str, error: tomllib.TOMLDecodeError) -> Diagnostic:
    message = str(error)
    found = re.search(r"\(at line (\d+), column (\d+)\)", message)
    help = "see docs/reference/formats/sweep-spec.md for the format"
    lines = text.splitlines()
    if found:
        line, col = int(found.group(1)), int(found.group(2))
    elif "(at end of document)" in message and lines:
        found = re.search(r"\(at end of document\)", message)
        line, col = len(lines), len(lines[-1]) + 1
    else:
        return Diagnostic(f"not valid TOML: {message}", path, help=help)
    source = lines[line - 1] if 0 < line <= len(lines) else ""
    return Diagnostic(f"not valid TOML: {message[:found.start()].strip()}", path, line, col,
                      line, col + 1, help=help, source=source)


class _Reader:
    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.folder = Path(path).resolve().parent
        self.at = _Locator(path, text)
        self.errors: list[Diagnostic] = []

    def fail(self, where: Path_, message: str, help: str | None = None,
             literal: object = None) -> None:
        self.errors.append(self.at.diagnostic(where, message, help, literal))

    def spec(self, data: Mapping[str, Any]) -> Spec:
        self.known(data, (), TOP_KEYS, "a spec's keys are")
        out = data.get("out")
        if out is not None and not (self.check_type(("out",), out, str, "a folder path")
                                    and self.no_nul(("out",), out)):
            out = None
        policies = tuple(p for i, v in enumerate(self.listed(data, "policies", str))
                         if (p := self.policy(("policies", i), v)) is not None)
        workloads = tuple(w for i, v in enumerate(self.listed(data, "workloads", str))
                          if (w := self.workload(("workloads", i), v)) is not None)
        params = self.table_of_lists(data, "params", None)
        transforms = self.table_of_lists(data, "transforms", TRANSFORMS)
        for name, values in transforms:
            for value in values:
                self.transform(("transforms", name), name, value)
        seeds = self.seeds(data.get("seeds", [0]))
        capacities = self.capacities(data.get("capacity", {}))
        lenient = data.get("lenient", False)
        if not self.check_type(("lenient",), lenient, bool, "true or false"):
            lenient = False
        measure = self.measure(data.get("metrics", {}))
        run_timeout = self.run_timeout(data.get("run_timeout"))
        runs = self.explicit_runs(data.get("run", []))
        if not policies and not runs and not self.errors:
            self.fail(("policies",), "the spec runs nothing: it has no `policies` and no [[run]]",
                      help='add policies = ["../easy.pol"], or a [[run]] table')
        if policies and not workloads and "workloads" not in data:
            workloads = (WorkloadRef(BUNDLED, _bundled(), ("workloads",)),)
        if self.errors:
            raise DiagnosticError(self.errors)
        return Spec(self.path, str(self.folder), self.resolve(out, ("out",), out) if out else None,
                    policies,
                    params, workloads, transforms, seeds, capacities, lenient, runs, self.at,
                    measure, run_timeout)

    # --- shapes -------------------------------------------------------------------------

    def known(self, table: Mapping[str, Any], where: Path_, keys: tuple[str, ...],
              listing: str) -> None:
        for key in table:
            if key not in keys:
                self.fail((*where, key), f"unknown key `{key}`",
                          help=did_you_mean(key, keys) or f"{listing}: {', '.join(keys)}")

    def check_type(self, where: Path_, value: object, kind: type | tuple[type, ...],
                   shown: str) -> bool:
        wrong = not isinstance(value, kind) or (isinstance(value, bool) and bool not in (
            kind if isinstance(kind, tuple) else (kind,)))
        if wrong:
            self.fail(where, f"`{'.'.join(map(str, where))}` must be {shown}, "
                      f"not {_toml_type(value)}", literal=value if _scalar(value) else None,
                      help="see docs/reference/formats/sweep-spec.md for the format")
        return not wrong

    def listed(self, data: Mapping[str, Any], key: str, kind: type) -> list[Any]:
        """A list of values of ``kind`` (one value alone is a list of one)."""
        value = data.get(key, [])
        values = value if isinstance(value, list) else [value]
        shown = {str: "strings", int: "whole numbers"}[kind]
        return [v for v in values
                if self.check_type((key,), v, kind, f"a list of {shown}")]

    def table_of_lists(self, data: Mapping[str, Any], key: str,
                       names: tuple[str, ...] | None) -> tuple[tuple[str, tuple[Scalar, ...]], ...]:
        table = data.get(key, {})
        if not self.check_type((key,), table, dict, "a table (name = [values])"):
            return ()
        if names is not None:
            self.known(table, (key,), names, f"the {key} are")
        out = []
        for name, value in table.items():
            if names is not None and name not in names:
                continue
            if names is None and not _NAME.fullmatch(name):
                self.fail((key, name), f"`{name}` is not a param name",
                          help="a param name is a letter or _ then letters, digits or _")
                continue
            values = value if isinstance(value, list) else [value]
            if not values:
                self.fail((key, name), f"`{key}.{name}` lists no value",
                          help=f"give at least one, e.g. {name} = [1, 2]")
                continue
            good = [v for v in values if self.check_type(
                (key, name), v, (int, float, str, bool), "a value or a list of values")]
            if len(good) == len(values):
                out.append((name, _distinct(values)))  # a repeat would repeat runs
        return tuple(out)

    # --- values -------------------------------------------------------------------------

    def no_nul(self, where: Path_, text: str) -> bool:
        """Whether ``text`` (a path) has no NUL character, which no file's path holds."""
        if "\0" not in text:
            return True
        self.fail(where, "a path cannot contain a NUL character", literal=text,
                  help="write the path without the \\u0000 escape")
        return False

    def resolve(self, text: str, where: Path_ = ("out",), literal: str | None = None
                ) -> str | None:
        """``text`` as an absolute path, links resolved; None (an error at ``where``) for a
        link loop."""
        try:
            return str((self.folder / text).resolve()) if text else str(self.folder)
        except (RuntimeError, OSError) as error:  # "Symlink loop from ..." (ELOOP)
            why = getattr(error, "strerror", None) or error
            self.fail(where, f"cannot resolve `{text}`: {why}", literal=literal,
                      help="a symbolic link on the path points back at itself: fix or remove it")
            return None

    def expand(self, where: Path_, text: str) -> tuple[str, list[str]] | None:
        """``text`` with `${VAR}` and `${VAR:-default}` read from the environment, and the
        names of the variables it used (None: a variable unset with no default)."""
        used: list[str] = []
        missing: list[str] = []

        def value(m: re.Match[str]) -> str:
            used.append(m.group(1))
            got = os.environ.get(m.group(1))
            if got:  # a folder the user named from where they run: the current directory
                return os.path.abspath(got)
            if m.group(2) is None:
                missing.append(m.group(1))
                return ""
            return m.group(2)

        expanded = _VAR.sub(value, text)
        if missing:
            self.fail(where, f"`{text}`: the environment variable {missing[0]} is not set",
                      literal=text, help=f"set {missing[0]}, or write "
                      f"${{{missing[0]}:-DEFAULT}} to give a default")
            return None
        return expanded, used

    def policy(self, where: Path_, text: str) -> PolicyRef | None:
        got = self.expand(where, text)
        if got is None or not self.no_nul(where, got[0]):
            return None
        expanded, _ = got
        file, sep, name = expanded.rpartition(":")
        if not (sep and _NAME.fullmatch(name) and not (self.folder / expanded).exists()):
            file, name = expanded, None
        path = self.resolve(file, where, text)
        if path is None:
            return None
        if not Path(path).is_file():
            self.fail(where, f"policy file not found: {file} (looked for {path})", literal=text,
                      help="paths in a spec are relative to the spec's folder; name one "
                      "policy of a file as FILE.pol:NAME")
            return None
        return PolicyRef(text, path, name, where)

    def workload(self, where: Path_, text: str) -> WorkloadRef | None:
        if text == BUNDLED:
            return WorkloadRef(text, _bundled(), where)
        got = self.expand(where, text)
        if got is None or not self.no_nul(where, got[0]):
            return None
        expanded, used = got
        path = self.resolve(expanded, where, text)
        if path is None:
            return None
        if not Path(path).is_file():
            help = ("paths in a spec are relative to the spec's folder; `bundled` is the "
                    "bundled KTH-SP2 trace")
            if used:
                help = (f"set {used[0]} to the folder that holds it (now "
                        f"{os.environ.get(used[0]) or 'unset: the default is used'})")
            self.fail(where, f"workload file not found: {expanded} (looked for {path})",
                      literal=text, help=help)
            return None
        return WorkloadRef(text, path, where)

    def transform(self, where: Path_, name: str, value: object) -> Scalar | None:
        """One transform value checked (its range; combinations are `runs.py`'s)."""
        if name in ("speeds",):
            if not self.check_type(where, value, str, 'a string of COUNTxBPU groups, e.g. '
                                   '"32x1,32x2"'):
                return None
            from schedc.runtime.engine.cluster import ClusterError, parse_speeds
            from schedc.runtime.workloads.workload import speeds_problem

            problem = speeds_problem(value)  # type: ignore[arg-type]
            if problem is not None:
                self.fail(where, problem, help="e.g. speeds = [\"32x1,32x2\"]", literal=value)
                return None
            try:
                parse_speeds(value)  # type: ignore[arg-type]
            except ClusterError as error:
                self.fail(where, f"speeds {value!r}: {error}", help=error.help, literal=value)
                return None
            return value  # type: ignore[return-value]
        if name == "resources":
            if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
                return value
            if isinstance(value, str) and value.strip():
                return value
            self.fail(where, f"resources {value!r}: give a number of resources (>= 1) or "
                      "names", literal=value, help='e.g. resources = [2, 4] or '
                      'resources = ["cpus,memory"]')
            return None
        if name == "overrun":
            from schedc.runtime.workloads.overrun import MODES

            if isinstance(value, str) and value in MODES:
                return value
            self.fail(where, f"overrun {value!r}: must be one of {', '.join(MODES)}",
                      literal=value, help=did_you_mean(str(value), MODES) or
                      'e.g. overrun = ["kill", "estimate"]')
            return None
        if name == "limit":
            if isinstance(value, int) and not isinstance(value, bool) and value > MAX_VALUE:
                self.fail(where, range_problem(value, 1, MAX_VALUE, "limit"), literal=value,
                          help="the runs keep the workload's first N jobs")
                return None
            if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
                return value
            self.fail(where, f"limit {value!r}: must be a whole number of jobs >= 1",
                      literal=value, help="the runs keep the workload's first N jobs")
            return None
        low, strict = {"load_factor": (0, True), "range_factor": (1, False),
                       "sigma": (0, False), "background_load": (0, False)}[name]
        if (isinstance(value, int | float) and not isinstance(value, bool)
                and (value > low if strict else value >= low) and value == value
                and value != float("inf")):
            return value if self.in_range(where, name, value) else None
        self.fail(where, f"{name} {value!r}: must be a number {'>' if strict else '>='} {low}",
                  literal=value, help={"load_factor": "percent of the trace's load, e.g. 120",
                                       "range_factor": "papers/000's RF, e.g. 2",
                                       "sigma": "Downey's sigma, e.g. 1",
                                       "background_load": "the largest background load, e.g. "
                                       "0.5"}[name])
        return None

    def in_range(self, where: Path_, name: str, value: float) -> bool:
        """Whether a transform's number lies in ``RANGES`` (else an error at it)."""
        low, high = RANGES[name]
        if low <= value <= high:
            return True
        self.fail(where, f"{name} {value!r}: outside the supported range [{low:g}, {high:g}]",
                  literal=value, help="the scaled times and the tables' integers stay within "
                  "what schedc holds (docs/reference/limits.md)")
        return False

    def run_timeout(self, value: object) -> float | None:
        """The spec's `run_timeout`: seconds, a positive number at most MAX_RUN_TIMEOUT."""
        if value is None or not self.check_type(("run_timeout",), value, (int, float),
                                                "a number of seconds"):
            return None
        if 0 < value <= MAX_RUN_TIMEOUT:
            return float(value)
        self.fail(("run_timeout",), f"run_timeout = {value!r}: give a positive number of "
                  f"seconds, at most {MAX_RUN_TIMEOUT:,}", literal=value,
                  help="the seconds one run may take before it is recorded failed, "
                  "e.g. run_timeout = 3600")
        return None

    def seeds(self, value: object) -> tuple[int, ...]:
        if isinstance(value, int) and not isinstance(value, bool):
            if value > MAX_RUNS:
                self.fail(("seeds",), f"seeds = {value}: a sweep makes at most {MAX_RUNS:,} "
                          "runs", literal=value, help="split the seeds among several sweeps "
                          "(seeds = [..] lists them)")
                return (0,)
            if value >= 1:
                return tuple(range(value))
            self.fail(("seeds",), f"seeds = {value}: a count of seeds must be at least 1",
                      literal=value, help="seeds = 5 runs seeds 0..4; or list them")
            return (0,)
        values = value if isinstance(value, list) else [value]
        good = [v for v in values if self.check_type(
            ("seeds",), v, int, "a count or a list of whole numbers")]
        if not values:
            self.fail(("seeds",), "`seeds` lists no seed", help="e.g. seeds = [0, 1, 2]")
        for v in good:
            if not -MAX_SEED - 1 <= v <= MAX_SEED:
                self.fail(("seeds",), range_problem(v, -MAX_SEED - 1, MAX_SEED, "a seed"),
                          literal=v, help="a seed is a 64-bit integer, as the tables hold it")
        return tuple(dict.fromkeys(good)) or (0,)

    def measure(self, value: object) -> tuple[tuple[str, Scalar], ...]:
        """`[metrics]`: bsld_tau (seconds, or a duration text), warmup and cooldown (a
        number of jobs, or a duration text), read as the run flags read them."""
        from schedc.runtime.results.metrics import parse_cut, parse_tau

        if not self.check_type(("metrics",), value, dict, "a table (bsld_tau, warmup, "
                               "cooldown)"):
            return ()
        self.known(value, ("metrics",), METRIC_KEYS, "`[metrics]` keys are")  # type: ignore[arg-type]
        out = []
        for name in METRIC_KEYS:
            given = value.get(name)  # type: ignore[union-attr]
            if given is None:
                continue
            parse = parse_tau if name == "bsld_tau" else parse_cut
            try:
                if isinstance(given, bool) or not isinstance(given, int | float | str):
                    raise ValueError(f"{given!r} is not a number or a duration")
                parse(str(given))
            except ValueError as error:
                self.fail(("metrics", name), f"metrics.{name}: {error}", literal=given,
                          help={"bsld_tau": "seconds, e.g. 10 or \"1min\"",
                                "warmup": "jobs, e.g. 1000, or a duration, e.g. \"2d\"",
                                "cooldown": "jobs, e.g. 1000, or a duration, e.g. \"2d\""
                                }[name])
                continue
            out.append((name, given))
        return tuple(out)

    def capacities(self, value: object) -> tuple[tuple[str, int], ...]:
        if not self.check_type(("capacity",), value, dict, "a table (resource = capacity)"):
            return ()
        out = []
        for name, cap in value.items():  # type: ignore[union-attr]
            if isinstance(cap, int) and not isinstance(cap, bool) and 1 <= cap <= MAX_CAPACITY:
                out.append((name, cap))
            elif isinstance(cap, int) and not isinstance(cap, bool) and cap > MAX_CAPACITY:
                self.fail(("capacity", name), range_problem(cap, 1, MAX_CAPACITY,
                                                            f"capacity {name}"),
                          literal=cap, help="schedc holds capacities from 1 to 10^15")
            else:
                self.fail(("capacity", name), f"capacity {name} = {cap!r}: must be a whole "
                          "number >= 1", literal=cap, help="e.g. cpus = 128")
        return tuple(sorted(out))

    def explicit_runs(self, value: object) -> tuple[ExplicitRun, ...]:
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            self.fail(("run",), "`run` must be [[run]] tables",
                      help='write [[run]] then policy = "...", one table per run')
            return ()
        runs = []
        for i, table in enumerate(value):
            where: Path_ = ("run", i)
            self.known(table, where, RUN_KEYS, "a [[run]]'s keys are")
            if "policy" not in table:
                self.fail(where, "this [[run]] names no policy",
                          help='add policy = "FILE.pol" (or "FILE.pol:NAME")')
                continue
            if not self.check_type((*where, "policy"), table["policy"], str, "a path"):
                continue
            policy = self.policy((*where, "policy"), table["policy"])
            text = table.get("workload", BUNDLED)
            workload = (self.workload((*where, "workload"), text)
                        if self.check_type((*where, "workload"), text, str, "a path") else None)
            params = table.get("params", {})
            if not self.check_type((*where, "params"), params, dict, "a table (name = value)"):
                params = {}
            for name, v in params.items():
                self.check_type((*where, "params", name), v, (int, float, str, bool),
                                "one value")
            values = {n: self.transform((*where, n), n, table[n])
                      for n in TRANSFORMS if n in table}
            seed = table.get("seed")
            if seed is not None and not self.check_type((*where, "seed"), seed, int,
                                                        "a whole number"):
                seed = None
            if policy is None or workload is None or any(v is None for v in values.values()):
                continue
            runs.append(ExplicitRun(i, policy, workload, tuple(params.items()),
                                    Transforms(**values), seed))  # type: ignore[arg-type]
        return tuple(runs)


def _distinct(values: list[Scalar]) -> tuple[Scalar, ...]:
    """The values without repeats, in order; `1`, `1.0` and `true` stay apart (Python holds
    them equal), so that each is checked as written."""
    return tuple({(type(v), v): v for v in values}.values())


class _Locator(Locator):
    """A spec's locator that always gives a place: a dotted key's first part (`foo.bar = 1`
    registers only `foo.bar`) is at the dotted key, and what has no place at all (an empty
    spec) is at the first line."""

    def key(self, path: Path_) -> Where | None:
        found = super().key(path)
        if found is None and path:
            found = next((w for p, w in sorted(self._keys.items(), key=lambda kv: (
                kv[1].line, kv[1].col)) if p[:len(path)] == path), None)
        return found or Where(1, 1, 1 + max(1, len(self.lines[0]) if self.lines else 1))

    def diagnostic(self, path: Path_, message: str, help: str | None = None,
                   literal: object = None) -> Diagnostic:
        if not self.lines:  # an empty file: no line to show
            return Diagnostic(message, self.file, 1, 1, 1, 2, help=help, source="")
        return super().diagnostic(path, message, help, literal)


def _bundled() -> str:
    from schedc.runtime.run import bundled_trace

    return str(bundled_trace())


def _scalar(value: object) -> bool:
    return isinstance(value, int | float | str | bool)


def _toml_type(value: object) -> str:
    return {bool: "a boolean", int: "a whole number", float: "a number", str: "a string",
            list: "a list", dict: "a table"}.get(type(value), type(value).__name__)
