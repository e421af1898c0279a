"""The adaptive steps of papers/003's disciplines (section 5), apart from any loop: which of
the first fit's jobs a SUBSET variant commits to, the subset of the other jobs that best
fills the processors left, and how leftover processors are given out.

``runtime/engine/preemptive.py`` calls them from its selection (`preempt by order` with
`subset` and `leftover`); they take sizes and counts only, so the tests pin them by hand.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence


def committed(first_fit: int, in_system: int, delta: int) -> int:
    """N' of LSF-RTC-ADSUBSET: of the ``first_fit`` jobs the first fit selected, the first
    floor(N_ff max(1 - L / (delta N_ff), 0)) are kept, L the jobs in the system. The more
    jobs wait, the fewer are committed and the more the subset sum chooses."""
    if first_fit <= 0:
        return 0
    if delta < 1:
        raise ValueError(f"delta {delta} < 1")
    # exact in integers: N_ff - L / delta, floored, at least 0
    return max(0, (first_fit * delta - in_system) // delta)


def fill(sizes: Sequence[int], capacity: int) -> list[int]:
    """The indices (ascending) of a subset of ``sizes`` whose sum is the largest at most
    ``capacity`` (the fewest surplus processors); of the subsets with that sum, the one that
    uses the earliest jobs (each later job is left out whenever the sum can be reached
    without it). A subset-sum over bit sets: one int per prefix, ``capacity`` + 1 bits."""
    if capacity <= 0:
        return []
    mask = (1 << (capacity + 1)) - 1
    reach = [1]  # reach[j]: the sums the first j jobs can make
    for s in sizes:
        last = reach[-1]
        reach.append(last | ((last << s) & mask) if s >= 0 else last)
    target = reach[-1].bit_length() - 1
    chosen = []
    for j in range(len(sizes), 0, -1):
        if target == 0:
            break
        if not (reach[j - 1] >> target) & 1:  # the sum needs job j - 1
            chosen.append(j - 1)
            target -= sizes[j - 1]
    return sorted(chosen)


def give_leftover(sizes: list[int], maxima: Sequence[int], leftover: int,
                  speedup: Callable[[int, int], float] | None = None) -> None:
    """Give ``leftover`` processors one at a time to the jobs of ``sizes`` (in the policy's
    order; changed in place), none beyond its maximum: without ``speedup`` (``leftover
    equal``) to the smallest allocation, with it (``leftover efficient``, speedup(job, n))
    to the job whose efficiency S(n + 1) / (n + 1) is highest after the step (the paper:
    "the job whose efficiency will be highest *after* the allocation"). Ties: the earlier
    job."""
    def key(j: int) -> tuple[float, int]:
        n = sizes[j]
        if speedup is None:
            return (n, j)
        return (-speedup(j, n + 1) / (n + 1), j)

    heap = [key(j) for j in range(len(sizes)) if sizes[j] < maxima[j]]
    heapq.heapify(heap)
    while leftover > 0 and heap:
        j = heapq.heappop(heap)[1]
        sizes[j] += 1
        leftover -= 1
        if sizes[j] < maxima[j]:
            heapq.heappush(heap, key(j))

