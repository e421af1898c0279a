"""The free-capacity profile a pass plans in: a step function of time, one vector a step.

``times[i]`` starts step ``i``; ``free[i]`` is the free vector on ``[times[i], times[i+1])``
(the last step runs forever). It is built from the running jobs' *estimated* ends (a job is
killed at its estimate, so it never holds its resources longer) and then carries the
reservations made so far in the pass, and the jobs started in the pass.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence

from schedc.runtime.engine.packing import Packing
from schedc.runtime.jobs import RunningJob


class _Steps:
    """What every profile shares: step starts and one free value a step (a vector for
    ``Profile``, an int for the others)."""

    __slots__ = ("times", "free")

    def set_origin(self, now: int) -> None:
        """Move the first step's start to ``now`` (valid only if no step starts in between)."""
        assert len(self.times) == 1 or self.times[1] > now
        self.times[0] = now

    def _cut(self, t: int) -> int:
        """Index of the step starting at ``t``, splitting a step if needed."""
        i = bisect_right(self.times, t) - 1
        if self.times[i] == t:
            return i
        self.times.insert(i + 1, t)
        self.free.insert(i + 1, self._copy(self.free[i]))
        return i + 1

    @staticmethod
    def _copy(value):  # type: ignore[no-untyped-def]
        return value  # ints are immutable

    def _take(self, start: int, end: int, amount: int) -> None:
        """Take an int ``amount`` over ``[start, end)``."""
        i = self._cut(start)
        j = self._cut(end)
        free = self.free
        for s in range(i, j):
            free[s] -= amount


class Profile(_Steps):
    __slots__ = ()

    def __init__(self, now: int, free_now: Sequence[int], running: Iterable[RunningJob]) -> None:
        """``running`` must be sorted by expected end, all ends after ``now``."""
        times = [now]
        cur = list(free_now)
        free = [cur]
        for rj in running:
            end = rj.expected_end
            if end != times[-1]:
                times.append(end)
                cur = cur.copy()
                free.append(cur)
            for k, a in enumerate(rj.alloc):
                cur[k] += a
        self.times = times
        self.free = free

    def fits_at(self, i: int, estimate: int, req: Sequence[int]) -> int:
        """-1 if ``req`` fits from ``times[i]`` for ``estimate``, else the first failing step."""
        times, free = self.times, self.free
        end = times[i] + estimate
        n = len(times)
        while i < n and times[i] < end:
            f = free[i]
            for k, r in enumerate(req):
                if f[k] < r:
                    return i
            i += 1
        return -1

    def earliest(self, estimate: int, req: Sequence[int]) -> int:
        """The earliest step start at which ``req`` fits for ``estimate``."""
        i = 0
        while True:
            bad = self.fits_at(i, estimate, req)
            if bad < 0:
                return self.times[i]
            # Every start in [times[i], times[bad]] overlaps step `bad`: skip past it.
            i = bad + 1

    @staticmethod
    def _copy(value):  # type: ignore[no-untyped-def]
        return value.copy()  # a step's vector is changed in place by ``add``

    def add(self, start: int, end: int, req: Sequence[int]) -> None:
        """Take ``req`` over ``[start, end)`` (a started job or a reservation)."""
        i = self._cut(start)
        j = self._cut(end)
        free = self.free
        for s in range(i, j):
            f = free[s]
            for k, r in enumerate(req):
                f[k] -= r


class Profile1(_Steps):
    """``Profile`` for one resource, with plain ints (same steps, same answers; tested)."""

    __slots__ = ()

    def __init__(self, now: int, free_now: Sequence[int], running: Iterable[RunningJob]) -> None:
        times = [now]
        cur = free_now[0]
        free = [cur]
        for rj in running:
            end = rj.expected_end
            cur += rj.alloc[0]
            if end != times[-1]:
                times.append(end)
                free.append(cur)
            else:
                free[-1] = cur
        self.times = times
        self.free = free

    def fits_at(self, i: int, estimate: int, req: Sequence[int]) -> int:
        times, free = self.times, self.free
        end = times[i] + estimate
        r = req[0]
        n = len(times)
        while i < n and times[i] < end:
            if free[i] < r:
                return i
            i += 1
        return -1

    def earliest(self, estimate: int, req: Sequence[int]) -> int:
        times, free = self.times, self.free
        r = req[0]
        n = len(times)
        i = 0
        while True:
            while free[i] < r:  # the last step is the whole machine: this stops
                i += 1
            end = times[i] + estimate
            j = i + 1
            while j < n and times[j] < end and free[j] >= r:
                j += 1
            if j == n or times[j] >= end:
                return times[i]
            i = j + 1  # every start in [times[i], times[j]] overlaps step j

    def add(self, start: int, end: int, req: Sequence[int]) -> None:
        self._take(start, end, req[0])


class ProfileK(_Steps):
    """``Profile`` for K >= 2 resources, each step's free vector packed in one int
    (``runtime/engine/packing.py``: one subtraction tests all K resources; same steps, same answers,
    tested against ``Profile``). Every ``add`` is of a request that fits (a start or a
    reservation), so no field goes negative.
    """

    __slots__ = ("packing", "guard")

    def __init__(self, now: int, free_now: Sequence[int], running: Iterable[RunningJob],
                 packing: Packing) -> None:
        """``running`` must be sorted by expected end, all ends after ``now``."""
        self.packing = packing
        self.guard = packing.guard
        pack = packing.pack
        times = [now]
        cur = pack(free_now)
        free = [cur]
        for rj in running:
            end = rj.expected_end
            if end != times[-1]:
                times.append(end)
                free.append(cur)
            cur += pack(rj.alloc)
            free[-1] = cur
        self.times = times
        self.free = free

    def pack(self, vector: Sequence[int]) -> int:
        return self.packing.pack(vector)

    def fits_at(self, i: int, estimate: int, req: Sequence[int]) -> int:
        times, free, guard = self.times, self.free, self.guard
        packed = self.pack(req)
        end = times[i] + estimate
        n = len(times)
        while i < n and times[i] < end:
            if ((free[i] | guard) - packed) & guard != guard:
                return i
            i += 1
        return -1

    def earliest(self, estimate: int, req: Sequence[int]) -> int:
        times, free, guard = self.times, self.free, self.guard
        packed = self.pack(req)
        n = len(times)
        i = 0
        while True:
            # the last step is the whole machine: this stops
            while ((free[i] | guard) - packed) & guard != guard:
                i += 1
            end = times[i] + estimate
            j = i + 1
            while j < n and times[j] < end and ((free[j] | guard) - packed) & guard == guard:
                j += 1
            if j == n or times[j] >= end:
                return times[i]
            i = j + 1  # every start in [times[i], times[j]] overlaps step j

    def add(self, start: int, end: int, req: Sequence[int]) -> None:
        self._take(start, end, self.pack(req))
