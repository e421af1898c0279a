"""The adaptive steps of papers/003's disciplines as Z3 terms: the twins of
``runtime/engine/adaptive.py``'s ``committed``, ``fill`` and ``give_leftover``, over job
slots whose membership and sizes are terms.

Each loop the simulator runs over a list is unrolled over the slots (a slot outside the
list takes no part), and each value a step computes is named (``PreemptiveState.name``: a
fresh constant defined as its term), so that no term nests the whole loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import z3

from schedc.dsl.verify.preemption.slots import PreemptiveState, count, z3_sum


def committed(first_fit: z3.ArithRef, in_system: z3.ArithRef, delta: z3.ArithRef,
              most: int) -> z3.ArithRef:
    """N' = max(0, floor(N_ff - L / delta)) for ``first_fit`` N_ff in 0 .. ``most`` and
    ``delta`` >= 1: the k in 1 .. most with (N_ff - k) delta >= L (N_ff's values
    enumerated, so that the product stays linear when delta is a param)."""
    return z3_sum([z3.If(z3.Or([z3.And(first_fit == d, (d - k) * delta >= in_system)
                                for d in range(k, most + 1)]), 1, 0)
                   for k in range(1, most + 1)])


def fill(st: PreemptiveState, members: Sequence[z3.BoolRef], sizes: Sequence[z3.ArithRef],
         capacity: z3.ArithRef) -> list[z3.BoolRef]:
    """Which of the ``members`` ``adaptive.fill`` chooses: a subset whose sum of ``sizes``
    is the largest at most ``capacity``; of those, the one that leaves out each later item
    whenever the earlier ones reach the sum. The simulator's bit sets, one Bool per sum
    0 .. P (``capacity`` is at most the processor bound P); over groups of processors, the
    members' subsets (``_fill_subsets``)."""
    if st.grouped:
        return _fill_subsets(st, members, sizes, capacity)
    sums = range(st.P + 1)
    # reach[j][t]: the members among the first j slots have a subset of sum t
    reach = [[z3.BoolVal(t == 0) for t in sums]]
    for m, z in zip(members, sizes, strict=True):
        last = reach[-1]
        reach.append([st.name(z3.Or(last[t], z3.And(m, z3.Or(
            [z3.And(z == u, last[t - u]) for u in range(1, t + 1)])))) for t in sums])
    target: z3.ArithRef = z3.IntVal(0)
    for t in sums[1:]:
        target = z3.If(z3.And(reach[-1][t], t <= capacity), t, target)
    target = st.name(target)
    chosen: list[z3.BoolRef] = [z3.BoolVal(False)] * len(members)
    for i in reversed(range(len(members))):
        reached = z3.Or([z3.And(target == t, reach[i][t]) for t in sums])
        chosen[i] = z3.And(capacity > 0, members[i], z3.Not(reached))
        target = st.name(target - z3.If(chosen[i], sizes[i], 0))
    return chosen


def give_leftover(st: PreemptiveState, resizable: Sequence[z3.BoolRef],
                  sizes: Sequence[z3.ArithRef], maxima: Sequence[z3.ArithRef],
                  leftover: z3.ArithRef, efficient: z3.BoolRef, steps: int
                  ) -> tuple[list[z3.ArithRef], list[list[z3.BoolRef]]]:
    """The sizes after ``leftover`` processors (at most ``steps``) are given one at a time
    to the ``resizable`` slots (in the policy's order), none beyond its maximum, and which
    slot got each (per step, per slot).

    ``leftover equal`` (``efficient`` false) exactly as ``adaptive.give_leftover``: the
    smallest allocation, ties to the earlier job. ``leftover efficient`` reads the jobs'
    speedups, which the encoding does not model: any eligible slot may get the step (a
    free choice), so a proof covers every speedup. Over groups of processors (no bound on
    ``leftover``), the same outcomes in closed form (``_water``), no picks."""
    if st.grouped:
        return _water(st, resizable, sizes, maxima, leftover, efficient), []
    sizes = list(sizes)
    picks: list[list[z3.BoolRef]] = []
    for t in range(steps):
        on = leftover > t
        eligible = [z3.And(r, n < m) for r, n, m in zip(resizable, sizes, maxima, strict=True)]
        free = [st.fresh.const(f"leftover{t}_", "bool") for _ in sizes]
        st.definitions.append(z3.Implies(efficient, z3.And(
            *(z3.Implies(c, z3.And(on, e)) for c, e in zip(free, eligible, strict=True)),
            count(free) <= 1, z3.Implies(z3.And(on, z3.Or(eligible)), z3.Or(free)))))
        step = []
        for i, (e, n) in enumerate(zip(eligible, sizes, strict=True)):
            smallest = z3.And(e, *(z3.Implies(eligible[j], z3.Or(
                n < sizes[j], z3.And(n == sizes[j], i < j)))
                for j in range(len(sizes)) if j != i))
            step.append(z3.And(on, z3.If(efficient, free[i], smallest)))
        sizes = [st.name(n + z3.If(p, 1, 0)) for n, p in zip(sizes, step, strict=True)]
        picks.append(step)
    return sizes, picks


def _subsets(n: int) -> list[tuple[int, ...]]:
    return [c for k in range(n + 1) for c in combinations(range(n), k)]


def _fill_subsets(st: PreemptiveState, members: Sequence[z3.BoolRef],
                  sizes: Sequence[z3.ArithRef], capacity: z3.ArithRef) -> list[z3.BoolRef]:
    """``fill`` over the subsets of the members (sums unbounded): the target is the largest
    sum at most ``capacity`` a subset of members makes; then, last slot first, a member is
    chosen where the slots before it cannot make what is left of the target."""
    n = len(members)

    def makes(subset: tuple[int, ...]) -> tuple[z3.BoolRef, z3.ArithRef]:
        return (z3.And([members[i] for i in subset] or [z3.BoolVal(True)]),
                z3_sum([sizes[i] for i in subset]))

    every = [makes(c) for c in _subsets(n)]
    target = st.fresh.const("fill_target", "int")
    st.definitions.append(z3.And(
        z3.Or([z3.And(m, total == target, total <= capacity) for m, total in every]),
        *(z3.Implies(z3.And(m, total <= capacity), total <= target) for m, total in every)))
    chosen: list[z3.BoolRef] = [z3.BoolVal(False)] * n
    left: z3.ArithRef = target
    for i in reversed(range(n)):
        reached = z3.Or([z3.And(m, total == left) for m, total in map(makes, _subsets(i))])
        chosen[i] = z3.And(capacity > 0, members[i], z3.Not(reached))
        left = st.name(left - z3.If(chosen[i], sizes[i], 0))
    return chosen


def _water(st: PreemptiveState, resizable: Sequence[z3.BoolRef],
           sizes: Sequence[z3.ArithRef], maxima: Sequence[z3.ArithRef],
           leftover: z3.ArithRef, efficient: z3.BoolRef) -> list[z3.ArithRef]:
    """The sizes after ``give_leftover``'s steps, unrolled no more: G = min(leftover, the
    room below the maxima) processors given out. `leftover equal` fills levels: every
    resizable size below a level L rises to it (or its maximum), and the R processors left
    go one each to the earliest slots at L with room (R below their number: else the level
    would be L + 1). `leftover efficient`: any split of G within the rooms (the step's free
    choice, over every order)."""
    n = len(sizes)
    room = [z3.If(r, m - z, 0) for r, z, m in zip(resizable, sizes, maxima, strict=True)]
    total_room = st.name(z3_sum(room))
    given = st.name(z3.If(leftover <= 0, 0, z3.If(leftover < total_room, leftover,
                                                   total_room)))
    level = st.fresh.const("leftover_level", "int")
    raised = [z3.If(z3.And(r, z < level), z3.If(level < m, level, m) - z, 0)
              for r, z, m in zip(resizable, sizes, maxima, strict=True)]
    rest = st.name(given - z3_sum(raised))
    at_level = [z3.And(r, z <= level, level < m)
                for r, z, m in zip(resizable, sizes, maxima, strict=True)]
    extra = [z3.And(a, count(at_level[:i]) < rest) for i, a in enumerate(at_level)]
    free = [st.fresh.const("leftover_share", "int") for _ in range(n)]
    st.definitions.append(z3.Implies(z3.Not(efficient), z3.And(
        level >= 0, rest >= 0, z3.Or(rest == 0, rest < count(at_level)))))
    st.definitions.append(z3.Implies(efficient, z3.And(
        *(z3.And(f >= 0, f <= r) for f, r in zip(free, room, strict=True)),
        z3_sum(free) == given)))
    return [st.name(z + z3.If(efficient, f, x + z3.If(e, 1, 0)))
            for z, f, x, e in zip(sizes, free, raised, extra, strict=True)]
