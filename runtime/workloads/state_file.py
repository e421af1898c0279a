"""A machine state to replay: one scheduling pass from a given instant, not a whole trace.

``schedc verify`` turns a failed proof into such a state and ``schedc run POLICY --state
STATE.json`` replays it, so that the runtime monitor shows the violation. The file is JSON::

    {
      "now": 2,
      "capacity": {"cpus": 10},
      "params": {"depth": 1},
      "running": [{"id": 1, "submit": 0, "start": 0, "estimate": 100, "run_time": 100,
                   "request": {"cpus": 6}}],
      "queue": [{"id": 2, "submit": 1, "estimate": 100, "run_time": 100,
                 "request": {"cpus": 10}},
                {"id": 3, "submit": 2, "estimate": 1000, "run_time": 1000,
                 "request": {"cpus": 4}}]
    }

Rules (each broken one is a ``WorkloadError`` with a help line; read from a file, it points
at the value's line and column):

* ``now`` >= 0; ``capacity`` gives every resource of the policy's machine (>= 1 each);
* ``params`` (optional) are defaults for the policy's params, overridden by ``--param``;
* ``running`` and ``queue`` (optional, default empty) are lists of jobs: integer ``id`` >= 0
  (unique across both lists), ``submit`` >= 0, ``estimate`` >= 1, 0 <= ``run_time`` <=
  ``estimate`` (a job is killed at its estimate), ``request`` per resource (``cpus`` >= 1
  required, others default to 0, each at most the capacity); optional ``user``, ``group``,
  ``executable``, ``queue``, ``partition``: integers >= -1 (default -1, unknown);
* a running job has ``start`` with submit <= start <= now < start + estimate and
  run_time >= now - start (it has not ended before ``now``; = ends at ``now``), and the
  running jobs together fit the capacity;
* a queued job has submit <= now; the queue is given in file order (the policy's order
  sorts it, file order breaks ties); it is moldable when it has ``min_size`` and
  ``max_size`` (min_size <= request.cpus <= max_size <= capacity) and optionally
  ``speedup`` (``runtime/speedup.py``'s spec, default ``linear``); ``size`` (optional) is
  the size a `size fixed` policy chose for it at an earlier pass (within its range, or
  [1, capacity] for a rigid job), kept by the replay;
* ``arrivals`` (optional, default empty): jobs submitted after ``now`` (submit > now), as
  queued jobs are written (no ``size``): they join the queue at their submit times. With
  the running and queued jobs' ``run_time``s (a job ending before its estimate) they say
  what happens after ``now``: a two-pass counterexample of ``reservations-kept`` is the
  state before its first pass plus these events;
* ``check`` (optional, default none): opt-in monitor checks for this replay, a list of
  names: ``"reservations-kept"`` stops the run when a job's reservation moves later (or it
  starts after it) from one pass to the next (``runtime/engine/monitor.py``, ``ReservationsKept``).

The state's jobs form a workload (``InitialState.workload``): the running ones first, then
the queued ones, then the arrivals, each in file order; their positions are their
``Job.index``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from fractions import Fraction
from json.decoder import scanstring
from typing import Any

import attrs
from attrs import field, frozen

from schedc.dsl.ir import LABEL_ATTRS
from schedc.dsl.number_text import json_number, number_text, parse_real
from schedc.dsl.verify.vocabulary import OPT_IN_CHECKS
from schedc.runtime.jobs import Job, Moldable, RunningJob
from schedc.runtime.speedup import USAGE, SpeedupError, format_speedup, parse_speedup
from schedc.runtime.workloads.workload import (
    VALUE_HELP,
    Workload,
    WorkloadError,
    choices_help,
    read_source,
    value_problem,
)

ParamValue = int | Fraction | bool

_TOP = ("now", "capacity", "params", "running", "queue", "active", "arrivals", "check")
_JOB = ("id", "submit", "estimate", "run_time", "request")
_LABELS = LABEL_ATTRS  # optional on every job, integers >= -1 (-1: unknown, the default)
_MOLDABLE = ("min_size", "max_size", "speedup")
_QUEUED = (*_MOLDABLE, "size")


@frozen
class InitialState:
    now: int
    resources: tuple[str, ...]  # machine order; resources[0] == "cpus"
    capacities: tuple[int, ...]  # one per resource
    running: tuple[RunningJob, ...]  # their jobs have indices 0 .. len(running) - 1
    queue: tuple[Job, ...]  # file order, indices after the running jobs'
    params: dict[str, ParamValue] = field(factory=dict)
    source: str = "<state>"
    # job index -> cpus: sizes chosen at earlier passes by a `size fixed` policy
    sizes: dict[int, int] = field(factory=dict)
    # A dynP policy's active candidate at ``now`` (a counterexample of one candidate's pass):
    # then no self-tuning step happens at ``now``, and the pass there is that candidate's
    active: str | None = None
    # jobs submitted after ``now`` (indices after the queue's), in file order
    arrivals: tuple[Job, ...] = ()
    # opt-in monitor checks of this replay (``vocabulary.OPT_IN_CHECKS``)
    checks: tuple[str, ...] = ()

    @property
    def workload(self) -> Workload:
        """Every job of the state, by index: what ``simulate`` reports on."""
        jobs = tuple(rj.job for rj in self.running) + self.queue + self.arrivals
        return Workload(jobs=jobs, resources=self.resources, capacities=self.capacities,
                        source=self.source)


def load_state(path: str, resources: tuple[str, ...] = ("cpus",)) -> InitialState:
    """Read and check a state file for a machine with ``resources``."""
    name = str(path)
    text = read_source(name, "state").decode("utf-8", errors="replace")
    deep = _nested_too_deep(text)
    if deep is not None:  # json.loads would recurse until Python stops it
        line = text.count("\n", 0, deep) + 1
        start = text.rfind("\n", 0, deep) + 1
        end = text.find("\n", deep)
        raise WorkloadError(name, line, deep - start + 1,
                            f"the JSON nests more than {MAX_JSON_NESTING} levels deep",
                            help="a state is an object of jobs, each one level of lists and "
                                 "objects; see docs/reference/formats/state-file.md",
                            source_line=text[start:end if end >= 0 else len(text)])
    try:
        # numbers with a point or exponent exactly (a param 0.1 is 1/10, as in the policy);
        # a number past what schedc reads (1e999999999, 5,000 digits) is kept unread, and
        # refused at its place below (building it would hang, or fail past 4,300 digits)
        data = json.loads(text, parse_float=_number(Fraction), parse_int=_number(int))
    except json.JSONDecodeError as exc:
        lines = text.splitlines()
        line = lines[exc.lineno - 1] if 0 < exc.lineno <= len(lines) else None
        raise WorkloadError(name, exc.lineno, exc.colno, f"malformed JSON: {exc.msg}",
                            help="a state is one JSON object; see "
                                 "docs/reference/formats/state-file.md",
                            source_line=line) from None
    reader = _Reader(name, resources, text)
    unread = _first_unread(data, _ROOT)
    if unread is not None:
        value, where = unread
        raise reader.fail(f"{where}: {value.problem}", "schedc holds a workload's integers "
                          "from -10^15 to 10^15 (docs/reference/limits.md)", where)
    return reader.state(data)


@frozen
class _Unread:
    """A number of the JSON text past what schedc reads (see ``exact.number_problem``)."""

    text: str
    problem: str


def _number(make: type) -> Any:
    """A ``json.loads`` hook: the number, or ``_Unread`` if it is too long or too large."""
    from schedc.dsl.number_text import number_problem

    def read(text: str) -> Any:
        problem = number_problem(text)
        return _Unread(text, problem) if problem is not None else make(text)

    return read


def _first_unread(data: Any, where: _Where) -> tuple[_Unread, _Where] | None:
    """The first unread number in ``data`` and its path (the JSON nests at most
    MAX_JSON_NESTING deep: checked before)."""
    if isinstance(data, _Unread):
        return data, where
    items = data.items() if isinstance(data, dict) else enumerate(data) \
        if isinstance(data, list) else ()
    for key, value in items:
        found = _first_unread(value, where / key)
        if found is not None:
            return found
    return None


MAX_JSON_NESTING = 32  # a state needs 4 (state, list of jobs, job, request)
_BRACKETS_AND_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _nested_too_deep(text: str) -> int | None:
    """The offset of the first bracket nested deeper than MAX_JSON_NESTING, else None."""
    depth = 0
    for match in _BRACKETS_AND_STRINGS.finditer(text):
        char = match.group()
        if char in "[{":
            depth += 1
            if depth > MAX_JSON_NESTING:
                return match.start()
        elif char in "]}":
            depth -= 1
    return None


def state_from_data(data: Any, resources: tuple[str, ...] = ("cpus",),
                    source: str = "<state>") -> InitialState:
    """Check already-parsed JSON data (as ``load_state``); also for states built in code."""
    return _Reader(source, resources).state(data)


def state_to_data(state: InitialState) -> dict[str, Any]:
    """The JSON data of ``state`` (``state_from_data`` reads it back to an equal state)."""
    def request(req: Sequence[int]) -> dict[str, int]:
        return dict(zip(state.resources, req, strict=True))

    def job(j: Job) -> dict[str, Any]:
        out = {"id": j.id, "submit": j.submit, "estimate": j.estimate,
               "run_time": j.run_time, "request": request(j.request)}
        out |= {a: getattr(j, a) for a in _LABELS if getattr(j, a) != -1}
        if j.moldable is not None:
            out |= {"min_size": j.moldable.min_procs, "max_size": j.moldable.max_procs,
                    "speedup": format_speedup(j.moldable.speedup)}
        if j.index in state.sizes:
            out["size"] = state.sizes[j.index]
        return out

    return {
        "now": state.now,
        "capacity": request(state.capacities),
        "params": {k: json_number(v) for k, v in state.params.items()},
        "running": [{**job(rj.job), "start": rj.start,
                     **({"size": rj.alloc[0]} if rj.alloc[0] != rj.job.request[0] else {})}
                    for rj in state.running],
        "queue": [job(j) for j in state.queue],
    } | ({"active": state.active} if state.active is not None else {}) | (
        {"arrivals": [job(j) for j in state.arrivals]} if state.arrivals else {}) | (
        {"check": list(state.checks)} if state.checks else {})


class _Where(tuple):
    """A path into the state's JSON (``("queue", 1, "submit")``), printed as messages name
    it (``queue[1].submit``); ``where / key`` goes one level down."""

    def __truediv__(self, key: str | int) -> _Where:
        return _Where((*self, key))

    def __str__(self) -> str:
        out = ""
        for key in self:
            out += f"[{key}]" if isinstance(key, int) else f".{key}" if out else key
        return out or "the state"


_ROOT = _Where()


class _Reader:
    """Field checks with messages that name the field (``queue[1].submit``), located in the
    file when its text is known."""

    def __init__(self, source: str, resources: tuple[str, ...], text: str | None = None
                 ) -> None:
        self.source = source
        self.resources = resources
        self.text = text

    def fail(self, message: str, help: str, at: _Where = _ROOT) -> WorkloadError:
        """The error, at the value ``at`` names (its line and column, if the text is known)."""
        text = self.text
        offset = None if text is None else json_offset(text, at)
        if text is None or offset is None:  # a state built in code, or no such place
            return WorkloadError(self.source, None, None, message, help=help)
        line = text.count("\n", 0, offset) + 1
        start = text.rfind("\n", 0, offset) + 1
        end = text.find("\n", offset)
        source_line = text[start:len(text) if end < 0 else end].rstrip("\r")
        return WorkloadError(self.source, line, offset - start + 1, message, help=help,
                             source_line=source_line)

    def state(self, data: Any) -> InitialState:
        if not isinstance(data, dict):
            raise self.fail("a state must be a JSON object",
                            "write {\"now\": ..., \"capacity\": {...}, \"running\": [...], "
                            "\"queue\": [...]}")
        self.keys(data, _TOP, ("now", "capacity"), _ROOT)
        now = self.integer(data["now"], _ROOT / "now", 0)
        caps = self.vector(data["capacity"], _ROOT / "capacity", None, lo=1)
        params = self.params(data.get("params", {}))
        active = data.get("active")
        if active is not None and (not isinstance(active, str) or not active.strip()):
            raise self.fail("`active` must be the name of a candidate of the dynP policy",
                            "write e.g. \"active\": \"conservative_sjf\"", _ROOT / "active")
        running_data = self.job_list(data.get("running", []), _ROOT / "running")
        queue_data = self.job_list(data.get("queue", []), _ROOT / "queue")
        running: list[RunningJob] = []
        queue: list[Job] = []
        sizes: dict[int, int] = {}
        seen: dict[int, _Where] = {}  # id -> the job that has it
        for i, item in enumerate(running_data):
            running.append(self.running_job(item, _ROOT / "running" / i, len(running), now,
                                            caps, seen))
        for i, item in enumerate(queue_data):
            where = _ROOT / "queue" / i
            job = self.queued_job(item, where, len(running) + len(queue), now, caps, seen)
            queue.append(job)
            if "size" in item:
                sizes[job.index] = self.fixed_size(item["size"], where / "size", job, caps)
        arrivals = [self.arrival(item, _ROOT / "arrivals" / i,
                                 len(running) + len(queue) + i, now, caps, seen)
                    for i, item in enumerate(self.job_list(data.get("arrivals", []),
                                                           _ROOT / "arrivals"))]
        checks = self.checks(data.get("check", []))
        for k, res in enumerate(self.resources):
            used = sum(rj.alloc[k] for rj in running)
            if used > caps[k]:
                raise self.fail(f"the running jobs hold {used} `{res}`, more than the "
                                f"capacity {caps[k]}",
                                "a state is something the machine can be in: lower a request "
                                "or raise the capacity", _ROOT / "running")
        return InitialState(now=now, resources=self.resources, capacities=caps,
                            running=tuple(running), queue=tuple(queue), params=params,
                            source=self.source, sizes=sizes, active=active,
                            arrivals=tuple(arrivals), checks=checks)

    def arrival(self, item: Any, where: _Where, index: int, now: int, caps: tuple[int, ...],
                seen: dict[int, _Where]) -> Job:
        """A job submitted after ``now``: a queued job's fields, without a kept size."""
        job = self.moldable(item, where, self.job(item, where, index, caps, seen, _MOLDABLE),
                            caps)
        if job.submit <= now:
            raise self.fail(f"{where} (job {job.id}): submitted at {job.submit}, not after "
                            f"now {now}",
                            "an arrival comes after now (submit > now); a job submitted by "
                            "now belongs in `queue`", where / "submit")
        return job

    def checks(self, value: Any) -> tuple[str, ...]:
        """The opt-in monitor checks named in ``check``."""
        where = _ROOT / "check"
        if not isinstance(value, list):
            raise self.fail("`check` must be a JSON list of check names",
                            f"write e.g. [\"{OPT_IN_CHECKS[0]}\"]", where)
        for i, name in enumerate(value):
            if name not in OPT_IN_CHECKS:
                raise self.fail(f"check[{i}]: {_text(name)} is not a check",
                                choices_help(str(name), OPT_IN_CHECKS, "the checks are"),
                                where / i)
        return tuple(dict.fromkeys(value))

    def fixed_size(self, value: Any, where: _Where, job: Job, caps: tuple[int, ...]) -> int:
        size = self.integer(value, where, 1)
        lo, hi = (job.min_procs, min(job.max_procs, caps[0])) if job.moldable else (1, caps[0])
        if not lo <= size <= hi:
            raise self.fail(f"{where}: job {job.id} cannot have {size} cpus, its sizes are "
                            f"[{lo}, {hi}]",
                            "a size chosen by the policy lies in the job's range", where)
        return size

    def running_job(self, item: Any, where: _Where, index: int, now: int,
                    caps: tuple[int, ...], seen: dict[int, _Where]) -> RunningJob:
        job = self.job(item, where, index, caps, seen, extra=("start", "size"))
        if "start" not in item:
            raise self.fail(f"{where}: a running job needs `start`",
                            "give the time it started (submit <= start <= now)", where)
        start = self.integer(item["start"], where / "start", 0)
        if not job.submit <= start <= now:
            raise self.fail(f"{where} (job {job.id}): start {start} is not between its submit "
                            f"{job.submit} and now {now}",
                            "a running job was submitted, then started, by now", where / "start")
        if job.run_time < now - start:
            raise self.fail(f"{where} (job {job.id}): it already ended at "
                            f"{start + job.run_time} (start + run_time), before now {now}",
                            "a running job has run_time >= now - start; drop ended jobs "
                            "from `running`", where / "run_time")
        if now >= start + job.estimate:
            raise self.fail(f"{where} (job {job.id}): it was killed at its estimated end "
                            f"{start + job.estimate}, by now {now}",
                            "a running job has now < start + estimate; drop ended jobs "
                            "from `running`", where / "estimate")
        if "size" not in item:
            return RunningJob(job, start, job.request)
        # the cpus it holds, where a size rule gave the (rigid) job other than it asked
        size = self.integer(item["size"], where / "size", 1)
        if size > caps[0]:
            raise self.fail(f"{where} (job {job.id}): it cannot hold {size} cpus, the "
                            f"capacity is {caps[0]}",
                            "`size` is the cpus a running job holds: at most the capacity",
                            where / "size")
        return RunningJob(job, start, (size, *job.request[1:]))

    def queued_job(self, item: Any, where: _Where, index: int, now: int,
                   caps: tuple[int, ...], seen: dict[int, _Where]) -> Job:
        job = self.job(item, where, index, caps, seen, _QUEUED)
        job = self.moldable(item, where, job, caps)
        if job.submit > now:
            raise self.fail(f"{where} (job {job.id}): submitted at {job.submit}, after now "
                            f"{now}",
                            "a queued job was submitted by now: submit <= now", where / "submit")
        return job

    def job(self, item: Any, where: _Where, index: int, caps: tuple[int, ...],
            seen: dict[int, _Where], extra: tuple[str, ...] = ()) -> Job:
        if not isinstance(item, dict):
            raise self.fail(f"{where} must be a JSON object",
                            "a job is {\"id\", \"submit\", \"estimate\", \"run_time\", "
                            "\"request\"}", where)
        self.keys(item, _JOB + _LABELS + extra, _JOB, where)
        jid = self.integer(item["id"], where / "id", 0)  # proofs assume ids >= 0
        if jid in seen:
            raise self.fail(f"{where}: job id {jid} is given twice ({seen[jid]} has it)",
                            "give each job its own id", where / "id")
        seen[jid] = where
        submit = self.integer(item["submit"], where / "submit", 0)
        estimate = self.integer(item["estimate"], where / "estimate", 1)
        run_time = self.integer(item["run_time"], where / "run_time", 0)
        if run_time > estimate:
            raise self.fail(f"{where} (job {jid}): run_time {run_time} exceeds its estimate "
                            f"{estimate}",
                            "a job is killed at its estimate: give run_time <= estimate",
                            where / "run_time")
        request = self.vector(item["request"], where / "request", caps, lo=0)
        if request[0] < 1:
            raise self.fail(f"{where / 'request'}: job {jid} asks for {request[0]} cpus",
                            "a job needs at least 1 cpu", where / "request" / self.resources[0])
        # proofs assume labels >= -1 (dsl/verify/pass_encoding/assumptions.py): as the readers
        # give them
        labels = {a: self.integer(item[a], where / a, -1) for a in _LABELS if a in item}
        return Job(id=jid, index=index, submit=submit, run_time=run_time,
                   estimate=estimate, request=request, **labels)

    def moldable(self, item: dict, where: _Where, job: Job, caps: tuple[int, ...]) -> Job:
        """A queued job with `min_size` and `max_size` (and optionally `speedup`, default
        linear) is moldable."""
        given = [k for k in _MOLDABLE if k in item]
        if not given:
            return job
        if "min_size" not in item or "max_size" not in item:
            raise self.fail(f"{where} (job {job.id}): a moldable job needs both `min_size` "
                            "and `max_size`", "give its range of sizes, e.g. 1 and 64", where)
        lo = self.integer(item["min_size"], where / "min_size", 1)
        hi = self.integer(item["max_size"], where / "max_size", 1)
        if not lo <= job.procs <= hi <= caps[0]:
            raise self.fail(f"{where} (job {job.id}): sizes [{lo}, {hi}] must hold its "
                            f"request {job.procs} and fit the {caps[0]} cpus",
                            "min_size <= request.cpus <= max_size <= capacity",
                            where / ("min_size" if lo > job.procs else "max_size"))
        text = item.get("speedup", "linear")
        if not isinstance(text, str):
            raise self.fail(f"{where / 'speedup'} must be a string", USAGE, where / "speedup")
        try:
            speedup = parse_speedup(text)
        except SpeedupError as exc:
            raise self.fail(f"{where / 'speedup'}: {exc}", exc.help, where / "speedup") from None
        return attrs.evolve(job, moldable=Moldable(lo, hi, speedup))

    # -- values

    def keys(self, obj: dict, allowed: tuple[str, ...], required: tuple[str, ...],
             where: _Where) -> None:
        for key in obj:
            if key not in allowed:
                raise self.fail(f"{where}: unknown field `{key}`",
                                choices_help(key, allowed, "the fields are"), where / key)
        for key in required:
            if key not in obj:
                raise self.fail(f"{where}: missing field `{key}`",
                                f"the required fields are: {', '.join(required)}", where)

    def integer(self, value: Any, where: _Where, lo: int | None) -> int:
        # bool is an int in Python, not in JSON
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(f"{where}: {_text(value)} is not an integer",
                            "times are whole seconds, requests whole units", where)
        if lo is not None and value < lo:
            raise self.fail(f"{where}: {value} is below {lo}", f"give a value of at least {lo}",
                            where)
        problem = value_problem(value, str(where))  # what the engine holds: +-10^15
        if problem is not None:
            raise self.fail(problem, VALUE_HELP, where)
        return value

    def job_list(self, value: Any, where: _Where) -> list:
        if not isinstance(value, list):
            raise self.fail(f"`{where}` must be a JSON list of jobs", "write [] for none", where)
        return value

    def vector(self, value: Any, where: _Where, caps: tuple[int, ...] | None,
               lo: int) -> tuple[int, ...]:
        """A per-resource object as a vector in machine order (``caps``: upper bounds, and
        missing resources default to 0; ``None``: every resource is required)."""
        res = self.resources
        if not isinstance(value, dict):
            raise self.fail(f"{where} must be a JSON object of resources",
                            f"for example {{\"{res[0]}\": 4}}", where)
        for key in value:
            if key not in res:
                raise self.fail(f"{where}: the policy's machine has no resource `{key}`",
                                choices_help(key, res, "its resources are"), where / key)
        out = []
        for k, name in enumerate(res):
            if name not in value and (caps is None or k == 0):
                raise self.fail(f"{where}: missing resource `{name}`",
                                f"give every resource of the machine: {', '.join(res)}"
                                if caps is None else f"a job needs `{name}`", where)
            n = self.integer(value.get(name, 0), where / name, lo)
            if caps is not None and n > caps[k]:
                raise self.fail(f"{where / name}: {n} is more than the capacity {caps[k]}",
                                "a job larger than the machine can never start", where / name)
            out.append(n)
        return tuple(out)

    def params(self, value: Any) -> dict[str, ParamValue]:
        where = _ROOT / "params"
        if not isinstance(value, dict):
            raise self.fail("`params` must be a JSON object", "write {\"name\": value, ...}",
                            where)
        out: dict[str, ParamValue] = {}
        for key, v in value.items():
            if isinstance(v, float):  # built in code: the decimal a file would show for it
                v = Fraction(repr(v)) if math.isfinite(v) else None
            elif isinstance(v, str):  # an exact rational that has no decimal, e.g. "1/3"
                v = parse_real(v) if "/" in v else None
            if not isinstance(v, bool | int | Fraction):
                raise self.fail(f"params.{key}: {_text(value[key])} is not a number or a bool",
                                "param values are int, real (a number, or \"p/q\") or bool",
                                where / key)
            out[key] = v
        return out


_WS = re.compile(r"[ \t\n\r]*")
# skips values to find a place: numbers are not built (one of 5,000 digits would fail)
_DECODER = json.JSONDecoder(parse_int=lambda t: 0, parse_float=lambda t: 0)


def json_offset(text: str, path: Sequence[str | int]) -> int | None:
    """Where the value at ``path`` starts in ``text`` (JSON that ``json.loads`` read; as it
    does, the last of repeated keys counts), or None if it is not there."""
    try:
        pos: int | None = _WS.match(text).end()
        for key in path:
            pos = _member(text, pos, key)
            if pos is None:
                return None
        return pos
    except (ValueError, IndexError, RecursionError):  # not the JSON we thought: no place
        return None


def _member(text: str, pos: int, key: str | int) -> int | None:
    """Start of the member ``key`` (a name in an object, an index in a list) of the value at
    ``pos``."""
    opener = text[pos]
    if opener != ("{" if isinstance(key, str) else "["):
        return None
    closer = "}" if opener == "{" else "]"
    found, index = None, 0
    pos = _WS.match(text, pos + 1).end()
    while text[pos] != closer:
        if opener == "{":
            name, pos = scanstring(text, pos + 1)
            pos = _WS.match(text, _WS.match(text, pos).end() + 1).end()  # past the colon
            if name == key:
                found = pos  # not yet returned: a later repeat of the key wins
        elif index == key:
            return pos
        else:
            index += 1
        _, pos = _DECODER.raw_decode(text, pos)  # past the member's value
        pos = _WS.match(text, pos).end()
        if text[pos] == ",":
            pos = _WS.match(text, pos + 1).end()
    return found


def param_text(value: ParamValue) -> str:
    """A state's param value as ``--param`` text (the binder parses and checks it)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return number_text(value)


def _text(value: Any) -> str:
    """A JSON value as the file wrote it (exact numbers as decimals or `p/q`), shortened for
    a message (1e308 is 309 digits)."""
    from schedc.dsl.number_text import short

    return short(number_text(value) if isinstance(value, Fraction) else json.dumps(value), 40)


def check_params(path: str, state: InitialState, policy: str,
                 declared: Sequence[str]) -> None:
    """An error at the first of the state's params that ``policy`` does not declare, at its
    place in the file (a param the command line gives is the binder's to check)."""
    for key in state.params:
        if key not in declared:
            text = read_source(str(path), "state").decode("utf-8", errors="replace")
            raise _Reader(str(path), (), text).fail(
                f"params.{key}: policy `{policy}` has no param `{key}`",
                choices_help(key, list(declared), "its params are") if declared
                else "the policy declares no param: remove `params` from the state",
                _ROOT / "params" / key)


def merged_params(state: InitialState, given: Mapping[str, str]) -> dict[str, str]:
    """The state's params as defaults, ``given`` (the command line) overriding them."""
    return {**{k: param_text(v) for k, v in state.params.items()}, **given}

