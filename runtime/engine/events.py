"""The simulator's events, as data, and where they come from.

Kinds: ``Submit`` (a job arrives), ``Finish`` (a running job ends), ``Pass`` (a full pass is
due at an instant whatever else happens: a state's ``now``). A new kind is one more class
here and one more branch in the event loop (``simulator._Simulation.run``).

At an instant the events are handled in a fixed order: all finishes, then all submissions
in file order, then at most one pass (``Agenda.instants``). The sources stay cheap: arrivals
are one sorted list read once, real ends a heap of packed ints (end * M + index).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator

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

    __slots__ = ("arrivals", "subs", "heap", "M", "forced", "finishes")

    def __init__(self, arrivals: list[Job], heap: list[int], M: int) -> None:
        self.arrivals = [Submit(j) for j in arrivals]
        self.subs = [j.submit for j in arrivals]
        self.heap = heap  # the machine's: starts push onto it
        self.M = M
        # One Finish per job, made once (a job ends once; making them here is cheaper than
        # one at each end, on the hot path)
        self.finishes = [Finish(i) for i in range(M)]
        self.forced: list[Pass] = []  # sorted by time (a state's instant comes first)

    def force(self, event: Pass) -> None:
        """A pass due at ``event.now``. Its instant comes before any other event (the only
        forced pass so far is a state's, at its ``now``); a timer will need it in order."""
        self.forced.append(event)
        self.forced.sort(key=lambda p: p.now)

    def instants(self) -> Iterator[tuple[int, list[Event]]]:
        """Each next instant with its events, in handling order: finishes (by index), then
        submissions (in file order), then a forced pass. The heap may grow between two
        instants (starts push their ends onto it). A generator: its locals stay put from
        one instant to the next, which keeps the per-instant cost at the old inline loop's."""
        heap, M, forced = self.heap, self.M, self.forced
        subs, arrivals, finishes = self.subs, self.arrivals, self.finishes
        n = len(subs)
        nxt = 0
        pop = heapq.heappop
        while True:
            if forced:
                # A state's `now`: every event of the state is at or after it (a running
                # job of the state that ended before it ends there).
                now = forced[0].now
            elif nxt < n:
                now = subs[nxt]
                if heap and heap[0] < now * M:
                    now = heap[0] // M
            elif heap:
                now = heap[0] // M
            else:
                return
            limit = now * M + M
            events: list[Event] = []
            while heap and heap[0] < limit:
                events.append(finishes[pop(heap) % M])
            end = nxt
            while end < n and subs[end] == now:
                end += 1
            if end > nxt:
                events += arrivals[nxt:end]
                nxt = end
            while forced and forced[0].now <= now:
                events.append(forced.pop(0))
            yield now, events
