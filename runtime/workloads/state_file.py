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

A preemptive policy's state (``runtime/engine/preemptive.py``; the rigid simulator refuses
it, ``preemptive.state_problem``) also says where each job is in its life
(``lifecycle.JobLife``) and what it has done, its ``History``:

* ``suspended`` and ``stopped`` (optional, default empty): preempted jobs, written as queued
  jobs are (moldable ones too; no ``size`` on a suspended job), submit <= now;
* history fields, each optional unless said: ``acquired`` (processor-seconds run, >= 0,
  default 0; a running job's: before ``start``), ``preemptions`` (>= 0, default 0; >= 1,
  default 1 for suspended and stopped jobs), ``progress`` (the fraction of its work done, a
  number in [0, 1) read exactly as a param is, "1/3" or 0.25; default 0; a running job's: at
  ``start``), and ``last_start`` (submit <= last_start <= now: its last start or resume) on
  suspended, stopped and queued jobs (a queued job that ran before was requeued);
* ``processors`` on running and suspended jobs: distinct integers in [0, cpus), one per cpu
  it holds (running: ``size``, else its request) or ran on (suspended: its size, in its
  range: [min_size, max_size] if moldable, else its request's cpus). Not listed, they are
  the lowest processors no job lists, given in file order (running jobs, then suspended
  ones). Running jobs' are disjoint; a suspended job's processes may share processors with
  any job's;
* a stopped job has ``size`` (required): the cpus of its last run, in its range;
* the resources after cpus held by the running and the suspended jobs together fit the
  capacity; a running job has progress + (now - start) / T(size) <= 1, T(n) its run time on
  n cpus (``Job.at_size``): its work is not done before ``now`` (= it ends at ``now``, as a
  rigid running job may).

Each running, suspended and stopped job has a ``History`` in ``InitialState.histories``, a
queued job only if it gives a history field; ``state_to_data`` writes them back, leaving out
what the reader defaults to.

The state's jobs form a workload (``InitialState.workload``): the running ones first, then
the queued ones, the suspended ones, the stopped ones, then the arrivals, each in file order;
their positions are their ``Job.index``.
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

_TOP = ("now", "capacity", "params", "running", "queue", "suspended", "stopped", "active",
        "arrivals", "check")
_JOB = ("id", "submit", "estimate", "run_time", "request")
_LABELS = LABEL_ATTRS  # optional on every job, integers >= -1 (-1: unknown, the default)
_MOLDABLE = ("min_size", "max_size", "speedup")
# a job's past under preemption (``History``), by the list it is in
_PAST = ("acquired", "preemptions", "progress")
_RUNNING = ("start", "size", "processors", *_MOLDABLE, *_PAST)
_PENDING_PAST = (*_PAST, "last_start")
_QUEUED = (*_MOLDABLE, "size", *_PENDING_PAST)
_SUSPENDED = (*_MOLDABLE, "processors", *_PAST, "last_start")
_STOPPED = (*_MOLDABLE, "size", *_PAST, "last_start")


@frozen
class History:
    """A job's past at the state's instant, for the preemptive simulator (``JobLife``)."""

    # the processors it holds (running) or keeps its processes on (suspended); () else
    processors: tuple[int, ...]
    size: int  # the cpus of its current or last allocation; 0 for a job that never ran
    acquired: int = 0  # processor-seconds run before now (running: before ``start``)
    preemptions: int = 0
    progress: Fraction = Fraction(0)  # the fraction of its work done (running: at ``start``)
    last_start: int | None = None  # its last start or resume (running: its ``start``)


@frozen
class _Given:
    """What a state file says of a job's history, before processors are assigned."""

    where: _Where
    id: int
    index: int
    processors: tuple[int, ...] | None  # None: not listed
    size: int
    acquired: int
    preemptions: int
    progress: Fraction
    last_start: int | None


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
    # preempted jobs at ``now`` (indices after the queue's, then the suspended ones'), in file
    # order: only the preemptive simulator replays them
    suspended: tuple[Job, ...] = ()
    stopped: tuple[Job, ...] = ()
    # job index -> its past: every running, suspended and stopped job of a state read from a
    # file, a queued job only if the file gives it a history field (``complete_histories``
    # fills in what a state built in code leaves out)
    histories: dict[int, History] = field(factory=dict)

    @property
    def workload(self) -> Workload:
        """Every job of the state, by index: what ``simulate`` reports on."""
        jobs = (tuple(rj.job for rj in self.running) + self.queue + self.suspended
                + self.stopped + self.arrivals)
        return Workload(jobs=jobs, resources=self.resources, capacities=self.capacities,
                        source=self.source)

    @property
    def has_history(self) -> bool:
        """Whether the state holds what only the preemptive simulator replays: suspended or
        stopped jobs, or a running or queued job's past (service acquired, preemptions,
        progress, a queued job's last start, a running job's processors other than the
        ones file order gives); history fields at their defaults say nothing."""
        if self.suspended or self.stopped:
            return True
        histories = complete_histories(self)
        queued = [histories[j.index] for j in self.queue if j.index in histories]
        if any(h.last_start is not None for h in queued):
            return True
        running = [histories[rj.job.index] for rj in self.running]
        if any(h.acquired or h.preemptions or h.progress for h in (*running, *queued)):
            return True
        return [h.processors for h in running] != in_file_order([h.size for h in running])


def in_file_order(sizes: Sequence[int]) -> list[tuple[int, ...]]:
    """Processors given in file order, the lowest first: what a state that lists none has."""
    out, at = [], 0
    for n in sizes:
        out.append(tuple(range(at, at + n)))
        at += n
    return out


def complete_histories(state: InitialState) -> dict[int, History]:
    """Every running, suspended and stopped job's ``History`` and the queued jobs' given
    ones: a state built in code may leave them out, and then its running and suspended jobs
    take processors as a file that lists none does (``in_file_order``), a stopped job its
    request's cpus."""
    out = dict(state.histories)
    held = [rj.job.index for rj in state.running] + [j.index for j in state.suspended]
    missing = [i for i in held if i not in out]
    if missing:
        listed = {p for i in held if i in out for p in out[i].processors}
        free = [p for p in range(state.capacities[0]) if p not in listed]
        sizes = {rj.job.index: rj.alloc[0] for rj in state.running}
        for index in missing:
            n = sizes.get(index) or state.workload.jobs[index].request[0]
            procs, free = tuple(free[:n]), free[n:]
            suspended = index not in sizes
            start = None if suspended else next(rj.start for rj in state.running
                                                if rj.job.index == index)
            out[index] = History(procs, n, preemptions=int(suspended), last_start=start)
    for job in state.stopped:
        if job.index not in out:
            out[job.index] = History((), job.request[0], preemptions=1)
    return out


def job_path(state: InitialState, index: int) -> tuple[str, int]:
    """Where job ``index`` is written in ``state``: its list and its place in it."""
    lists = (("running", tuple(rj.job for rj in state.running)), ("queue", state.queue),
             ("suspended", state.suspended), ("stopped", state.stopped),
             ("arrivals", state.arrivals))
    for name, jobs in lists:
        if index < len(jobs):
            return name, index
        index -= len(jobs)
    raise IndexError(f"the state has no job of index {index}")


def located_in_state(state: InitialState, message: str, help: str,
                     at: Sequence[str | int]) -> WorkloadError:
    """An error with ``state`` that a policy finds (``preemptive.state_error``), at ``at`` (a
    path into its JSON: the longest part of it the file has) when the state was read from a
    file, else naming the state only."""
    text = None
    if not state.source.startswith("<"):
        try:
            text = read_source(state.source, "state").decode("utf-8", errors="replace")
        except (OSError, WorkloadError):  # gone since it was read: no place to show
            text = None
    where = _Where(at)
    while text is not None and where and json_offset(text, where) is None:
        where = _Where(where[:-1])
    return _Reader(state.source, state.resources, text).fail(message, help, where)


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

    histories = complete_histories(state)
    held = [*(rj.job.index for rj in state.running), *(j.index for j in state.suspended)]
    # processors are written unless the reader gives each the same ones in file order
    listed = [histories[i].processors for i in held] != in_file_order(
        [histories[i].size for i in held])

    def past(j: Job, preempted: int, queued: bool = False) -> dict[str, Any]:
        """Its history fields, those at their defaults left out (``preempted``: the default
        count of preemptions); a queued job's two counts always, so that it has a past."""
        h = histories.get(j.index)
        if h is None:
            return {}
        out: dict[str, Any] = {}
        if h.processors and listed:
            out["processors"] = list(h.processors)
        if h.acquired or queued:
            out["acquired"] = h.acquired
        if h.preemptions != preempted or queued:
            out["preemptions"] = h.preemptions
        if h.progress:
            out["progress"] = json_number(h.progress)
        if h.last_start is not None and j.index not in running:  # a running job's: `start`
            out["last_start"] = h.last_start
        return out

    running = {rj.job.index for rj in state.running}
    return {
        "now": state.now,
        "capacity": request(state.capacities),
        "params": {k: json_number(v) for k, v in state.params.items()},
        "running": [{**job(rj.job), "start": rj.start,
                     **({"size": rj.alloc[0]} if rj.alloc[0] != rj.job.request[0] else {}),
                     **past(rj.job, 0)}
                    for rj in state.running],
        "queue": [{**job(j), **past(j, 0, queued=True)} for j in state.queue],
    } | ({"suspended": [{**job(j), **past(j, 1)} for j in state.suspended]}
         if state.suspended else {}) | (
        {"stopped": [{**job(j), "size": histories[j.index].size, **past(j, 1)}
                     for j in state.stopped]} if state.stopped else {}) | (
        {"active": state.active} if state.active is not None else {}) | (
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
        suspended_data = self.job_list(data.get("suspended", []), _ROOT / "suspended")
        stopped_data = self.job_list(data.get("stopped", []), _ROOT / "stopped")
        running: list[RunningJob] = []
        queue: list[Job] = []
        suspended: list[Job] = []
        stopped: list[Job] = []
        sizes: dict[int, int] = {}
        seen: dict[int, _Where] = {}  # id -> the job that has it
        given: dict[int, _Given] = {}  # job index -> the history fields the file gives it
        for i, item in enumerate(running_data):
            where = _ROOT / "running" / i
            rj = self.running_job(item, where, len(running), now, caps, seen)
            running.append(rj)
            given[rj.job.index] = self.running_past(item, where, rj, now, caps)
        for i, item in enumerate(queue_data):
            where = _ROOT / "queue" / i
            job = self.queued_job(item, where, len(running) + len(queue), now, caps, seen)
            queue.append(job)
            if "size" in item:
                sizes[job.index] = self.fixed_size(item["size"], where / "size", job, caps)
            if any(key in item for key in _PENDING_PAST):
                given[job.index] = self.past(item, where, job, now, caps, 0, 0)
        base = len(running) + len(queue)
        for i, item in enumerate(suspended_data):
            where = _ROOT / "suspended" / i
            job = self.preempted_job(item, where, base + i, now, caps, seen, _SUSPENDED)
            suspended.append(job)
            given[job.index] = self.suspended_past(item, where, job, now, caps)
        base += len(suspended)
        for i, item in enumerate(stopped_data):
            where = _ROOT / "stopped" / i
            job = self.preempted_job(item, where, base + i, now, caps, seen, _STOPPED)
            stopped.append(job)
            given[job.index] = self.stopped_past(item, where, job, now, caps)
        base += len(stopped)
        arrivals = [self.arrival(item, _ROOT / "arrivals" / i, base + i, now, caps, seen)
                    for i, item in enumerate(self.job_list(data.get("arrivals", []),
                                                           _ROOT / "arrivals"))]
        checks = self.checks(data.get("check", []))
        for k, res in enumerate(self.resources):
            # a suspended job keeps its other resources (its memory), not its cpus
            used = sum(rj.alloc[k] for rj in running)
            held = sum(job.request[k] for job in suspended) if k else 0
            if used + held > caps[k]:
                who = "running and suspended jobs" if held else "running jobs"
                raise self.fail(f"the {who} hold {used + held} `{res}`, more than the "
                                f"capacity {caps[k]}",
                                "a state is something the machine can be in: lower a request "
                                "or raise the capacity", _ROOT / ("suspended" if held and
                                                                  used <= caps[k] else "running"))
        processors = self.processors_of([given[rj.job.index] for rj in running],
                                        [given[job.index] for job in suspended], caps[0])
        histories = {index: History(processors.get(index, ()), g.size, g.acquired,
                                    g.preemptions, g.progress, g.last_start)
                     for index, g in given.items()}
        return InitialState(now=now, resources=self.resources, capacities=caps,
                            running=tuple(running), queue=tuple(queue), params=params,
                            source=self.source, sizes=sizes, active=active,
                            arrivals=tuple(arrivals), checks=checks,
                            suspended=tuple(suspended), stopped=tuple(stopped),
                            histories=histories)

    # -- a job's past under preemption

    def processors_of(self, running: list[_Given], suspended: list[_Given], cpus: int
                      ) -> dict[int, tuple[int, ...]]:
        """Job index -> its processors: as listed, else the lowest that no job lists, in
        file order (running jobs, then suspended ones). Running jobs' are disjoint; a
        suspended job's processes may share processors with any other job's."""
        holder: dict[int, _Given] = {}  # processor -> the running job that lists it
        for g in running:
            for p in g.processors or ():
                if p in holder:
                    raise self.fail(f"{g.where / 'processors'} (job {g.id}): processor {p} "
                                    f"is also held by {holder[p].where} (job {holder[p].id})",
                                    "running jobs hold disjoint processors (a suspended job "
                                    "may share theirs)", g.where / "processors")
                holder[p] = g
        listed = {p for g in (*running, *suspended) for p in g.processors or ()}
        free = [p for p in range(cpus) if p not in listed]
        out: dict[int, tuple[int, ...]] = {}
        for g in (*running, *suspended):
            if g.processors is not None:
                out[g.index] = g.processors
                continue
            if len(free) < g.size:
                raise self.fail(f"{g.where} (job {g.id}): it needs {g.size} processors and "
                                f"{len(free)} are left: the jobs before it and those listing "
                                "their `processors` take the others",
                                "give its `processors` (a suspended job may share a running "
                                "job's)", g.where)
            out[g.index], free = tuple(free[:g.size]), free[g.size:]
        return out

    def running_past(self, item: dict, where: _Where, rj: RunningJob, now: int,
                     caps: tuple[int, ...]) -> _Given:
        """A running job's history: its processors hold its cpus, and its work is not done
        before now."""
        job, size = rj.job, rj.alloc[0]
        g = self.past(item, where, job, now, caps, 0, size)
        if g.processors is not None and len(g.processors) != size:
            why = "its `size`" if "size" in item else "its request"
            raise self.fail(f"{where / 'processors'} (job {job.id}): {len(g.processors)} "
                            f"processors for the {size} cpus it holds ({why})",
                            "list one processor for each cpu it holds", where / "processors")
        t = job.at_size(size).run_time
        if g.progress and t and g.progress + Fraction(now - rj.start, t) > 1:
            end = rj.start + math.ceil((1 - g.progress) * t)
            raise self.fail(f"{where} (job {job.id}): its work is done at {end} (start + "
                            f"(1 - progress) * {t} s, its run time on {size} cpus), before "
                            f"now {now}",
                            "a running job has progress + (now - start) / T(size) <= 1 "
                            "(= it ends at now); drop ended jobs from `running`",
                            where / "progress")
        return attrs.evolve(g, last_start=rj.start)  # its last start or resume

    def suspended_past(self, item: dict, where: _Where, job: Job, now: int,
                       caps: tuple[int, ...]) -> _Given:
        """A suspended job's history: as many processors as its size, in its range."""
        n = len(item["processors"]) if isinstance(item.get("processors"), list) else job.procs
        g = self.past(item, where, job, now, caps, 1, n)
        lo, hi = job.min_procs, job.max_procs
        if not lo <= n <= hi:
            raise self.fail(f"{where / 'processors'} (job {job.id}): it ran on {n} "
                            f"processors, outside its sizes [{lo}, {hi}]",
                            "a suspended job keeps the processors of its last run, one per "
                            "cpu: its request's cpus, or a size in [min_size, max_size] for "
                            "a moldable job", where / "processors")
        return g

    def stopped_past(self, item: dict, where: _Where, job: Job, now: int,
                     caps: tuple[int, ...]) -> _Given:
        """A stopped job's history: the size of its last run, in its range."""
        if "size" not in item:
            raise self.fail(f"{where} (job {job.id}): a stopped job needs `size`",
                            "give the cpus of its last run: it restarts at that size (a "
                            "malleable job: at any size in its range)", where)
        n = self.integer(item["size"], where / "size", 1)
        lo, hi = job.min_procs, job.max_procs
        if not lo <= n <= hi:
            raise self.fail(f"{where / 'size'}: job {job.id} cannot have run on {n} cpus, "
                            f"its sizes are [{lo}, {hi}]",
                            "a rigid job runs on its request's cpus, a moldable one on a "
                            "size in [min_size, max_size]", where / "size")
        return self.past(item, where, job, now, caps, 1, n)

    def past(self, item: dict, where: _Where, job: Job, now: int, caps: tuple[int, ...],
             preempted: int, size: int) -> _Given:
        """The history fields every list shares (``preempted``: the fewest preemptions, and
        the default); ``size``: the cpus of its current or last allocation."""
        acquired = self.integer(item.get("acquired", 0), where / "acquired", 0)
        preemptions = self.integer(item.get("preemptions", preempted), where / "preemptions",
                                   preempted)
        progress = Fraction(0)
        if "progress" in item:
            progress = self.fraction(item["progress"], where / "progress")
            if not 0 <= progress < 1:
                raise self.fail(f"{where / 'progress'} (job {job.id}): {_text(item['progress'])}"
                                " is not in [0, 1)",
                                "progress is the fraction of its work done: at least 0, below "
                                "1 (a job whose work is done has ended)", where / "progress")
        last_start = None
        if "last_start" in item:
            last_start = self.integer(item["last_start"], where / "last_start", 0)
            if not job.submit <= last_start <= now:
                raise self.fail(f"{where} (job {job.id}): last_start {last_start} is not "
                                f"between its submit {job.submit} and now {now}",
                                "a job last started or resumed after its submission, by now",
                                where / "last_start")
        processors = None
        if "processors" in item:
            processors = self.processor_list(item["processors"], where / "processors",
                                             job, caps[0])
        return _Given(where, job.id, job.index, processors, size, acquired, preemptions,
                      progress, last_start)

    def processor_list(self, value: Any, where: _Where, job: Job, cpus: int
                       ) -> tuple[int, ...]:
        """Distinct processors in [0, cpus)."""
        if not isinstance(value, list) or not value:
            raise self.fail(f"{where} (job {job.id}) must be a non-empty JSON list of "
                            "processors",
                            f"write e.g. [0, 1]: processors are numbered 0 to {cpus - 1}",
                            where)
        out: list[int] = []
        for i, v in enumerate(value):
            p = self.integer(v, where / i, 0)
            if p >= cpus:
                raise self.fail(f"{where / i} (job {job.id}): there is no processor {p}",
                                f"processors are numbered 0 to {cpus - 1} (the capacity of "
                                f"cpus is {cpus})", where / i)
            if p in out:
                raise self.fail(f"{where / i} (job {job.id}): processor {p} is listed twice",
                                "list each processor once", where / i)
            out.append(p)
        return tuple(out)

    def preempted_job(self, item: Any, where: _Where, index: int, now: int,
                      caps: tuple[int, ...], seen: dict[int, _Where],
                      fields: tuple[str, ...]) -> Job:
        """A suspended or stopped job: a queued job's fields and its history."""
        job = self.moldable(item, where, self.job(item, where, index, caps, seen, fields),
                            caps)
        if job.submit > now:
            raise self.fail(f"{where} (job {job.id}): submitted at {job.submit}, after now "
                            f"{now}",
                            "a preempted job was submitted by now: submit <= now",
                            where / "submit")
        return job

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
        job = self.job(item, where, index, caps, seen, extra=_RUNNING)
        # moldable: a preemptive policy's running job, at any size of its range
        job = self.moldable(item, where, job, caps)
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
            v = _exact(v)
            if not isinstance(v, bool | int | Fraction):
                raise self.fail(f"params.{key}: {_text(value[key])} is not a number or a bool",
                                "param values are int, real (a number, or \"p/q\") or bool",
                                where / key)
            out[key] = v
        return out

    def fraction(self, value: Any, where: _Where) -> Fraction:
        """An exact real, read as a param's value is (a number, or \"p/q\")."""
        v = _exact(value)
        if isinstance(v, bool) or not isinstance(v, int | Fraction):
            raise self.fail(f"{where}: {_text(value)} is not a number",
                            "write a number (0.25) or an exact rational as a string (\"1/3\")",
                            where)
        return Fraction(v)


def _exact(v: Any) -> Any:
    """A JSON value with its number read exactly: a float (a state built in code) as the
    decimal a file would show for it, a string \"p/q\" as that rational; else as it is (a
    float that is not finite, a string that is no rational: None)."""
    if isinstance(v, float):
        return Fraction(repr(v)) if math.isfinite(v) else None
    if isinstance(v, str):  # an exact rational that has no decimal, e.g. "1/3"
        return parse_real(v) if "/" in v else None
    return v


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

