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

from typing import Any

from schedc.runtime.engine.monitor import MonitorViolation

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
