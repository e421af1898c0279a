"""The simulator's events, as data, and where they come from.

Kinds now: ``Submit`` (a job arrives), ``Finish`` (a running job ends), ``Pass`` (a full pass
is due at an instant whatever else happens: a state's ``now``). Kinds that come next, each
one more class here and one more branch in the event loop (``simulator._Sim.run``):
suspend, resume, migrate, resize, timer.

At an instant the events are handled in a fixed order: all finishes, then all submissions
in file order, then at most one pass (``Agenda.take``). The sources stay cheap: arrivals
are one sorted list read once, real ends a heap of packed ints (end * M + index).
"""

from __future__ import annotations

import heapq

from schedc.runtime.jobs import Job


class Submit:
    """``job`` is queued."""

    __slots__ = ("job",)

    def __init__(self, job: Job) -> None:
        self.job = job


class Finish:
    """The running job of index ``index`` ends."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


class Pass:
    """A full pass at ``now`` (no continuation of the last one)."""

    __slots__ = ("now",)

    def __init__(self, now: int) -> None:
        self.now = now


Event = Submit | Finish | Pass


class Agenda:
    """The events to come: arrivals (sorted by submit, then index), the machine's end heap,
    and passes forced at given instants."""

    __slots__ = ("arrivals", "subs", "nxt", "heap", "M", "forced")

    def __init__(self, arrivals: list[Job], heap: list[int], M: int) -> None:
        self.arrivals = [Submit(j) for j in arrivals]
        self.subs = [j.submit for j in arrivals]
        self.nxt = 0  # the next arrival
        self.heap = heap  # the machine's: starts push onto it
        self.M = M
        self.forced: list[Pass] = []  # sorted by time (a state's instant comes first)

    def force(self, event: Pass) -> None:
        """A pass due at ``event.now``. Its instant comes before any other event (the only
        forced pass so far is a state's, at its ``now``); a timer will need it in order."""
        self.forced.append(event)
        self.forced.sort(key=lambda p: p.now)

    def next_instant(self) -> int | None:
        """The time of the next event; None: none is left."""
        heap, M = self.heap, self.M
        if self.forced:
            # A state's `now`: every event of the state is at or after it (a running job
            # of the state that ended before it ends there).
            return self.forced[0].now
        if self.nxt < len(self.subs):
            now = self.subs[self.nxt]
        elif heap:
            return heap[0] // M
        else:
            return None
        if heap and heap[0] < now * M:
            now = heap[0] // M
        return now

    def take(self, now: int) -> list[Event]:
        """The events at ``now``, in handling order: finishes (by index), submissions (in
        file order), then a forced pass."""
        heap, M = self.heap, self.M
        limit = now * M + M
        events: list[Event] = []
        pop = heapq.heappop
        while heap and heap[0] < limit:
            events.append(Finish(pop(heap) % M))
        subs, nxt = self.subs, self.nxt
        end = nxt
        n = len(subs)
        while end < n and subs[end] == now:
            end += 1
        if end > nxt:
            events += self.arrivals[nxt:end]
            self.nxt = end
        while self.forced and self.forced[0].now <= now:
            events.append(self.forced.pop(0))
        return events
