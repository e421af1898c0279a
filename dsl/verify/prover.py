"""Proving a policy's properties with Z3, one scheduling pass over bounded symbolic states.

Each property is checked as "assumptions and pass and not property" being unsatisfiable: unsat
is a proof (for every state within the bounds), sat gives a counterexample state, anything
else is unknown with Z3's reason. Proofs use the pass's step facts (small lemmas, by induction
over the steps: see ``dsl/verify/pass_encoding/``); counterexamples come from the exact
pass, searched at growing bounds so that the first one found is small. Assumptions are tracked
by name, so a proof reports which of them it used (the unsat core). Z3's ``rlimit`` bounds the
work, so a verdict does not depend on the machine's speed or load (a limit of CPU time,
``budget.py``, is a second guard), and each verification has its own Z3 context
(``dsl/verify/z3context.py``), so a verdict does not depend on what the process verified
before. Nor on which other properties are asked: the lemmas learned as premises of later
checks (``_learn_pass_facts``) are learned first, the same for every selection, and each
property runs on a fresh solver.

The parts apart from this module, each importing only those before it: ``verdict.py`` (what
a verification gives), ``counterexample.py`` (the least model, decoded as a state file),
``checker.py`` (the solver driver) and ``properties.py`` (what each property states). Here:
which properties are checked, in which order, and the facts of the policy that qualify a
proof.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import attrs
import z3

from schedc.dsl import ir
from schedc.dsl.verify.budget import OutOfTime
from schedc.dsl.verify.checker import Checker, Progress, Replay, context_work
from schedc.dsl.verify.pass_encoding.encoder import encode_pass
from schedc.dsl.verify.pass_encoding.record import SymbolicPass, Unsupported
from schedc.dsl.verify.properties import (
    Invariant,
    after_the_pass,
    base,
    capacity,
    capacity_steps,
    makes_progress,
    nothing_fails,
    reservation_safety,
    size_bounds,
    size_ok,
    use_is_held,
    well_defined,
)
from schedc.dsl.verify.ranges import sums_held
from schedc.dsl.verify.symbolic import Obligation, describe
from schedc.dsl.verify.verdict import Bounds, Limits, Verdict
from schedc.dsl.verify.vocabulary import PROPERTIES
from schedc.dsl.verify.z3context import fresh_context


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

    A dynP policy (``policy.tuning``) is proved candidate by candidate (dsl/verify/tuning.py);
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
        from schedc.dsl.verify.tuning import verify_tuned

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
    if policy.preemption is not None:  # its own pass (dsl/verify/preemption/)
        from schedc.dsl.verify.preemption.prover import verify_preemptive

        return verify_preemptive(policy, bounds, limits, wanted, replay, progress)
    checker = Checker(policy, bounds, limits, bound, replay, resized, progress, kept)
    # Evaluate invariants before well-defined is checked: they bring their own obligations
    # (on every exact pass too, as soon as it is encoded).
    invariants = [Invariant(inv) for inv in policy.invariants]
    checker.prepare = lambda s: [inv.whole(s) for inv in invariants]
    try:
        # what every property reads: its CPU time is counted in each one's
        with checker.sharing("while encoding the pass that every property reads"):
            sym = encode_pass(policy, bounds, exact=False, resized=resized, kept=kept)
            checker.prepare(sym)
            # The facts every check on the pass may use, learned first and whatever
            # properties are asked: a verdict must not depend on which others were asked
            # (nor their order)
            _learn_pass_facts(checker, sym)
    except (Unsupported, OutOfTime) as exc:
        names = [*PROPERTIES, *(f"invariant `{i.text}`" for i in policy.invariants)]
        return [Verdict(name, "unknown", checker.shared, bound, reason=str(exc))
                for name in names if wanted is None or base(name) in wanted]

    def want(name: str) -> bool:
        return wanted is None or name in wanted

    verdicts: list[Verdict] = []

    def measured(name: str, verdict: Callable[[], Verdict],
                 on: Callable[[], SymbolicPass] | None = None) -> None:
        # Z3's resource count of the whole context (its own: the same on any machine)
        spent = context_work()
        # proved, unless the assumptions of its pass (``on()``, default the step facts'
        # pass) admit no state where a job waits: one check per pass, after the property's
        # own. The time limit is the property's, all it does together (``Checker.timed``).
        found = checker.timed(name, lambda: checker.unless_vacuous(
            verdict(), sym if on is None else on()))
        verdicts.append(attrs.evolve(found, work=context_work() - spent))

    if want("capacity"):
        # by induction over the steps, as reservation-safety (its lemmas are learned facts
        # already, if they hold)
        lemmas = [("", step, lemma) for step, lemma in capacity_steps(sym)]
        measured("capacity", lambda: checker.prove(
            sym, "capacity", lemmas, whole=after_the_pass(capacity),
            failure="a resource is overcommitted after the pass"))
    if want("size-bounds"):
        note = None if sym.size_results else "rigid sizes: the requests"
        # one lemma a step: its size formulas' evaluations, with the step's equations
        by_step: dict[int, list[int]] = {}
        for i, result in enumerate(sym.size_results):
            by_step.setdefault(result.step, []).append(i)
        fine: dict[int, z3.BoolRef] = {}  # the candidates of a `choose` share their formulas

        def no_failure(obligations: tuple[Obligation, ...]) -> z3.BoolRef:
            if id(obligations) not in fine:
                fine[id(obligations)] = nothing_fails(obligations)
            return fine[id(obligations)]

        lemmas = [("", step, lambda s, ids=ids: z3.And([
            z3.Implies(no_failure(s.size_obligations[i]), size_ok(s, s.size_results[i]))
            for i in ids])) for step, ids in by_step.items()]
        measured("size-bounds", lambda: checker.prove(
            sym, "size-bounds", lemmas, whole=size_bounds,
            failure="a size lies outside [1, capacity] or a moldable job's range", note=note))
    if want("well-defined"):
        measured("well-defined", lambda: well_defined(checker, sym))
    if want("reservation-safety"):
        measured("reservation-safety", lambda: reservation_safety(checker, sym))
    if want("progress"):
        # The step facts never force a start: progress is a fact of the exact decisions
        # (their pass encoded within the property's time)
        idle: list[SymbolicPass] = []

        def idle_pass() -> SymbolicPass:
            if not idle:
                idle.append(encode_pass(policy, bounds, idle=True, earliest=False,
                                        resized=resized, kept=kept))
            return idle[0]

        measured("progress", lambda: checker.prove(
            idle_pass(), "progress", [("", None, after_the_pass(makes_progress))],
            location=policy.backfill.span, idle=True), on=idle_pass)
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


def _learn_pass_facts(checker: Checker, sym: SymbolicPass) -> None:
    """Small linear lemmas, each chain learned if all of it is proved (a premise of every
    later check on ``sym``): no step overcommits (what `capacity` proves); the use is not
    negative, where a formula reads it (a utilisation is not; a size below 0 would break
    it: then `size-bounds` reports that); and the use at each walk step is what the
    running jobs ask, where a formula sums their requests (``ranges.sums_held``: the sum
    is then within the capacity). A chain that fails is no fact: its property, if asked,
    finds out why."""
    steps = [-1, *range(sym.steps)]
    checker.learn_lemmas(sym, [lemma for _, lemma in capacity_steps(sym)], steps=steps)
    if _reads_use(sym.policy):
        checker.learn_lemmas(sym, [lambda s: s.use_nonnegative(0)] + [
            lambda s, c=c: z3.Implies(s.use_nonnegative(c), s.use_nonnegative(c + 1))
            for c in range(sym.steps)], steps=steps)
    if _sums_held(sym.policy):
        walk = len(sym.queue)  # the walk's steps (not the rounds of `best`)
        checker.learn_lemmas(sym, [lambda s: use_is_held(s, 0)] + [
            lambda s, a=a: z3.Implies(use_is_held(s, a), use_is_held(s, a + 1))
            for a in range(walk)], steps=[-1, *range(walk)])


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
