"""Proving a policy's properties with Z3, one scheduling pass over bounded symbolic states.

Each property is checked as "assumptions and pass and not property" being unsatisfiable: unsat
is a proof (for every state within the bounds), sat gives a counterexample state, anything
else is unknown with Z3's reason. Proofs use the pass's step facts (small lemmas, by induction
over the steps: see ``dsl/verify/pass_encoding.py``); counterexamples come from the exact
pass, searched at growing bounds so that the first one found is small. Assumptions are tracked
by name, so a proof reports which of them it used (the unsat core). Z3's ``rlimit`` bounds the
work, so a verdict does not depend on the machine's speed (a wall-clock timeout is a second
guard), and each verification has its own Z3 context (``dsl/verify/z3context.py``), so a
verdict does not depend on what the process verified before. Nor on which other properties
are asked: the lemmas learned as premises of later checks (``_learn_pass_facts``) are
learned first, the same for every selection, and each property runs on a fresh solver.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from typing import Any, Literal

import attrs
import z3
from attrs import frozen

from schedc.dsl import ir
from schedc.dsl.diagnostics import Span
from schedc.dsl.exact import json_number
from schedc.dsl.machines import with_resources  # noqa: F401  (re-exported for callers)
from schedc.dsl.verify.pass_encoding import TAILS, Bounds, SymbolicPass, Unsupported, encode_pass
from schedc.dsl.verify.ranges import sums_held
from schedc.dsl.verify.symbolic import Obligation, describe, running_total
from schedc.dsl.verify.vocabulary import PROPERTIES, RLIMIT, TIMEOUT_S
from schedc.dsl.verify.z3context import fresh_context


@frozen
class Limits:
    rlimit: int = RLIMIT  # Z3 resource units per property (deterministic)
    timeout_ms: int = int(TIMEOUT_S * 1000)  # wall clock per property


Status = Literal["proved", "violated", "unknown"]  # a verdict's


@frozen
class Verdict:
    property: str  # one of PROPERTIES, or "invariant `TEXT`"
    status: Status
    seconds: float
    bound: str  # e.g. "N=8 queued, R=8 running, K=1"
    location: Span | None = None  # of the invariant or the failing operation
    reason: str | None = None  # unknown: why; violated: what failed
    core: tuple[str, ...] = ()  # proved: the assumptions the proof used
    counterexample: dict[str, Any] | None = None  # violated: a state `schedc run --state` replays
    work: int = 0  # Z3's resource units spent: the same on any machine, unlike ``seconds``
    # proved, but for states of at most R running jobs only: where the policy reads every
    # running job (`running.count`, an aggregate over `running`), as "`TEXT` (file:line:col)"
    bounded_by: tuple[str, ...] = ()
    # proved, within limits the bounds set (each a sentence: what is not covered, what to
    # raise); the report prints them
    caveats: tuple[str, ...] = ()
    # a dynP policy's verdict (dsl/verify/tuned.py): the candidate whose verdict it is when
    # not proved (its counterexample replays with that candidate's pass), and every
    # candidate's status, in the order written
    candidate: str | None = None
    candidates: tuple[tuple[str, str], ...] = ()


# How the simulator's replay of a counterexample state stopped: (the property its monitor stop
# refutes, or None if it did not stop for one; what it said). ``runtime/replay.py`` makes it.
Replay = Callable[[dict[str, Any]], tuple[str | None, str]]
# Told where a verification is, for a progress line: (the property, None while it is proved
# from the step facts, else the bounds (n queued, n running) of the counterexample search)
Progress = Callable[[str, tuple[int, int] | None], None]
REPLAY_TRIES = 4  # counterexample states tried before a violation that does not replay is unknown
# A property whose step lemmas fail but whose exact pass holds up to the given N is searched
# with up to BEYOND more queued jobs (never more than MAX_QUEUED, the CLI's largest --queued)
BEYOND = 4
MAX_QUEUED = 64


def verify_policy(policy: ir.Policy, bounds: Bounds | None = None, limits: Limits | None = None,
                  only: Iterable[str] | None = None,
                  replay: Replay | None = None,
                  replay_for: Callable[[ir.Policy], Replay] | None = None,
                  resized: bool | None = None,
                  progress: Progress | None = None,
                  kept: tuple[ir.Invariant, ...] | None = None) -> list[Verdict]:
    """Every property of ``policy`` (or those named in ``only``), in a fixed order.

    Each property is first proved from the step facts alone (``encode_pass(exact=False)``:
    small lemmas, fast). If that fails, the exact pass decides, at growing bounds up to the
    given ones: the first counterexample found is a real, small state. With ``replay``, a
    counterexample is reported only if the simulator's replay of it stops for the same
    property (others are tried; if none replays, the verdict is unknown): what the verifier
    only models (how `sqrt` rounds, which function `log` is) never makes a false report.

    A dynP policy (``policy.tuning``) is proved candidate by candidate (dsl/verify/tuned.py);
    ``replay_for(candidate)`` then replays each candidate's counterexamples with its pass.
    ``resized``: running rigid jobs may hold other cpus than they asked (``encode_pass``;
    default: if the policy has a size rule). ``progress`` is told each property as it
    starts and each bound its counterexample search reaches. ``limits.timeout_ms`` bounds
    each property's checks together, not each check."""
    if policy.tuning is not None:
        if replay is not None and replay_for is None:
            raise ValueError("a dynP policy's counterexamples replay with their candidate's "
                             "pass: give replay_for, not replay")
        from schedc.dsl.tuning import candidate_policies
        from schedc.dsl.verify.tuned import verify_tuned

        # a job another candidate started on a size of its rule runs on in this one's passes
        sized = any(c.size is not None for c in policy.tuning.candidates)
        # a size one candidate kept, another starts the job on (one table of kept sizes):
        # it satisfies the invariants every candidate that keeps sizes proves of its own
        kept = kept_invariants(candidate_policies(policy))

        def one(candidate: ir.Policy) -> list[Verdict]:
            # the candidates plan the tuned policy's machine (one machine, checked when
            # lowering; widened with it by --resources)
            candidate = attrs.evolve(candidate, machine=policy.machine)
            return verify_policy(candidate, bounds, limits, only,
                                 replay_for(candidate) if replay_for else None,
                                 resized=sized, progress=progress, kept=kept)

        return verify_tuned(policy, one)
    if resized is None:
        resized = policy.size is not None
    with fresh_context():
        return _verify(policy, bounds or Bounds(), limits or Limits(), only, replay, resized,
                       progress, kept)


def kept_invariants(candidates: tuple[ir.Policy, ...]) -> tuple[ir.Invariant, ...]:
    """The invariants a kept size satisfies in a dynP run: those every `size fixed`
    candidate has (each proves them of the sizes it keeps; the others keep none)."""
    fixed = [c for c in candidates if c.size_fixed]
    if not fixed:
        return ()
    return tuple(i for i in fixed[0].invariants
                 if all(any(i.expr == j.expr for j in c.invariants) for c in fixed[1:]))


def _verify(policy: ir.Policy, bounds: Bounds, limits: Limits, only: Iterable[str] | None,
            replay: Replay | None, resized: bool,
            progress: Progress | None = None,
            kept: tuple[ir.Invariant, ...] | None = None) -> list[Verdict]:
    wanted = set(only) if only is not None else None
    bound = (f"N={bounds.queued} queued, R={bounds.running} running, "
             f"K={len(policy.machine.resources)}")
    try:
        sym = encode_pass(policy, bounds, exact=False, resized=resized, kept=kept)
    except Unsupported as exc:
        names = [*PROPERTIES, *(f"invariant `{i.text}`" for i in policy.invariants)]
        return [Verdict(name, "unknown", 0.0, bound, reason=str(exc)) for name in names
                if wanted is None or _base(name) in wanted]
    checker = _Checker(policy, bounds, limits, bound, replay, resized, progress, kept)

    def want(name: str) -> bool:
        return wanted is None or name in wanted

    # Evaluate invariants before well-defined is checked: they bring their own obligations
    # (on every exact pass too, as soon as it is encoded).
    invariants = [_Invariant(inv) for inv in policy.invariants]
    checker.prepare = lambda s: [inv.whole(s) for inv in invariants]
    checker.prepare(sym)
    verdicts: list[Verdict] = []

    def measured(name: str, verdict: Callable[[], Verdict]) -> None:
        checker.start(name)  # the time limit is the property's, all its checks together
        # Z3's resource count of the whole context (its own: the same on any machine)
        spent = _context_work()
        verdicts.append(attrs.evolve(verdict(), work=_context_work() - spent))

    # The facts every check on the pass may use, learned first and whatever properties are
    # asked: a verdict must not depend on which others were asked (nor their order)
    _learn_pass_facts(checker, sym)
    if want("capacity"):
        # by induction over the steps, as reservation-safety (its lemmas are learned facts
        # already, if they hold)
        lemmas = [("", step, lemma) for step, lemma in _capacity_steps(sym)]
        measured("capacity", lambda: checker.prove(
            sym, "capacity", lemmas, whole=_after_the_pass(_capacity),
            failure="a resource is overcommitted after the pass"))
    if want("size-bounds"):
        note = None if sym.size_results else "rigid sizes: the requests"
        # one lemma a step: its size formulas' evaluations, with the step's equations
        by_step: dict[int, list[int]] = {}
        for i, (_, _, step, _) in enumerate(sym.size_results):
            by_step.setdefault(step, []).append(i)
        fine: dict[int, z3.BoolRef] = {}  # the candidates of a `choose` share their formulas

        def no_failure(obligations: tuple[Obligation, ...]) -> z3.BoolRef:
            if id(obligations) not in fine:
                fine[id(obligations)] = _no_failure(obligations)
            return fine[id(obligations)]

        lemmas = [("", step, lambda s, ids=ids: z3.And([
            z3.Implies(no_failure(s.size_obligations[i]), _size_ok(s, s.size_results[i]))
            for i in ids])) for step, ids in by_step.items()]
        measured("size-bounds", lambda: checker.prove(
            sym, "size-bounds", lemmas, whole=_size_bounds,
            failure="a size lies outside [1, capacity] or a moldable job's range", note=note))
    if want("well-defined"):
        measured("well-defined", lambda: _well_defined(checker, sym))
    if want("reservation-safety"):
        measured("reservation-safety", lambda: _reservation_safety(checker, sym))
    if want("progress"):
        # The step facts never force a start: progress is a fact of the exact decisions.
        idle = encode_pass(policy, bounds, idle=True, earliest=False, resized=resized,
                           kept=kept)
        measured("progress", lambda: checker.prove(
            idle, "progress", [("", None, _after_the_pass(_progress))],
            location=policy.backfill.span, idle=True))
    for inv in invariants:
        if wanted is None or "invariant" in wanted:
            measured(f"invariant `{inv.inv.text}`", lambda inv=inv: checker.prove(
                sym, f"invariant `{inv.inv.text}`", inv.lemmas(sym), whole=inv.whole,
                location=inv.inv.span))
    # Aggregates over `queue` range over any number of further jobs (QueueTail); those over
    # `running` over the R slots only: say so on every verdict they can bound (an idle
    # machine's, progress, has no running job).
    reads = _reads_every_running_job(policy)
    caveats = [f"proved for states of at most {bounds.running} running jobs only (raise "
               f"--running to cover more): the policy reads every running job in "
               f"{', '.join(reads)}"] if reads else []
    caveats += _depth_unreached(policy, bounds)
    return [attrs.evolve(v, bounded_by=reads,
                         caveats=tuple(dict.fromkeys((*caveats, *v.caveats))))
            if caveats and v.status == "proved" and v.property != "progress" else v
            for v in verdicts]


def _capacity_steps(sym: SymbolicPass) -> list[tuple[int, Property]]:
    """No step overcommits, by induction: (step, lemma) pairs."""
    return [(-1, lambda s: s.capacity_ok(0))] + [
        (c, lambda s, c=c: z3.Implies(s.capacity_ok(c), s.capacity_ok(c + 1)))
        for c in range(sym.steps)]


def _learn_pass_facts(checker: _Checker, sym: SymbolicPass) -> None:
    """Small linear lemmas, each chain learned if all of it is proved (a premise of every
    later check on ``sym``): no step overcommits (what `capacity` proves); the use is not
    negative, where a formula reads it (a utilisation is not; a size below 0 would break
    it: then `size-bounds` reports that); and the use at each walk step is what the
    running jobs ask, where a formula sums their requests (``ranges.sums_held``: the sum
    is then within the capacity). A chain that fails is no fact: its property, if asked,
    finds out why."""
    steps = [-1, *range(sym.steps)]
    checker.learn_lemmas(sym, [lemma for _, lemma in _capacity_steps(sym)], steps=steps)
    if _reads_use(sym.policy):
        checker.learn_lemmas(sym, [lambda s: s.use_nonnegative(0)] + [
            lambda s, c=c: z3.Implies(s.use_nonnegative(c), s.use_nonnegative(c + 1))
            for c in range(sym.steps)], steps=steps)
    if _sums_held(sym.policy):
        walk = len(sym.queue)  # the walk's steps (not the rounds of `best`)
        checker.learn_lemmas(sym, [lambda s: _use_is_held(s, 0)] + [
            lambda s, a=a: z3.Implies(_use_is_held(s, a), _use_is_held(s, a + 1))
            for a in range(walk)], steps=[-1, *range(walk)])


def _use_is_held(sym: SymbolicPass, a: int) -> z3.BoolRef:
    """When the walk reaches slot a, the use of each resource is what the running jobs
    (those of the state and those started so far) ask of it: false where a size rule gave
    a rigid job other cpus than it asked (never learned then)."""
    state = sym.state_at(a)
    return z3.And([u == running_total(state, k) for k, u in enumerate(state.used)])


def _sums_held(policy: ir.Policy) -> bool:
    """A formula sums the running jobs' requests (``ranges.sums_held``)."""
    return any(isinstance(node, ir.Aggregate) and sums_held(node) is not None
               for node in _formula_nodes(policy))


def _depth_unreached(policy: ir.Policy, bounds: Bounds) -> list[str]:
    """A pass acts otherwise once its D reservations are made (no more reservations; with
    `backfill when` or `best`, the backfill rule): with N <= D queued slots no job reaches
    that part, and a proof says nothing of it."""
    if policy.depth is None or policy.backfill.kind == "none":
        return []
    n = bounds.queued
    if not isinstance(policy.depth, ir.ParamRef):
        if policy.depth < n:
            return []
        return [f"the pass after its first {policy.depth} reservations (`reserve "
                f"{policy.depth}`) is not covered: no job of the {n} queued slots reaches it "
                f"(raise --queued {policy.depth + 1})"]
    name = policy.depth.name
    param = next((p for p in policy.params if p.name == name), None)
    top = None if param is None or param.hi is None else int(param.hi)
    if top is not None and top < n:
        return []
    return [f"the pass after its first D reservations (`reserve {name}`, D "
            f"{'any' if top is None else f'up to {top}'}) is not covered where D >= {n}: no "
            f"job of the {n} queued slots reaches it (raise --queued "
            f"{'above the depths that matter' if top is None else top + 1})"]


def _formula_nodes(policy: ir.Policy):
    """Every node of every formula the policy decides or checks by."""
    for expr in [*ir.decision_exprs(policy), *(i.expr for i in policy.invariants)]:
        yield from ir.walk(expr)


def _reads_use(policy: ir.Policy) -> bool:
    """A formula reads what the machine uses (`used`, `free`, `util` of a resource)."""
    return any(isinstance(node, ir.MachineAttr | ir.ResourceAttr)
               and node.attr in ("used", "free", "util") for node in _formula_nodes(policy))


def _reads_every_running_job(policy: ir.Policy) -> tuple[str, ...]:
    """Where a formula of ``policy`` reads every running job, outermost first."""
    found: dict[str, None] = {}
    for node in _formula_nodes(policy):
        if (isinstance(node, ir.StateAttr) and node.attr == "running.count"
                or isinstance(node, ir.Aggregate) and node.domain == "running"):
            where = f" ({node.span.location()})" if node.span else ""
            found[f"`{describe(node)}`{where}"] = None
    return tuple(found)


Property = Callable[[SymbolicPass], z3.BoolRef]


def _capacity(sym: SymbolicPass) -> z3.BoolRef:
    return z3.And([u <= c for u, c in zip(sym.used_after, sym.capacity, strict=True)])


def _in_range(sym: SymbolicPass, size: z3.ArithRef, slot: int) -> z3.BoolRef:
    """In [1, capacity], and in its range for a moldable job (DESIGN: [job min, min(job max,
    capacity)])."""
    job = sym.queue[slot]
    return z3.And(size >= 1, size <= sym.capacity[0], z3.Implies(
        job.moldable, z3.And(job.min_size <= size, size <= job.max_size)))


def _size_ok(sym: SymbolicPass, result: tuple[z3.BoolRef, z3.ArithRef, int, int]
             ) -> z3.BoolRef:
    guard, size, _, slot = result
    return z3.Implies(guard, _in_range(sym, size, slot))


def size_stops(sym: SymbolicPass) -> list[tuple[Obligation, int | None]]:
    """Each size the simulator checks, as an obligation of its step: a size out of range
    stops the simulator there (for `size-bounds`), like a failing formula, so no later
    decision, start or after-pass check happens (the size results' guards are when the
    simulator computes each size, no more: an excused state is one it stops in)."""
    return [(Obligation("SIZE_BOUNDS", guard, _in_range(sym, size, slot), None,
                        "a size in range"), step)
            for guard, size, step, slot in sym.size_results]


def _size_bounds(sym: SymbolicPass) -> z3.BoolRef:
    """Every size computed without a failure is in range: a failing formula stops the
    simulator before its size is used (that is `well-defined`'s), its own or one evaluated
    before it: an order key, a formula or a size of an earlier step."""
    through = _fine_through(sym, [*zip(sym.obligations, sym.obligation_steps, strict=True),
                                  *size_stops(sym)])
    return z3.And([z3.Implies(z3.And(through[r[2] - 1], _no_failure(own)), _size_ok(sym, r))
                   for r, own in zip(sym.size_results, sym.size_obligations, strict=True)])


def _fine_through(sym: SymbolicPass, obligations: list[tuple[Obligation, int | None]]
                  ) -> list[z3.BoolRef]:
    """``[s]``: no failure among ``obligations`` of no step (order keys, evaluated first)
    and of steps 0 to s; ``[-1]`` (one more entry): of no step only, before step 0. So
    ``[s - 1]`` is "before step s" for every s."""
    steps: dict[int | None, list[Obligation]] = {}
    for ob, step in obligations:
        steps.setdefault(step, []).append(ob)
    fine = _no_failure(steps.get(None, []))
    through = []
    for s in range(sym.steps + 1):
        fine = z3.And(fine, _no_failure(steps.get(s, [])))
        through.append(fine)
    return [*through, _no_failure(steps.get(None, []))]  # [-1]: before step 0


def _no_failure(obligations) -> z3.BoolRef:
    return z3.And([z3.Not(o.violated()) for o in obligations])


def completes(sym: SymbolicPass) -> z3.BoolRef:
    """The pass runs to its end: no formula fails and no size is out of range (either stops
    the simulator there)."""
    return z3.And(_no_failure(sym.obligations), _no_failure(o for o, _ in size_stops(sym)))


def _after_the_pass(prop: Property) -> Property:
    """``prop``, which the monitor checks after the pass (capacity, reservations, progress),
    of every pass that runs to its end."""
    return lambda s: z3.Implies(completes(s), prop(s))


def _progress(sym: SymbolicPass) -> z3.BoolRef:
    return z3.Or([d.started for d in sym.decisions])


def _reservations_hold(sym: SymbolicPass) -> z3.BoolRef:
    return z3.And(list(sym.reservations_hold))


class _Invariant:
    """The invariant holds right after every start; evaluated once per encoded pass (the
    evaluation adds its definitions and obligations to the pass, each to its start's step).
    With `size fixed`, an invariant of the job and its size alone also holds of every size
    chosen to be kept (the pass assumes it of kept sizes: an induction over the passes)."""

    def __init__(self, inv: ir.Invariant) -> None:
        self.inv = inv
        self._memo: dict[int, tuple[SymbolicPass, dict[int, z3.BoolRef]]] = {}
        self._before: dict[int, list[tuple[Obligation, int | None]]] = {}
        self._whole: dict[int, z3.BoolRef] = {}
        self._job_only = ir.dependencies(inv.expr) <= {"job", "param"}

    def _holds(self, sym: SymbolicPass, guard: z3.BoolRef, slot: int, state, size,
               step: int | None) -> z3.BoolRef:
        # where the invariant's own evaluation fails, the simulator stops for that
        # (`well-defined`), not for the invariant
        first = len(sym.obligations)
        value = sym.evaluate(self.inv.expr, sym.queue[slot], state, guard, size=size,
                             step=step)
        return z3.Implies(z3.And(guard, _no_failure(sym.obligations[first:])), value)

    def by_step(self, sym: SymbolicPass) -> dict[int, z3.BoolRef]:
        """Per step, that the invariant holds after its starts (and of the sizes it keeps)."""
        if id(sym) not in self._memo:
            # what the simulator evaluated before: the pass's formulas and the invariants
            # evaluated earlier (on each pass they are evaluated in their order)
            # (and the sizes checked: one out of range stops it too)
            self._before[id(sym)] = [*zip(sym.obligations, sym.obligation_steps, strict=True),
                                     *size_stops(sym)]
            checks: dict[int, list[z3.BoolRef]] = {}
            for s in sym.starts:
                checks.setdefault(s.step, []).append(
                    self._holds(sym, s.guard, s.slot, s.state, s.size, s.step))
            if self._job_only:  # a size to keep, computed in its job's walk step
                for guard, slot, size in sym.fresh_sizes:
                    checks.setdefault(slot, []).append(
                        self._holds(sym, guard, slot, sym.state_at(slot), size, slot))
            self._memo[id(sym)] = (sym, {step: z3.And(c) for step, c in checks.items()})
        return self._memo[id(sym)][1]

    def whole(self, sym: SymbolicPass) -> z3.BoolRef:
        """At every start whose step ran without a failure up to it (the simulator stops
        at a failing formula, for `well-defined`, before it checks the invariant)."""
        if id(sym) not in self._whole:  # (on a pass prepared and then refuted: once)
            steps = self.by_step(sym)
            through = _fine_through(sym, self._before[id(sym)])
            self._whole[id(sym)] = z3.And([z3.Implies(through[step], holds)
                                           for step, holds in steps.items()])
        return self._whole[id(sym)]

    def lemmas(self, sym: SymbolicPass) -> list[tuple[str, int | None, Property]]:
        """One a step, with its equations (and the lemmas proved before: the capacity
        steps, for one): a small check each, as the other properties'."""
        return [("", step, lambda s, step=step: self.by_step(s)[step])
                for step in self.by_step(sym)]


def _base(name: str) -> str:
    return "invariant" if name.startswith("invariant") else name


def _reservation_safety(checker: _Checker, sym: SymbolicPass) -> Verdict:
    """By induction over the steps, one small lemma a step: if the plan after step s never
    overcommits, neither does the plan after step s + 1 (each start and each reservation was
    fitted into the plan of its step, which holds every earlier reservation). The final plan
    then keeps every reservation. With `slack` a reservation's time is where the plan holds
    it, its earliest fit plus at most its slack: the same proof shows that no reservation
    moves more than the policy allows."""
    n = sym.steps
    lemmas: list[tuple[str, int | None, Property]] = [
        ("the plan before the pass overcommits", -1, lambda s: s.profile_ok(0))]
    lemmas += [(f"step {c + 1} of the pass overcommits the plan", c,
                lambda s, c=c: z3.Implies(s.profile_ok(c), s.profile_ok(c + 1)))
               for c in range(n)]
    lemmas.append(("a start delays a reservation", -1,
                   lambda s: z3.Implies(s.profile_ok(n), _reservations_hold(s))))
    return checker.prove(sym, "reservation-safety", lemmas,
                         location=sym.policy.backfill.span,
                         whole=_after_the_pass(_reservations_hold),
                         failure="a job started in the pass delays a reservation"
                         + (" beyond its slack" if sym.policy.slack is not None else ""))


def _well_defined(checker: _Checker, sym: SymbolicPass) -> Verdict:
    """Each partial operation separately: its guard implies its safety condition. A failure
    is searched for in the exact pass among the operations of the same formula node."""
    started = time.perf_counter()
    cores: set[str] = set()
    caveats: dict[str, None] = {}
    # One check per formula node and step: a node evaluated for every job of an aggregate
    # repeats its condition under many guards.
    groups: dict[tuple, list[Obligation]] = {}
    for ob, step in zip(sym.obligations, sym.obligation_steps, strict=True):
        groups.setdefault((ob.kind, ob.span, ob.text, step), []).append(ob)
    # First one check a step for all its nodes (most hold: fewer, larger checks are cheaper);
    # a step that fails is checked node by node, to name the failing one.
    steps: dict[int | None, list[Obligation]] = {}
    for (*_, step), group in groups.items():
        steps.setdefault(step, []).extend(group)
    settled: set[int | None] = set()
    for step, obligations in steps.items():
        formula = z3.And([z3.Implies(o.guard, o.safe) for o in obligations])
        result, core = checker._solve(sym, formula, None if sym.exact else step)
        if result == z3.unsat:
            settled.add(step)
            cores.update(core)
    for (*_, step), group in groups.items():
        if step in settled:
            continue
        ob = group[0]

        def same_node(s: SymbolicPass, ob=ob) -> z3.BoolRef:
            return z3.And([z3.Implies(o.guard, o.safe) for o in s.obligations
                           if o.span == ob.span and o.kind == ob.kind])

        def safe_here(s: SymbolicPass, group=group) -> z3.BoolRef:
            return z3.And([z3.Implies(o.guard, o.safe) for o in group])

        # with its step's equations only (None: all): other jobs' formulas stay out
        verdict = checker.prove(sym, "well-defined", [("", step, safe_here)],
                                location=ob.span, whole=same_node,
                                failure=f"{ob.kind}: {ob.text}")
        if verdict.status != "proved":
            return attrs.evolve(verdict, seconds=time.perf_counter() - started)
        cores.update(verdict.core)
        caveats.update(dict.fromkeys(verdict.caveats))  # a node proved within bounds only
    note = None if sym.obligations else "no partial operation in any formula"
    return Verdict("well-defined", "proved", time.perf_counter() - started, checker.bound,
                   core=tuple(sorted(cores)), reason=note, caveats=tuple(caveats))


class _Checker:
    """Runs the solver: lemmas over the step facts, then the exact pass at growing bounds."""

    def __init__(self, policy: ir.Policy, bounds: Bounds, limits: Limits, bound: str,
                 replay: Replay | None = None, resized: bool = False,
                 progress: Progress | None = None,
                 kept: tuple[ir.Invariant, ...] | None = None):
        self.policy, self.bounds, self.limits, self.bound = policy, bounds, limits, bound
        self.resized = resized
        self.kept = kept
        self.replay = replay
        self.progress = progress
        self.deadline: float | None = None  # the property's (perf_counter), see `start`
        self.prepare: Callable[[SymbolicPass], object] = lambda s: None  # on each new pass
        self._exact: dict[tuple[int, int, bool, str], SymbolicPass] = {}
        self.searched_past: int | None = None  # the last `_refute`'s search past N
        self._base_of: SymbolicPass | None = None
        self._base_solver: z3.Solver | None = None
        # Lemmas proved on a pass, premises of its later checks, with the assumptions each
        # proof used (a check that uses one reports them): a proved lemma holds in every
        # model of the pass's assumptions and equations, so adding it changes no verdict,
        # and it spares a later proof the induction (an invariant on `machine.util` need
        # not re-derive that no step overcommits).
        self._facts: dict[int, list[tuple[z3.BoolRef, tuple[str, ...]]]] = {}

    def prove(self, sym: SymbolicPass, name: str,
              lemmas: list[tuple[str, int | None, Property]],
              location: Span | None = None, whole: Property | None = None,
              failure: str | None = None, note: str | None = None,
              idle: bool = False, learn: bool = False) -> Verdict:
        """``lemmas``: (what fails, step, property) each proved with the shared equations
        and that step's (-1: shared only; None, or the exact pass: all). ``whole``: the property of
        the exact pass a failed lemma is searched for (default: the lemma itself). ``learn``:
        the lemmas, once all proved, are premises of the later checks on ``sym`` (only small
        linear ones are worth it: a premise with a sqrt slows every later check)."""
        started = time.perf_counter()
        cores: set[str] = set()
        proved: list[tuple[z3.BoolRef, tuple[str, ...]]] = []
        for what, step, lemma in lemmas:
            formula = lemma(sym)
            result, core = self._solve(sym, formula, None if sym.exact else step)
            if result == z3.unsat:
                cores.update(core)
                proved.append((formula, core))
                continue
            verdict = self._refute(name, whole or lemma, location, failure or what or
                                   f"{name} does not hold", idle)
            if verdict is None:  # the exact pass holds it at every bound, the given ones too
                verdict = Verdict(name, "proved", 0.0, self.bound, location=location,
                                  reason=note, caveats=self._bounded(idle, what))
            return attrs.evolve(verdict, seconds=time.perf_counter() - started)
        for formula, core in proved if learn else []:
            self.learn(sym, formula, core)
        return Verdict(name, "proved", time.perf_counter() - started, self.bound,
                       location=location, core=tuple(sorted(cores)), reason=note)

    def start(self, name: str) -> None:
        """A property starts: its time limit runs from now, over all of its checks, on a
        fresh solver (what the others' checks left in one must not change its verdict)."""
        self.deadline = time.perf_counter() + self.limits.timeout_ms / 1000
        self._base_of = self._base_solver = None
        if self.progress is not None:
            self.progress(name, None)

    def timeout_ms(self) -> int:
        """The next check's time limit: what the property has left (at least 1 ms: Z3
        reads 0 as no limit)."""
        if self.deadline is None:
            return self.limits.timeout_ms
        left = int((self.deadline - time.perf_counter()) * 1000)
        return max(1, min(self.limits.timeout_ms, left))

    def learn_lemmas(self, sym: SymbolicPass, lemmas: list[Property],
                     steps: list[int]) -> bool:
        """Prove each lemma with its step's equations; if all hold, learn them."""
        proved = []
        for lemma, step in zip(lemmas, steps, strict=True):
            formula = lemma(sym)
            result, core = self._solve(sym, formula, step)
            if result != z3.unsat:
                return False
            proved.append((formula, core))
        for formula, core in proved:
            self.learn(sym, formula, core)
        return True

    def learn(self, sym: SymbolicPass, fact: z3.BoolRef, core: tuple[str, ...]) -> None:
        """``fact``, proved on ``sym`` from the assumptions in ``core``, is a premise of
        every later check on ``sym`` (not of the exact passes: they decide for themselves)."""
        if sym.exact:
            return
        facts = self._facts.setdefault(id(sym), [])
        facts.append((fact, core))
        if self._base_of is sym:
            self._base_solver.assert_and_track(fact, z3.Bool(f"fact_{len(facts) - 1}"))

    def _solve(self, sym: SymbolicPass, prop: z3.BoolRef,
               step: int | None) -> tuple[z3.CheckSatResult, tuple[str, ...]]:
        # One solver per encoded pass holds the assumptions; each check adds its own
        # equations and the negated property in a scope (they are internalised once).
        solver = self._base(sym)
        solver.push()
        try:
            solver.add(sym.definitions.all() if step is None
                       else sym.definitions.for_step(step))
            solver.add(z3.Not(prop))
            solver.set("timeout", self.timeout_ms())
            result = solver.check()
            if result != z3.unsat:
                return result, ()
            used: set[str] = set()
            for t in solver.unsat_core():
                kind, index = str(t).split("_")
                if kind == "assumption":
                    used.add(sym.assumptions[int(index)].name)
                else:  # a fact: the assumptions of its proof
                    used.update(self._facts[id(sym)][int(index)][1])
            return result, tuple(sorted(used))
        finally:
            solver.pop()

    def _base(self, sym: SymbolicPass) -> z3.Solver:
        if self._base_of is not sym:
            self._base_of, self._base_solver = sym, self._solver(sym, [])
            for i, (fact, _) in enumerate(self._facts.get(id(sym), [])):
                self._base_solver.assert_and_track(fact, z3.Bool(f"fact_{i}"))
        return self._base_solver

    def _solver(self, sym: SymbolicPass, equations: list[z3.BoolRef]) -> z3.Solver:
        """The assumptions (tracked, for unsat cores) and ``equations``."""
        solver = z3.Solver()
        solver.set("rlimit", self.limits.rlimit)
        solver.set("timeout", self.timeout_ms())
        for i, assumption in enumerate(sym.assumptions):
            solver.assert_and_track(assumption.formula, z3.Bool(f"assumption_{i}"))
        solver.add(equations)
        return solver

    def _refute(self, name: str, prop: Property, location: Span | None, failure: str,
                idle: bool) -> Verdict | None:
        """The smallest bounds (n queued, n running, up to the given ones) at which the exact
        pass violates ``prop``; None if it holds at every bound. Rigid jobs only are tried
        first for a few jobs: a rigid story is simpler than a moldable one. A lemma failed to
        get here, and it covers a job with any number of jobs ahead of it: past the given
        bounds, the search goes on with up to ``BEYOND`` more queued jobs (a job's rank in
        the queue may matter only from the ninth on), as far as the property's time allows;
        ``searched_past`` is then how far it got."""
        N, R = self.bounds.queued, self.bounds.running
        few = min(3, max(N, R))
        tries = [(n, True) for n in range(1, few + 1)]
        tries += [(n, False) for n in range(1, max(N, R) + 1)]
        searched: dict[bool, tuple[int, int]] = {}  # rigid only?: the largest bounds cleared
        self.searched_past = None
        for n, rigid in tries:
            bounds = (min(n, N), min(n, R))
            outcome = self._search_at(name, prop, bounds, rigid, idle, location, failure,
                                      searched)
            if outcome is not None:
                return outcome
        if idle:  # progress: a start among the first N is a start (see `_bounded`)
            return None
        for n in range(N + 1, min(N + BEYOND, MAX_QUEUED) + 1):
            if self.timeout_ms() <= 1:
                break
            outcome = self._search_at(name, prop, (n, R), False, idle, location, failure,
                                      searched, beyond=True)
            if outcome is not None:
                if outcome.status == "unknown":  # out of time or undecided: still bounded
                    break
                return outcome
            self.searched_past = n
        return None

    def _search_at(self, name: str, prop: Property, bounds: tuple[int, int], rigid: bool,
                   idle: bool, location: Span | None, failure: str,
                   searched: dict[bool, tuple[int, int]], beyond: bool = False
                   ) -> Verdict | None:
        """The exact pass at ``bounds``: None if ``prop`` holds there whatever waits after
        the slots (``searched`` records it), else the verdict (violated if a counterexample
        replays, else unknown, saying why)."""
        if self.progress is not None:
            self.progress(name, bounds)
        # any further queued jobs (sound: it decides), then copies of one (a state to show)
        for tail in TAILS:
            sym = self._exact_pass(bounds, idle, tail)
            violated = z3.Not(prop(sym))
            if rigid:
                violated = z3.And(violated, *(z3.Not(j.moldable)
                                              for j in (*sym.running, *sym.queue)))
            solver = self._solver(sym, sym.definitions.all())
            solver.add(violated)
            spent, clock = _rlimit_count(solver), time.perf_counter()
            result = solver.check()
            if result == z3.unsat and tail == "any":
                searched[rigid] = bounds
                return None  # it holds at these bounds, whatever waits after the slots
            if result == z3.unknown:
                # the property's time ran out, however Z3 names a check it stopped
                why = ("timeout" if self.timeout_ms() == 1 else solver.reason_unknown())
                return Verdict(name, "unknown", 0.0, self.bound, location=location,
                               reason=_unknown_reason(
                                   why, bounds, self.limits,
                                   time.perf_counter() - clock,
                                   _rlimit_count(solver) - spent) + _searched(searched))
            if result == z3.unsat:  # only a tail of different jobs breaks it
                return Verdict(name, "unknown", 0.0, self.bound, location=location,
                               reason=f"{failure}, perhaps: at N={bounds[0]}, "
                               f"R={bounds[1]} the verifier cannot rule it out for long "
                               f"queues of different jobs after the first {bounds[0]}, "
                               f"nor find such a queue")
            if sym.queue_tail is None or tail == "copies":
                verdict = self._confirmed(name, sym, violated, solver.model(), location,
                                          failure, bounds)
                if beyond and verdict.status == "violated":
                    verdict = attrs.evolve(verdict, reason=(
                        f"{failure} (only with more than {self.bounds.queued} queued jobs: "
                        f"the counterexample has {bounds[0]})"))
                return verdict
        return None

    def _bounded(self, idle: bool, what: str) -> tuple[str, ...]:
        """What a proof by the exact pass covers: the decisions of its first N queued jobs,
        each step's lemma (which covers a job with any number of jobs ahead of it) having
        failed. On an idle machine (progress) a start among the first N is a start: no
        caveat."""
        if idle:
            return ()
        N, R = self.bounds.queued, self.bounds.running
        searched = self.searched_past or N
        lemma = f" ({what})" if what else ""
        return (f"proved only for passes whose starts and reservations are among the first "
                f"{N} queued jobs, with at most {R} running (raise --queued and --running to "
                f"cover more): the step-by-step proof, which covers every queue length, does "
                f"not go through{lemma}; no counterexample with up to {searched} queued "
                f"jobs",)

    def _exact_pass(self, bounds: tuple[int, int], idle: bool, tail: str) -> SymbolicPass:
        key = (*bounds, idle, tail)
        if key not in self._exact:
            self._exact[key] = encode_pass(self.policy, Bounds(*bounds), idle=idle, tail=tail,
                                           resized=self.resized, kept=self.kept)
            self.prepare(self._exact[key])
        return self._exact[key]

    def _confirmed(self, name: str, sym: SymbolicPass, violated: z3.BoolRef,
                   model: z3.ModelRef, location: Span | None, failure: str,
                   at: tuple[int, int]) -> Verdict:
        """The least counterexample that the simulator's replay confirms. Each sqrt is first
        taken as its exact root (a rounding the simulator may not make is the last resort);
        a state that does not replay is excluded and the next least one tried."""
        exact_roots = [y == root for y, root, _ in sym.fresh.roots]
        excluded: list[z3.BoolRef] = []
        misses: list[str] = []
        for _ in range(REPLAY_TRIES if self.replay is not None else 1):
            found = None
            for extra in ([exact_roots] if exact_roots else []) + [[]]:
                found = _small_model(sym, [violated, *excluded, *extra],
                                     attrs.evolve(self.limits, timeout_ms=self.timeout_ms()))
                if found is not None:
                    break
            if found is None and not excluded:
                found = model  # the optimiser gave up: the solver's model
            if found is None:
                break
            cex = counterexample(sym, found)
            if self.replay is None:
                if sym.uses_log():
                    return Verdict(name, "unknown", 0.0, self.bound, location=location,
                                   reason=_unknown_reason("log", at, self.limits))
                return Verdict(name, "violated", 0.0, self.bound, location=location,
                               reason=failure, counterexample=cex)
            kind, message = self.replay(cex)
            if kind == name:
                return Verdict(name, "violated", 0.0, self.bound, location=location,
                               reason=failure, counterexample=cex)
            misses.append(message)
            excluded.append(z3.Not(_same_state(sym, found)))
        return Verdict(name, "unknown", 0.0, self.bound, location=location, reason=(
            f"Z3 finds states that violate it in the verifier's model, but the simulator "
            f"does not fail on the {len(misses)} tried (the first: {misses[0]})" if misses
            else "Z3 finds a violation but no counterexample state to replay"))


def _searched(searched: dict[bool, tuple[int, int]]) -> str:
    """How far a search that ran out got (by whether its jobs were all rigid: the largest
    bounds with no counterexample): what an unknown verdict still tells."""
    if not searched:
        return "; no bound was searched through before that"
    q, r = searched.get(False) or searched[True]
    rigid = "" if False in searched else ", all rigid (moldable ones not searched yet)"
    return f"; no counterexample with up to {q} queued and {r} running jobs{rigid}"


def _same_state(sym: SymbolicPass, model: z3.ModelRef) -> z3.BoolRef:
    """The pass's inputs equal their values in ``model`` (to exclude that state)."""
    inputs = [sym.now, *sym.capacity, *sym.params.values()]
    tail = sym.queue_tail
    jobs = [*sym.running, *sym.queue]
    if tail is not None:
        inputs.append(tail.count)
        jobs += [tail.copy] if tail.copy is not None else []
    for j in jobs:
        inputs += [j.present, j.id, j.submit, j.estimate, *j.request, j.moldable, j.min_size,
                   j.max_size, j.work, *j.labels.values()]
        if j.start is not None:
            inputs.append(j.start)
    inputs += [held[0] for held in sym.running_held]
    return z3.And([t == model.eval(t, model_completion=True) for t in inputs
                   if not z3.is_int_value(t)])


def _context_work() -> int:
    """Z3's resource count of the current context so far (a check of an empty solver
    reports it, and adds nothing)."""
    solver = z3.Solver()
    solver.check()
    return _rlimit_count(solver)


def _rlimit_count(solver: z3.Solver) -> int:
    """Z3's resource count so far (of the whole context: take the difference over a check)."""
    try:
        return int(solver.statistics().get_key_value("rlimit count"))
    except z3.Z3Exception:  # no such statistic: the reason string decides
        return 0


def _unknown_reason(why: str, at: tuple[int, int], limits: Limits, seconds: float = 0.0,
                    spent: int = 0) -> str:
    """Why the exact pass at ``at`` (n queued, n running) has no verdict, and what to change:
    Z3's reason ``why`` ("log": a counterexample that applies the uninterpreted `log`),
    the ``seconds`` the check took and the resource units it ``spent``."""
    where = f"while searching for a counterexample at N={at[0]}, R={at[1]}"
    smaller = "or lower --queued/--running" if max(at) > 1 else ""
    if why == "log":
        return (f"a counterexample was found at N={at[0]}, R={at[1]}, but it applies `log`, "
                "which Z3 treats as an unknown function: it may not be real, and no limit "
                "changes that (a proof holds for every `log`; a counterexample needs the "
                "formula without it)")
    if "incomplete" in why or "tactic failed" in why:
        return (f"Z3 cannot decide the pass at N={at[0]}, R={at[1]} ({why}): its arithmetic "
                "is incomplete here (nonlinear: products or quotients of unknowns, sqrt); "
                f"raising the limits will not help: simplify the formula {smaller}".rstrip())
    timeout_s = limits.timeout_ms / 1000
    rlimit = (f"Z3's resource limit (--rlimit {limits.rlimit}) ran out {where}: raise "
              f"--rlimit (e.g. --rlimit {min(8 * limits.rlimit, 2**32 - 1)}) {smaller}".rstrip())
    if why != "timeout" and spent >= limits.rlimit:
        return rlimit
    if why == "timeout" or seconds >= 0.98 * timeout_s:  # an Optimize says "canceled"
        return (f"the time limit (--timeout {timeout_s:g} s) ran out {where}: raise --timeout "
                f"(e.g. --timeout {4 * timeout_s:g}) {smaller}".rstrip())
    if "resource" in why:
        return rlimit
    return f"Z3 gave up {where}: {why}"


def _small_model(sym: SymbolicPass, constraints: Sequence[z3.BoolRef],
                 limits: Limits) -> z3.ModelRef | None:
    """The least counterexample, so that it is readable and the same from run to run: fewest
    moldable jobs (a rigid story is simpler), then fewest jobs, then the least sum of every
    number in the state (times, capacities left symbolic, ids, estimates, requests, params),
    then the least ids to the first jobs (``_least``). None if no model is found (the
    caller keeps the solver's). Bounded by Z3's rlimit, not by the clock: a loaded machine
    must not turn the least counterexample into another one (a CI run under load did, with a
    short clock; the --timeout is only a guard of last resort)."""
    solver = z3.Solver()
    solver.set("rlimit", limits.rlimit)
    solver.set("timeout", limits.timeout_ms)
    solver.add(*(a.formula for a in sym.assumptions), *sym.definitions.all(), *constraints)
    objectives: list[z3.ArithRef] = []
    jobs = [*sym.running, *sym.queue]
    objectives.append(z3.Sum([z3.If(z3.And(j.present, j.moldable), 1, 0) for j in jobs]))
    objectives.append(z3.Sum([z3.If(j.present, 1, 0) for j in jobs]))
    numbers = [sym.now, *(c for c in sym.capacity if not z3.is_int_value(c))]
    numbers += [v if v.sort() == z3.IntSort() else z3.If(v, 1, 0)
                for v in sym.params.values() if v.sort() != z3.RealSort()]
    for j in jobs:
        # labels from -1 (unknown) up: a counterexample names as few users as it can
        fields = [j.id, j.submit, j.estimate, *j.request, *(v + 1 for v in j.labels.values())]
        if j.start is not None:
            fields.append(j.start)
        numbers.append(z3.If(j.present, z3.Sum(fields), 0))
        if j.start is None:  # a moldable job's range and sequential time
            numbers.append(z3.If(z3.And(j.present, j.moldable),
                                 j.min_size + j.max_size + j.work, 0))
    # a running job's cpus held, where they may differ from its request: as few as may be
    numbers += [z3.If(j.present, held[0], 0)
                for j, held in zip(sym.running, sym.running_held, strict=True)
                if held[0] is not j.request[0]]
    # its estimates on other sizes (the measured speedup a counterexample writes)
    numbers += [z3.If(sym.queue[q].present, est, 0) for q, _, est in sym.sized_estimates]
    tail = sym.queue_tail
    if tail is not None:  # the fewest further jobs, then the least of them
        objectives.append(tail.count)
        if tail.copy is not None:
            c = tail.copy
            numbers.append(z3.If(tail.count >= 1, z3.Sum([
                c.id, c.submit, c.estimate, *c.request, *(v + 1 for v in c.labels.values())]), 0))
    objectives.append(z3.Sum(numbers))
    # ties between permutations of the ids: the least ids to the queue, in its order
    weights = range(len(jobs), 0, -1)
    objectives.append(z3.Sum([z3.If(j.present, w * j.id, 0)
                         for w, j in zip(weights, [*sym.queue, *sym.running], strict=True)]))
    return _least(solver, objectives, limits)


# Checks a least counterexample may take in all (each bounded by the rlimit): Z3's own
# optimiser applies the rlimit to each inner check, not to their sum, and ran for minutes
MINIMISING_CHECKS = 64


def _least(solver: z3.Solver, objectives: Sequence[z3.ArithRef],
           limits: Limits) -> z3.ModelRef | None:
    """A model of ``solver`` least in ``objectives``, lexicographically: each is pushed down
    (galloping, then bisecting) and then held at its least value while the next is. Every
    check is bounded by the rlimit and there are at most MINIMISING_CHECKS, so the result
    is the same on any machine; if the budget runs out, the least model found so far."""
    # the limit holds for all the checks together (the property's time left)
    deadline = time.perf_counter() + limits.timeout_ms / 1000
    if solver.check() != z3.sat:
        return None
    model, checks = solver.model(), 1
    for objective in objectives:
        best = model.eval(objective, model_completion=True).as_long()
        infeasible: int | None = None  # a value known to be below every model's
        step = 1
        while checks < MINIMISING_CHECKS:
            target = best - step if infeasible is None else (infeasible + best) // 2
            if infeasible is not None and target <= infeasible:
                break
            left = int((deadline - time.perf_counter()) * 1000)
            if left < 1:
                break
            solver.push()
            solver.add(objective <= target)
            solver.set("timeout", min(limits.timeout_ms, left))
            result = solver.check()
            checks += 1
            if result == z3.sat:
                model = solver.model()
                best = model.eval(objective, model_completion=True).as_long()
                step *= 2
            elif result == z3.unsat:
                infeasible = target
            solver.pop()
            if result == z3.unknown:
                break
        solver.add(objective == best)
    return model


def _value(model: z3.ModelRef, term: z3.ExprRef) -> int | Fraction | bool:
    v = model.eval(term, model_completion=True)
    if not z3.is_true(v) and not z3.is_false(v) and not _is_number(v):
        # Z3 leaves `to_int` (floor, ceil) of an irrational root unevaluated (fuzz_verify
        # seed 7059: `ceil(sqrt(queue.count))`): each root taken at 20 digits, then
        # simplified. A root is never an integer, so the floor is exact unless the root is
        # within 1e-20 of one; the counterexample is replayed by the simulator anyway
        v = z3.simplify(_roots_approximated(v))
    if z3.is_true(v) or z3.is_false(v):
        return z3.is_true(v)
    if z3.is_int_value(v):
        return v.as_long()
    if z3.is_rational_value(v):
        return Fraction(v.numerator_as_long(), v.denominator_as_long())
    if z3.is_algebraic_value(v):  # an irrational root: its 20-digit decimal
        return Fraction(v.approx(20).as_decimal(20).rstrip("?"))
    raise ValueError(f"unexpected model value {v}")


def _is_number(v: z3.ExprRef) -> bool:
    return z3.is_int_value(v) or z3.is_rational_value(v) or z3.is_algebraic_value(v)


def _roots_approximated(v: z3.ExprRef) -> z3.ExprRef:
    """``v`` with each irrational root in it replaced by its 20-digit decimal."""
    roots: dict[int, z3.ExprRef] = {}
    todo = [v]
    while todo:
        e = todo.pop()
        if z3.is_algebraic_value(e):
            roots.setdefault(e.get_id(), e)
        elif z3.is_app(e):
            todo.extend(e.children())
    pairs = [(r, z3.RealVal(Fraction(r.approx(20).as_decimal(20).rstrip("?"))))
             for r in roots.values()]
    return z3.substitute(v, *pairs) if pairs else v



def _speedup(model: z3.ModelRef, job, decision, estimate: int,
             choices: Sequence[tuple[z3.BoolRef, z3.ArithRef, z3.ArithRef]] = ()) -> str:
    """A speedup model that gives the moldable job what the pass used: its sequential time
    (``job.work``) on 1 cpu, its estimate at its request, on each size it weighed (`size
    choose`) and, if it moved, on the size it got (measured times, so that the replay
    computes exactly these)."""
    points = {1: _value(model, job.work), _value(model, job.request[0]): estimate}
    for ok, size, est in choices:
        if _value(model, ok):
            points.setdefault(_value(model, size), _value(model, est))
    if _value(model, decision.started) or _value(model, decision.reserved):
        points[_value(model, decision.alloc[0])] = _value(model, decision.estimate)
    return "measured(" + ", ".join(f"{n}:{t}" for n, t in sorted(points.items())) + ")"


def counterexample(sym: SymbolicPass, model: z3.ModelRef) -> dict[str, Any]:
    """The model as a state file for `schedc run --state` (the format of
    runtime/workloads/state_file.py), plus what the pass decided in it."""
    names = [r.name for r in sym.policy.machine.resources]

    def request(job) -> dict[str, int]:
        return {n: _value(model, job.request[k]) for k, n in enumerate(names)}

    def labels(job) -> dict[str, int]:  # those the policy reads; the others are -1
        return {a: _value(model, v) for a, v in job.labels.items()}

    running = []
    for r, held in zip(sym.running, sym.running_held, strict=True):
        if not _value(model, r.present):
            continue
        estimate = _value(model, r.estimate)
        running.append({"id": _value(model, r.id), "submit": _value(model, r.submit),
                        "start": _value(model, r.start), "estimate": estimate,
                        "run_time": estimate, "request": request(r), **labels(r)})
        if _value(model, held[0]) != _value(model, r.request[0]):  # a size rule's cpus
            running[-1]["size"] = _value(model, held[0])
    queue, started, reservations = [], [], {}
    for slot, (q, d) in enumerate(zip(sym.queue, sym.decisions, strict=True)):
        if not _value(model, q.present):
            continue
        estimate = _value(model, q.estimate)
        job_id = _value(model, q.id)
        job = {"id": job_id, "submit": _value(model, q.submit), "estimate": estimate,
               "run_time": estimate, "request": request(q), **labels(q)}
        if _value(model, q.moldable):
            job |= {"min_size": _value(model, q.min_size),
                    "max_size": _value(model, q.max_size),
                    "speedup": _speedup(model, q, d, estimate,
                                        [(ok, size, est) for s, ok, size, est
                                         in sym.choice_estimates if s == slot])}
        if _value(model, sym.kept_size[slot]):
            job["size"] = _value(model, z3.Int(f"q{slot}_size"))
        queue.append(job)
        if _value(model, d.started):
            started.append(job_id)
        if _value(model, d.reserved):
            reservations[str(job_id)] = _value(model, d.reservation)
    tail = sym.queue_tail
    if tail is not None and tail.copy is not None:  # the further jobs, after the slots
        copy, ids = tail.copy, [j["id"] for j in (*running, *queue)]
        first = max(ids, default=-1) + 1
        for i in range(_value(model, tail.count)):
            estimate = _value(model, copy.estimate)
            queue.append({"id": first + i, "submit": _value(model, copy.submit),
                          "estimate": estimate, "run_time": estimate,
                          "request": request(copy), **labels(copy)})
    return {
        "now": _value(model, sym.now),
        "capacity": {n: _value(model, sym.capacity[k]) for k, n in enumerate(names)},
        "params": {name: json_number(_value(model, var)) for name, var in sym.params.items()},
        "running": running,
        "queue": queue,
        "pass": {"started": started, "reservations": reservations},
    }
