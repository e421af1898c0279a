"""The one-reservation plan (EASY, depth 1) as a shadow time and extra resources.

With one reservation the profile is "free now, plus the releases of the running jobs" (never
decreasing) minus the reserved job on [shadow, shadow + estimate). So the profile's minimum
over a window starting now is the free vector now if the window ends by the shadow time,
else min(free now, free at the shadow time minus the reserved job) = min(free, extra). A job
started now for estimate e changes this picture by: free -= req, and extra -= req if it
runs past the shadow time (it releases at now + e, after the shadow). Hence the O(1) test in
``fits_now``; ``Profile`` with one reservation gives the same answers (tested).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from schedc.runtime.jobs import RunningJob


class Shadow:
    __slots__ = ("time", "extra")

    def __init__(self, free_now: Sequence[int], running: Iterable[RunningJob],
                 req: Sequence[int]) -> None:
        """Reserve ``req`` at the first estimated end where it fits (all releases at that time
        counted). ``running`` is sorted by expected end; ``req`` does not fit now."""
        avail = list(free_now)
        when = None
        for rj in running:
            end = rj.expected_end
            if when is not None and end != when:
                break  # all releases at `when` are in: does the job fit there?
            for k, a in enumerate(rj.alloc):
                avail[k] += a
            if all(a >= r for a, r in zip(avail, req, strict=True)):
                when = end
        assert when is not None, "a job larger than the machine reached the pass"
        self.time = when
        self.extra = [a - r for a, r in zip(avail, req, strict=True)]

    def fits_now(self, free: Sequence[int], now: int, estimate: int,
                 req: Sequence[int]) -> bool:
        if any(f < r for f, r in zip(free, req, strict=True)):
            return False
        return now + estimate <= self.time or all(
            x >= r for x, r in zip(self.extra, req, strict=True))

    def take(self, now: int, estimate: int, req: Sequence[int]) -> None:
        """A job started now: it holds ``req`` past the shadow time if it ends after it."""
        if now + estimate > self.time:
            self.extra = [x - r for x, r in zip(self.extra, req, strict=True)]
