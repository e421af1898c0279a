"""What every step of the encoder shares: its inputs and options, the state it builds (all
declared here, each set by the step named beside it), and the record every formula it
evaluates leaves (its definitions, obligations and use of `log`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import z3

from schedc.dsl import ir
from schedc.dsl.verify.budget import check as in_time
from schedc.dsl.verify.pass_encoding.record import (
    Assumption,
    ChoiceEstimate,
    Definitions,
    FreshSize,
    SizedEstimate,
    SizeResult,
    Start,
)
from schedc.dsl.verify.symbolic import (
    FreshNames,
    Obligation,
    QueueTail,
    SymJob,
    SymState,
    sym_eval,
)
from schedc.dsl.verify.verdict import Bounds

# terms_at(point, resource): what a step adds to the plan's use there (``PlanSteps.start``)
Terms = Callable[[int, int], list[z3.ArithRef]]


def z3_sum(terms) -> z3.ArithRef:
    terms = list(terms)
    return z3.Sum(terms) if terms else z3.IntVal(0)


class EncoderState:
    """The encoder's state. Z3's search follows the order in which terms are made, so the
    terms are made by the steps in ``PassEncoder.encode``'s fixed order, never here."""

    def __init__(self, policy: ir.Policy, bounds: Bounds, *, idle: bool,
                 depth_value: int | None | str, exact: bool, earliest: bool,
                 tail: str, resized: bool,
                 kept: tuple[ir.Invariant, ...] | None = None) -> None:
        # Each attribute is set by the step named above it, in ``encode``'s order, and only
        # annotated here: that order is also the order in which an encoder's terms are
        # released, which decides the ids Z3 gives later terms (its search follows them).
        # -- the options (``encode_pass``)
        self.policy, self.bounds, self.resized = policy, bounds, resized
        self.kept = policy.invariants if kept is None else kept
        self.idle, self.depth_value, self.exact, self.earliest = idle, depth_value, exact, earliest
        self.tail = tail
        self.K = len(policy.machine.resources)
        self.N, self.R = bounds.queued, bounds.running

        # -- what evaluating formulas records (``evaluate``)
        self.fresh = FreshNames()
        self.assumptions: list[Assumption] = []
        self.obligations: list[Obligation] = []
        self.obligation_steps: list[int | None] = []  # per obligation, its step (None: shared)
        self.definitions = Definitions()
        self._uses_log = False

        # -- the inputs (``inputs``)
        self.now: z3.ArithRef
        self.capacity: tuple[z3.ArithRef, ...]
        self.params: dict[str, z3.ExprRef]
        self.depth: int | None | z3.ArithRef
        self.bpu: tuple[z3.ArithRef, ...] | None  # per resource (None: not read)
        self.power: tuple[z3.ArithRef, ...] | None
        self.labels: Sequence[str]
        self.running: tuple[SymJob, ...]
        self.queue: tuple[SymJob, ...]
        self.queue_tail: QueueTail | None
        self.tail_copy: SymJob | None
        self.held: tuple[tuple[z3.ArithRef, ...], ...]  # per running slot, per resource
        self.used0: tuple[z3.ArithRef, ...]  # per resource, before the pass

        # -- the order (``order``)
        self.start_state: SymState
        self.keys: list[list[tuple[z3.ExprRef, bool]]]  # per slot, its key tuple

        # -- the decisions' terms and the plan (``declare``)
        self.started_walk: list[z3.BoolRef]
        self.reserved: list[z3.BoolRef]
        self.res_time: list[z3.ArithRef]
        self.visited: list[z3.BoolRef]
        self.rigid: bool  # no size rule
        self.kind: ir.BackfillKind
        self.best: bool  # backfill `best`
        self.rounds: int  # of backfill `best`
        self.steps: int  # walk steps (one a slot), then the rounds
        self.size_walk: list[z3.ArithRef | None]
        self.alloc_walk: list[tuple[z3.ArithRef, ...]]
        self.sized_estimates: list[SizedEstimate]
        self.choice_estimates: list[ChoiceEstimate]
        self.est_walk: list[z3.ArithRef]
        self.points: list[z3.ArithRef]  # the plan's checkpoints: now, then each reservation
        self.use: list[list[list[z3.ArithRef]]]  # [step][point][resource]
        self.selective: bool  # `reserve D per KEY or when COND` (see ``wait_or_reserve``)
        self.key_of: list[z3.ExprRef | None]
        self.may_reserve: list[z3.BoolRef]
        self.slack_on: bool
        self.earliest_time: list[z3.ArithRef]  # `slack` only
        self.slack_of: list[z3.ArithRef]
        self.picked: list[list[z3.BoolRef]]  # [round][slot]
        self.size_round: list[list[z3.ArithRef | None]]
        self.est_round: list[list[z3.ArithRef]]
        self.started: list[z3.BoolRef]  # in the walk or a round
        self.final_est: list[z3.ArithRef]
        self.allocs: list[tuple[z3.ArithRef, ...]]  # the final ones
        self.sizes: list[SizeResult]
        self.size_obligations: list[tuple[Obligation, ...]]  # of each size's formulas
        # `size choose N in [LOW, HIGH]`: per slot, the candidates (valid, size)
        self.choices: list[list[tuple[z3.BoolRef, z3.ArithRef]]]
        self.fixed: list[z3.BoolRef]  # `size fixed`: per slot, its size is a kept one
        self.fresh_sizes: list[FreshSize]

        # -- sizes (``sizes_at_visits``)
        self.choice_made: list[z3.BoolRef]
        self.lows: list[z3.ArithRef | None]

        # -- the walk (``walk``)
        self.exact_slots: int  # the slots with exact equations
        self.stops: list[z3.BoolRef]
        self.candidate: list[z3.BoolRef]  # left to backfill `best`
        self.starts_list: list[Start]

    def uses_log(self) -> bool:
        return self._uses_log

    def assume(self, name: str, formula) -> None:
        in_time()  # the property's time limit (``budget.py``): the inputs' loops assume
        self.assumptions.append(Assumption(name, z3.simplify(z3.And(formula))
                                           if isinstance(formula, list) else formula))

    def evaluate(self, expr: ir.Expr, job: SymJob | None, state: SymState, guard: z3.BoolRef,
                 size: z3.ArithRef | None = None, step: object = "current") -> z3.ExprRef:
        """``step``: the step whose equations the value's definitions join (default: the
        one being encoded; an invariant evaluated after the encoding names its start's)."""
        result = sym_eval(expr, job=job, state=state, params=self.params, size=size,
                          fresh=self.fresh)
        definitions = self.definitions
        encoding = definitions.current
        if step != "current":
            definitions.current = step
        try:
            return self._record(result, guard)
        finally:
            definitions.current = encoding

    def _record(self, result, guard: z3.BoolRef) -> z3.ExprRef:
        definitions = self.definitions
        definitions.add_all(result.definitions)
        self.obligations.extend(
            Obligation(o.kind, z3.And(guard, o.guard), o.safe, o.span, o.text)
            for o in result.obligations)
        # the step whose equations define the terms an obligation reads (None: any)
        step = definitions.current if isinstance(definitions.current, int) else None
        self.obligation_steps.extend(step for _ in result.obligations)
        self._uses_log = self._uses_log or result.uses_log
        return result.value
