"""The two preemptive passes, step by step as ``runtime/engine/preemptive.py`` takes them
(its module doc says what each step does): `preempt when` (``_by_rule``: resume, start,
preempt) and `preempt by order` (``_select``). ``encode_preemptive`` builds the state, the
books and the pass, and returns what the properties read (``PreemptivePass``).

The slots that the simulator sorts are assumed sorted (any state's jobs can be put in its
slots that way): the waiting slots, or every slot the selection orders, by the policy's key
(then submit time, then position); the running slots of `preempt when` that may be
preempted, by the victims' key (then position). Loops that stop early in the simulator
(`break`) carry a Bool "stopped" instead.

Two encodings of the processors a job takes. ``exact`` (the agreement tests', and the
counterexamples': each replays) takes the lowest free processors, as the simulator does.
The proofs' (``symmetric``; the prover uses it for `preempt by order`) takes any free
processors (free before held, as many as the simulator would): every numbering's pass is
one of its passes, and what it allows for a state it allows, renumbered, for every
renumbering, while no property reads a processor's number. So it proves over one
numbering of each state, the one that lists processors by what they hold (``canonical``:
columns of the slots' processor bits in descending order), which cuts the P! numberings Z3
would otherwise search, and its takes have no count of the processors below each one. Its
``lemmas`` state counts the pass implies (each starter's take, the pool left after it, the
selection's cpus within what is free), so that Z3 adds numbers instead of pairing up
processors; ``tests/dsl/verify/test_preemptive_symmetry.py`` proves each from the
encoding's definitions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import z3
from attrs import frozen

from schedc.dsl import ir
from schedc.dsl.verify.budget import check as in_time
from schedc.dsl.verify.preemption.adaptive import committed, fill, give_leftover
from schedc.dsl.verify.preemption.books import CHECKPOINTING, FREE, Books, bits_if
from schedc.dsl.verify.preemption.slots import (
    MALLEABLE,
    NONE,
    PENDING,
    RUNNING,
    STOPPED,
    SUSPEND,
    SUSPENDED,
    PreemptiveState,
    Slot,
    count,
    in_range,
    z3_sum,
)
from schedc.dsl.verify.symbolic import FreshNames
from schedc.dsl.verify.vocabulary import OVERRUN


@frozen(eq=False)
class PreemptivePass:
    """An encoded pass: the state, the books after it, and per slot what the properties
    read of the pass's start (``preemptible``: it may be preempted; ``waiting_head``: the
    first waiting job in the policy's order; ``cpus``: its `size`, the cpus it starts on
    before any `leftover`), with the checks that each victim was needed (``needed``)."""

    state: PreemptiveState
    books: Books
    preemptible: tuple[z3.BoolRef, ...]
    head: tuple[z3.BoolRef, ...]
    cpus: tuple[z3.ArithRef, ...]
    needed: tuple[tuple[z3.BoolRef, z3.BoolRef], ...]
    # `leftover`: per processor given out, which slot got it (``adaptive.give_leftover``)
    picks: tuple[tuple[z3.BoolRef, ...], ...] = ()
    # facts the definitions imply, stated for Z3 (the module's doc)
    lemmas: tuple[z3.BoolRef, ...] = ()


def encode_preemptive(policy: ir.Policy, waiting: int, running: int, processors: int,
                      fresh: FreshNames | None = None, overrun: str = OVERRUN,
                      symmetric: bool = False, canonical: bool | None = None,
                      grouped: bool = False) -> PreemptivePass:
    """The pass over ``waiting`` and ``running`` slots and at most ``processors``; with
    ``symmetric``, any free processors taken where the simulator takes the lowest, and
    (``canonical``, by default with it) one numbering of each state (the module's doc);
    with ``grouped``, the takes of ``symmetric`` over groups of processors of any machine
    size (``groups.py``), ``processors`` unused."""
    st = PreemptiveState(policy, waiting, running, processors,
                         fresh if fresh is not None else FreshNames(), overrun, grouped)
    symmetric = symmetric or grouped
    rules = policy.preemption
    assert rules is not None
    if not grouped and (symmetric if canonical is None else canonical):
        columns = [[s.procs[p] for s in st.slots] for p in range(processors)]
        for p in range(processors - 1):
            st.assume("the processors are numbered by what they hold (one numbering of "
                      "each state: the proofs take any free processors)",
                      lex_at_least(columns[p], columns[p + 1]))
    books = Books(st)
    return (_OrderPass if st.select else _RulePass)(st, books, symmetric).encode()


def lex_at_least(a: Sequence[z3.BoolRef], b: Sequence[z3.BoolRef]) -> z3.BoolRef:
    """Bits ``a`` at least ``b`` lexicographically (true above false)."""
    out: z3.BoolRef = z3.BoolVal(True)
    for x, y in reversed(list(zip(a, b, strict=True))):
        out = z3.Or(z3.And(x, z3.Not(y)), z3.And(x == y, out))
    return out


def at_most(n: z3.ArithRef, most: z3.ArithRef) -> z3.ArithRef:
    """min(max(n, 0), most): how many of ``most`` processors a take of ``n`` gets."""
    return z3.If(n <= 0, 0, z3.If(n <= most, n, most))


def lex_less(a: Sequence[z3.ExprRef], b: Sequence[z3.ExprRef]) -> z3.BoolRef:
    """``a`` before ``b`` lexicographically (Python's tuple order)."""
    out: z3.BoolRef = z3.BoolVal(False)
    for x, y in reversed(list(zip(a, b, strict=True))):
        if z3.is_real(x) or z3.is_real(y):
            x, y = _real(x), _real(y)
        out = z3.Or(x < y, z3.And(x == y, out))
    return out


def _real(v: z3.ExprRef) -> z3.ArithRef:
    return z3.ToReal(v) if z3.is_int(v) else v


def lowest(avail: Sequence[z3.BoolRef], n: z3.ArithRef) -> tuple[z3.BoolRef, ...]:
    """The ``n`` lowest processors of ``avail``."""
    out, before = [], z3.IntVal(0)
    for a in avail:  # the count before each processor, built on the one before it
        out.append(z3.And(a, before < n))
        before = before + z3.If(a, 1, 0)
    return tuple(out)


class _Pass:
    def __init__(self, st: PreemptiveState, books: Books, symmetric: bool = False) -> None:
        self.st, self.books = st, books
        self.symmetric = symmetric  # any free processors, not the lowest (the module's doc)
        # grouped: each slot's takes, the groups each marks (``groups.py``)
        self.takes: dict[int, list[tuple[z3.BoolRef, ...]]] = {}
        self.lemmas: list[z3.BoolRef] = []
        self.rules = st.policy.preemption
        assert self.rules is not None
        slots = st.slots
        # each slot's protection, evaluated where the simulator does (``_preemptible``)
        self.preemptible: list[z3.BoolRef] = []
        for s in slots:
            in_time()
            could = z3.And(s.is_(RUNNING), s.mech != NONE, self.under_limit(s))
            kept: z3.BoolRef = z3.BoolVal(False)
            if self.rules.keep is not None:
                kept = self.st.evaluate(self.rules.keep, could, s)
            self.preemptible.append(z3.And(could, z3.Not(kept)))
        self.cpus: list[z3.ArithRef] = [s.job.request[0] for s in slots]
        self.needed: list[tuple[z3.BoolRef, z3.BoolRef]] = []

    def under_limit(self, s: Slot) -> z3.BoolRef:
        limit = self.st.limit
        return z3.BoolVal(True) if limit is None else s.preemptions < limit

    def order_key(self, s: Slot, guard: z3.BoolRef) -> list[z3.ExprRef]:
        """The policy's key of ``s`` (``preemptive._ordered``), then submit, position."""
        out: list[z3.ExprRef] = []
        for key in self.st.policy.order:
            v = self.st.evaluate(key.expr, guard, s)
            if z3.is_bool(v):
                v = z3.If(v, 1, 0)
            out.append(-v if key.descending else v)
        return [*out, s.job.submit, s.index]

    def assume_sorted(self, slots: Sequence[Slot], member: Sequence[z3.BoolRef],
                      keys: Sequence[Sequence[z3.ExprRef]], what: str) -> None:
        for i in range(len(slots)):
            in_time()  # the property's time limit (``budget.py``), between steps
            for j in range(i + 1, len(slots)):
                self.st.assume(what, z3.Implies(z3.And(member[i], member[j]),
                                                lex_less(keys[i], keys[j])))

    def sized(self, s: Slot, guard: z3.BoolRef) -> z3.ArithRef:
        """The cpus a waiting job starts on (``preemptive._cpus``): a stopped migratable
        job's size, else the policy's `size` (evaluated and checked within the job's range
        where ``guard`` holds), else its request."""
        n, evaluated = self.sized_later(s)
        evaluated(guard)
        return n

    def sized_later(self, s: Slot) -> tuple[z3.ArithRef, Callable[[z3.BoolRef], None]]:
        """``sized``'s term, and what says where the simulator evaluates it (its
        obligations and the range check hold there), to be called once that is known."""
        st, books = self.st, self.books
        migratable = z3.And(s.phase == STOPPED, s.mech != MALLEABLE)
        if st.policy.size is None:
            return z3.If(migratable, s.size, s.job.request[0]), lambda guard: None
        v, made = st.evaluate_later(st.policy.size, s)
        n = v if z3.is_int(v) else z3.ToInt(v)
        within = in_range(s, n, st.capacity[0])

        def evaluated(guard: z3.BoolRef) -> None:
            g = z3.And(guard, z3.Not(migratable), st.pass_runs)
            st.oblige(made, g)
            books.size_checks.append((g, within))

        return z3.If(migratable, s.size, n), evaluated

    def lowest(self, avail: Sequence[z3.BoolRef], n: z3.ArithRef, taker: Slot,
               go: z3.BoolRef, size: z3.ArithRef | None = None) -> tuple[z3.BoolRef, ...]:
        """The ``n`` lowest processors of ``avail`` (all if fewer); ``symmetric``: any
        so many of them, a fresh Bool each; grouped: ``taker``'s groups among them, as
        many processors, where ``go`` (it takes) holds (``size``: how many ``avail``
        holds, if not its weight)."""
        st = self.st
        if st.grouped:
            bits = self.group_take(taker, go, avail)
            size = st.weigh(avail) if size is None else size
            st.definitions.append(st.weigh(bits) == z3.If(go, at_most(n, size), 0))
            return bits
        if not self.symmetric:
            return lowest(avail, n)
        picks = tuple(st.fresh.const("take", "bool") for _ in avail)
        st.definitions.append(z3.And(*(z3.Implies(b, a) for b, a in zip(picks, avail,
                                                                        strict=True)),
                                     count(picks) == at_most(n, count(avail))))
        return picks

    def take_sorted(self, usable: Sequence[z3.BoolRef], n: z3.ArithRef, taker: Slot,
                    go: z3.BoolRef, owner: Sequence[z3.ArithRef] | None = None
                    ) -> tuple[z3.BoolRef, ...]:
        """The first ``n`` of ``usable`` sorted free processors first, then held ones, each
        by number (held as ``owner`` says: the books now, or when the simulator sorted
        them): the lowest free ones, then the lowest held ones for the rest (``taker``'s
        take where ``go`` holds: the grouped encoding's)."""
        owner = self.books.owner if owner is None else owner
        free = [z3.And(u, owner[p] == FREE) for p, u in enumerate(usable)]
        held = [z3.And(u, owner[p] != FREE) for p, u in enumerate(usable)]
        st = self.st
        rest = n - st.weigh(free)
        # over groups, the held ones counted as the usable ones less the free ones (the
        # same number, by which Z3 adds up a take without pairing the groups off)
        first = self.lowest(free, n, taker, go)
        then = self.lowest(held, rest, taker, go,
                           st.weigh(usable) - st.weigh(free) if st.grouped else None)
        taken = tuple(z3.Or(a, b) for a, b in zip(first, then, strict=True))
        if st.grouped:  # the free and the held processors taken are apart
            self.lemmas.append(st.weigh(taken) == st.weigh(first) + st.weigh(then))
        return taken

    def placed_on(self, s: Slot, taken: Sequence[z3.BoolRef]) -> tuple[z3.BoolRef, ...]:
        """Where ``s`` is placed: a suspended job on its own processors, another on its
        take ``taken``. Over groups, with the lemma that a start's processors count as its
        take (Z3 then reads a start's size off the take's count, not group by group)."""
        procs = bits_if(s.phase == SUSPENDED, s.procs, taken)
        if self.st.grouped:
            self.lemmas.append(z3.Implies(s.phase != SUSPENDED,
                                          self.st.weigh(procs) == self.st.weigh(taken)))
        return procs

    def group_take(self, taker: Slot, go: z3.BoolRef, avail: Sequence[z3.BoolRef]
                   ) -> tuple[z3.BoolRef, ...]:
        """The groups of ``avail`` that ``taker`` takes where ``go`` holds: those it is the
        taker of (``finish_takes`` says that each of them it took somewhere, or is empty)."""
        bits = tuple(z3.And(go, a) if g.taker == taker.n else z3.BoolVal(False)
                     for g, a in zip(self.st.groups, avail, strict=True))
        self.takes.setdefault(taker.n, []).append(bits)
        return bits

    def finish_takes(self) -> None:
        """A group's taker took it in one of its takes, or the group is empty."""
        st = self.st
        for g, group in enumerate(st.groups):
            if group.taker is None:
                continue
            sites = [bits[g] for bits in self.takes.get(group.taker, [])]
            st.definitions.append(z3.Implies(st.exists(g), z3.Or(sites or [z3.BoolVal(False)])))

    def result(self, head: Sequence[z3.BoolRef],
               picks: Sequence[Sequence[z3.BoolRef]] = ()) -> PreemptivePass:
        if self.st.grouped:
            self.finish_takes()
        return PreemptivePass(self.st, self.books, tuple(self.preemptible), tuple(head),
                              tuple(self.cpus), tuple(self.needed),
                              tuple(tuple(p) for p in picks), tuple(self.lemmas))


class _RulePass(_Pass):
    """`preempt when` (``preemptive._by_rule``)."""

    def encode(self) -> PreemptivePass:
        st, books = self.st, self.books
        # each candidate's rooms (``rooms``), by its slot
        self.rooms_of: dict[int, list[z3.ArithRef]] = {}
        wait_region, run_region = st.regions
        waiting = [st.slots[i] for i in wait_region]
        running = [st.slots[i] for i in run_region]
        keys = [self.order_key(s, s.present) for s in waiting]
        self.assume_sorted(waiting, [s.present for s in waiting], keys,
                           "the waiting slots are in the policy's order")
        for s in waiting:  # 1. resume (each transition checks the time limit)
            books.resume(s, z3.And(s.is_(SUSPENDED), *(
                z3.Implies(b, z3.And(books.owner[p] == FREE, books.claim_of[p] == FREE))
                for p, b in enumerate(s.procs))))
            books.settle()
        free = [z3.And(books.exists(p), books.owner[p] == FREE, books.claim_of[p] == FREE,
                       books.usable(p)) for p in range(st.P)]
        strict: z3.BoolRef = z3.BoolVal(False)
        for s in waiting:  # 2. start
            visit = z3.And(s.is_(PENDING, STOPPED), z3.Not(strict))
            n = self.cpus[s.n] = self.sized(s, visit)
            fit = z3.And(st.weigh(free) >= n, *(s.job.request[k] <= books.free(k)
                                             for k in range(1, st.K)))
            go = z3.And(visit, fit)
            procs = tuple(z3.And(go, b) for b in self.lowest(free, n, s, go))
            books.start(s, go, procs, n)
            left = [z3.And(f, z3.Not(b)) for f, b in zip(free, procs, strict=True)]
            if st.grouped:  # a start takes its size of the free processors, the rest stay
                self.lemmas += [st.weigh(procs) == z3.If(go, at_most(n, st.weigh(free)), 0),
                                st.weigh(left) == st.weigh(free) - st.weigh(procs)]
            free = left
            if st.policy.backfill.kind == "none":
                strict = z3.Or(strict, z3.And(visit, z3.Not(fit)))
            books.settle()
        if self.rules.rule is not None:  # 3. preempt
            self.preempt(waiting, running)
        # the slots are sorted: the first waiting slot holds the head of the order
        no = z3.BoolVal(False)
        head = [waiting[0].present, *(no for _ in waiting[1:]), *(no for _ in running)]
        return self.result(head)

    def preempt(self, waiting: list[Slot], running: list[Slot]) -> None:
        st, books, rule = self.st, self.books, self.rules.rule
        assert rule is not None
        open_ = [self.preemptible[v.n] for v in running]
        vkeys = []
        for v, o in zip(running, open_, strict=True):
            key: list[z3.ExprRef] = []
            if self.rules.victims:
                for k in self.rules.victims:
                    x = st.evaluate(k.expr, o, victim=v)
                    if z3.is_bool(x):
                        x = z3.If(x, 1, 0)
                    key.append(-x if k.descending else x)
            else:  # youngest first (``policy._youngest_first``)
                key.append(v.job.active.since_start)  # type: ignore[union-attr]
            vkeys.append([*key, v.index])
        self.assume_sorted(running, open_, vkeys, "the running slots that may be preempted "
                           "are in the victims' order")
        for s in waiting:
            in_time()
            active = z3.And(s.present, z3.Not(books.touched[s.n]), z3.Or(open_))
            by_suspended, success_s = self.for_suspended(s, active, running, open_)
            by_waiting, success_p = self.for_waiting(s, active, running, open_)
            victims = [z3.Or(a, b) for a, b in zip(by_suspended, by_waiting, strict=True)]
            for v, chosen in zip(running, victims, strict=True):
                books.preempt(v, chosen)
            busy = [z3.And(c, books.phase_after[v.n] == CHECKPOINTING)
                    for v, c in zip(running, victims, strict=True)]
            usable = [z3.And(books.exists(p), books.claim_of[p] == FREE, z3.Or(
                books.owner[p] == FREE, *(z3.And(c, books.owner[p] == v.n)
                                          for v, c in zip(running, victims, strict=True))),
                books.usable(p, self.over_all(running, busy))) for p in range(st.P)]
            if st.grouped:  # what is usable now is the room the candidate was fitted to
                self.lemmas.append(z3.Implies(success_p, st.weigh(usable) == self.room(
                    by_waiting, self.rooms_of[s.n])))
            taken = self.take_sorted(usable, self.cpus[s.n], s, success_p)
            books.claim_or_start(s, z3.Or(success_s, success_p), self.placed_on(s, taken),
                                 self.cpus[s.n])
            open_ = [z3.And(o, z3.Not(books.touched[v.n]))
                     for o, v in zip(open_, running, strict=True)]
            books.settle()

    def over_all(self, running: list[Slot], bits: Sequence[z3.BoolRef]) -> list[z3.BoolRef]:
        """``bits`` of the running slots, as a list over every slot."""
        out = [z3.BoolVal(False)] * len(self.st.slots)
        for v, b in zip(running, bits, strict=True):
            out[v.n] = b
        return out

    def for_suspended(self, s: Slot, active: z3.BoolRef, running: list[Slot],
                      open_: list[z3.BoolRef]) -> tuple[list[z3.BoolRef], z3.BoolRef]:
        """A suspended candidate's victims: the holders of its processors, all open and
        the rule holding for each (asked in position order, stopping at the first no)."""
        st, books, rule = self.st, self.books, self.rules.rule
        assert rule is not None
        cand = z3.And(active, s.phase == SUSPENDED)
        holder = [z3.Or([z3.And(b, books.owner[p] == v.n) for p, b in enumerate(s.procs)])
                  for v in running]
        ok = z3.And(*(z3.Implies(b, books.claim_of[p] == FREE) for p, b in enumerate(s.procs)),
                    *(z3.Implies(b, z3.Or(books.owner[p] == FREE, *(
                        z3.And(o, books.owner[p] == v.n)
                        for v, o in zip(running, open_, strict=True))))
                      for p, b in enumerate(s.procs)))
        values, made = [], []
        for v in running:
            value, obligations = st.evaluate_later(rule, cand=s, victim=v)
            values.append(value)
            made.append(obligations)
        for r, v in enumerate(running):
            in_time()
            earlier = [z3.Implies(z3.And(holder[q], running[q].index < v.index), values[q])
                       for q in range(len(running)) if q != r]
            st.oblige(made[r], z3.And(cand, ok, holder[r], *earlier))
        success = z3.And(cand, ok, *(z3.Implies(h, x) for h, x in zip(holder, values,
                                                                       strict=True)))
        return [z3.And(success, h) for h in holder], success

    def for_waiting(self, s: Slot, active: z3.BoolRef, running: list[Slot],
                    open_: list[z3.BoolRef]) -> tuple[list[z3.BoolRef], z3.BoolRef]:
        """A pending or stopped candidate's victims (``preemptive._try_preempt``): open
        ones the rule holds for, in the victims' order, until it fits; then each it does
        not need dropped again, last taken first."""
        st, rule = self.st, self.rules.rule
        assert rule is not None
        cand = z3.And(active, s.is_(PENDING, STOPPED))
        n = self.cpus[s.n]
        rooms = self.rooms_of[s.n] = self.rooms(running)
        pre = self.fits_after(s, n, running, open_, rooms)
        done: z3.BoolRef = z3.BoolVal(False)
        chosen: list[z3.BoolRef] = []
        for r, v in enumerate(running):
            in_time()
            ask = z3.And(cand, pre, open_[r], z3.Not(done))
            pick = z3.And(ask, st.evaluate(rule, ask, cand=s, victim=v))
            chosen.append(pick)
            done = z3.Or(done, z3.And(pick, self.fits_after(s, n, running, chosen + [
                z3.BoolVal(False)] * (len(running) - r - 1), rooms)))
        success = z3.And(cand, pre, done)
        for r in reversed(range(len(running))):
            in_time()
            without = [z3.BoolVal(False) if q == r else c for q, c in enumerate(chosen)]
            drop = z3.And(success, chosen[r], self.fits_after(s, n, running, without, rooms))
            chosen[r] = z3.And(chosen[r], z3.Not(drop))
        out = [z3.And(success, c) for c in chosen]
        if st.grouped:  # the victims kept after the drops still make room for it
            self.lemmas.append(z3.Implies(success, self.room(out, rooms) >= n))
        for r in range(len(running)):
            in_time()
            without = [z3.BoolVal(False) if q == r else c for q, c in enumerate(out)]
            self.needed.append((out[r], z3.Not(self.fits_after(s, n, running, without,
                                                               rooms))))
        return out, success

    def rooms(self, running: list[Slot]) -> list[z3.ArithRef]:
        """The processors a candidate may take, on the books now: the free ones, then for
        each running slot those it holds, each usable once it leaves (if preempted; a
        suspended victim's processes stay)."""
        st, books = self.st, self.books
        open_ = [z3.And(books.exists(p), books.claim_of[p] == FREE) for p in range(st.P)]
        out = [st.name(st.weigh([z3.And(o, books.owned_by(p, FREE), books.usable(p))
                                 for p, o in enumerate(open_)]))]
        for v in running:
            leaves = self.over_all(running, [z3.BoolVal(u is v) for u in running])
            gone = [z3.And(o, books.owned_by(p, v.n), z3.If(
                v.mech != SUSPEND, books.usable(p, leaves), books.usable(p)))
                for p, o in enumerate(open_)]
            out.append(st.name(st.weigh(gone)))
        return out

    @staticmethod
    def room(victims: Sequence[z3.BoolRef], rooms: Sequence[z3.ArithRef]) -> z3.ArithRef:
        """The free processors' room and that of each of ``victims`` (``rooms``)."""
        return rooms[0] + z3_sum([z3.If(c, r, 0) for c, r in zip(victims, rooms[1:],
                                                                  strict=True)
                                  if not z3.is_false(c)])

    def fits_after(self, s: Slot, n: z3.ArithRef, running: list[Slot],
                   victims: Sequence[z3.BoolRef],
                   rooms: Sequence[z3.ArithRef] | None = None) -> z3.BoolRef:
        """``s`` fits once ``victims`` are preempted (``preemptive._fits_after``), its
        room the ``rooms`` (``rooms``: made once for the books of a candidate) of the free
        processors and the victims'."""
        st, books = self.st, self.books
        leaving = [z3.And(c, v.mech != SUSPEND) for v, c in zip(running, victims, strict=True)]
        room = self.room(victims, self.rooms(running) if rooms is None else rooms)
        others = [s.job.request[k] <= books.free(k) + z3_sum(
            [z3.If(go, v.job.request[k], 0) for v, go in zip(running, leaving, strict=True)])
                  for k in range(1, st.K)]
        return z3.And(room >= n, *others)


class _OrderPass(_Pass):
    """`preempt by order` (``preemptive._select``)."""

    def encode(self) -> PreemptivePass:
        st, books, slots = self.st, self.books, self.st.slots
        waiting = [s.is_(PENDING, SUSPENDED, STOPPED) for s in slots]
        member = [z3.Or(w, o) for w, o in zip(waiting, self.preemptible, strict=True)]
        keys = [self.order_key(s, m) for s, m in zip(slots, member, strict=True)]
        self.assume_sorted(slots, member, keys, "the jobs the selection orders are in the "
                           "policy's order")
        # each slot's `size` (``_cpus``, cached for the pass), evaluated where the selection,
        # the subset or the leftover first asks for it
        evaluated = []
        for s in slots:
            self.cpus[s.n], done = self.sized_later(s)
            evaluated.append(done)
        self.size_asked: list[z3.BoolRef] = [z3.BoolVal(False)] * len(slots)
        stays = [z3.And(s.is_(RUNNING), z3.Not(o)) for s, o in zip(slots, self.preemptible,
                                                                    strict=True)]
        taken = [z3.Or([z3.And(x, s.procs[p]) for x, s in zip(stays, slots, strict=True)])
                 for p in range(st.P)]
        budget = [z3.IntVal(0)] + [
            books.free(k) + z3_sum([z3.If(z3.And(o, s.mech != SUSPEND), s.job.request[k], 0)
                                    for s, o in zip(slots, self.preemptible, strict=True)])
            for k in range(1, st.K)]
        avail = [z3.And(books.exists(p), z3.Not(taken[p]), books.usable(p))
                 for p in range(st.P)]
        used: z3.ArithRef = z3.IntVal(0)  # cpus the selected starters take, anywhere
        strict: z3.BoolRef = z3.BoolVal(False)
        selected = []
        for s, m in zip(slots, member, strict=True):
            in_time()
            own = z3.Or(s.phase == RUNNING, s.phase == SUSPENDED)
            visit = z3.And(m, z3.Or(own, z3.Not(strict)))
            keeps = z3.Or(s.phase == SUSPENDED, s.mech == SUSPEND)  # needs nothing more
            need = [z3.IntVal(0)] + [z3.If(keeps, 0, s.job.request[k]) for k in range(1, st.K)]
            ok_own = z3.And(
                *(z3.Not(z3.And(b, t)) for b, t in zip(s.procs, taken, strict=True)),
                used <= st.weigh([z3.And(a, z3.Not(b)) for a, b in zip(avail, s.procs,
                                                                     strict=True)]),
                *(need[k] <= budget[k] for k in range(1, st.K)))
            n = self.cpus[s.n]
            self.ask_size(s, z3.And(visit, z3.Not(own)))
            ok_new = z3.And(used + n <= st.weigh(avail),
                            *(s.job.request[k] <= budget[k] for k in range(1, st.K)))
            ok = z3.And(visit, z3.If(own, ok_own, ok_new))
            mine = z3.And(ok, own)
            taken = [z3.Or(t, z3.And(mine, b)) for t, b in zip(taken, s.procs, strict=True)]
            avail = [z3.And(a, z3.Not(z3.And(mine, b))) for a, b in zip(avail, s.procs,
                                                                         strict=True)]
            used = st.name(used + z3.If(z3.And(ok, z3.Not(own)), n, 0))
            # the cpus selected so far fit in what is left: each step checks it
            self.lemmas.append(used <= st.weigh(avail))
            for k in range(1, st.K):
                budget[k] = st.name(budget[k] - z3.If(ok, z3.If(own, need[k],
                                                                  s.job.request[k]), 0))
            selected.append(ok)
            if st.policy.backfill.kind == "none":
                strict = z3.Or(strict, z3.And(visit, z3.Not(ok)))
            self.needed.append((z3.And(self.preemptible[s.n], z3.Not(ok)),
                                z3.Not(z3.And(m, ok_own))))
        if st.delta is not None:
            selected = self.subset(selected, member, st.weigh(avail), budget)
        for s, o, ok in zip(slots, self.preemptible, selected, strict=True):
            books.preempt(s, z3.And(o, z3.Not(ok)))
        books.settle()
        pool = [z3.And(books.exists(p), z3.Not(taken[p]), books.claim_of[p] == FREE,
                       books.usable(p)) for p in range(st.P)]
        # counts follow processor by processor: the pool holds what the selection counted
        self.lemmas.append(z3.Implies(z3.And([z3.Implies(a, b) for a, b in zip(
            avail, pool, strict=True)]), st.weigh(pool) >= st.weigh(avail)))
        starting = [z3.And(ok, s.is_(PENDING, STOPPED)) for s, ok in zip(slots, selected,
                                                                        strict=True)]
        sizes = list(self.cpus)
        self.picks: list[list[z3.BoolRef]] = []
        if self.rules.leftover is not None:
            sizes = self.leftover(starting, pool)
        for done, asked in zip(evaluated, self.size_asked, strict=True):
            done(asked)
        # the starters take the pool in order, each the first of what is left (the
        # simulator's slices of the pool, sorted once before the starts)
        sorted_by = list(books.owner)
        # over groups, what the starters from each one on ask for (a size below 1 takes
        # none); the other encodings make no term for it
        asks = [z3.If(go, z3.If(n > 0, n, 0), 0) for go, n in zip(starting, sizes,
                                                                   strict=True)] \
            if st.grouped else []
        for i, (s, ok, go, n) in enumerate(zip(slots, selected, starting, sizes,
                                                strict=True)):
            if st.grouped:  # the pool left holds what the starters from here on ask for
                self.lemmas.append(z3_sum(asks[i:]) <= st.weigh(pool))
            taken = tuple(z3.And(go, b) for b in self.take_sorted(pool, n, s, go, sorted_by))
            books.claim_or_start(s, z3.And(ok, s.is_(PENDING, STOPPED, SUSPENDED)),
                                 self.placed_on(s, taken), n)
            left = [z3.And(u, z3.Not(b)) for u, b in zip(pool, taken, strict=True)]
            # a take gets as many as it asks of the pool, or all of it; the rest stays
            self.lemmas += [st.weigh(taken) == z3.If(go, at_most(n, st.weigh(pool)), 0),
                            st.weigh(left) == st.weigh(pool) - st.weigh(taken)]
            pool = left
            books.settle()
        # the head: the first job of the order, if it waits (a running one runs on)
        head = []
        before: z3.BoolRef = z3.BoolVal(False)
        for w, m in zip(waiting, member, strict=True):
            head.append(z3.And(w, z3.Not(before)))
            before = z3.Or(before, m)
        return self.result(head, self.picks)

    def ask_size(self, s: Slot, where: z3.BoolRef) -> None:
        self.size_asked[s.n] = z3.Or(self.size_asked[s.n], where)

    def subset(self, selected: list[z3.BoolRef], member: list[z3.BoolRef],
               cpus: z3.ArithRef, budget: list[z3.ArithRef]) -> list[z3.BoolRef]:
        """The SUBSET variant (``preemptive._subset``): the first N' starters the selection
        chose are kept, the others dropped; then the other waiting jobs whose sizes best
        fill the cpus left (``adaptive.fill``) are added, each if its resources fit."""
        st, slots = self.st, self.st.slots
        assert st.delta is not None
        K = range(1, st.K)
        starter = [z3.And(ok, s.is_(PENDING, STOPPED)) for s, ok in zip(slots, selected,
                                                                       strict=True)]
        keep = st.name(committed(count(starter), count([s.present for s in slots]),
                                 st.delta, len(slots)))
        dropped = [z3.And(x, count(starter[:i]) >= keep) for i, x in enumerate(starter)]
        budget = list(budget)
        for k in K:
            budget[k] = st.name(budget[k] + z3_sum([z3.If(d, s.job.request[k], 0)
                                                    for d, s in zip(dropped, slots,
                                                                    strict=True)]))
        kept = [z3.And(ok, z3.Not(d)) for ok, d in zip(selected, dropped, strict=True)]
        free = st.name(cpus - z3_sum([z3.If(z3.And(k_, s.is_(PENDING, STOPPED)),
                                             self.cpus[s.n], 0)
                                       for k_, s in zip(kept, slots, strict=True)]))
        others = [z3.And(m, z3.Not(k_), s.is_(PENDING, STOPPED),
                         *(s.job.request[k] <= budget[k] for k in K))
                  for s, m, k_ in zip(slots, member, kept, strict=True)]
        for s, o in zip(slots, others, strict=True):
            self.ask_size(s, o)
        filled = fill(st, others, self.cpus, free)
        out = []
        for s, k_, f in zip(slots, kept, filled, strict=True):
            add = z3.And(f, *(s.job.request[k] <= budget[k] for k in K))
            for k in K:
                budget[k] = st.name(budget[k] - z3.If(add, s.job.request[k], 0))
            out.append(z3.Or(k_, add))
        return out

    def leftover(self, starting: list[z3.BoolRef], pool: list[z3.BoolRef]
                 ) -> list[z3.ArithRef]:
        """`leftover` (``preemptive._give_leftover``): the processors of the pool free now
        that no starter takes go to the starters whose size may change (pending ones,
        stopped malleable ones), up to their maximum."""
        st, books, slots = self.st, self.books, self.st.slots
        free_now = st.weigh([z3.And(u, books.owner[p] == FREE) for p, u in enumerate(pool)])
        left = st.name(free_now - z3_sum([z3.If(go, self.cpus[s.n], 0)
                                          for s, go in zip(slots, starting, strict=True)]))
        resizable = [z3.And(go, z3.Or(s.phase == PENDING, s.mech == MALLEABLE))
                     for s, go in zip(slots, starting, strict=True)]
        cap = st.capacity[0]
        maxima = [z3.If(s.job.max_size < cap, s.job.max_size, cap) for s in slots]
        sizes, self.picks = give_leftover(st, resizable, self.cpus, maxima, left,
                                          st.efficient, st.P)
        # what is given out is at most what is left, which is in the pool
        self.lemmas += [z3_sum(sizes) - z3_sum(self.cpus) <= z3.If(left > 0, left, 0),
                        free_now <= st.weigh(pool)]
        if st.grouped:  # a resized job grows towards its maximum, no further; others keep
            # their size; so a size in the job's range stays in it
            self.lemmas += [z3.If(r, z3.Implies(z <= m, z3.And(z <= new, new <= m)), new == z)
                            for r, z, m, new in zip(resizable, self.cpus, maxima, sizes,
                                                    strict=True)]
            self.lemmas += [z3.Implies(in_range(s, z, cap), in_range(s, new, cap))
                            for s, z, new in zip(slots, self.cpus, sizes, strict=True)]
        return sizes
