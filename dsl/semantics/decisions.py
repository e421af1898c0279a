"""What one scheduling pass decided: its starts (with their allocations) and its reservations,
in the order the pass made them.

Both interpreters of the pass produce this record: the simulator's walk
(``runtime/engine/walk.py``) for each pass it runs, and the symbolic encoder
(``dsl/verify/pass_encoding/``) read in a Z3 model. The agreement tests compare the two
records directly, and the runtime monitor checks the reservations of each.
"""

from __future__ import annotations

from attrs import frozen


@frozen
class Started:
    """Job ``job`` (its id) started now on ``alloc`` (per resource; alloc[0] is cpus)."""

    job: int
    alloc: tuple[int, ...]


@frozen
class Reserved:
    """Job ``job`` (its id) was reserved ``alloc`` from ``time`` on."""

    job: int
    time: int
    alloc: tuple[int, ...]


Decision = Started | Reserved


@frozen
class PassDecisions:
    """One pass at ``now``: every decision in the order the pass made it (the walk in queue
    order, then the rounds of backfill ``best``)."""

    now: int
    decisions: tuple[Decision, ...] = ()

    @property
    def starts(self) -> tuple[Started, ...]:
        return tuple(d for d in self.decisions if isinstance(d, Started))

    @property
    def reservations(self) -> tuple[Reserved, ...]:
        return tuple(d for d in self.decisions if isinstance(d, Reserved))
