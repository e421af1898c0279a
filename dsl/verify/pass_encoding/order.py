"""The order of the queue slots: the policy's keys, then submit time, then file order, and
the queue's further jobs after the slots. Twin: the simulator's sort of the queue at a pass
(``_resort`` in runtime/engine/simulator.py)."""

from __future__ import annotations

from collections.abc import Sequence

import z3

from schedc.dsl import ir
from schedc.dsl.verify.pass_encoding.state import EncoderState
from schedc.dsl.verify.symbolic import SymJob, SymState, sym_eval


class OrderSteps(EncoderState):
    """The slots hold the queue in policy order (an assumption, not a sort)."""

    def after_slots(self, job: SymJob) -> list[z3.BoolRef]:
        """A further job comes after every slot in the policy's order (keys that read the
        queue would need the tail to evaluate: then the order is left free; else every
        template is made once the slots' keys are known)."""
        policy = self.policy
        if not self.exact:
            # The step facts leave a further job's place free: it may also wait before the
            # job a step visits, so each step's lemma covers a job with any number of jobs
            # ahead of it (its rank in the queue, `count(j in queue where j.submit <
            # job.submit)`, is unbounded), not only the N - 1 slots: the lemmas then prove
            # the pass for every queue length (docs/explanation/verification.md, "What a
            # proof promises").
            return []
        if any("queue" in ir.dependencies(k.expr) for k in policy.order):
            return []
        row, defined = [], []
        for k in policy.order:
            result = sym_eval(k.expr, job=job, state=self.start_state, params=self.params,
                              fresh=self.fresh)
            defined += result.definitions
            v = result.value
            row.append((z3.If(v, 1, 0) if z3.is_bool(v) else v, k.descending))
        row.append((job.submit, False))
        return [*defined, *(z3.Implies(self.queue[q].present, _lex_le(self.keys[q][:-1], row))
                            for q in range(self.N))]

    def order(self) -> None:
        """The queue slots hold the queue in policy order: keys, then submit time, then file
        order. Twin: the simulator's sort of the queue at the pass (``_resort``)."""
        N, queue, queue_tail, tail_copy = self.N, self.queue, self.queue_tail, self.tail_copy
        self.start_state = SymState(now=self.now, capacity=self.capacity, used=self.used0,
                                    queue=queue, bpu=self.bpu, power=self.power,
                                    running=self.running, queue_tail=queue_tail)
        self.keys = []
        # the tail's copies come after the slots in file order (index N)
        keyed = [(job, job.present) for job in queue]
        if tail_copy is not None:
            keyed.append((tail_copy, queue_tail.count >= 1))
        for q, (job, present) in enumerate(keyed):
            row = []
            for key in self.policy.order:
                value = self.evaluate(key.expr, job, self.start_state, present)
                if key.expr.type == "bool":
                    value = z3.If(value, 1, 0)
                row.append((value, key.descending))
            row.append((job.submit, False))
            row.append((z3.IntVal(q), False))  # file order: a strict total order
            self.keys.append(row)

        # Without loss of generality the slots hold the queue in policy order: any queue can
        # be laid out so, with the file order of tied jobs kept, and nothing in the language
        # reads a slot's position. This keeps the pass free of a symbolic sort.
        self.assume("queue slots hold the queue in policy order",
                    [z3.Implies(queue[q + 1].present, self.not_after(q, q + 1))
                     for q in range(N - 1)])
        if tail_copy is not None:
            self.assume("the further jobs come after the slots in the policy's order",
                        [z3.Implies(z3.And(queue[q].present, queue_tail.count >= 1),
                                    self.not_after(q, N))
                         for q in range(N)])

    def not_after(self, b: int, a: int) -> z3.BoolRef:
        """Slot b's key tuple is at most slot a's (lexicographic)."""
        result = z3.BoolVal(True)
        for (vb, desc), (va, _) in reversed(list(zip(self.keys[b][:-1], self.keys[a][:-1],
                                                     strict=True))):
            less = vb > va if desc else vb < va
            result = z3.Or(less, z3.And(vb == va, result))
        return result


def _lex_le(a: Sequence[tuple[z3.ExprRef, bool]], b: Sequence[tuple[z3.ExprRef, bool]]
            ) -> z3.BoolRef:
    """Key tuple ``a`` is at most ``b`` (lexicographic, each key ascending or descending)."""
    result = z3.BoolVal(True)
    for (va, desc), (vb, _) in reversed(list(zip(a, b, strict=True))):
        less = va > vb if desc else va < vb
        result = z3.Or(less, z3.And(va == vb, result))
    return result
