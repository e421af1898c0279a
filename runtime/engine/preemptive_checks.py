"""The first pass of a replayed state, checked for the properties `schedc verify` proves of
a preemptive pass that the loop's after-pass books check (``preemptive._Loop._check``) does
not see: ``protected``, ``mechanism`` and ``progress`` (dsl/verify/preemption/properties.py
states each). A counterexample of one of them is a state whose first pass breaks it: its
replay stops here, for that property.

Only a state replay's first pass, when the state asks for it (`"check":
["preemptive-pass"]`, as every preemptive counterexample does): `progress` is a property of
one pass from a given state (a rule may rightly leave the head of the order waiting, pass
after pass, in a run), and the others hold by construction in every pass (the agreement
tests hold the encoding to the loop; this is the replay's independent word).

The twin of the encoding, from the loop's jobs: a running job **may be preempted** when it
runs (not dispatching or checkpointing), its mechanism preempts, it is under the limit and
`keep` does not protect it. The **head** is the first job of the policy's order (with
`preempt by order`, running jobs that may be preempted are in it too) if it waits. It
**could be placed** if every job that may be preempted were, by its mechanism: suspended
victims keep their processes and other resources, the others release theirs.
"""

from __future__ import annotations

import heapq
import types
from typing import Any

from schedc.runtime.engine.lifecycle import TIMED
from schedc.runtime.engine.monitor import MonitorViolation
from schedc.runtime.engine.schedule import Departure

WAITING = ("pending", "suspended", "stopped")
PREEMPTIONS = {"suspend": "suspend", "checkpoint": "checkpoint", "malleable": "checkpoint",
               "requeue": "requeue"}


class FirstPassChecks:
    """Call ``before`` as the pass starts and ``after`` with its actions (``Action``)."""

    def __init__(self, loop: Any) -> None:
        self.loop = loop
        self.by_id = {job.id: job.index for job in loop.workload.jobs}
        self.before_state: dict[int, tuple[str, tuple[int, ...], int]] = {}
        self.preemptible: set[int] = set()
        self.head: int | None = None
        self.head_fits = False

    def before(self, now: int) -> None:
        loop = self.loop
        for i in (*loop.running, *loop.waiting):
            life = loop._life(i)
            self.before_state[i] = (life.phase, life.processors, life.size)
        self.preemptible = {v for v in loop.running if loop._preemptible(v, set())}
        members = [*loop.waiting, *(sorted(self.preemptible) if loop.rules.select else ())]
        order = loop._ordered(members) if members else []
        first = order[0] if order else None
        self.head = first if first is not None and loop._life(first).phase in WAITING else None
        self.head_fits = self.head is not None and self._could_fit(self.head)

    def _could_fit(self, index: int) -> bool:
        loop = self.loop
        life = loop._life(index)
        stays = [v for v in loop.running if v not in self.preemptible]
        blocked = {p for v in stays for p in loop._life(v).processors}
        if life.phase == "suspended":
            return blocked.isdisjoint(life.processors)
        keeps = [*stays, *(i for i in loop.waiting if loop._life(i).phase == "suspended"),
                 *(v for v in self.preemptible if loop._life(v).mechanism == "suspend")]
        limit = loop.rules.resident
        residents = [0] * loop.cap[0]
        for i in keeps:
            for p in loop._life(i).processors:
                residents[p] += 1
        usable = sum(1 for p in range(loop.cap[0]) if p not in blocked
                     and (limit is None or residents[p] < limit))
        request = life.job.request
        others = all(request[k] + sum(loop._life(i).job.request[k] for i in keeps)
                     <= loop.cap[k] for k in range(1, len(request)))
        return usable >= loop._cpus(life) and others

    def after(self, now: int, actions: tuple) -> None:
        loop = self.loop
        name = loop.policy.name
        placed = set()
        for a in actions:
            index = self.by_id[a.job]
            life = loop._life(index)
            phase, procs, size = self.before_state.get(index, ("pending", (), 0))
            if a.kind in ("suspend", "checkpoint", "requeue"):
                if index not in self.preemptible:
                    raise MonitorViolation(
                        f"t={now}: policy {name}: job {a.job} was preempted ({a.kind}) while "
                        "protected: `keep` holds for it, it is at the preemption limit, its "
                        "mechanism is `none`, or it was not running", "protected")
                if PREEMPTIONS.get(life.mechanism) != a.kind:
                    raise MonitorViolation(f"t={now}: policy {name}: job {a.job} of mechanism "
                                           f"{life.mechanism} was preempted by {a.kind}",
                                           "mechanism")
                continue
            placed.add(index)
            self._placed_right(now, a, life, phase, procs, size)
        if self.head is not None and self.head_fits and self.head not in placed:
            job = loop._life(self.head).job
            raise MonitorViolation(
                f"t={now}: policy {name}: job {job.id}, the head of the order, was not "
                "placed, though preempting the running jobs that may be preempted would "
                "make room for it", "progress")

    def _placed_right(self, now: int, a: Any, life: Any, phase: str, procs: tuple[int, ...],
                      size: int) -> None:
        loop = self.loop
        name = loop.policy.name
        job = life.job
        wrong = None
        if a.kind == "resume" or (a.kind == "claim" and phase == "suspended"):
            if phase != "suspended" or tuple(sorted(a.processors)) != tuple(sorted(procs)):
                wrong = "a suspended job resumes on its own processors only"
        elif phase == "stopped" and life.mechanism == "checkpoint":
            if len(a.processors) != size:
                wrong = f"a migratable job restarts at its size {size}"
        elif not job.min_procs <= len(a.processors) <= min(job.max_procs, loop.cap[0]):
            wrong = f"a job starts at a size in [{job.min_procs}, {job.max_procs}]"
        if a.kind == "claim":
            for p in a.processors:
                holder = loop.owner[p]
                if holder >= 0 and loop._life(holder).phase != "checkpointing":
                    wrong = "a claim waits only for processors being checkpointed"
        if wrong is not None:
            raise MonitorViolation(f"t={now}: policy {name}: job {job.id} {a.kind} on "
                                   f"{list(a.processors)}: {wrong}", "mechanism")


# -- what every preemptive verdict assumes of a run ----------------------------------------------

# the kinds of ``Assumptions.found``, each said once per run
SCOPE, OVERRUN = "scope", "overrun"
EVERY_VERDICT = "every verdict of `schedc verify` for this policy"


class Assumptions:
    """What every verdict of `schedc verify` assumes of the state a preemptive pass starts
    from, beyond what the readers and the loop always give (dsl/verify/preemption/slots.py;
    the verdicts' caveats say each), checked at the start of every pass of a run:

    - the **scope**: no dispatch or checkpoint in flight, no claim waiting;
    - under `--overrun kill` and `estimate` (the verdicts' default): every running job has
      run less than its estimate at its request (its work on one cpu of a moldable one) and,
      where the policy's formulas read `job.progress`, its progress grows at least at the
      rate its estimate gives. `--overrun extend` lets a job outrun its estimate.

    The third, machines of at most P processors, is the run's machine and the same at every
    pass (``run_warnings.py``). Each departure is kept once (``found``): the first pass
    that leaves it. The cost is that of what changed: the lives that moved since the last
    look (the monitor's ``Books.moved``), the latest end of a dispatch or checkpoint begun,
    and a heap of the instants at which running jobs leave their estimates."""

    def __init__(self, loop: Any) -> None:
        self.loop = loop
        self.found: dict[str, Departure] = {}
        self.flight: tuple[int, int] = (0, -1)  # the latest end of a dispatch or checkpoint, job
        self.rate = reads_progress(loop.policy)
        # (instant, job index, its last start): a running job leaves the assumption then
        self.overdue: list[tuple[int, int, int]] = []
        self.watched: dict[int, int] = {}  # job index -> the last start already looked at

    def before(self, now: int) -> None:
        """At the start of a pass at ``now`` (some job waits)."""
        self.look()
        loop, found = self.loop, self.found
        if SCOPE not in found:
            end, index = self.flight
            if end > now:
                life = loop._life(index)
                self._found(SCOPE, now, life.job.id,
                            f"job {life.job.id} is {life.phase} until t={end} as the pass "
                            "starts")
            elif loop.claims:
                index = next(iter(loop.claims))
                self._found(SCOPE, now, loop._life(index).job.id,
                            f"job {loop._life(index).job.id} waits on its claim of "
                            f"processors {list(loop.claims[index].processors)}")
        heap = self.overdue
        while heap and heap[0][0] <= now and OVERRUN not in found:
            _, index, start = heapq.heappop(heap)
            life = loop._life(index)
            if life.phase == "running" and life.last_start == start:
                self._overrun(now, life)

    def look(self) -> None:
        """The lives that moved since the last look: a dispatch or checkpoint begun, a job
        running from a new start. Call before the monitor's books count them."""
        for life in self.loop.books.moved:
            if life.phase in TIMED and life.phase_end is not None:
                if life.phase_end > self.flight[0]:
                    self.flight = (life.phase_end, life.job.index)
            elif life.phase == "running" and OVERRUN not in self.found:
                index = life.job.index
                if self.watched.get(index) != life.last_start:
                    self.watched[index] = life.last_start
                    when = self._leaves(life)
                    if when is not None:
                        heapq.heappush(self.overdue, (when, index, life.last_start))

    def _leaves(self, life: Any) -> int | None:
        """When running ``life`` leaves the overrun assumptions, if it does before it
        completes (only a job whose run time at its size exceeds its estimate there: never
        under `--overrun kill` or `estimate`)."""
        job, n, start = life.job, life.size, life.last_start
        t = life.time_at(n)
        moldable = job.moldable is not None
        at_request, at_one = n == job.request[0], moldable and n == 1
        fixed = job.work if at_one and job.request[0] != 1 else job.estimate
        when = None
        if self.rate and (not moldable or at_request or at_one) and t > fixed:
            when = start + 1  # its progress grows slower than its estimate says
        elif at_request and t > job.estimate:
            when = start + job.estimate
        elif at_one and t > job.work:
            when = start + job.work
        return when if when is not None and when < life.completion_time() else None

    def _overrun(self, now: int, life: Any) -> None:
        job, n = life.job, life.size
        ran = now - life.last_start
        at_one = job.moldable is not None and n == 1 and job.request[0] != 1
        fixed, what = (job.work, "its work on one cpu") if at_one else (job.estimate,
                                                                        "its estimate")
        mode = self.loop.workload.overrun
        if ran >= fixed:
            said = (f"job {job.id} has run {ran:,} s since its last start, past {what} "
                    f"{fixed:,} s (--overrun {mode})")
            assumed = "a running job has run less than its estimate"
        else:
            said = (f"job {job.id} runs {life.time_at(n):,} s on {n} cpus, longer than "
                    f"{what} {fixed:,} s (--overrun {mode}), and the policy reads "
                    "job.progress")
            assumed = ("a running job's progress grows at least at the rate its estimate "
                       "gives")
        self._found(OVERRUN, now, job.id, f"{said}: schedc verify's proofs (unless verified "
                    f"with --overrun extend) assume {assumed}")

    def note(self, exc: MonitorViolation) -> None:
        """Add to a stop of the run where the run had left the proofs' assumptions: the
        stop then refutes no proof (``exc``'s message, its kind kept)."""
        if self.found:
            said = "; ".join(d.message for d in self.found.values())
            exc.args = (f"{exc.args[0]} (note: {said})", *exc.args[1:])

    def _found(self, kind: str, now: int, job: int, said: str) -> None:
        if kind == SCOPE:
            said += (": schedc verify's proofs cover passes that start with no dispatch or "
                     "checkpoint in flight and no claim waiting")
        self.found[kind] = Departure(kind, now, job, f"t={now}: {said}; {EVERY_VERDICT} "
                                     "leaves out such passes, from this one on")


def reads_progress(policy: Any) -> bool:
    """Whether a formula of ``policy`` (a ``RuntimePolicy``) may read `job.progress`: its
    generated functions call ``progress_at`` (``dsl/semantics/python_code.py``); a
    callable not generated counts as reading it."""
    rules = policy.preemption
    fns = [policy.order_key, policy.size, *(getattr(rules, f, None) for f in (
        "mechanism", "may_preempt", "keep", "victim_key", "dispatch", "resume", "checkpoint",
        "size"))]
    if rules is not None and rules.split is not None:
        fns += [rules.split.cand, rules.split.victim]
    return any(_calls(fn, "progress_at", set()) for fn in fns if fn is not None)


def _calls(fn: Any, name: str, seen: set[int]) -> bool:
    """``fn``'s code (its nested code, the functions it closes over) names ``name``."""
    if id(fn) in seen:
        return False
    seen.add(id(fn))
    if isinstance(fn, type | types.BuiltinFunctionType):
        return False  # a class or a builtin (math.floor) reads no job
    code = getattr(fn, "__code__", None)
    if code is None:
        return callable(fn)
    stack = [code]
    while stack:
        c = stack.pop()
        if name in c.co_names:
            return True
        stack.extend(k for k in c.co_consts if hasattr(k, "co_names"))
    cells = getattr(fn, "__closure__", None) or ()
    return any(_calls(cell.cell_contents, name, seen) for cell in cells
               if callable(getattr(cell, "cell_contents", None)))
