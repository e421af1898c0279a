"""The books a preemptive pass leaves, derived from the jobs' lives job by job
(``preemptive.py``'s monitor).

After every pass the monitor derives again, from the lives of the running and waiting jobs
and not from the loop's own books, what they hold: per resource the use and what
checkpointing jobs hold, the job holding each processor's cpu (never two) and the jobs
keeping processes on each processor. From scratch that costs a pass O(jobs x processors).
``Books`` keeps each job's part of the same derivation and redoes it only for a job whose
life moved (a ``JobLife`` tells its ``watch`` list of every transition) or that entered or
left the running and waiting jobs: its totals are those of a derivation from scratch, at
the cost of what changed. Whatever it finds amiss (a processor held twice, a job both
running and waiting, more jobs resident than allowed) it leaves to the derivation from
scratch, which says what it is.
"""

from __future__ import annotations

from collections.abc import Sequence

from schedc.runtime.engine.lifecycle import HOLDS_CPUS, JobLife


class _Part:
    """One job's part: what it holds per resource, on which processors, whether it holds
    their cpus and whether it keeps processes there."""

    __slots__ = ("alloc", "processors", "holds", "resides", "checkpointing")

    def __init__(self, life: JobLife) -> None:
        self.alloc = life.alloc()
        self.processors = life.processors
        self.holds = life.phase in HOLDS_CPUS
        self.resides = bool(self.alloc[0]) or life.phase == "suspended"
        self.checkpointing = life.phase == "checkpointing"


class Books:
    """What the running and waiting jobs hold, by their lives (the module's doc)."""

    def __init__(self, resources: int, cpus: int, limit: int | None) -> None:
        self.resources, self.cpus, self.limit = resources, cpus, limit
        self.moved: list[JobLife] = []  # the lives' ``watch``: those that moved since
        self.reset()

    def reset(self) -> None:
        """Nothing counted: the next ``update`` derives every job's part."""
        self.members: set[int] = set()
        self.parts: dict[int, _Part] = {}
        self.used = [0] * self.resources
        self.checkpointing = [0] * self.resources
        self.owner = [-1] * self.cpus  # processor -> the job holding its cpu
        self.resident = [0] * self.cpus
        self.moved.clear()

    def update(self, lives: Sequence[JobLife | None], running: set[int],
               waiting: list[int]) -> bool:
        """Count the jobs ``running`` and ``waiting`` now; False if something is amiss."""
        members = running.union(waiting)
        if len(members) != len(running) + len(waiting):
            return False  # a job listed twice
        dirty = members.symmetric_difference(self.members)
        dirty.update(life.job.index for life in self.moved)
        self.moved.clear()
        for index in dirty:
            self._remove(index)
        self.members = members
        for index in dirty:
            life = lives[index]
            if index in members and (life is None or not self._add(index, life)):
                return False
        return True

    def _remove(self, index: int) -> None:
        part = self.parts.pop(index, None)
        if part is None:
            return
        for k, a in enumerate(part.alloc):
            self.used[k] -= a
        if part.checkpointing:
            for k in range(1, len(part.alloc)):
                self.checkpointing[k] -= part.alloc[k]
        if part.holds:
            for p in part.processors:
                self.owner[p] = -1
        if part.resides:
            for p in part.processors:
                self.resident[p] -= 1

    def _add(self, index: int, life: JobLife) -> bool:
        part = self.parts[index] = _Part(life)
        for k, a in enumerate(part.alloc):
            self.used[k] += a
        if part.checkpointing:
            for k in range(1, len(part.alloc)):
                self.checkpointing[k] += part.alloc[k]
        ok = True
        if part.holds:
            for p in part.processors:
                ok = ok and self.owner[p] < 0
                self.owner[p] = index
        if part.resides:
            limit = self.limit
            for p in part.processors:
                self.resident[p] += 1
                ok = ok and (limit is None or self.resident[p] <= limit)
        return ok
