"""The machine's books during a symbolic preemptive pass, and the transitions that change
them, each under a condition (the path that takes it): the twin of ``preemptive._Loop``'s
``owner``, ``claim_of``, ``resident``, ``used``, ``claimed``, ``outstanding`` and
``checkpointing``, and of its ``_start``, ``_resume``, ``_claim_or_start`` and ``_preempt``.

Each job's action in the pass is recorded (``action``, ``action_procs``), with its phase
and processors after it (``phase_after``, ``procs_after``), for the properties and for the
agreement tests. The books are renamed to fresh constants after each step (``settle``), so
that a term never nests the whole pass.
"""

from __future__ import annotations

from collections.abc import Sequence

import z3

from schedc.dsl import ir
from schedc.dsl.verify.budget import check as in_time
from schedc.dsl.verify.preemption.slots import (
    CHECKPOINT,
    MALLEABLE,
    PENDING,
    REQUEUE,
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
from schedc.dsl.verify.terms import conj, disj, ite

CHECKPOINTING = 4  # a phase after the pass: its processors busy while it is written out
# what the pass did to each job
ACTIONS = ("none", "start", "resume", "claim", "suspend", "checkpoint", "requeue")
NO_ACTION, START, RESUME, CLAIM, SUSPENDED_NOW, CHECKPOINTED_NOW, REQUEUED_NOW = range(7)
FREE = -1  # ``owner`` and ``claim_of`` of a processor nobody holds or claims


def bits_if(cond: z3.BoolRef, then: Sequence[z3.BoolRef], other: Sequence[z3.BoolRef]
            ) -> tuple[z3.BoolRef, ...]:
    return tuple(ite(cond, a, b) for a, b in zip(then, other, strict=True))


class Books:
    """The books and the transitions (the module's doc)."""

    def __init__(self, st: PreemptiveState) -> None:
        self.st = st
        P, K, slots = st.P, st.K, st.slots
        self.owner: list[z3.ArithRef] = []
        for p in range(P):
            in_time()  # the property's time limit (``budget.py``), between steps
            o: z3.ArithRef = z3.IntVal(FREE)
            for s in slots:
                o = z3.If(z3.And(s.is_(RUNNING), s.procs[p]), s.n, o)
            self.owner.append(o)
        self.claim_of: list[z3.ArithRef] = [z3.IntVal(FREE)] * P
        holds = [z3.Or(s.is_(RUNNING), s.is_(SUSPENDED)) for s in slots]
        self.resident = [count([z3.And(h, s.procs[p]) for h, s in zip(holds, slots,
                                                                        strict=True)])
                         for p in range(P)]
        zero = z3.IntVal(0)
        self.used = [zero] + [z3_sum([z3.If(h, s.job.request[k], 0)
                                      for h, s in zip(holds, slots, strict=True)])
                              for k in range(1, K)]
        self.claimed, self.outstanding, self.checkpointing = [zero] * K, [zero] * K, [zero] * K
        self.action: list[z3.ArithRef] = [z3.IntVal(NO_ACTION)] * len(slots)
        no = (z3.BoolVal(False),) * P
        self.action_procs: list[tuple[z3.BoolRef, ...]] = [no] * len(slots)
        self.phase_after: list[z3.ArithRef] = [s.phase for s in slots]
        self.procs_after: list[tuple[z3.BoolRef, ...]] = [s.procs for s in slots]
        self.touched: list[z3.BoolRef] = [z3.BoolVal(False)] * len(slots)
        # what the properties check, each (where it applies, what must hold there, text)
        self.handovers: list[tuple[z3.BoolRef, z3.BoolRef]] = []  # starts on free processors
        self.mechanism_checks: list[tuple[z3.BoolRef, z3.BoolRef, str]] = []
        self.size_checks: list[tuple[z3.BoolRef, z3.BoolRef]] = []  # `size` within range
        self.preempted: list[z3.BoolRef] = [z3.BoolVal(False)] * len(slots)
        self._owned: dict[tuple[int, int], z3.BoolRef] = {}

    # -- helpers -------------------------------------------------------------------------------

    def free(self, k: int) -> z3.ArithRef:
        """Resource ``k`` (after cpus) neither held nor claimed."""
        return self.st.capacity[k] - self.used[k] - self.claimed[k]

    def exists(self, p: int) -> z3.BoolRef:
        return self.st.exists(p)

    def owned_by(self, p: int, n: int) -> z3.BoolRef:
        """Processor ``p``'s holder is slot ``n`` (``FREE``: nobody), one term per holder
        term (the passes ask it of every processor, candidate after candidate)."""
        key = (self.owner[p].get_id(), n)
        term = self._owned.get(key)
        if term is None:
            term = self._owned[key] = self.owner[p] == n
        return term

    def usable(self, p: int, leaving: Sequence[z3.BoolRef] | None = None) -> z3.BoolRef:
        """Processor ``p`` takes one more job's processes (after the slots ``leaving`` go:
        those holding ``p`` leave its residents)."""
        limit = self.st.resident
        if limit is None:
            return z3.BoolVal(True)
        r = self.resident[p]
        if leaving is not None:
            r = r - z3.If(z3.Or([z3.And(go, self.owned_by(p, s.n))
                                 for go, s in zip(leaving, self.st.slots, strict=True)
                                 if not z3.is_false(go)] or [z3.BoolVal(False)]), 1, 0)
        return r < limit

    def settle(self) -> None:
        """Rename the books to fresh constants defined as their terms."""
        in_time()
        name = self.st.name
        self.owner = [name(t) for t in self.owner]
        self.claim_of = [name(t) for t in self.claim_of]
        self.resident = [name(t) for t in self.resident]
        for books in (self.used, self.claimed, self.outstanding, self.checkpointing):
            books[:] = [name(t) for t in books]

    def seconds(self, e: ir.Expr | None, guard: z3.BoolRef, s: Slot) -> z3.ArithRef:
        """A cost in whole seconds, floored, at least 0 (``preemptive._seconds``)."""
        if e is None:
            return z3.IntVal(0)
        v = self.st.evaluate(e, guard, s)
        whole = v if z3.is_int(v) else z3.ToInt(v)
        return z3.If(whole > 0, whole, 0)

    def _record(self, s: Slot, cond: z3.BoolRef, action: int,
                procs: Sequence[z3.BoolRef], phase: z3.ArithRef | int,
                procs_after: Sequence[z3.BoolRef]) -> None:
        n = s.n
        self.action[n] = z3.If(cond, action, self.action[n])
        self.action_procs[n] = bits_if(cond, procs, self.action_procs[n])
        self.phase_after[n] = z3.If(cond, phase, self.phase_after[n])
        self.procs_after[n] = bits_if(cond, procs_after, self.procs_after[n])
        self.touched[n] = z3.Or(self.touched[n], cond)

    def _own(self, s: Slot, cond: z3.BoolRef, procs: Sequence[z3.BoolRef]) -> None:
        """``s`` takes the cpus of ``procs`` (free, or claimed by ``s``: checked)."""
        self.handovers.append((cond, conj([z3.Implies(b, conj([
            self.owned_by(p, FREE), disj([self.claim_of[p] == FREE,
                                          self.claim_of[p] == s.n])]))
            for p, b in enumerate(procs)])))
        n = z3.IntVal(s.n)
        self.owner = [ite(conj([cond, b]), n, o) for b, o in zip(procs, self.owner,
                                                                 strict=True)]

    # -- transitions ---------------------------------------------------------------------------

    def start(self, s: Slot, cond: z3.BoolRef, procs: Sequence[z3.BoolRef],
              size: z3.ArithRef) -> None:
        """A pending or stopped job starts on ``procs``, its ``size`` of them
        (``preemptive._start``)."""
        in_time()
        st = self.st
        self.seconds(st.policy.preemption.dispatch, cond, s)  # type: ignore[union-attr]
        n, job = size, s.job
        # counted once here, so that the checks of its size need not count again
        self.mechanism_checks.append((cond, st.weigh(procs) == size,
                                      "a job starts on as many processors as its size"))
        migratable = z3.And(s.phase == STOPPED, s.mech == CHECKPOINT)
        self.mechanism_checks.append((z3.And(cond, migratable), n == s.size,
                                      "a migratable job restarts at its size"))
        self.mechanism_checks.append((z3.And(cond, z3.Not(migratable)),
                                      in_range(s, n, st.capacity[0]),
                                      "a job starts at a size in its range"))
        self._own(s, cond, procs)
        self.resident = [r + z3.If(z3.And(cond, b), 1, 0)
                         for r, b in zip(self.resident, procs, strict=True)]
        for k in range(1, st.K):
            self.used[k] = self.used[k] + z3.If(cond, job.request[k], 0)
        self._record(s, cond, START, procs, RUNNING, procs)

    def resume(self, s: Slot, cond: z3.BoolRef) -> None:
        """A suspended job resumes on its processors (``preemptive._resume``)."""
        self.seconds(self.st.policy.preemption.resume, cond, s)  # type: ignore[union-attr]
        self._own(s, cond, s.procs)
        self._record(s, cond, RESUME, s.procs, RUNNING, s.procs)

    def claim_or_start(self, s: Slot, cond: z3.BoolRef, procs: Sequence[z3.BoolRef],
                       size: z3.ArithRef) -> None:
        """Start (resume) on ``procs`` (a start: ``size`` of them) if they and the other
        resources are free, else claim them (``preemptive._claim_or_start``)."""
        in_time()
        st = self.st
        suspended = s.phase == SUSPENDED
        free_now = z3.And([z3.Implies(b, self.owner[p] == FREE) for p, b in enumerate(procs)])
        fits = z3.And([s.job.request[k] <= self.free(k) for k in range(1, st.K)])
        now = z3.And(free_now, z3.Or(suspended, fits))
        self.resume(s, z3.And(cond, now, suspended))
        self.start(s, z3.And(cond, now, z3.Not(suspended)), procs, size)
        claim = z3.And(cond, z3.Not(now))
        books = z3.And(claim, z3.Not(suspended))  # a suspended job holds its others
        for k in range(1, st.K):
            req, free = s.job.request[k], self.free(k)
            booked = z3.If(req < free, req, free)
            self.claimed[k] = self.claimed[k] + z3.If(books, booked, 0)
            self.outstanding[k] = self.outstanding[k] + z3.If(books, req - booked, 0)
        self.mechanism_checks.append((claim, conj([z3.Implies(b, disj([
            self.owned_by(p, FREE), disj([conj([self.owned_by(p, v.n),
                                                self.phase_after[v.n] == CHECKPOINTING])
                                          for v in st.slots])]))
            for p, b in enumerate(procs)]),
            "a claim waits only for processors being checkpointed"))
        self.handovers.append((claim, z3.And([z3.Implies(b, self.claim_of[p] == FREE)
                                              for p, b in enumerate(procs)])))
        self.claim_of = [z3.If(z3.And(claim, b), s.n, c)
                         for b, c in zip(procs, self.claim_of, strict=True)]
        self._record(s, claim, CLAIM, procs, s.phase, self.procs_after[s.n])

    def preempt(self, v: Slot, cond: z3.BoolRef) -> None:
        """Running job ``v`` is preempted by its mechanism (``preemptive._preempt``)."""
        in_time()
        st = self.st
        rules = st.policy.preemption
        assert rules is not None
        self.preempted[v.n] = z3.Or(self.preempted[v.n], cond)
        suspend = z3.And(cond, v.mech == SUSPEND)
        saved = z3.And(cond, z3.Or(v.mech == CHECKPOINT, v.mech == MALLEABLE))
        cost = self.seconds(rules.checkpoint, saved, v)
        busy = z3.And(saved, cost > 0)  # checkpointing: it keeps its processors a while
        released = z3.Or(z3.And(saved, cost == 0), z3.And(cond, v.mech == REQUEUE))
        self.owner = [z3.If(z3.And(z3.Or(suspend, released), b), FREE, o)
                      for b, o in zip(v.procs, self.owner, strict=True)]
        self.resident = [r - z3.If(z3.And(released, b), 1, 0)
                         for r, b in zip(self.resident, v.procs, strict=True)]
        for k in range(1, st.K):
            req = v.job.request[k]
            self.used[k] = self.used[k] - z3.If(released, req, 0)
            self.checkpointing[k] = self.checkpointing[k] + z3.If(busy, req, 0)
        none = (z3.BoolVal(False),) * st.P
        self._record(v, suspend, SUSPENDED_NOW, v.procs, SUSPENDED, v.procs)
        self._record(v, busy, CHECKPOINTED_NOW, v.procs, CHECKPOINTING, v.procs)
        self._record(v, z3.And(saved, cost == 0), CHECKPOINTED_NOW, v.procs, STOPPED, none)
        self._record(v, z3.And(cond, v.mech == REQUEUE), REQUEUED_NOW, v.procs, PENDING, none)
        self.mechanism_checks.append((cond, z3.Or(suspend, saved, v.mech == REQUEUE),
                                      "a job preempted has a mechanism that preempts"))
