"""The encoded pass as the prover reads it (``SymbolicPass``), and the records it is made
of: assumptions, each slot's decision, each start, the sizes and estimates it weighs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import z3
from attrs import field, frozen

from schedc.dsl import ir
from schedc.dsl.semantics.decisions import Decision, PassDecisions, Reserved, Started
from schedc.dsl.verify.symbolic import FreshNames, Obligation, QueueTail, SymJob, SymState
from schedc.dsl.verify.verdict import Bounds


class Definitions:
    """The equations that define the pass's fresh terms, each tagged with the queue slot whose
    decision it defines (None: shared). A lemma about one job's step needs only that job's
    equations: the earlier decisions may stay free, which proves a stronger statement."""

    def __init__(self) -> None:
        self.items: list[tuple[object, z3.BoolRef]] = []
        self.current: object = None  # None, a step, or ("exact", step)

    def add(self, formula: z3.BoolRef) -> None:
        self.items.append((self.current, formula))

    def add_all(self, formulas: Sequence[z3.BoolRef]) -> None:
        for f in formulas:
            self.add(f)

    def all(self) -> list[z3.BoolRef]:
        return [f for _, f in self.items]

    def for_step(self, step: int) -> list[z3.BoolRef]:
        """The shared equations and those of one step (a walk slot, or N + j: round j)."""
        return [f for tag, f in self.items if tag is None or tag == step]


class Unsupported(Exception):
    """A policy feature the symbolic pass does not encode yet (the verdict is unknown)."""


@frozen
class Assumption:
    name: str  # shown in reports and unsat cores
    formula: z3.BoolRef


@frozen
class JobDecision:
    slot: int
    visited: z3.BoolRef
    started: z3.BoolRef
    reserved: z3.BoolRef
    reservation: z3.ArithRef  # meaningful when reserved
    alloc: tuple[z3.ArithRef, ...]  # per resource, what it gets if it starts
    estimate: z3.ArithRef  # its estimate on alloc's cpus (a moldable job's may differ)


@frozen(eq=False)
class Start:
    """A start the pass may make: when ``guard``, job ``slot`` starts; ``state`` is what the
    policy sees right after it (invariants are checked there), ``size`` its cpus."""

    guard: z3.BoolRef
    slot: int
    state: SymState
    size: z3.ArithRef
    step: int  # the step that makes it (a walk slot, or N + j: round j)


@frozen
class SizedEstimate:
    """A moldable job's estimate on a size (a fresh value: see ``estimate_at``)."""

    slot: int
    size: z3.ArithRef
    estimate: z3.ArithRef


@frozen
class ChoiceEstimate:
    """`size choose`: a candidate size the exact pass weighs and the estimate on it (a
    replay must see the same estimates on them)."""

    slot: int
    valid: z3.BoolRef
    size: z3.ArithRef
    estimate: z3.ArithRef


@frozen
class FreshSize:
    """`size fixed`: a size computed in this pass (when ``guard``), to be kept."""

    guard: z3.BoolRef
    slot: int
    size: z3.ArithRef


@frozen
class SizeResult:
    """A size a formula gives: when ``guard`` is evaluated, the size, the step that
    evaluates it and the job's slot."""

    guard: z3.BoolRef
    size: z3.ArithRef
    step: int
    slot: int


class EncodedTerms(Protocol):
    """What the record asks of the encoder that made it (``PassEncoder``): formulas over its
    terms, built on request (an invariant, a check after a step)."""

    def state_at(self, a: int, including: bool = False) -> SymState: ...

    def evaluate(self, expr: ir.Expr, job: SymJob | None, state: SymState, guard: z3.BoolRef,
                 size: z3.ArithRef | None = None, step: object = "current") -> z3.ExprRef: ...

    def profile_ok(self, s: int) -> z3.BoolRef: ...

    def capacity_ok(self, s: int) -> z3.BoolRef: ...

    def use_nonnegative(self, s: int) -> z3.BoolRef: ...

    def uses_log(self) -> bool: ...


@frozen
class SymbolicPass:
    """The encoded pass: inputs, assumptions on them, and every decision."""

    policy: ir.Policy
    bounds: Bounds
    exact: bool  # the exact equations are in ``definitions`` (else the step facts only)
    now: z3.ArithRef
    capacity: tuple[z3.ArithRef, ...]
    running: tuple[SymJob, ...]
    # per running slot, per resource, what it holds (its request, or a size rule's cpus)
    running_held: tuple[tuple[z3.ArithRef, ...], ...]
    queue: tuple[SymJob, ...]
    params: dict[str, z3.ExprRef]
    assumptions: tuple[Assumption, ...]
    # Shared with ``evaluate``: evaluating more expressions (invariants) appends to them.
    definitions: Definitions  # what defines fresh terms (decisions, sqrt, ...)
    decisions: tuple[JobDecision, ...]  # by queue slot
    starts: tuple[Start, ...]  # every start the pass may make, in the pass's order
    sized_estimates: tuple[SizedEstimate, ...]
    choice_estimates: tuple[ChoiceEstimate, ...]
    # per resource, the processors' speed and available power (None: not read)
    bpu: tuple[z3.ArithRef, ...] | None
    power: tuple[z3.ArithRef, ...] | None
    # `size fixed`: per queue slot, whether its size was kept from an earlier pass; and
    # each size computed now, to be kept
    kept_size: tuple[z3.BoolRef, ...]
    fresh_sizes: tuple[FreshSize, ...]
    steps: int  # N walk steps, then (backfill best) N rounds
    reservations_hold: tuple[z3.BoolRef, ...]  # per slot: reserved -> still fits after
    used_after: tuple[z3.ArithRef, ...]  # per resource, after the pass
    obligations: list[Obligation]  # partial operations met in the pass
    obligation_steps: list[int | None]  # for each, the step it is met in (None: shared)
    size_results: tuple[SizeResult, ...]
    # for each size result, the obligations of the formulas that computed it (a size whose
    # formula fails is never used: the simulator stops there, for `well-defined`)
    size_obligations: tuple[tuple[Obligation, ...], ...]
    # the encoder, whose terms the methods below build on (further formulas join its record)
    encoder: EncodedTerms = field(repr=False)
    # the fresh variables of every formula evaluated in the pass (invariants add theirs);
    # ``fresh.roots``: each sqrt's rounded result, exact root and argument
    fresh: FreshNames
    queue_tail: QueueTail | None  # further queued jobs (None: the policy reads no queue aggregate)

    def state_at(self, a: int, including: bool = False) -> SymState:
        """What the policy sees when the walk reaches job a (``including``: right after a
        itself started, as invariants see it)."""
        return self.encoder.state_at(a, including)

    def evaluate(self, expr: ir.Expr, job: SymJob | None, state: SymState, guard: z3.BoolRef,
                 size: z3.ArithRef | None = None, step: object = "current") -> z3.ExprRef:
        """``expr`` in ``state`` when ``guard``; its definitions and obligations join the
        pass's (those of ``step``: by default shared)."""
        return self.encoder.evaluate(expr, job, state, guard, size, step)

    def profile_ok(self, s: int) -> z3.BoolRef:
        """The plan after step s never overcommits."""
        return self.encoder.profile_ok(s)

    def capacity_ok(self, s: int) -> z3.BoolRef:
        """After step s no resource is overcommitted now."""
        return self.encoder.capacity_ok(s)

    def use_nonnegative(self, s: int) -> z3.BoolRef:
        """After step s no use now is below 0."""
        return self.encoder.use_nonnegative(s)

    def uses_log(self) -> bool:
        """Some formula evaluated so far calls `log` (a counterexample is then replayed
        before it is reported)."""
        return self.encoder.uses_log()

    def decisions_in(self, model: z3.ModelRef) -> PassDecisions:
        """The pass's decisions in ``model``, in the order the pass makes them: the slots in
        queue order (a start or a reservation), then the rounds of backfill `best` (the
        round's pick). Twin: the record ``PassWalk`` makes (``simulate(on_pass=...)``)."""

        def value(term: z3.ExprRef) -> int:
            return model.eval(term, model_completion=True).as_long()

        def holds(term: z3.BoolRef) -> bool:
            return z3.is_true(model.eval(term, model_completion=True))

        def alloc(slot: int, size: z3.ArithRef) -> tuple[int, ...]:
            # a start's size is its cpus; its other resources are its request's
            return (value(size), *(value(r) for r in self.queue[slot].request[1:]))

        N = self.bounds.queued
        walk = {s.slot: s for s in self.starts if s.step < N}
        made: list[Decision] = []
        for q, d in enumerate(self.decisions):
            job = value(self.queue[q].id)
            if holds(walk[q].guard):
                made.append(Started(job, alloc(q, walk[q].size)))
            elif holds(d.reserved):
                made.append(Reserved(job, value(d.reservation),
                                     tuple(value(a) for a in d.alloc)))
        made += [Started(value(self.queue[s.slot].id), alloc(s.slot, s.size))
                 for s in self.starts if s.step >= N and holds(s.guard)]
        return PassDecisions(value(self.now), tuple(made))
