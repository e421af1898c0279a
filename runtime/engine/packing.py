"""Resource vectors packed into one int, so that "does this request fit?" is one subtraction
whatever the number of resources K.

Field k holds resource k's amount in bits [k*B, (k+1)*B - 1), under a guard bit at
(k+1)*B - 1, with B - 1 bits enough for the largest capacity. Then ``free`` holds ``req`` on
every resource iff ((free | G) - req) & G == G, G the guard bits: a field that holds its
request keeps its guard, one that does not borrows from its own guard only (it cannot reach
below zero), so fields never disturb each other. Amounts must lie in [0, capacity].
"""

from __future__ import annotations

from collections.abc import Sequence


class Packing:
    __slots__ = ("width", "guard")

    def __init__(self, capacities: Sequence[int]) -> None:
        self.width = max(capacities).bit_length() + 1
        self.guard = self.pack([1 << (self.width - 1)] * len(capacities))

    def pack(self, vector: Sequence[int]) -> int:
        width = self.width
        return sum(v << (k * width) for k, v in enumerate(vector))

    def fits(self, free: int, req: int) -> bool:
        guard = self.guard
        return ((free | guard) - req) & guard == guard
