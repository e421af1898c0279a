"""One scheduling pass of a compiled policy, encoded for Z3 over a bounded symbolic state.

The state: K resources with capacities, R running-job slots and N queued-job slots (a slot
may be empty, so every smaller state is covered too), the time ``now`` and the policy's
params over their domains. The pass is the simulator's (``runtime/engine/simulator.py``; DESIGN,
"Rigid-job semantics") decision for decision:

* order: the policy's keys, then submit time, then file order (the slot index);
* walk in that order; with rigid sizes the walk stops once no later request fits the free
  resources (nothing later can start; the simulator does the same);
* ``backfill none``: jobs start in order while each fits, the first that does not ends it;
* ``first_fit`` with depth D: a job starts if it fits now, for its whole estimate, in the
  profile of running jobs' estimated ends, the jobs started so far and the reservations made
  so far; otherwise, while fewer than D reservations exist, it is reserved at its earliest
  fit; ``when C``: after D reservations, a job starts if it fits the free resources now and
  C holds (the reservations are not consulted: that is what a verifier must catch);
  ``best by S``: after D reservations the remaining jobs are candidates, and rounds follow:
  each starts the fitting candidate of best score (ties: queue order) until none fits;
* ``slack S``: a reservation is held from its earliest fit plus the job's slack (S floored,
  at least 0) if it fits there, else from its earliest fit; ``res_time`` is where the plan
  holds it, so the reservation-safety property is "it moves no more than its slack".

Why the encoding is finite: usage only rises at reservation starts (running jobs only
release), so a window fits if it fits at its start and at each reservation start inside it;
and the earliest fit is ``now`` or a release time (a running job's, a started job's or a
reservation's end): if a job fits from a reservation start S but not from the release or
``now`` just before, it fails at a point before S whose usage ends at a release, and from
that release it fits.

Two layers of equations (``Definitions``). The step facts say what safety needs of each
decision: a start fits the plan as it was at its step (the use at each checkpoint, ``now``
and every reservation start, after each step is a variable), a reservation fits at its
time. Every pass the simulator can make satisfies them, so a property that follows from them
is proved for the real pass, and each step's lemma stays small. The exact equations
(``exact=True``) pin every decision to the simulator's: which jobs are visited, the earliest
reservation time, the walk's early stop, the best candidate of a round. Counterexamples and
the agreement tests need them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import z3
from attrs import frozen

from schedc.dsl import ir
from schedc.dsl.exact import show
from schedc.dsl.params import depth_param
from schedc.dsl.semantics.decisions import Decision, PassDecisions, Reserved, Started
from schedc.dsl.verify.symbolic import (
    FreshNames,
    Obligation,
    ParamTerms,
    QueueTail,
    SymJob,
    SymState,
    sym_eval,
)
from schedc.dsl.verify.vocabulary import QUEUED, RUNNING


@frozen
class Bounds:
    queued: int = QUEUED  # N
    running: int = RUNNING  # R


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
    # (slot, size, estimate): a moldable job's estimate on that size (free: see estimate_at)
    sized_estimates: tuple[tuple[int, z3.ArithRef, z3.ArithRef], ...]
    # `size choose`: (slot, valid, size, estimate) of each candidate size the exact pass
    # weighs (a replay must see the same estimates on them)
    choice_estimates: tuple[tuple[int, z3.BoolRef, z3.ArithRef, z3.ArithRef], ...]
    # per resource, the processors' speed and available power (None: not read)
    bpu: tuple[z3.ArithRef, ...] | None
    power: tuple[z3.ArithRef, ...] | None
    # `size fixed`: per queue slot, whether its size was kept from an earlier pass; and
    # (guard, slot, size) of each size computed now, to be kept
    kept_size: tuple[z3.BoolRef, ...]
    fresh_sizes: tuple[tuple[z3.BoolRef, int, z3.ArithRef], ...]
    steps: int  # N walk steps, then (backfill best) N rounds
    state_at: Callable[..., SymState]  # state_at(a, including=False): what job a's visit sees
    evaluate: Callable[..., z3.ExprRef]  # evaluate(expr, job, state, guard, size=None)
    reservations_hold: tuple[z3.BoolRef, ...]  # per slot: reserved -> still fits after
    used_after: tuple[z3.ArithRef, ...]  # per resource, after the pass
    profile_ok: Callable[[int], z3.BoolRef]  # the plan after step s never overcommits
    capacity_ok: Callable[[int], z3.BoolRef]  # after step s no resource is overcommitted now
    use_nonnegative: Callable[[int], z3.BoolRef]  # after step s no use now is below 0
    obligations: list[Obligation]  # partial operations met in the pass
    obligation_steps: list[int | None]  # for each, the step it is met in (None: shared)
    # (when evaluated, the size, the step that evaluates it, the job's slot)
    size_results: tuple[tuple[z3.BoolRef, z3.ArithRef, int, int], ...]
    # for each size result, the obligations of the formulas that computed it (a size whose
    # formula fails is never used: the simulator stops there, for `well-defined`)
    size_obligations: tuple[tuple[Obligation, ...], ...]
    uses_log: Callable[[], bool]
    # the fresh variables of every formula evaluated in the pass (invariants add theirs);
    # ``fresh.roots``: each sqrt's rounded result, exact root and argument
    fresh: FreshNames
    queue_tail: QueueTail | None  # further queued jobs (None: the policy reads no queue aggregate)

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



def _sum(terms) -> z3.ArithRef:
    terms = list(terms)
    return z3.Sum(terms) if terms else z3.IntVal(0)


TAILS = ("any", "copies")


def encode_pass(policy: ir.Policy, bounds: Bounds | None = None, *, idle: bool = False,
                depth_value: int | None | str = "policy", exact: bool = True,
                earliest: bool = True, tail: str = "any",
                resized: bool | None = None,
                kept: tuple[ir.Invariant, ...] | None = None) -> SymbolicPass:
    """Encode one pass of ``policy``. ``idle``: no running job (for the progress property);
    ``exact``: with the exact equations (else the step facts only, see the module's doc);
    ``earliest``: with the equations that make a reservation the earliest fit (the costliest
    to build; what starts on an idle machine does not depend on them). If the policy reads
    aggregates over the queue, any number of further jobs wait after the N slots
    (``QueueTail``): ``tail="any"`` lets each aggregate see arbitrary ones (every queue is
    covered: proofs), ``"copies"`` makes them copies of one job (a counterexample's state).
    ``resized``: a running rigid job may hold other cpus than it asked, as a size rule gives
    them (default: if the policy has one; a dynP candidate's, if any candidate has).
    ``kept``: the invariants a size kept from an earlier pass satisfies (`size fixed`;
    default: the policy's own, proved of every size it chooses; a dynP candidate's kept size
    may come from another candidate: those every `size fixed` candidate has)."""
    return PassEncoder(policy, bounds or Bounds(), idle=idle, depth_value=depth_value,
                       exact=exact, earliest=earliest, tail=tail,
                       resized=policy.size is not None if resized is None else resized,
                       kept=kept).encode()


Terms = Callable[[int, int], list[z3.ArithRef]]


class PassEncoder:
    """One pass of a policy as Z3 terms, built step by step like the simulator's walk
    (``PassWalk`` in runtime/engine/walk.py): each method encodes the step of the same name.

    Z3's search follows the order in which terms are made, so the order of the calls below is
    part of every verdict: ``encode`` makes them in a fixed order, and no method is to be
    reordered or made lazily without checking that every term comes out the same."""

    def __init__(self, policy: ir.Policy, bounds: Bounds, *, idle: bool,
                 depth_value: int | None | str, exact: bool, earliest: bool,
                 tail: str, resized: bool,
                 kept: tuple[ir.Invariant, ...] | None = None) -> None:
        self.policy, self.bounds, self.resized = policy, bounds, resized
        self.kept = policy.invariants if kept is None else kept
        self.idle, self.depth_value, self.exact, self.earliest = idle, depth_value, exact, earliest
        self.tail = tail
        self.K = len(policy.machine.resources)
        self.N, self.R = bounds.queued, bounds.running
        self.fresh = FreshNames()
        self.assumptions: list[Assumption] = []
        self.obligations: list[Obligation] = []
        self.obligation_steps: list[int | None] = []
        self.definitions = Definitions()
        self._uses_log = False

    # -- the result -------------------------------------------------------------------------

    def encode(self) -> SymbolicPass:
        """The inputs and their assumptions, the order, then the walk (terms in this order)."""
        self.inputs()
        self.order()
        self.declare()
        self.sizes_at_visits()
        self.walk()
        N = self.N
        decisions = tuple(
            JobDecision(q, self.visited[q], self.started[q], self.reserved[q],
                        self.res_time[q], self.allocs[q], self.final_est[q])
            for q in range(N))
        reservations_hold = (tuple(self.holds(a) for a in range(N))
                             if self.kind != "none" else ())
        return SymbolicPass(
            policy=self.policy, bounds=self.bounds, exact=self.exact, now=self.now,
            capacity=self.capacity, running=self.running, running_held=self.held,
            queue=self.queue,
            params=self.params, assumptions=tuple(self.assumptions),
            definitions=self.definitions, decisions=decisions,
            starts=tuple(Start(*start) for start in self.starts_list),
            sized_estimates=tuple(self.sized_estimates),
            choice_estimates=tuple(self.choice_estimates), bpu=self.bpu, power=self.power,
            kept_size=tuple(self.fixed), fresh_sizes=tuple(self.fresh_sizes),
            steps=self.steps, state_at=self.state_at, evaluate=self.evaluate,
            reservations_hold=reservations_hold, used_after=tuple(self.use[self.steps][0]),
            profile_ok=self.profile_ok, capacity_ok=self.capacity_ok,
            use_nonnegative=self.use_nonnegative,
            obligations=self.obligations, obligation_steps=self.obligation_steps,
            size_results=tuple(self.sizes), size_obligations=tuple(self.size_obligations),
            uses_log=self.uses_log, fresh=self.fresh, queue_tail=self.queue_tail)

    def uses_log(self) -> bool:
        return self._uses_log

    # -- inputs -----------------------------------------------------------------------------

    def assume(self, name: str, formula) -> None:
        self.assumptions.append(Assumption(name, z3.simplify(z3.And(formula))
                                           if isinstance(formula, list) else formula))

    def inputs(self) -> None:
        """The symbolic state: time, capacities, params, speeds, job slots, the queue's tail
        and the use before the pass, with what every state satisfies."""
        policy, K, assume = self.policy, self.K, self.assume
        now = self.now = z3.Int("now")
        assume("time is not negative", now >= 0)
        capacity = []
        for k, res in enumerate(policy.machine.resources):
            if res.capacity is not None:
                capacity.append(z3.IntVal(res.capacity))
            else:
                c = z3.Int(f"capacity_{res.name}")
                capacity.append(c)
                assume(f"capacity of `{res.name}` is at least 1", c >= 1)
            del k
        capacity_t = self.capacity = tuple(capacity)

        self.params = _params(policy, assume)
        self.depth = _depth(policy, self.params, self.depth_value)

        # The processors' speeds and available power (papers/002), per resource: any positive
        # speeds, any background load below 100% (power in (0, bpu]); read only if the policy
        # does
        self.bpu = self.power = None
        if _reads_speeds(policy):
            self.bpu = tuple(z3.Real(f"bpu_{r.name}") for r in policy.machine.resources)
            self.power = tuple(z3.Real(f"power_{r.name}") for r in policy.machine.resources)
            for r, b, p in zip(policy.machine.resources, self.bpu, self.power, strict=True):
                assume(f"`{r.name}` has speed and available power, 0 < power <= bpu",
                       [b > 0, p > 0, p <= b])

        # labels (user, group, ...) only if some formula reads them: no variables for nothing
        labels = self.labels = ir.labels_read(policy)
        running = self.running = tuple(_job(f"run{r}", K, True, labels) for r in range(self.R))
        queue = self.queue = tuple(_job(f"q{q}", K, False, labels) for q in range(self.N))
        _assume_jobs(running, queue, now, capacity_t, assume, self.idle)
        self.queue_tail = None
        self.tail_copy = None
        if _reads_queue(policy):
            tail_count = z3.Int("queue_tail")
            assume("any number of further jobs wait after the slots in the policy's order",
                   tail_count >= 0)
            made = iter(range(1 << 30))

            def other_id(job: SymJob) -> list[z3.BoolRef]:
                """A further job's id is none of the slots' (ids are distinct)."""
                return [z3.Implies(x.present, job.id != x.id) for x in (*running, *queue)]

            def template() -> tuple[SymJob, z3.BoolRef]:
                job = _job(f"{self.fresh.prefix}tail{next(made)}", K, False, labels)
                return job, z3.And(*_queued_ok(job, now, capacity_t), *other_id(job),
                                   *self.after_slots(job))

            if self.tail == "copies":
                tail_copy = self.tail_copy = _job("tail", K, False, labels)
                assume("the further jobs are copies of one rigid queued job",
                       z3.Implies(tail_count >= 1, z3.And(
                           *_queued_ok(tail_copy, now, capacity_t), *other_id(tail_copy),
                           z3.Not(tail_copy.moldable))))
            self.queue_tail = QueueTail(tail_count, template, self.tail_copy)

        # What each running job holds: its request, except the cpus of a rigid job a size
        # rule started on another size (formulas still read its request: the simulator's
        # RunningJob keeps the job as submitted); a moldable one runs as a job of its size
        if self.resized:
            self.held = tuple((z3.Int(f"run{r}_holds"), *job.request[1:])
                              for r, job in enumerate(running))
            assume("a running job holds its request, or, rigid and sized by a size rule, "
                   "a size in [1, capacity]",
                   [z3.Implies(job.present, z3.If(
                       job.moldable, held[0] == job.request[0],
                       z3.And(held[0] >= 1, held[0] <= capacity_t[0])))
                    for job, held in zip(running, self.held, strict=True)])
        else:
            self.held = tuple(job.request for job in running)
        self.used0 = tuple(_sum(z3.If(r.present, held[k], 0)
                                for r, held in zip(running, self.held, strict=True))
                           for k in range(K))
        assume("the machine is not overcommitted before the pass",
               [self.used0[k] <= capacity_t[k] for k in range(K)])

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

    # -- order ------------------------------------------------------------------------------

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
            # the pass for every queue length (README, "What a proof promises").
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
        self.keys: list[list[tuple[z3.ExprRef, bool]]] = []
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

    # -- the decisions' terms ---------------------------------------------------------------

    def declare(self) -> None:
        """The decisions' fresh variables and the plan's use at its checkpoints. Per-job
        decisions are fresh variables tied by equations; each refers only to the jobs
        before it (slots < a), so the equations have exactly one solution."""
        N, K, policy, definitions = self.N, self.K, self.policy, self.definitions
        self.started_walk = [z3.Bool(f"started_{q}") for q in range(N)]
        self.reserved = [z3.Bool(f"reserved_{q}") for q in range(N)]
        self.res_time = [z3.Int(f"reservation_{q}") for q in range(N)]
        self.visited = [z3.Bool(f"visited_{q}") for q in range(N)]
        self.rigid = policy.size is None
        self.kind = policy.backfill.kind
        self.best = self.kind == "best"
        rounds = self.rounds = N if self.best else 0
        # walk steps (one a slot), then the rounds of backfill `best`
        steps = self.steps = N + rounds

        # Sizes are fresh variables (a size may read the state at the job's visit, which
        # depends on the sizes of the jobs before it).
        self.size_walk = [None if self.rigid else z3.Int(f"size_{q}") for q in range(N)]
        self.alloc_walk = [self.alloc_of(q, self.size_walk[q]) for q in range(N)]

        # A moldable job's estimate on another size than its request follows its speedup
        # model, which the state does not fix: a fresh value >= 1 (any one is some measured
        # speedup's), so proofs hold for every model; counterexamples name the model that
        # gives it.
        self.sized_estimates: list[tuple[int, z3.ArithRef, z3.ArithRef]] = []
        self.choice_estimates: list[tuple[int, z3.BoolRef, z3.ArithRef, z3.ArithRef]] = []
        self.est_walk = [self.estimate_at(q, self.size_walk[q], "walk") for q in range(N)]

        # The plan's use of each resource at its checkpoints after each step: point 0 is
        # `now`, point b + 1 is job b's reservation time. Use only rises at these points
        # (running jobs only release), so they are all a fit test or a capacity check needs;
        # a fresh variable per (step, point) keeps every lemma small.
        self.points = [self.now, *self.res_time]
        use = self.use = [[[z3.Int(f"use_{k}_at_{i}_after_{s}") for k in range(K)]
                           for i in range(N + 1)] for s in range(steps + 1)]
        for k in range(K):
            definitions.add(use[0][0][k] == self.used0[k])
            for i in range(N):
                definitions.add(use[0][i + 1][k] == _sum(
                    z3.If(z3.And(r.present, r.start + r.estimate > self.res_time[i]),
                          held[k], 0)
                    for r, held in zip(self.running, self.held, strict=True)))

        # `reserve D per KEY or when COND` (see ``wait_or_reserve``)
        self.selective = policy.reserve_per is not None or policy.reserve_when is not None
        self.key_of: list[z3.ExprRef | None] = [None] * N
        self.may_reserve: list[z3.BoolRef] = []
        # `slack`: per slot, its reservation's earliest fit and its slack (the plan holds it
        # from ``res_time``: the earliest fit plus the slack if it fits there, else the
        # earliest fit); no terms at all without a slack
        self.slack_on = policy.slack is not None
        if self.slack_on:
            self.earliest_time = [z3.Int(f"earliest_{q}") for q in range(N)]
            self.slack_of = [z3.Int(f"slack_{q}") for q in range(N)]

        # Rounds of backfill `best` (declared here: the state a later job sees reads them).
        rigid = self.rigid
        self.picked = [[z3.Bool(f"picked_{j}_{q}") for q in range(N)] for j in range(rounds)]
        self.size_round = [[None if rigid else z3.Int(f"size_{q}_round_{j}") for q in range(N)]
                           for j in range(rounds)]
        self.est_round = [[self.estimate_at(q, self.size_round[j][q], f"round_{j}")
                           for q in range(N)] for j in range(rounds)]
        if self.best:
            self.started = [z3.Or(self.started_walk[q],
                                  *(self.picked[j][q] for j in range(rounds)))
                            for q in range(N)]
            final_size: list[z3.ArithRef | None] = []
            self.final_est: list[z3.ArithRef] = []
            for q in range(N):
                size, est = self.size_walk[q], self.est_walk[q]
                for j in reversed(range(rounds)):
                    size = None if rigid else z3.If(self.picked[j][q], self.size_round[j][q],
                                                    size)
                    est = est if rigid else z3.If(self.picked[j][q], self.est_round[j][q], est)
                final_size.append(size)
                self.final_est.append(est)
            self.allocs = [self.alloc_of(q, final_size[q]) for q in range(N)]
        else:
            self.started, self.allocs, self.final_est = (self.started_walk, self.alloc_walk,
                                                         self.est_walk)

        self.sizes: list[tuple[z3.BoolRef, z3.ArithRef, int, int]] = []
        self.size_obligations: list[tuple[Obligation, ...]] = []  # of each size's formulas
        # `size choose N in [LOW, HIGH]`: per slot, the candidates (valid, size)
        self.choices: list[list[tuple[z3.BoolRef, z3.ArithRef]]] = []
        # `size fixed`: a queued job may have its size from an earlier pass (an input, in its
        # range: the size-bounds property of that pass); only the others compute one now
        self.fixed = [z3.BoolVal(False)] * N
        self.fresh_sizes: list[tuple[z3.BoolRef, int, z3.ArithRef]] = []

    def alloc_of(self, q: int, size: z3.ArithRef | None) -> tuple[z3.ArithRef, ...]:
        queue = self.queue
        return queue[q].request if size is None else (size, *queue[q].request[1:])

    def estimate_at(self, q: int, size: z3.ArithRef | None, name: str) -> z3.ArithRef:
        """Job q's estimate on ``size`` (a fresh value on another size than its request)."""
        queue = self.queue
        if size is None:
            return queue[q].estimate
        other = z3.Int(f"estimate_{q}_{name}")
        # on 1 cpu: the sequential time (``job.work``)
        self.definitions.add(z3.And(other >= 1, z3.Implies(size == 1, other == queue[q].work)))
        self.sized_estimates.append((q, size, other))
        return z3.If(z3.And(queue[q].moldable, size != queue[q].request[0]), other,
                     queue[q].estimate)

    # -- states the policy sees -------------------------------------------------------------

    def running_request(self, b: int) -> tuple[z3.ArithRef, ...]:
        """A started job as the running set shows it: a moldable one on its size, a rigid one
        with its own request whatever a size rule gave it (the simulator's RunningJob.job)."""
        queue = self.queue
        if self.rigid:
            return queue[b].request
        return (z3.If(queue[b].moldable, self.allocs[b][0], queue[b].request[0]),
                *queue[b].request[1:])

    def state_of(self, s: int, gone: Sequence[z3.BoolRef]) -> SymState:
        queue, N = self.queue, self.N
        launched = tuple(
            SymJob(present=gone[b], id=queue[b].id, submit=queue[b].submit,
                   estimate=self.final_est[b], request=self.running_request(b), start=self.now,
                   moldable=queue[b].moldable, min_size=queue[b].min_size,
                   max_size=queue[b].max_size, work=queue[b].work, labels=queue[b].labels)
            for b in range(N) if not z3.is_false(gone[b]))
        member = tuple(z3.And(queue[b].present, z3.Not(gone[b])) for b in range(N))
        return SymState(now=self.now, capacity=self.capacity, used=tuple(self.use[s][0]),
                        queue=queue, bpu=self.bpu, power=self.power,
                        queue_tail=self.queue_tail, running=self.running + launched,
                        queue_member=member)

    def state_at(self, a: int, including: bool = False) -> SymState:
        """What the policy sees when the walk reaches job a (``including``: right after a
        itself started, as invariants see it)."""
        gone = [self.started_walk[b] if b < a else z3.BoolVal(including and b == a)
                for b in range(self.N)]
        return self.state_of(a + 1 if including else a, gone)

    def state_in_round(self, j: int) -> SymState:
        """What backfill `best` sees in round j (after the walk and rounds < j)."""
        gone = [z3.Or(self.started_walk[q], *(self.picked[i][q] for i in range(j)))
                for q in range(self.N)]
        return self.state_of(self.N + j, gone)

    # -- sizes ------------------------------------------------------------------------------

    def sizes_at_visits(self) -> None:
        """Each slot's size at its visit: kept from an earlier pass (`size fixed`), or the
        size rule's value (`size choose`: one of its candidates; ``choose_size`` picks it).
        Twin: the size rule's call in ``PassWalk.visit``."""
        policy, N, queue, definitions = self.policy, self.N, self.queue, self.definitions
        capacity_t, size_walk = self.capacity, self.size_walk
        if policy.size_fixed:
            fixed = self.fixed = [z3.Bool(f"q{q}_sized") for q in range(N)]
            for q, job in enumerate(queue):
                kept = z3.Int(f"q{q}_size")
                self.assume("a size kept from an earlier pass lies in the job's range",
                            z3.Implies(z3.And(job.present, fixed[q]), z3.And(
                                kept >= z3.If(job.moldable, job.min_size, 1),
                                kept <= z3.If(job.moldable, job.max_size, capacity_t[0]),
                                kept <= capacity_t[0])))
                # Invariants of the job and its size alone were proved of every size computed
                # (``fresh_sizes``, verify.py), in any earlier state: they hold of a kept one
                # (a dynP candidate's: those of every candidate that keeps sizes, ``kept``).
                for inv in self.kept:
                    if ir.dependencies(inv.expr) <= {"job", "param"}:
                        result = sym_eval(inv.expr, job=job, state=self.start_state,
                                          params=self.params, size=kept, fresh=self.fresh)
                        definitions.add_all(result.definitions)
                        value = result.value
                        self.assume(
                            f"a kept size satisfies `{inv.text}` (proved when it was chosen)",
                            z3.Implies(z3.And(job.present, fixed[q]), value))
                definitions.add(z3.Implies(fixed[q], size_walk[q] == kept))
                self.fresh_sizes.append((z3.And(self.visited[q], z3.Not(fixed[q])), q,
                                         size_walk[q]))
        if self.rigid:
            return
        fixed, choices, sizes = self.fixed, self.choices, self.sizes
        self.choice_made = [z3.Bool(f"choice_made_{q}") for q in range(N)]
        self.lows: list[z3.ArithRef | None] = [None] * N
        for q in range(N):
            definitions.current = q
            computes = z3.And(self.visited[q], z3.Not(fixed[q]))
            first = len(self.obligations)
            # `choose`'s HIGH is evaluated once the choice is made (its LOW at the visit)
            value = self.evaluate(policy.size, queue[q], self.state_at(q),
                                  computes if policy.size_choices is None
                                  else self.choice_made[q])
            if policy.size_choices is None:
                definitions.add(z3.Implies(z3.And(queue[q].present, z3.Not(fixed[q])),
                                           size_walk[q] == value))
            else:
                low = self.evaluate(policy.size_low, queue[q], self.state_at(q), computes)
                choices.append(_candidates(low, value, policy.size_choices))
                # the step fact: the size is one of the candidates
                definitions.add(z3.Implies(z3.And(queue[q].present, z3.Not(fixed[q])), z3.Or(
                    [z3.And(ok, size_walk[q] == c) for ok, c in choices[q]])))
                # every candidate must be a size the job may get: the simulator checks all
                # once it makes the choice (``choice_made``, defined at the visit), and the
                # size it takes is one of them
                self.lows[q] = low
                sizes += [(z3.And(self.choice_made[q], ok), c, q, q) for ok, c in choices[q]]
            if policy.size_choices is None:
                sizes.append((self.visited[q], size_walk[q], q, q))
            self.size_obligations.extend([tuple(self.obligations[first:])]
                                         * (len(sizes) - len(self.size_obligations)))
        definitions.current = None

    def choose_size(self, a: int, times: list[tuple[z3.BoolRef, z3.ArithRef]]) -> None:
        """`size choose`: job a's size is the candidate that completes first (earliest fit
        plus its estimate on that size), ties to the smaller size.
        Twin: `PassWalk.choose_size` in runtime/engine/walk.py."""
        definitions, now = self.definitions, self.now
        completion = []
        for i, (ok, size) in enumerate(self.choices[a]):
            est_i = self.estimate_at(a, size, f"choice_{i}")
            self.choice_estimates.append((a, ok, size, est_i))
            # the walk's estimate on the chosen size is this one (one speedup model)
            definitions.add(z3.Implies(self.size_walk[a] == size, self.est_walk[a] == est_i))
            alloc_i = self.alloc_of(a, size)
            fit_i = [(z3.And(valid, t >= now, self.fits_at(a, t, alloc_i, est_i)), t)
                     for valid, t in times]
            t_i = z3.Int(f"choice_start_{a}_{i}")
            # a candidate wider than the machine never fits: the simulator stops on it
            # before it looks for a time (size-bounds), so it has none here
            definitions.add(z3.Implies(z3.And(ok, size <= self.capacity[0]), z3.And(
                z3.Or([z3.And(f, t_i == t) for f, t in fit_i]),
                z3.And([z3.Implies(f, t_i <= t) for f, t in fit_i]))))
            completion.append((ok, size, t_i + est_i))
        every_fits = z3.And([z3.Implies(ok, size <= self.capacity[0])
                             for ok, size, _ in completion])
        definitions.add(z3.Implies(z3.And(self.visited[a], z3.Not(self.fixed[a]), every_fits),
                                   z3.Or([
            z3.And(ok, self.size_walk[a] == size, z3.And([
                z3.Implies(ok2, z3.Or(c < c2, z3.And(c == c2, size <= size2)))
                for ok2, size2, c2 in completion]))
            for ok, size, c in completion])))

    # -- the plan ---------------------------------------------------------------------------

    def active(self, est: z3.ArithRef, i: int) -> z3.BoolRef:
        """A job started now with estimate ``est`` holds its resources at point i."""
        return z3.BoolVal(True) if i == 0 else self.now + est > self.points[i]

    def start(self, s: int, terms_at: Terms) -> None:
        """Step s's update of the plan: the use at each checkpoint after it is the use before
        plus ``terms_at(point, resource)`` (a start's and a reservation's allocation where
        they hold it). Twin: `PassWalk.start` in runtime/engine/walk.py."""
        use = self.use
        for i in range(self.N + 1):
            for k in range(self.K):
                self.definitions.add(use[s + 1][i][k] == use[s][i][k] + _sum(terms_at(i, k)))

    def fits_now(self, s: int, alloc: Sequence[z3.ArithRef], est: z3.ArithRef) -> z3.BoolRef:
        """Fits the plan after step s from now for ``est``: at now and at each reservation
        start inside the window. Twin: `PassWalk.fits_now` in runtime/engine/walk.py."""
        use, capacity_t, now = self.use, self.capacity, self.now
        made = min(s, self.N)
        checks = []
        for k in range(self.K):
            checks.append(use[s][0][k] + alloc[k] <= capacity_t[k])
            checks += [z3.Implies(z3.And(self.reserved[b], self.res_time[b] < now + est),
                                  use[s][b + 1][k] + alloc[k] <= capacity_t[k])
                       for b in range(made)]
        return z3.And(checks)

    def starts_inside(self, s: int, t: z3.ArithRef, end: z3.ArithRef, k: int,
                      extra: z3.ArithRef | None, slots: Sequence[int]) -> list[z3.BoolRef]:
        """At each start in [t, end) of a reservation of ``slots``, the use of resource k
        after step s (plus ``extra``) is within capacity. `t <= res_b` (not `<`): an equal
        start is checked at b's own checkpoint, so a lemma never needs to know that two
        checkpoints at one time hold one value."""
        use, reserved, res_time = self.use, self.reserved, self.res_time
        return [z3.Implies(z3.And(reserved[b], t <= res_time[b], res_time[b] < end),
                           (use[s][b + 1][k] if extra is None else use[s][b + 1][k] + extra)
                           <= self.capacity[k])
                for b in slots]

    def fits_reservation(self, a: int) -> z3.BoolRef:
        """Job a fits the plan before its step from its reservation time on."""
        t, end = self.res_time[a], self.res_time[a] + self.est_walk[a]
        alloc = self.alloc_walk[a]
        checks = []
        for k in range(self.K):
            checks.append(self.use[a][a + 1][k] + alloc[k] <= self.capacity[k])
            checks += self.starts_inside(a, t, end, k, alloc[k], range(a))
        return z3.And(checks)

    def fits_physically(self, s: int, alloc: Sequence[z3.ArithRef]) -> z3.BoolRef:
        """Fits the free resources now (the plan's reservations are not consulted)."""
        return z3.And([self.use[s][0][k] + alloc[k] <= self.capacity[k] for k in range(self.K)])

    def stops_at(self, a: int) -> z3.BoolRef:
        """The early stop of the rigid walk: at job a, no request from a on fits the free
        resources now (each lacks some resource). Twin: the walk's stop in `PassWalk.walk`."""
        K, queue = self.K, self.queue
        free = [self.capacity[k] - self.use[a][0][k] for k in range(K)]
        return z3.And(queue[a].present, z3.And([
            z3.Implies(queue[b].present,
                       z3.Or([free[k] < self.alloc_walk[b][k] for k in range(K)]))
            for b in range(a, self.N)]))

    def fits_at(self, a: int, t: z3.ArithRef, alloc: Sequence[z3.ArithRef] | None = None,
                est: z3.ArithRef | None = None) -> z3.BoolRef:
        """Job a (on ``alloc`` for ``est``, by default its walk's) fits the plan of the walk
        before it from any time t >= now on: the use at t summed in full (t need not be a
        checkpoint), then the reservation starts inside."""
        alloc = self.alloc_walk[a] if alloc is None else alloc
        end = t + (self.est_walk[a] if est is None else est)
        started_walk, reserved, res_time = self.started_walk, self.reserved, self.res_time
        est_walk, alloc_walk = self.est_walk, self.alloc_walk
        checks = []
        for k in range(self.K):
            at_t = [z3.If(z3.And(r.present, r.start + r.estimate > t), held[k], 0)
                    for r, held in zip(self.running, self.held, strict=True)]
            for b in range(a):
                at_t.append(z3.If(z3.And(started_walk[b], self.now + est_walk[b] > t),
                                  alloc_walk[b][k], 0))
                at_t.append(z3.If(z3.And(reserved[b], res_time[b] <= t,
                                         t < res_time[b] + est_walk[b]),
                                  alloc_walk[b][k], 0))
            checks.append(_sum(at_t) + alloc[k] <= self.capacity[k])
            checks += self.starts_inside(a, t, end, k, alloc[k], range(a))
        return z3.And(checks)

    def release_times(self, a: int) -> list[tuple[z3.BoolRef, z3.ArithRef]]:
        """Where an earliest fit of job a may lie: now or a release of the plan before a."""
        times: list[tuple[z3.BoolRef, z3.ArithRef]] = [(z3.BoolVal(True), self.now)]
        times += [(r.present, r.start + r.estimate) for r in self.running]
        for b in range(a):
            times.append((self.started_walk[b], self.now + self.est_walk[b]))
            times.append((self.reserved[b], self.res_time[b] + self.est_walk[b]))
        return times

    # -- the walk ---------------------------------------------------------------------------

    def walk(self) -> None:
        """The walk over the queue slots in policy order, then the rounds of backfill `best`.
        Twin: `PassWalk.walk` in runtime/engine/walk.py."""
        self.exact_slots = self.N if self.exact else 0
        self.stops = [z3.Bool(f"stops_{q}") for q in range(self.N)]
        # left to backfill `best`
        self.candidate = [z3.Bool(f"candidate_{q}") for q in range(self.N)]
        self.starts_list: list[tuple[z3.BoolRef, int, SymState, z3.ArithRef, int]] = []
        for a in range(self.N):
            self.visit(a)
        self.best_rounds()

    def below_depth(self, a: int) -> z3.BoolRef:
        """Fewer than D reservations were made before job a."""
        if self.depth is None:
            return z3.BoolVal(True)
        return _sum(z3.If(self.reserved[b], 1, 0) for b in range(a)) < self.depth

    def would_start(self, a: int) -> z3.BoolRef:
        """Whether job a starts if visited, by the backfill rule."""
        policy, kind, alloc, est = self.policy, self.kind, self.alloc_walk[a], self.est_walk[a]
        if kind == "none":
            return self.fits_physically(a, alloc)
        if kind in ("first_fit", "best"):
            return self.fits_now(a, alloc, est)
        if kind == "when":
            # evaluated, as in the simulator, only once the job fits the free resources
            condition = self.evaluate(policy.backfill.condition, self.queue[a],
                                      self.state_at(a),
                                      z3.And(self.visited[a], z3.Not(self.below_depth(a)),
                                             self.fits_physically(a, alloc)))
            return z3.If(self.below_depth(a), self.fits_now(a, alloc, est),
                         z3.And(self.fits_physically(a, alloc), condition))
        raise Unsupported(f"backfill `{kind}` is not encoded")

    def visit(self, a: int) -> None:
        """Job slot a's decision: it starts if it fits by the backfill rule, else it waits
        or is reserved; with the exact equations, whether the walk reaches it at all (the
        early stop, `backfill none`'s block, the candidates left to `best`).
        Twin: `PassWalk.visit` in runtime/engine/walk.py."""
        job, definitions, now = self.queue[a], self.definitions, self.now
        started_walk, reserved, res_time = self.started_walk, self.reserved, self.res_time
        visited, candidate, kind = self.visited, self.candidate, self.kind
        definitions.current = a
        starts = self.would_start(a)
        self.start(a, lambda i, k, a=a: [
            z3.If(z3.And(started_walk[a], self.active(self.est_walk[a], i)),
                  self.alloc_walk[a][k], 0),
            *([] if i == 0 else [z3.If(z3.And(reserved[a], res_time[a] <= self.points[i],
                                              self.points[i] < res_time[a] + self.est_walk[a]),
                                       self.alloc_walk[a][k], 0)])])
        # What a safety lemma needs of this job's step: a start fits, a reservation fits at
        # its time. Any decisions with these properties keep the plan safe, so lemmas leave
        # the exact decisions (tagged "exact" below) out and prove that stronger statement.
        definitions.add(z3.Implies(started_walk[a], z3.And(visited[a], starts)))
        self.may_reserve.append(self.wait_or_reserve(a, z3.Not(starts)))
        if self.slack_on:
            # shared: a later step's lemma (a start after the reservation) reads the window
            definitions.current = None
            self.slack(a)
            definitions.current = a
        if self.choices:
            self.define_choice_made(a)
        definitions.add(z3.Implies(reserved[a], z3.And(visited[a], self.fits_reservation(a))))
        self.starts_list.append((started_walk[a], a, self.state_at(a, including=True),
                                 self.alloc_walk[a][0], a))
        # Facts of every job's step that lemmas about later steps rely on (shared): only a
        # present job is visited, it never both starts and is reserved, and a reservation
        # lies after now (the job did not fit now).
        definitions.current = None
        definitions.add(z3.Implies(visited[a], job.present))
        definitions.add(z3.Implies(z3.Or(started_walk[a], reserved[a]), visited[a]))
        definitions.add(z3.Implies(candidate[a], z3.And(job.present, z3.Not(visited[a]))))
        definitions.add(z3.Implies(reserved[a], z3.And(z3.Not(started_walk[a]),
                                                       res_time[a] > now, self.may_reserve[a])))
        # ... and at a release of the plan before it (the earliest fit is one: see the
        # module's doc), which a rule like "ends before the first release" relies on
        releases = self.release_times(a)[1:]
        if not self.slack_on:
            definitions.add(z3.Implies(reserved[a], z3.Or([
                z3.And(valid, res_time[a] == t) for valid, t in releases])))
        else:  # `slack`: the earliest fit is one, the reservation there or its slack later
            earliest = self.earliest_time[a]
            definitions.add(z3.Implies(reserved[a], z3.And(
                z3.Or([z3.And(valid, earliest == t) for valid, t in releases]),
                z3.Or(res_time[a] == earliest, res_time[a] == earliest + self.slack_of[a]),
                self.slack_of[a] >= 0, earliest > now)))
            # The first reservation always fits its slack later: the plan before it holds
            # only running jobs and starts, whose use never rises after now.
            definitions.add(z3.Implies(z3.And(reserved[a], *(z3.Not(reserved[b])
                                                             for b in range(a))),
                                       res_time[a] == earliest + self.slack_of[a]))
        if kind == "none":
            definitions.add(z3.Not(reserved[a]))
        if a >= self.exact_slots:
            return
        definitions.current = ("exact", a)
        stops = self.stops
        definitions.add(stops[a] == (self.stops_at(a) if self.rigid else z3.BoolVal(False)))
        reached = z3.And(job.present, z3.Not(z3.Or(stops[: a + 1])))
        if kind == "none":
            blocked = z3.Or([z3.And(visited[b], z3.Not(started_walk[b])) for b in range(a)])
            definitions.add(visited[a] == z3.And(reached, z3.Not(blocked)))
            definitions.add(started_walk[a] == z3.And(visited[a], starts))
            if self.choices and self.earliest:
                self.choose_size(a, self.release_times(a))
            return
        if self.best:
            definitions.add(visited[a] == z3.And(reached, self.below_depth(a)))
            definitions.add(candidate[a] == z3.And(reached, z3.Not(self.below_depth(a))))
        else:
            definitions.add(visited[a] == reached)
            definitions.add(z3.Not(candidate[a]))
        definitions.add(started_walk[a] == z3.And(visited[a], starts))
        definitions.add(reserved[a] == z3.And(visited[a], z3.Not(started_walk[a]),
                                              self.may_reserve[a], self.fits_machine(a)))
        if self.earliest:
            self.reserve(a)

    def fits_machine(self, a: int) -> z3.BoolRef:
        """Job a's size is at most the cpus (a request is, by assumption): else no time
        fits it, and the simulator stops on the size before it looks for one (size-bounds).
        So that state has a pass, in which the job is not reserved."""
        if self.rigid:
            return z3.BoolVal(True)
        return self.alloc_walk[a][0] <= self.capacity[0]

    def define_choice_made(self, a: int) -> None:
        """`size choose`: whether the simulator makes job a's choice (and checks every
        candidate): at its visit if its size is not kept and the cpus free reach LOW (or the
        sizes are kept: `size fixed`), else only once it is granted a reservation.
        Twin: the choice's shortcut in `PassWalk.visit`."""
        free = self.capacity[0] - self.use[a][0][0]
        low = self.lows[a]
        assert low is not None
        granted = (z3.BoolVal(False) if self.kind == "none" else self.may_reserve[a])
        now = z3.BoolVal(True) if self.policy.size_fixed else free >= low
        self.definitions.add(self.choice_made[a] == z3.And(
            self.visited[a], z3.Not(self.fixed[a]), z3.Or(now, granted)))

    def wait_or_reserve(self, a: int, not_started: z3.BoolRef) -> z3.BoolRef:
        """Whether job a, visited and not started, may be reserved (else it waits): while
        fewer than D reservations exist, or with `reserve D per KEY or when COND`, while
        fewer than D earlier jobs of its key are reserved, or else if COND holds (evaluated,
        as in the simulator, only then). Twin: `PassWalk.wait_or_reserve` in
        runtime/engine/walk.py."""
        if not self.selective:
            return self.below_depth(a)
        policy, queue, reserved, key_of = self.policy, self.queue, self.reserved, self.key_of
        assert self.depth is not None  # the compiler rejects `reserve all per ...`
        if policy.reserve_per is not None:
            key_of[a] = self.evaluate(policy.reserve_per, queue[a], self.state_at(a),
                                      z3.And(self.visited[a], not_started))
            same = [z3.And(reserved[b], key_of[b] == key_of[a]) for b in range(a)]
        else:
            same = [reserved[b] for b in range(a)]
        room = _sum(z3.If(x, 1, 0) for x in same) < self.depth
        if policy.reserve_when is None:
            return room
        when = self.evaluate(policy.reserve_when, queue[a], self.state_at(a),
                             z3.And(self.visited[a], not_started, z3.Not(room)))
        return z3.Or(room, when)

    def reserve(self, a: int) -> None:
        """The reservation's time: the least candidate time (now or a release) at which job a
        fits (and, `size choose`, its size). Twin: `PassWalk.reserve` in
        runtime/engine/walk.py."""
        definitions, reserved, res_time = self.definitions, self.reserved, self.res_time
        times = self.release_times(a)
        fitting = [(z3.And(valid, t >= self.now, self.fits_at(a, t)), t) for valid, t in times]
        # `slack`: the least fitting time is the earliest fit, held from later (below)
        first = self.earliest_time[a] if self.slack_on else res_time[a]
        definitions.add(z3.Implies(
            reserved[a], z3.Or([z3.And(ok, first == t) for ok, t in fitting])))
        definitions.add(z3.Implies(
            reserved[a], z3.And([z3.Implies(ok, first <= t) for ok, t in fitting])))
        if self.slack_on:
            # held its slack later if it fits there (twin: `PassWalk.reserve_late`)
            late = first + self.slack_of[a]
            definitions.add(z3.Implies(reserved[a], res_time[a] == z3.If(
                self.fits_at(a, late), late, first)))
        if self.choices:
            self.choose_size(a, times)

    def slack(self, a: int) -> None:
        """`slack`: job a's slack, the policy's formula for it in the state of its visit,
        floored, 0 if negative; evaluated (its obligations too) only if it is reserved.
        Twin: the slack's evaluation in `PassWalk.reserve_late` in runtime/engine/walk.py."""
        policy = self.policy
        assert policy.slack is not None
        value = self.evaluate(policy.slack, self.queue[a], self.state_at(a), self.reserved[a])
        whole = z3.ToInt(value) if z3.is_real(value) else value  # ToInt is floor
        self.definitions.add(z3.Implies(self.reserved[a], self.slack_of[a] == z3.If(
            whole > 0, whole, 0)))

    def best_rounds(self) -> None:
        """Backfill `best`: after the walk, rounds; each starts the fitting candidate of best
        score (ties: queue order) until none fits. A candidate that does not fit in a round
        never fits later (starts only take resources), so it leaves the pool.
        Twin: `PassWalk.best_rounds` in runtime/engine/walk.py."""
        N, K, policy, definitions = self.N, self.K, self.policy, self.definitions
        queue, picked, candidate = self.queue, self.picked, self.candidate
        pool = [[z3.Bool(f"pool_{j}_{q}") for q in range(N)] for j in range(self.rounds)]
        fit_prev: list[z3.BoolRef] = []
        for j in range(self.rounds):
            s = N + j
            definitions.current = s
            state, after = self.state_in_round(j), self.state_in_round(j + 1)
            alloc_j = [self.alloc_of(q, self.size_round[j][q]) for q in range(N)]
            est_j = self.est_round[j]
            if not self.rigid:
                for q in range(N):
                    first = len(self.obligations)
                    value = self.evaluate(policy.size, queue[q], state, pool[j][q])
                    definitions.add(z3.Implies(queue[q].present,
                                               self.size_round[j][q] == value))
                    self.sizes.append((pool[j][q], self.size_round[j][q], s, q))
                    self.size_obligations.append(tuple(self.obligations[first:]))
            # The round's start, if any, as one job: what the step facts and the plan need.
            any_pick = z3.Or(picked[j])
            pick_est, pick_alloc = z3.Int(f"estimate_round_{j}"), [
                z3.Int(f"alloc_{k}_round_{j}") for k in range(K)]
            definitions.add(pick_est == _sum(z3.If(picked[j][q], est_j[q], 0)
                                             for q in range(N)))
            definitions.add_all([pick_alloc[k] == _sum(z3.If(picked[j][q], alloc_j[q][k], 0)
                                                       for q in range(N)) for k in range(K)])
            self.start(s, lambda i, k, any_pick=any_pick, pick_est=pick_est,
                       pick_alloc=pick_alloc: [
                           z3.If(z3.And(any_pick, self.active(pick_est, i)), pick_alloc[k], 0)])
            definitions.add(z3.Implies(any_pick, self.fits_now(s, pick_alloc, pick_est)))
            self.starts_list += [(picked[j][q], q, after, alloc_j[q][0], s) for q in range(N)]
            # who fits the round: the score is computed for those only (a step fact too: a
            # score that is defined only for a job that fits, as `sqrt` of the cpus left,
            # needs it)
            fit = [z3.And(pool[j][q], self.fits_now(s, alloc_j[q], est_j[q])) for q in range(N)]
            score = []
            for q in range(N):
                value = self.evaluate(policy.backfill.score, queue[q], state, fit[q])
                score.append(z3.If(value, 1, 0) if policy.backfill.score.type == "bool"
                             else value)
            definitions.current = None
            definitions.add(z3.AtMost(*picked[j], 1))
            definitions.add_all([z3.Implies(picked[j][q], pool[j][q]) for q in range(N)])
            definitions.add_all([z3.Implies(pool[j][q], candidate[q]) for q in range(N)])
            if self.exact:
                definitions.current = ("exact", s)
                for q in range(N):
                    definitions.add(pool[j][q] == (candidate[q] if j == 0 else
                                                   z3.And(fit_prev[q],
                                                          z3.Not(picked[j - 1][q]))))
                    beats = []
                    for o in range(N):
                        if o == q:
                            continue
                        better = (score[q] > score[o] if policy.backfill.descending
                                  else score[q] < score[o])
                        if q < o:
                            better = z3.Or(better, score[q] == score[o])
                        beats.append(z3.Implies(fit[o], better))
                    definitions.add(picked[j][q] == z3.And(fit[q], *beats))
            fit_prev = fit
        definitions.current = None

    # -- checks after steps -----------------------------------------------------------------

    def profile_ok(self, s: int) -> z3.BoolRef:
        """The plan after step s (running jobs, starts, reservations) never exceeds a
        capacity: use rises only at now and at reservation starts."""
        use, capacity_t = self.use, self.capacity
        checks = []
        for k in range(self.K):
            checks.append(use[s][0][k] <= capacity_t[k])
            checks += [z3.Implies(self.reserved[b], use[s][b + 1][k] <= capacity_t[k])
                       for b in range(min(s, self.N))]
        return z3.And(checks)

    def capacity_ok(self, s: int) -> z3.BoolRef:
        return z3.And([self.use[s][0][k] <= self.capacity[k] for k in range(self.K)])

    def use_nonnegative(self, s: int) -> z3.BoolRef:
        return z3.And([self.use[s][0][k] >= 0 for k in range(self.K)])

    def holds(self, a: int) -> z3.BoolRef:
        """After the whole pass, reservation a still fits beside every start and every other
        reservation: no job started in the pass delayed it."""
        t, end = self.res_time[a], self.res_time[a] + self.est_walk[a]
        checks = []
        for k in range(self.K):
            checks.append(self.use[self.steps][a + 1][k] <= self.capacity[k])
            checks += self.starts_inside(self.steps, t, end, k, None,
                                         [b for b in range(self.N) if b != a])
        return z3.Implies(self.reserved[a], z3.And(checks))


def _lex_le(a: Sequence[tuple[z3.ExprRef, bool]], b: Sequence[tuple[z3.ExprRef, bool]]
            ) -> z3.BoolRef:
    """Key tuple ``a`` is at most ``b`` (lexicographic, each key ascending or descending)."""
    result = z3.BoolVal(True)
    for (va, desc), (vb, _) in reversed(list(zip(a, b, strict=True))):
        less = va > vb if desc else va < vb
        result = z3.Or(less, z3.And(va == vb, result))
    return result


def _reads_queue(policy: ir.Policy) -> bool:
    """Some formula aggregates over the queue or reads its length."""
    exprs = ir.decision_exprs(policy) + [i.expr for i in policy.invariants]
    return any(isinstance(n, ir.Aggregate) and n.domain == "queue"
               or isinstance(n, ir.StateAttr) and n.attr == "queue.count"
               for e in exprs for n in ir.walk(e))


def _queued_ok(j: SymJob, now: z3.ArithRef, capacity: Sequence[z3.ArithRef]
               ) -> list[z3.BoolRef]:
    """What every queued job satisfies (``_assume_jobs``' assumptions of one job)."""
    K = len(capacity)
    return [j.present, j.estimate >= 1, j.request[0] >= 1, j.id >= 0,
            *(z3.And(j.request[k] >= 0, j.request[k] <= capacity[k]) for k in range(K)),
            z3.If(j.moldable,
                  z3.And(j.min_size >= 1, j.min_size <= j.request[0],
                         j.request[0] <= j.max_size, j.max_size <= capacity[0]),
                  z3.And(j.min_size == j.request[0], j.max_size == j.request[0])),
            z3.Implies(j.moldable, z3.And(j.work >= 1, z3.Implies(j.request[0] == 1,
                                                                   j.work == j.estimate))),
            j.submit >= 0, j.submit <= now, *(v >= -1 for v in j.labels.values())]


def _reads_speeds(policy: ir.Policy) -> bool:
    exprs = ir.decision_exprs(policy) + [i.expr for i in policy.invariants]
    return any(isinstance(n, ir.MachineAttr | ir.ResourceAttr) and n.attr in ("bpu", "power")
               for e in exprs for n in ir.walk(e))


def _candidates(low: z3.ArithRef, high: z3.ArithRef, n: int
                ) -> list[tuple[z3.BoolRef, z3.ArithRef]]:
    """`choose n in [low, high]` (runtime/engine/simulator.py's size_candidates): every size of
    [low, max(low, high)] if at most n, else n spread evenly, low + i (high - low) div (n-1).
    (valid, size) per i; i is concrete, so each size is linear."""
    top = z3.If(high >= low, high, low)
    if n == 1:
        return [(z3.BoolVal(True), top)]
    few = top - low + 1 <= n
    return [(z3.Or(z3.Not(few), i <= top - low),
             z3.If(few, low + i, low + (i * (top - low)) / (n - 1)))
            for i in range(n)]


def _job(prefix: str, K: int, running: bool, labels: Sequence[str] = ()) -> SymJob:
    return SymJob(
        present=z3.Bool(f"{prefix}_present"),
        id=z3.Int(f"{prefix}_id"),
        submit=z3.Int(f"{prefix}_submit"),
        estimate=z3.Int(f"{prefix}_estimate"),
        request=tuple(z3.Int(f"{prefix}_request{k}") for k in range(K)),
        start=z3.Int(f"{prefix}_start") if running else None,
        moldable=z3.Bool(f"{prefix}_moldable"),
        min_size=z3.Int(f"{prefix}_min_size"),
        max_size=z3.Int(f"{prefix}_max_size"),
        work=z3.Int(f"{prefix}_work"),
        labels={a: z3.Int(f"{prefix}_{a}") for a in labels},
    )


def _assume_jobs(running: Sequence[SymJob], queue: Sequence[SymJob], now, capacity,
                 assume: Callable[[str, Any], None], idle: bool) -> None:
    K = len(capacity)
    # Empty slots come last: every state with fewer jobs is covered once.
    assume("empty job slots come last",
           [z3.Implies(s[i + 1].present, s[i].present)
            for s in (running, queue) for i in range(len(s) - 1)])
    if idle:
        assume("the machine is idle", [z3.Not(r.present) for r in running])
        assume("the queue is not empty", queue[0].present)
    for r in running:
        # every `--overrun` mode: killed at the estimate, the estimate raised to the run, or
        # (extend) an overdue job planned to end a second from now (Machine.extend_overdue)
        assume("running jobs started by now and are planned to end after it",
               z3.Implies(r.present, z3.And(r.submit >= 0, r.submit <= r.start,
                                            r.start <= now, now < r.start + r.estimate)))
    for j in (*running, *queue):
        assume("estimates are at least 1 s", z3.Implies(j.present, j.estimate >= 1))
        assume("requests lie in [0, capacity], cpus at least 1",
               z3.Implies(j.present, z3.And(
                   [j.request[0] >= 1] + [z3.And(j.request[k] >= 0, j.request[k] <= capacity[k])
                                          for k in range(K)])))
        assume("ids are not negative", z3.Implies(j.present, j.id >= 0))
        if j.labels:
            assume("users, groups, executables, queues and partitions are at least -1 "
                   "(unknown)", z3.Implies(j.present, z3.And([v >= -1
                                                             for v in j.labels.values()])))
        assume("a moldable job's sizes lie in [1, capacity] around its request, a rigid "
               "job's are its request",
               z3.Implies(j.present, z3.If(
                   j.moldable,
                   z3.And(j.min_size >= 1, j.min_size <= j.request[0],
                          j.request[0] <= j.max_size, j.max_size <= capacity[0]),
                   z3.And(j.min_size == j.request[0], j.max_size == j.request[0]))))
        assume("a moldable job's sequential time is at least 1 s, its estimate if it asks "
               "for 1 cpu",
               z3.Implies(z3.And(j.present, j.moldable), z3.And(
                   j.work >= 1, z3.Implies(j.request[0] == 1, j.work == j.estimate))))
    for q in queue:
        assume("queued jobs were submitted by now",
               z3.Implies(q.present, z3.And(q.submit >= 0, q.submit <= now)))
    jobs = [*running, *queue]
    assume("job ids are distinct",
           [z3.Implies(z3.And(x.present, y.present), x.id != y.id)
            for i, x in enumerate(jobs) for y in jobs[i + 1:]])


def _params(policy: ir.Policy, assume) -> ParamTerms:
    out: dict[str, z3.ExprRef] = {}
    for p in policy.params:
        var = {"int": z3.Int, "real": z3.Real, "bool": z3.Bool}[p.type](f"param_{p.name}")
        out[p.name] = var
        bounds = []
        if p.lo is not None:
            bounds.append(var >= p.lo)
        if p.hi is not None:
            bounds.append(var <= p.hi)
        if bounds:
            assume(f"param `{p.name}` lies in [{show(p.lo)}, {show(p.hi)}]", bounds)
        elif p.name == depth_param(policy):  # `run` rejects a negative depth (dsl/params.py)
            assume(f"param `{p.name}` is a reservation depth: at least 0", [var >= 0])
    # the domains, for the range analysis of formulas (dsl/verify/ranges.py)
    domains = {p.name: (None if p.lo is None else Fraction(p.lo),
                        None if p.hi is None else Fraction(p.hi))
               for p in policy.params if p.type != "bool"}
    return ParamTerms(out, domains)


def _depth(policy: ir.Policy, params: dict[str, z3.ExprRef],
           override: int | None | str) -> int | None | z3.ArithRef:
    if override != "policy":
        return override  # type: ignore[return-value]
    if isinstance(policy.depth, ir.ParamRef):
        return params[policy.depth.name]
    return policy.depth
