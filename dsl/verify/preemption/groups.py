"""The processors of a preemptive pass as groups, for proofs that hold on every machine
size (``PreemptiveState(grouped=True)``).

What a pass does to a processor depends on which jobs hold it at the pass's start (its
column: the slots running or suspended on it) and on which job takes it in the pass, if
any (each processor is taken at most once: a job started in the pass is not preempted in
it). Processors alike in both are interchangeable, so a state is the number of processors
of each kind: one group per kind, its length any Int >= 0 and the lengths summing to the
machine's cpus, with no bound on them. The takes are the proofs' (any free processors, then
any held ones, as many as the simulator takes: ``passes.py``'s doc), so every pass the
simulator makes on any numbering of any machine is a pass of the groups: a property proved
of them holds for every machine size.

Only jobs with the `suspend` mechanism leave processes on a processor beside another job's,
so without it a column holds at most one slot.
"""

from __future__ import annotations

from itertools import combinations

from attrs import frozen

from schedc.dsl import ir


@frozen
class Group:
    """The processors held by the slots of ``column`` at the pass's start and taken by slot
    ``taker`` in the pass (None: by none)."""

    column: frozenset[int]
    taker: int | None


def processor_groups(policy: ir.Policy, waiting: int, running: int) -> tuple[Group, ...]:
    """Every kind of processor a pass over ``waiting`` and ``running`` slots can have: the
    columns (any set of slots that may hold processes together), each untaken or taken by a
    slot that may start in the pass and holds none of it."""
    rules = policy.preemption
    assert rules is not None
    total = waiting + running
    stacked = any(m.kind == "suspend" for m in rules.mechanisms)
    if rules.rule is None:  # `preempt by order`: any slot may hold, or take, processors
        takers = range(total)
        columns = _sets(range(total), total if stacked else 1)
    else:  # `preempt when`: the waiting slots take, and hold only if suspended; the
        # running ones hold distinct processors
        takers = range(waiting)
        columns = [w | r for w in _sets(range(waiting), waiting if stacked else 0)
                   for r in _sets(range(waiting, total), 1)]
    return (*(Group(c, None) for c in columns),
            *(Group(c, t) for c in columns for t in takers if t not in c))


def group_count(policy: ir.Policy, waiting: int, running: int) -> int:
    """How many groups ``processor_groups`` makes, counted without making them (by
    order: a column of k slots of T has T - k takers; by a rule, the waiting ones)."""
    rules = policy.preemption
    assert rules is not None
    stacked = any(m.kind == "suspend" for m in rules.mechanisms)
    if rules.rule is None:
        t = waiting + running
        return 2 ** t + t * 2 ** (t - 1) if stacked else 1 + t + t * t
    w = waiting
    per_running = (2 ** w + w * 2 ** (w - 1)) if stacked else 1 + w
    return (1 + running) * per_running


def _sets(items: range, most: int) -> list[frozenset[int]]:
    """The subsets of ``items`` of at most ``most`` elements."""
    return [frozenset(c) for k in range(most + 1) for c in combinations(items, k)]
