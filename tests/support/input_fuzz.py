"""Bad inputs by mutation: policies, workloads and state files damaged at random, each run
through the CLI in process. Every run must end in a success, a violation or a located user
error (exit 0, 1 or 2), never an internal error (70) or an exception.

Used by tests/test_bad_inputs.py (a short campaign) and benchmarks/fuzz_inputs.py (long
ones). Deterministic for a seed.
"""

from __future__ import annotations

import contextlib
import copy
import gzip
import io
import json
import os
import random
import re
import traceback
from collections.abc import Iterator
from pathlib import Path

from attrs import frozen

from schedc.runtime.cli.main import main

# Tokens a mutation inserts: the language's own, and values at or past its limits.
POLICY_TOKENS = (
    "(", ")", "{", "}", "[", "]", ",", ":", ".", "=", "+", "-", "*", "/", "div", "%", "^", "==",
    "<", ">=", "!=", "and", "or", "not", "if", "then", "else", "job", "procs", "estimate",
    "submit", "wait", "xfactor", "user", "queue", "group", "running", "sum", "count", "avg",
    "min", "max", "sqrt", "log", "ceil", "floor", "abs", "j", "in", "where", "reserve", "all",
    "per", "or when", "backfill", "best", "by", "first_fit", "none", "when", "size", "choose",
    "fixed", "policy", "param", "def", "machine", "resource", "import", '"x.pol"', '"\0"',
    "invariant", "order", "asc", "desc", "extends", "now", "free", "capacity", "cpus", "memory",
    "util", "int", "real", "bool", "true", "false", "request", "elapsed", "remaining", "end",
    "start", "min_size", "max_size", "work", "area", "id", "0", "-1", "1e400", "1.5", "0.0",
    "1d", "99999999999999999999999", "1/0", "\u00e9", "\0", "\t", "\n", "//", "/*", "\ufeff",
)
# Values a workload or state mutation writes into a field.
FIELD_VALUES = (
    "", "-1", "0", "1e400", "nan", "inf", "-0", "1.5", "x", "99999999999999999999999", "\0",
    "\u00e9", ",", ";", "\t", " ", "#", "-9223372036854775809", "1_000", "0x10", "+3",
    "\u0661\u0662",
)
HEADER_LINES = ("", "; MaxProcs: -3", "; MaxProcs: 0", "; MaxProcs: x", "# capacity cpus=0",
                "# capacity", "# capacity cpus=x", "; Note: \u00e9", "\ufeff1 2 3")
STATE_VALUES = (None, True, False, -1, 0, 1, 2**70, 1.5, "x", "", [], {}, [1], {"cpus": "x"},
                1e308)
_DELETE = object()  # a mutation's value that removes the key instead
STATE_KEYS = ("now", "capacity", "running", "queue", "arrivals", "id", "submit", "estimate",
              "run_time", "request", "start", "min_size", "max_size", "cpus", "memory", "x",
              "params", "active", "size", "user", "group")

SWF = "; MaxProcs: 8\n" + "".join(
    f"{i} {i * 10} -1 {50 + i * 7} {1 + i % 8} -1 -1 {1 + i % 8} {60 + i * 9} -1 1 {i % 3} 1 1 1"
    " -1 -1 -1\n" for i in range(1, 30))
CSV = ("# time-unit 1/100 s\n# capacity cpus=8 memory=64\n"
       "id,submit,run_time,estimate,cpus,memory,user,queue\n" + "".join(
           f"{i},{i * 10},{50 + i * 7},{60 + i * 9},{1 + i % 8},{i % 64},u{i % 3},{i % 2}\n"
           for i in range(1, 20)))


# A log of a preemptive machine (`; Preemption: Double`): jobs 2 and 4 have a summary line
# and their parts (status 2, then 3 or 4), job 5 its parts only; fields 2-5 and 11 of a
# part are what a mutation of ``parts_campaign`` damages
PARTS_SWF = "; MaxProcs: 8\n; Preemption: Double\n" + "".join(
    f"{j} {s} {w} {r} {p} -1 -1 {p} 200 -1 {st} 1 1 1 1 -1 -1 -1\n" for j, s, w, r, p, st in (
        (1, 0, 0, 50, 4, 1), (2, 5, 0, 90, 4, 1), (2, 5, 0, 40, 4, 2), (2, 5, 60, 50, 2, 3),
        (3, 8, 2, 30, 2, 1), (4, 9, 1, 60, 8, 0), (4, 9, 1, 20, 8, 2), (4, 9, 40, 40, 8, 4),
        (5, 12, 0, 10, 1, 2), (5, 12, 15, 10, 1, 2), (5, 12, 30, 5, 1, 3)))
PART_FIELDS = (1, 2, 3, 4, 7, 10)  # submit, wait, run, procs, requested procs, status
PART_VALUES = ("-10", "-5", "-1", "0", "1", "2", "3", "4", "5", "12", "99", "1000000",
               "1000000000000001", "x")
# Preemptive settings at and past their ranges (issue 44), the params that put them there,
# and values bound at `run`
SETTING_LINES = (
    "limit preemptions -lim", "limit preemptions lim - 2", "limit preemptions 0",
    "limit preemptions -3", "limit preemptions lim", "resident -lim", "resident 0",
    "resident -1", "resident lim", "quantum -5", "quantum 0", "quantum lim",
    "quantum 1000000000000001", "subset 0", "subset lim - 1", "cost dispatch 1e308",
    "cost checkpoint 1e308", "cost dispatch 1e16", "cost resume c", "cost resume -1",
    "cost dispatch job.estimate * 1e300", "cost checkpoint job.procs * c",
)  # (a cost just within 10^15 s beside a `quantum` makes ~10^12 timed passes: no bound yet)
SETTING_PARAMS = ("param lim: int in [1, 10] = 3\n", "param lim: int = 3\n",
                  "param lim: int in [-2, 2] = 0\n", "param lim: int in [0, 100000] = 5\n")
SETTING_VALUES = ("lim=-1", "lim=0", "lim=1", "lim=99999999999999999999", "c=1e300",
                  "c=-1", "c=1/3", "c=2e15", "c=10")
_SETTING = re.compile(r"^\s*(limit|resident|quantum|subset|cost\s+\w+)\b.*$", re.M)


def _state_job(jid: int, submit: int, procs: int, est: int, **extra) -> dict:
    return {"id": jid, "submit": submit, "estimate": est, "run_time": est,
            "request": {"cpus": procs}, **extra}


STATE = {"now": 2, "capacity": {"cpus": 10}, "running": [_state_job(1, 0, 6, 100, start=0)],
         "queue": [_state_job(2, 1, 10, 100), _state_job(3, 2, 4, 1000),
                   _state_job(4, 2, 3, 50, min_size=1, max_size=8)]}
RUN_OPTIONS = (
    (), ("--lenient",), ("--capacity", "cpus=4"), ("--capacity", "cpus=0"),
    ("--capacity", "memory=5"), ("--range-factor", "2"), ("--load-factor", "150"),
    ("--sigma", "1"), ("--resources", "cpus,memory"), ("--param", "depth=-1"),
    ("--param", "depth=x"), ("--param", "nope=1"), ("--load-factor", "0"),
    ("--range-factor", "0.5"), ("--json",), ("--param", "depth=1d"), ("--param", "depth=1/2"),
    ("--vary", "depth=0,2"), ("--vary", "depth="), ("--vary", "nope=1,2"), ("--jobs-out", "-"),
)


@frozen
class Outcome:
    argv: tuple[str, ...]
    code: int | str | None
    stderr: str
    error: str | None  # the traceback of an exception that escaped main, else None

    @property
    def bad(self) -> bool:
        """An escaped exception, an internal error, or a user error with no message."""
        return (self.error is not None or self.code not in (0, 1, 2)
                or (self.code == 2 and "error" not in self.stderr))


def run_cli(argv: list[str]) -> Outcome:
    out, err = io.StringIO(), io.StringIO()
    previous = os.environ.get("SCHEDC_DEBUG")
    os.environ["SCHEDC_DEBUG"] = "1"  # an internal error raises: its traceback is the report
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exit_:
                code = exit_.code
    except Exception:
        return Outcome(tuple(argv), None, err.getvalue(), traceback.format_exc())
    finally:
        if previous is None:
            del os.environ["SCHEDC_DEBUG"]
        else:
            os.environ["SCHEDC_DEBUG"] = previous
    return Outcome(tuple(argv), code, err.getvalue(), None)


def mutate_policy(text: str, rng: random.Random) -> str:
    tokens = re.findall(r"\s+|\w+|[^\w\s]", text)
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(tokens) + 1)
        roll = rng.random()
        if roll < 0.35 and tokens:
            del tokens[min(at, len(tokens) - 1)]
        elif roll < 0.7 or not tokens:
            tokens.insert(at, f" {rng.choice(POLICY_TOKENS)} ")
        else:
            tokens[min(at, len(tokens) - 1)] = f" {rng.choice(POLICY_TOKENS)} "
    return "".join(tokens)


def mutate_table(text: str, rng: random.Random, sep: str) -> str:
    lines = text.split("\n")
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(lines))
        fields = lines[at].split(sep)
        roll = rng.random()
        if roll < 0.5:
            fields[rng.randrange(len(fields))] = rng.choice(FIELD_VALUES)
        elif roll < 0.65:
            fields = fields[:rng.randrange(len(fields) + 1)]
        elif roll < 0.8:
            fields.append(rng.choice(FIELD_VALUES))
        if roll < 0.8:
            lines[at] = sep.join(fields)
        elif roll < 0.9:
            lines.insert(at, rng.choice(lines))
        else:
            lines[at] = rng.choice(HEADER_LINES)
    return "\n".join(lines)


def _paths(value, path=()) -> Iterator[tuple]:
    yield path
    items = (value.items() if isinstance(value, dict)
             else enumerate(value) if isinstance(value, list) else ())
    for key, child in items:
        yield from _paths(child, (*path, key))


def edit_tree(data, rng: random.Random, pick, keys: tuple[str, ...], set_below: float,
              delete_below: float) -> None:
    """One random edit at a random place of nested dicts and lists: the value there replaced
    by ``pick()`` (removed if that is ``_DELETE``), or removed, or a key of ``keys`` added
    beside it, or a list's element repeated."""
    path = rng.choice([p for p in _paths(data) if p])
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    roll = rng.random()
    if roll < set_below:
        value = pick()
        if value is _DELETE:
            del parent[path[-1]]
        else:
            parent[path[-1]] = value
    elif roll < delete_below:
        del parent[path[-1]]
    elif isinstance(parent, dict):
        value = pick()
        if value is not _DELETE:
            parent[rng.choice(keys)] = value
    elif parent:
        parent.append(copy.deepcopy(rng.choice(parent)))


def mutate_state(rng: random.Random) -> str:
    data = copy.deepcopy(STATE)
    for _ in range(rng.randint(1, 3)):
        edit_tree(data, rng, lambda: copy.deepcopy(rng.choice(STATE_VALUES)), STATE_KEYS,
                  0.5, 0.7)
    text = json.dumps(data)
    return text if rng.random() < 0.9 else text[:rng.randrange(len(text))]


def policy_campaign(examples: list[Path], folder: Path, runs: int, seed: int) -> Iterator[Outcome]:
    """Damaged copies of the examples, each checked and, if it checks, run."""
    rng = random.Random(seed)
    sources = [(p, p.read_text()) for p in examples]
    trace = folder / "t.swf"
    trace.write_text(SWF)
    for n in range(runs):
        origin, text = rng.choice(sources)
        policy = folder / f"p{n}.pol"
        policy.write_text(mutate_policy(text, rng))
        checked = run_cli(["check", str(policy)])
        yield checked
        if checked.code == 0:
            yield run_cli(["run", str(policy), "--workload", str(trace)])


def workload_campaign(policies: list[Path], folder: Path, runs: int,
                      seed: int) -> Iterator[Outcome]:
    """Damaged SWF, gzipped SWF (some cut short) and CSV tables, run with random options."""
    rng = random.Random(seed)
    for n in range(runs):
        kind = rng.choice(["swf", "csv", "gz"])
        if kind == "csv":
            workload = folder / f"w{n}.csv"
            workload.write_text(mutate_table(CSV, rng, ","))
        elif kind == "swf":
            workload = folder / f"w{n}.swf"
            workload.write_text(mutate_table(SWF, rng, " "))
        else:
            workload = folder / f"w{n}.swf.gz"
            data = gzip.compress(mutate_table(SWF, rng, " ").encode())
            workload.write_bytes(data if rng.random() < 0.7 else data[:rng.randrange(len(data))])
        argv = ["run", str(rng.choice(policies)), "--workload", str(workload),
                *rng.choice(RUN_OPTIONS), *rng.choice(RUN_OPTIONS)]
        if rng.random() < 0.3:
            argv[0] = "compare"
            argv.insert(2, str(rng.choice(policies)) + rng.choice(("", ":easy", ":nope", ":")))
        yield run_cli(argv)


def mutate_setting(text: str, rng: random.Random) -> str:
    """A preemptive policy with a setting of ``SETTING_LINES`` in place of its own of that
    kind (a clause given twice is another error), and the params it may read."""
    line = rng.choice(SETTING_LINES)
    kind = " ".join(line.split()[:2]) if line.startswith("cost") else line.split()[0]
    text = _SETTING.sub(lambda m: "" if m.group(1).split() == kind.split() else m.group(0),
                        text)
    end = text.rindex("}")
    return (rng.choice(SETTING_PARAMS) + "param c: real = 5\n" + text[:end]
            + f"  {line}\n" + text[end:])


def preemptive_campaign(examples: list[Path], folder: Path, runs: int,
                        seed: int) -> Iterator[Outcome]:
    """Preemptive examples with settings out of range (over their params' domains, or for
    the values bound): each checked and, if it checks, run on a small trace with params
    that may put a setting out of range."""
    rng = random.Random(seed)
    sources = [p.read_text() for p in examples]
    trace = folder / "t.swf"
    trace.write_text(SWF)
    for n in range(runs):
        policy = folder / f"s{n}.pol"
        policy.write_text(mutate_setting(rng.choice(sources), rng))
        checked = run_cli(["check", str(policy)])
        yield checked
        if checked.code == 0:
            argv = ["run", str(policy), "--workload", str(trace)]
            for _ in range(rng.randint(0, 2)):
                argv += ["--param", rng.choice(SETTING_VALUES)]
            yield run_cli(argv)


def mutate_parts(rng: random.Random) -> str:
    """``PARTS_SWF`` with fields of its parts (and summaries) damaged, lines repeated or
    dropped, or its `; Preemption: Double` header gone."""
    lines = PARTS_SWF.split("\n")
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(2, len(lines) - 1)
        roll = rng.random()
        if roll < 0.75:
            fields = lines[at].split(" ")
            fields[rng.choice(PART_FIELDS)] = rng.choice(PART_VALUES)
            lines[at] = " ".join(fields)
        elif roll < 0.85:
            lines.insert(at, lines[rng.randrange(2, len(lines) - 1)])
        elif roll < 0.95:
            del lines[at]
        else:
            lines[1] = rng.choice(("", "; Preemption: Yes", "; Preemption: No"))
    return "\n".join(lines)


def parts_campaign(policies: list[Path], folder: Path, runs: int,
                   seed: int) -> Iterator[Outcome]:
    """Damaged partial executions, read by `workload info` or run, sometimes --lenient."""
    rng = random.Random(seed)
    for n in range(runs):
        workload = folder / f"parts{n}.swf"
        workload.write_text(mutate_parts(rng))
        lenient = ["--lenient"] if rng.random() < 0.3 else []
        if rng.random() < 0.5:
            yield run_cli(["workload", "info", str(workload), *lenient])
        else:
            yield run_cli(["run", str(rng.choice(policies)), "--workload", str(workload),
                           *lenient])


OPTIMAL_OPTIONS = ((), ("--metric", "sldwa"), ("--plan",), ("--json",), ("--workers", "1"),
                   ("--time-limit", "0"), ("--time-limit", "-1"), ("--time-limit", "nan"),
                   ("--workers", "0"), ("--param", "depth=1"), ("--lenient",))


def state_campaign(policies: list[Path], folder: Path, runs: int, seed: int,
                   optimal: float = 0.0) -> Iterator[Outcome]:
    """Damaged state files (values, keys, structure, cut short) replayed by `run --state`,
    and a share ``optimal`` of them solved by `optimal --state` (1 s at most)."""
    rng = random.Random(seed)
    for n in range(runs):
        state = folder / f"s{n}.json"
        state.write_text(mutate_state(rng))
        if rng.random() < optimal:
            yield run_cli(["optimal", str(rng.choice(policies)), "--state", str(state),
                           "--time-limit", "1", *rng.choice(OPTIMAL_OPTIONS)])
        else:
            yield run_cli(["run", str(rng.choice(policies)), "--state", str(state)])


# --- sweep specs ---------------------------------------------------------------------------

# Values a sweep spec mutation writes (_DELETE: the key is removed).
SPEC_VALUES = (
    _DELETE, True, False, -1, 0, 1, 3, 2**63 - 1, -(2**63), 1.5, -0.0, 1e300, float("nan"),
    float("inf"), "", "x", "bundled", "t.swf", "nope.swf", "${NOPE}", "${NOPE:-t.swf}",
    "${HOME}", "\u00e9", "a\0b", "p.pol:nope", "p.pol:", ":", "1d", "cpus=4", "cpus=0",
    "4x1,4x2", "0x1", "cpus,memory", [], [[]], [1, "x"], [0, 2], ["t.swf", "t.swf"], {},
    {"x": 1}, {"depth": [0, 1]}, [{"policy": "p.pol"}],
)
SPEC_KEYS = ("out", "policies", "params", "workloads", "transforms", "seeds", "capacity",
             "lenient", "run", "policy", "workload", "seed", "load_factor", "range_factor",
             "sigma", "resources", "speeds", "background_load", "limit", "depth", "x")
# What a text mutation inserts into a spec's TOML
TOML_TOKENS = ("[", "]", "[[", "]]", "=", '"', "'", "'''", '"""', ",", "{", "}", "#", "\n",
               "[run]", "[[run]]", "[params]", "[transforms]", "x = 1", "seeds = 2",
               "limit = [5]", "\\", "\\u0000", "\t", "\ufeff", "1_0", "0x1", "1979-05-27",
               "nan", "inf", "true")
SWEEP_OPTIONS = ((),) * 12 + (("--retry-failed",), ("--workers", "0"), ("--workers", "1"),
                              ("--workers", "1", "--scheduler", "tcp://127.0.0.1:1"))


def _spec_base(policy: Path) -> dict:
    return {"policies": [str(policy), "p.pol"], "workloads": ["t.swf", "bundled"],
            "seeds": 2, "params": {"depth": [0, 1]},
            "transforms": {"limit": [12], "load_factor": [100, 130]},
            "run": [{"policy": "f.pol", "workload": "t.swf", "limit": 8,
                     "speeds": "4x1,4x2", "background_load": 0.5, "seed": 3}]}


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return "nan"
        if value in (float("inf"), float("-inf")):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string: JSON's escapes are TOML's
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"


def to_toml(data: dict) -> str:
    """A TOML text of ``data``: scalars and arrays first, then tables, then arrays of tables."""
    def table_array(v) -> bool:
        return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)

    lines = [f"{json.dumps(k)} = {_toml_value(v)}" for k, v in data.items()
             if not isinstance(v, dict) and not table_array(v)]
    for k, v in data.items():
        if isinstance(v, dict):
            lines.append(f"[{json.dumps(k)}]")
            lines += [f"{json.dumps(kk)} = {_toml_value(vv)}" for kk, vv in v.items()]
    for k, v in data.items():
        if table_array(v):
            for item in v:
                lines.append(f"[[{json.dumps(k)}]]")
                lines += [f"{json.dumps(kk)} = {_toml_value(vv)}" for kk, vv in item.items()]
    return "\n".join(lines) + "\n"


def mutate_spec(policy: Path, rng: random.Random) -> str:
    """A sweep spec with values, keys or structure changed, then, sometimes, its text."""
    data = _spec_base(policy)

    def pick():
        value = rng.choice(SPEC_VALUES)
        return value if value is _DELETE else copy.deepcopy(value)

    for _ in range(rng.randint(0, 2)):
        edit_tree(data, rng, pick, SPEC_KEYS, 0.6, 0.6)
    text = to_toml(data)
    if rng.random() < 0.3:
        tokens = re.findall(r"\s+|\w+|[^\w\s]", text)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(tokens) + 1)
            if rng.random() < 0.4 and tokens:
                del tokens[min(at, len(tokens) - 1)]
            else:
                tokens.insert(at, rng.choice(TOML_TOKENS))
        text = "".join(tokens)
    return text


def _serial_execute(runs, out, scheduler=None, workers=None, done=None, ready=None, **_):
    """The sweep's `execute` without Dask: each run made here by the workers' own `run_one`."""
    from schedc.runtime.tools.sweep.execute import run_one

    statuses: dict[str, str] = {}
    if not runs:
        return statuses
    if ready is not None:
        ready()
    for desc in runs:
        key, status = run_one(desc, out)
        statuses[key] = status
        if done is not None:
            done(desc, status)
    return statuses


def sweep_campaign(policy: Path, heterogeneous: Path, folder: Path, runs: int,
                   seed: int) -> Iterator[Outcome]:
    """Damaged sweep specs (values, keys, structure, TOML text) run by `schedc sweep`, the
    runs made in this process (``policy`` declares the param `depth`; ``heterogeneous``
    runs on a heterogeneous cluster)."""
    from schedc.runtime.tools.sweep import execute

    rng = random.Random(seed)
    (folder / "t.swf").write_text(SWF)
    (folder / "p.pol").write_text(policy.read_text())
    (folder / "f.pol").write_text(heterogeneous.read_text())
    real = execute.execute
    execute.execute = _serial_execute
    try:
        for n in range(runs):
            spec = folder / f"s{n}.toml"
            spec.write_text(mutate_spec(policy, rng), encoding="utf-8")
            yield run_cli(["sweep", str(spec), "--no-figures", "--json", "--out",
                           str(folder / f"s{n}.out"), *rng.choice(SWEEP_OPTIONS)])
    finally:
        execute.execute = real


# --- plot options and a sweep's summary -------------------------------------------------------

PLOT_KINDS = ("gantt", "utilisation", "waits", "metrics", "categories", "all", "gantt,waits",
              "x", "", "gantt,gantt", ",")
PLOT_OUTPUTS = ("f.png", "f.svg", "f.PNG", "f.pdf", "f", "", "missing/f.png", "f.png.svg",
                ".png", "sub")
SWEEP_COLUMNS = ("load_factor", "param.depth", "policy", "workload", "load_factor,policy",
                 "mean_wait", "seed", "nope", "", "policy,policy", "runs", "key")
SWEEP_WHERE = ("policy=p", "load_factor=100", "load_factor=x", "nope=1", "policy", "=",
               "workload=t.swf", "param.depth=0")


def plot_campaign(policy: Path, folder: Path, runs: int, seed: int) -> Iterator[Outcome]:
    """`schedc plot run|compare|sweep` with options drawn among good and bad values; `plot
    sweep` reads a sweep's summary.csv, damaged in some runs (``policy`` declares the param
    `depth`; its sweep is made in this process)."""
    from schedc.runtime.tools.sweep import execute

    rng = random.Random(seed)
    trace = folder / "t.swf"
    trace.write_text(SWF)
    (folder / "sub").mkdir(exist_ok=True)
    spec = folder / "spec.toml"
    spec.write_text(to_toml({"policies": [str(policy)], "workloads": [str(trace)], "seeds": 2,
                             "params": {"depth": [0, 2]},
                             "transforms": {"load_factor": [100, 150]}}))
    real = execute.execute
    execute.execute = _serial_execute
    try:
        made = run_cli(["sweep", str(spec), "--no-figures", "--json", "--out",
                        str(folder / "sweep")])
    finally:
        execute.execute = real
    yield made
    summary = (folder / "sweep" / "summary.csv").read_text()

    def pick(values: tuple[str, ...], good: int) -> str:  # the first ``good`` most often
        return rng.choice(values[:good] if rng.random() < 0.7 else values)

    for n in range(runs):
        out = str(folder / f"{n}-{pick(PLOT_OUTPUTS, 2)}")
        what = rng.choice(("run", "compare", "sweep", "sweep"))
        if what == "sweep":
            target = folder / f"sweep{n}"
            target.mkdir()
            (target / "summary.csv").write_text(
                summary if rng.random() < 0.5 else mutate_table(summary, rng, ","))
            argv = ["plot", "sweep", str(target), "--x", pick(SWEEP_COLUMNS, 2), "--y",
                    pick(SWEEP_COLUMNS[5:], 1), "-o", out]
            if rng.random() < 0.4:
                argv += ["--group", pick(SWEEP_COLUMNS[2:], 2)]
            if rng.random() < 0.4:
                argv += ["--where", pick(SWEEP_WHERE, 2)]
        else:
            argv = ["plot", what, str(policy), "--workload", str(trace), "--no-progress",
                    "--kind", pick(PLOT_KINDS, 4), "-o", out, "--limit", "12",
                    *(rng.choice(RUN_OPTIONS) if rng.random() < 0.3 else ())]
            if what == "compare":
                argv.insert(3, str(policy) + rng.choice(("", ":depth2", ":nope")))
        yield run_cli(argv)


# --- inputs past the limits (docs/reference/limits.md) ----------------------------------
# A campaign of its own, so that the draws of the campaigns above stay as they were.

LIMIT_NUMBERS = ("1e999999999", "1e-999999999", "9" * 5000, "1e401", "1" + "0" * 400,
                 "10000000000000000", "1000000000000000", "1e308", "1e-300", "1_000",
                 "\u0661\u0662\u0663", "0.5", "3")
LIMIT_KINDS = ("literal", "param", "vary", "swf", "csv", "defs", "imports", "spec", "device",
               "table")


def _limit_policy(folder: Path, rng: random.Random, n: int) -> list[str]:
    number = rng.choice(LIMIT_NUMBERS)
    where = rng.choice(("order job.procs * {} asc", "order job.procs asc reserve {}",
                        "order job.procs asc size choose {} in [1, job.procs]",
                        "order job.procs + {}s asc"))
    machine = rng.random() < 0.3
    text = ("machine m { resource cpus = " + number + " }\n" if machine else "") + \
        "policy p { " + ("machine m " if machine else "") + where.format(number) + " }\n"
    (folder / f"l{n}.pol").write_text(text)
    return ["check", str(folder / f"l{n}.pol")]


def _limit_defs(folder: Path, rng: random.Random, n: int) -> list[str]:
    count, op = rng.randint(5, 40), rng.choice(("+", "*", "max"))
    body = (lambda i: f"max(d{i - 1}, d{i - 1})") if op == "max" else \
        (lambda i: f"d{i - 1} {op} d{i - 1}")
    lines = ["def d0 = job.procs"] + [f"def d{i} = {body(i)}" for i in range(1, count + 1)]
    (folder / f"d{n}.pol").write_text("\n".join(lines) + f"\npolicy p {{ order d{count} }}\n")
    return ["check", str(folder / f"d{n}.pol")]


def _limit_imports(folder: Path, rng: random.Random, n: int) -> list[str]:
    chain = folder / f"chain{n}"
    chain.mkdir()
    length = rng.choice((2, 10, 63, 64, 65, 200, 2000))
    for i in range(length):
        (chain / f"m{i}.pol").write_text((f'import "m{i + 1}.pol"\n' if i < length - 1 else "")
                                         + f"def v{i} = {i}\n")
    (chain / "m0.pol").write_text('import "m1.pol"\npolicy p { order job.procs asc }\n')
    return ["check", str(chain / "m0.pol")]


def _limit_table(folder: Path, rng: random.Random, n: int) -> list[str]:
    """SWF and CSV with a number, a header or a cell past a limit."""
    kind = rng.choice(("swf", "maxprocs", "csv", "capacity", "time-unit", "column", "cell"))
    number = rng.choice(LIMIT_NUMBERS)
    if kind in ("swf", "maxprocs"):
        lines = SWF.split("\n")
        if kind == "maxprocs":
            lines[0] = f"; MaxProcs: {number}"
        else:
            at = rng.randrange(1, len(lines) - 1)
            fields = lines[at].split(" ")
            fields[rng.randrange(len(fields))] = number
            lines[at] = " ".join(fields)
        name, text = f"t{n}.swf", "\n".join(lines)
    else:
        lines = CSV.split("\n")
        if kind == "capacity":
            lines[1] = f"# capacity cpus={number} memory=64"
        elif kind == "time-unit":
            lines[0] = f"# time-unit {number} s"
        elif kind == "column":
            lines[2] += "," + rng.choice(lines[2].split(","))
        elif kind == "cell":
            lines[3] += ',"' + "x" * rng.choice((10, 131_072, 140_000)) + '"'
        else:
            at = rng.randrange(3, len(lines) - 1)
            cells = lines[at].split(",")
            cells[rng.randrange(len(cells))] = number
            lines[at] = ",".join(cells)
        name, text = f"t{n}.csv", "\n".join(lines)
    (folder / name).write_text(text, encoding="utf-8")
    return [str(folder / name)]


def _limit_spec(policy: Path, rng: random.Random) -> str:
    """A sweep spec with a value past its range, or nested too deep."""
    data = _spec_base(policy)
    roll = rng.random()
    value = rng.choice((1e-300, 1e300, 10**29, 2**63, -1, 0, [1, True], [1, 1.0],
                        "1e999999999", "300000000x1", "4x1e9"))
    if roll < 0.3:
        data["params"]["depth"] = value if isinstance(value, list) else [value]
    elif roll < 0.6:
        key = rng.choice(("limit", "load_factor", "range_factor", "speeds", "sigma"))
        data["transforms"][key] = value if isinstance(value, list) else [value]
    elif roll < 0.8:
        data["capacity"] = {rng.choice(("cpus", "gpus")): value if isinstance(value, int)
                            else 4}
    else:
        data["seeds"] = value if isinstance(value, int) else [0]
    text = to_toml(data)
    if rng.random() < 0.2:
        depth = rng.choice((10, 32, 33, 500))
        text += "x = " + "[" * depth + "]" * depth + "\n"
    return text


def limits_campaign(policies: list[Path], policy: Path, heterogeneous: Path, folder: Path,
                    runs: int, seed: int) -> Iterator[Outcome]:
    """Inputs past each limit of docs/reference/limits.md: numbers (huge exponents, thousands of
    digits, values past the engine's range), defs that double, import chains, devices and
    FIFOs as inputs, deep or out-of-range sweep specs, odd CSV columns and cells
    (``policy`` declares the param `depth`, ``heterogeneous`` runs on a heterogeneous
    cluster: a sweep spec's two policies, as in ``sweep_campaign``)."""
    from schedc.runtime.tools.sweep import execute

    rng = random.Random(seed)
    (folder / "t.swf").write_text(SWF)
    (folder / "param.pol").write_text("param k: real = 1\npolicy p { order job.procs * k }\n")
    (folder / "p.pol").write_text(policy.read_text())
    (folder / "f.pol").write_text(heterogeneous.read_text())
    real = execute.execute
    execute.execute = _serial_execute
    try:
        for n in range(runs):
            kind = rng.choice(LIMIT_KINDS)
            if kind == "literal":
                argv = _limit_policy(folder, rng, n)
            elif kind in ("param", "vary"):
                number = rng.choice(LIMIT_NUMBERS)
                argv = (["run", str(folder / "param.pol"), "--param", f"k={number}"]
                        if kind == "param" else
                        ["compare", str(folder / "param.pol"), "--vary", f"k=1,{number}"])
                argv += ["--workload", str(folder / "t.swf")]
            elif kind == "defs":
                argv = _limit_defs(folder, rng, n)
            elif kind == "imports":
                argv = _limit_imports(folder, rng, n)
            elif kind in ("swf", "csv", "table"):
                argv = ["run", str(rng.choice(policies)), "--workload",
                        *_limit_table(folder, rng, n)]
            elif kind == "spec":
                spec = folder / f"s{n}.toml"
                spec.write_text(_limit_spec(policy, rng), encoding="utf-8")
                argv = ["sweep", str(spec), "--no-figures", "--json", "--out",
                        str(folder / f"s{n}.out")]
            else:
                argv = _limit_device(folder, policies, rng, n)
            yield run_cli(argv)
    finally:
        execute.execute = real


def _limit_device(folder: Path, policies: list[Path], rng: random.Random, n: int) -> list[str]:
    """A device or a FIFO where a file belongs: policy, import, workload or spec."""
    target = rng.choice(("/dev/zero", "/dev/urandom", "fifo"))
    if target == "fifo":
        if not hasattr(os, "mkfifo"):
            return ["check", str(policies[0])]
        target = str(folder / f"fifo{n}")
        os.mkfifo(target)
    where = rng.choice(("policy", "import", "workload", "spec"))
    if where == "import":
        (folder / f"i{n}.pol").write_text(f'import "{target}"\npolicy p {{ order job.procs }}\n')
        return ["check", str(folder / f"i{n}.pol")]
    link = folder / f"dev{n}.{ {'policy': 'pol', 'workload': 'swf', 'spec': 'toml'}[where]}"
    link.symlink_to(target)
    if where == "policy":
        return ["check", str(link)]
    if where == "workload":
        return ["run", str(policies[0]), "--workload", str(link)]
    return ["sweep", str(link), "--no-figures", "--out", str(folder / f"dev{n}.out")]
