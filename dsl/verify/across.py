"""A property across passes, by induction over them: ``reservations-kept``.

The one-pass properties (``prover.py``) hold of each pass alone. This one relates a pass to
the next: **a job that holds a reservation after a pass and still waits at the next pass
gets, at that pass, a reservation or a start no later than the one it held.** Between the
two passes time moves to the next event (``now2 >= now1``; equal only after a job of zero
run time), running jobs end no later than their estimated ends (some end by ``now2``, the
others run on), and new jobs arrive with submit in (now1, now2]. Jobs ending by their
estimates is an assumption: `--overrun estimate` (the default: an estimate is raised to the
run) and `kill` make it hold; with `--overrun extend` an overdue job is planned anew and can
move a reservation.

A pass's reservations here are those of its *full* walk, which visits every queued job
(``PassWalk(full=True)``; the simulator's walk stops once nothing later can start, and skips
a pass in which nothing fits: same starts, and the same reservation for every job it
reaches). So a pass that does not reach a job still gives it a reservation, and the
two-pass property chains over any number of passes: the runtime check
(``runtime/engine/monitor.py``, ``ReservationsKept``), which lets a job keep its reservation over
the passes that do not reach it, never refutes a proof.

**The proof** (``_prove``), for a rigid policy (no `size` rule: a job's allocation and
estimate are its request's at every pass) whose order keys read only the job and params (so
the order of two waiting jobs never changes), in three Z3 checks on single passes:

1. *head* (the first pass, exact, at N queued and R running slots): if job J is reserved at
   h, every job before J in the policy's order started in the pass; h is no earlier than the
   estimated end of some job running after the pass (a release of the plan), and J's request
   fits at h beside every job running after the pass (reservation-safety's plan, proved
   step by step as there).
2. *arrivals*: a job submitted after ``now1`` comes after a job queued by ``now1`` in the
   policy's order.
3. *next pass* (one exact pass whose first queued job is J, with up to N + R running jobs
   and any queue after J): if J's request fits at h >= now beside the running jobs, J starts
   now or is reserved at or before h.

Glue (by hand, here): after the first pass the running jobs at the next pass are some of
those running after it, with the same allocations and estimated ends, so J still fits at h
beside them (1); the job whose estimated end is at or before h ends by then, so the next pass
comes no later than h (1); jobs before J all started (1), later ones stay later (static
keys), arrivals come after J (2): J is first, and (3) applies. The proof covers every state
of at most N queued and R running jobs before the first pass (with any number of further
jobs after the slots when the policy reads the queue), any arrivals and any early ends:
the verdict says so in its caveats.

EASY (depth 1, first fit) passes all three: its reserved job is the head of the queue, and
its reservation never moves later, so **it starts by the end of the longest estimate running
when it became the head**. Conservative backfilling fails 1 (jobs before J hold
reservations), and its re-planning can move J later: then **the counterexample search**
(``_search``) encodes two exact passes (the simulator's walks), the second over fresh
variables, linked job by job (same ids, the same fields; a job started by the first pass runs
in the second from ``now1``; each job running after the first pass ends at ``now2`` or runs
on; arrivals at ``now2``), at growing bounds. Its least model is a state file with the
events between the passes (``run_time`` of the jobs that end at ``now2``, ``arrivals``) and
``check: ["reservations-kept"]``, which the simulator replays under the opt-in monitor check;
a violation is reported only if that replay stops for this property.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs
import z3
from attrs import frozen

from schedc.dsl import ir
from schedc.dsl.diagnostics import Span
from schedc.dsl.verify.budget import Budget, OutOfTime, running
from schedc.dsl.verify.budget import add as add_in_time
from schedc.dsl.verify.budget import check as in_time
from schedc.dsl.verify.checker import (
    REPLAY_TRIES,
    WAITING,
    Progress,
    Replay,
    context_work,
    least_clash,
    settled,
)
from schedc.dsl.verify.counterexample import counterexample
from schedc.dsl.verify.pass_encoding.encoder import PassEncoder
from schedc.dsl.verify.pass_encoding.record import SymbolicPass, Unsupported
from schedc.dsl.verify.properties import completes
from schedc.dsl.verify.symbolic import FreshNames, SymJob, sym_eval
from schedc.dsl.verify.verdict import Bounds, Limits, Verdict
from schedc.dsl.verify.vocabulary import KEPT, PREEMPTION_RESERVES_NOTHING
from schedc.dsl.verify.z3context import fresh_context

# the pass bounds the counterexample search grows to (two exact passes: the second has the
# first's queued jobs plus arrivals, and its running jobs plus the ones it started)
SEARCH_MAX = 4
ARRIVALS = 2  # arrival slots between the two passes of a counterexample
ENDS_BY_ESTIMATES = ("running jobs end by their estimated ends (as in `schedc run --overrun "
                     "estimate`, the default, which raises an estimate to the run, and "
                     "`kill`); `--overrun extend` plans an overdue job anew and can move a "
                     "reservation")


def makes_reservations(policy: ir.Policy) -> bool:
    """The policy may reserve (a depth other than 0, with backfilling), or is dynP."""
    if policy.tuning is not None:
        return any(makes_reservations(c) for c in policy.tuning.candidates)
    return policy.depth != 0 and policy.backfill.kind != "none"


def proof_blocked(policy: ir.Policy) -> str | None:
    """Why the three-check proof does not apply to ``policy`` (None: it does). `schedc
    verify` asks ``reservations-kept`` with the other properties only where it applies (a
    verdict there is proved, or violated with a replayed counterexample); elsewhere only
    when asked by name, where the counterexample search alone decides, or says unknown."""
    if policy.size is not None:
        return "the policy sizes jobs (a job's size may differ from pass to pass)"
    if policy.backfill.kind == "best":
        return "backfill `best` starts jobs in rounds after the walk (not encoded here)"
    dynamic = [k for k in policy.order if not ir.dependencies(k.expr) <= {"job", "param"}]
    if dynamic:
        return "an order key reads the state (the order of two waiting jobs may change)"
    return None


def verify_across(policy: ir.Policy, bounds: Bounds | None = None,
                  limits: Limits | None = None, replay: Replay | None = None,
                  progress: Progress | None = None) -> list[Verdict]:
    """The verdict of ``reservations-kept`` (in a list, as ``verify_policy``'s), in its own
    Z3 context: proved by the three checks of the module's doc, else a two-pass
    counterexample the simulator's ``replay`` confirms, else unknown."""
    bounds, limits = bounds or Bounds(), limits or Limits()
    bound = (f"N={bounds.queued} queued, R={bounds.running} running, "
             f"K={len(policy.machine.resources)}")
    if progress is not None:
        progress(KEPT, None)
    if policy.preemption is not None:
        return [Verdict(KEPT, "unknown", 0.0, bound, location=policy.preemption.span,
                        reason=PREEMPTION_RESERVES_NOTHING)]
    if policy.tuning is not None:
        return [Verdict(KEPT, "unknown", 0.0, bound, location=_where(policy), reason=(
            "a dynP policy may switch candidates between the two passes: reservations-kept "
            "is encoded for one pass rule (verify a candidate as a policy of its own)"))]
    # the time limit: the CPU time of all it does (``budget.py``)
    with fresh_context() as context:
        budget = Budget(limits.timeout_ms / 1000, context.interrupt)
        try:
            with budget:
                verdict = _Run(policy, bounds, limits, bound, replay, progress).verdict()
        except (Unsupported, OutOfTime) as exc:
            verdict = Verdict(KEPT, "unknown", 0.0, bound, location=_where(policy),
                              reason=str(exc))
        # Z3's resource units (the same on any machine), read once at the end: the fresh
        # context counts from 0, and a check made before the proof would number its terms
        # (depth2's violation became unknown at the default rlimit)
        work = context_work()
    return [attrs.evolve(verdict, seconds=budget.spent(), work=work)]


def _where(policy: ir.Policy) -> Span | None:
    """Where a verdict points: the backfill rule, which makes (or keeps) reservations."""
    return policy.backfill.span


class _FullWalk(PassEncoder):
    """The pass that visits every queued job (``PassWalk(full=True)``): the simulator's
    starts, and a reservation for every job the depth allows, even after the point where
    the simulator's walk stops (nothing later can start there)."""

    def stops_at(self, a: int) -> z3.BoolRef:
        return z3.BoolVal(False)


def _encoder(policy: ir.Policy, bounds: Bounds, *, full: bool, earliest: bool = True,
             tail: str = "any") -> PassEncoder:
    cls = _FullWalk if full else PassEncoder
    return cls(policy, bounds, idle=False, depth_value="policy", exact=True,
               earliest=earliest, tail=tail, resized=policy.size is not None)


def _encode(policy: ir.Policy, bounds: Bounds, *, full: bool, earliest: bool = True,
            tail: str = "any") -> SymbolicPass:
    return _encoder(policy, bounds, full=full, earliest=earliest, tail=tail).encode()


@frozen
class _Lemma:
    """``premises`` imply ``claim``, with the shared equations and those tagged ``tags``."""

    claim: z3.BoolRef
    tags: tuple[object, ...]
    premises: tuple[z3.BoolRef, ...] = ()


@frozen
class _Outcome:
    """One check: unsat (it holds), or why not; the assumptions its proof used."""

    holds: bool
    why: str = ""
    core: tuple[str, ...] = ()


class _Run:
    """One verification of ``reservations-kept``: the proof, then the search."""

    def __init__(self, policy: ir.Policy, bounds: Bounds, limits: Limits, bound: str,
                 replay: Replay | None, progress: Progress | None) -> None:
        self.policy, self.bounds, self.limits, self.bound = policy, bounds, limits, bound
        self.replay, self.progress = replay, progress
        self.first: SymbolicPass  # the first pass the proof's checks are of (``prove``)

    def verdict(self) -> Verdict:
        proof = self.prove()
        if proof.holds:
            return self.unless_vacuous(self.proved(proof.core))
        return self.search(proof.why)

    def unless_vacuous(self, verdict: Verdict) -> Verdict:
        """The proof's verdict, unless the first pass's assumptions and a waiting job admit
        no state (vacuous, naming the clash; unknown if Z3 cannot tell): the three checks
        are of that pass and of the states it leads to (its equations left out, as
        ``Checker.vacuity`` says why)."""
        first = self.first
        found = least_clash([*((a.name, a.formula) for a in first.assumptions),
                             (WAITING, first.queue[0].present)], self.limits)
        return settled(verdict, found, self.policy)

    # -- the proof ----------------------------------------------------------------------------

    def proof_blocked(self) -> str | None:
        """Why the three-check proof does not apply to this policy (None: it does)."""
        return proof_blocked(self.policy)

    def prove(self) -> _Outcome:
        blocked = self.proof_blocked()
        if blocked is not None:
            return _Outcome(False, blocked)
        N, R = self.bounds.queued, self.bounds.running
        first = self.first = _encode(self.policy, Bounds(N, R), full=True, earliest=False)
        core: set[str] = set()
        for check in (self.head, self.arrivals_after, self.next_pass):
            outcome = check(first)
            if not outcome.holds:
                return outcome
            core.update(outcome.core)
        return _Outcome(True, core=tuple(sorted(core)))

    def solver(self, sym: SymbolicPass) -> z3.Solver:
        solver = z3.Solver()
        solver.set("rlimit", self.limits.rlimit)  # the time limit: ``budget.py``'s
        for i, a in enumerate(sym.assumptions):
            solver.assert_and_track(a.formula, z3.Bool(f"assumption_{i}"))
        return solver

    def unsat(self, sym: SymbolicPass, solver: z3.Solver, why: str) -> _Outcome:
        in_time()
        result = solver.check()
        if result == z3.unsat:
            used = {sym.assumptions[int(str(t).split("_")[1])].name
                    for t in solver.unsat_core() if str(t).startswith("assumption_")}
            return _Outcome(True, core=tuple(sorted(used)))
        if result == z3.unknown:
            in_time()  # interrupted by the time limit: out of time
            return _Outcome(False, f"{why} (Z3: {solver.reason_unknown()})")
        return _Outcome(False, why)

    def lemmas(self, sym: SymbolicPass, checks: Iterable[_Lemma], why: str) -> _Outcome:
        """Each lemma with the shared equations and those of its steps only (small checks,
        as the one-pass proofs'), on one solver of the pass's assumptions."""
        solver = self.solver(sym)
        core: set[str] = set()
        for lemma in checks:
            solver.push()
            add_in_time(solver, [f for tag, f in sym.definitions.items
                                 if tag is None or tag in lemma.tags])
            solver.add(*lemma.premises, z3.Not(lemma.claim))
            outcome = self.unsat(sym, solver, why)
            solver.pop()
            if not outcome.holds:
                return outcome
            core.update(outcome.core)
        return _Outcome(True, core=tuple(sorted(core)))

    def alone(self, claim: z3.BoolRef, premises: Sequence[z3.BoolRef]) -> _Outcome:
        """``premises`` imply ``claim`` by arithmetic alone (no assumption, no equation)."""
        solver = z3.Solver()
        solver.set("rlimit", self.limits.rlimit)
        solver.add(*premises, z3.Not(claim))
        in_time()
        result = solver.check()
        if result == z3.unsat:
            return _Outcome(True)
        return _Outcome(False, "a job that fits by its old reservation does not always fit "
                        "from a candidate time before it" + (
                            f" (Z3: {solver.reason_unknown()})" if result == z3.unknown
                            else ""))

    def head(self, sym: SymbolicPass) -> _Outcome:
        """Check 1: a job reserved by the first pass is the first of those left waiting, its
        reservation is no earlier than a release of a job running after the pass, and it
        fits there beside every job running after the pass. Small lemmas, each with the
        equations of a few steps: (a) a job before j that waits contradicts j's
        reservation; (b) j's time is a release of a job running after the pass; (c) each
        step adds at least its start (and j's own reservation) to the plan's use at j's
        time, and the plan there stays within the capacity (reservation-safety's
        induction), so the jobs running after the pass leave room for j."""
        steps = sym.steps
        checks = [_Lemma(sym.profile_ok(0), (-1,))]
        checks += [_Lemma(z3.Implies(sym.profile_ok(s), sym.profile_ok(s + 1)), (s,))
                   for s in range(steps)]
        plan_safe = [c.claim for c in checks]
        for j, d in enumerate(sym.decisions):
            in_time()  # lemmas for each pair of slots: seconds of Python at N = 64
            before = [z3.Implies(sym.queue[b].present, sym.decisions[b].started)
                      for b in range(j)]
            tags = (j, *(("exact", c) for c in range(j + 1)))
            checks += [_Lemma(before[b], (b, *tags), (d.reserved,)) for b in range(j)]
            checks.append(_Lemma(_after_a_release(sym, j, d.reservation), (j,),
                                 (d.reserved, *before)))
            grows = [_grows(sym, j, s) for s in range(steps)]
            checks += [_Lemma(g, (s,), (d.reserved,)) for s, g in enumerate(grows)]
            checks.append(_Lemma(z3.And(_fits_after(sym, j, d.reservation)), (),
                                 (d.reserved, *grows, *plan_safe)))
        return self.lemmas(sym, checks, "a job reserved by a pass is not always the first "
                           "of those left waiting, at a release of a job running after the "
                           "pass, with room there")

    def arrivals_after(self, sym: SymbolicPass) -> _Outcome:
        """Check 2: a job submitted after now1 comes after a job queued by now1 in the
        policy's order (keys of the job and params only: ties go to the earlier submit)."""
        labels = ir.labels_read(self.policy)
        waiting, arrival = (_rigid_job(name, len(sym.capacity), labels)
                            for name in ("kept_waiting", "kept_arrival"))
        fresh = FreshNames()
        state = sym.state_at(0)
        solver = self.solver(sym)
        keys: list[list[tuple[z3.ExprRef, bool]]] = []
        for job in (waiting, arrival):
            row = []
            for key in self.policy.order:
                result = sym_eval(key.expr, job=job, state=state, params=sym.params,
                                  fresh=fresh)
                solver.add(result.definitions)
                # a key that fails stops the simulator: no next pass to speak of
                solver.add([z3.Implies(o.guard, o.safe) for o in result.obligations])
                v = result.value
                row.append((z3.If(v, 1, 0) if z3.is_bool(v) else v, key.descending))
            row.append((job.submit, False))
            keys.append(row)
        solver.add(waiting.submit <= sym.now, arrival.submit > sym.now, waiting.submit >= 0,
                   *_plain(waiting, sym.capacity), *_plain(arrival, sym.capacity))
        solver.add(_lex_less(keys[1], keys[0]))  # the arrival before the waiting job
        return self.unsat(sym, solver, "a job that arrives later can come first in the "
                          "policy's order")

    def next_pass(self, first: SymbolicPass) -> _Outcome:
        """Check 3: in a pass whose first queued job fits at h >= now beside the running
        jobs, it starts now or is reserved at or before h. First, per candidate time c of
        its earliest fit (now, or a running job's estimated end): if c is the last one at or
        before h, the running jobs hold at c what they hold at h, so the job fits from c
        (a lemma of arithmetic alone). Such a last candidate always exists (now is one), so
        the job fits from some candidate at or before h; then (with the pass's equations)
        it starts, or its earliest fit is no later."""
        N, R = self.bounds.queued, self.bounds.running
        encoder = _encoder(self.policy, Bounds(1, R + N), full=True)
        sym = encoder.encode()
        job, d = sym.queue[0], sym.decisions[0]
        h = z3.Int("kept_h")
        used_at_h = _running_use(sym, h)
        premises = [job.present, h >= sym.now,
                    *(used_at_h[k] + d.alloc[k] <= sym.capacity[k]
                      for k in range(len(sym.capacity)))]
        depth = self.policy.depth
        if isinstance(depth, ir.ParamRef):  # the first pass reserved J: depth >= 1
            premises.append(sym.params[depth.name] >= 1)
        ends = [(r.present, r.start + r.estimate) for r in sym.running]
        # the candidates as the encoder's earliest fit weighs them (``reserve``)
        fits = [(z3.And(valid, t >= sym.now, encoder.fits_at(0, t)), t)
                for valid, t in encoder.release_times(0)]
        for (valid, c), (fit, _) in zip([(z3.BoolVal(True), sym.now), *ends], fits,
                                        strict=True):
            # arithmetic alone: each running job holds at c what it holds at h
            same = [z3.If(z3.And(on, e > c), held[k], 0) == z3.If(z3.And(on, e > h), held[k], 0)
                    for (on, e), held in zip(ends, sym.running_held, strict=True)
                    for k in range(len(sym.capacity))]
            last = [valid, c <= h, *(z3.Not(z3.And(on, c < e, e <= h)) for on, e in ends)]
            # (an assumption of every pass: running jobs end after now)
            last += [z3.Implies(on, e > sym.now) for on, e in ends]
            for claim, given in ((z3.And(same), last), (fit, [*premises, *same, *last])):
                outcome = self.alone(claim, given)
                if not outcome.holds:
                    return outcome
        checks = []
        some_fit = z3.Or([z3.And(fit, t <= h) for fit, t in fits])
        checks.append(_Lemma(z3.Or(d.started, z3.And(d.reserved, d.reservation <= h)),
                             (0, ("exact", 0)), (*premises, some_fit)))
        return self.lemmas(sym, checks, "the first job of a pass that fits by its old "
                           "reservation is not always started or reserved by then")

    def proved(self, core: tuple[str, ...]) -> Verdict:
        N, R = self.bounds.queued, self.bounds.running
        reason = ("a job reserved by a pass is the first in the queue at the next, and is "
                  "started or reserved there no later: its reservation never moves later, so "
                  "the head of the queue starts by the end of the longest estimate running "
                  f"when it became the head (a bound on its wait); assumes {ENDS_BY_ESTIMATES}")
        caveats = (f"reservations-kept is proved for states of at most {N} queued and {R} "
                   f"running jobs before the first pass (any arrivals and early ends; the "
                   f"next pass with up to {N + R} running): raise --queued/--running to cover "
                   f"more",)
        meta = ("jobs end by their estimated ends", "order keys read only the job and params",
                "rigid sizes: a job's allocation and estimate are its request's at every pass")
        return Verdict(KEPT, "proved", 0.0, self.bound, location=_where(self.policy),
                       reason=reason, core=tuple(sorted({*meta, *core})), caveats=caveats)

    # -- the counterexample search --------------------------------------------------------------

    def search(self, unproved: str) -> Verdict:
        """Two exact passes at growing bounds; the least violation the replay confirms."""
        N, R = self.bounds.queued, self.bounds.running
        policy = self.policy
        if policy.size_fixed:
            return self.unknown(f"{unproved}; and a `size fixed` policy's kept sizes are not "
                                "encoded across passes")
        cleared: tuple[int, int] | None = None
        for n in range(1, min(max(N, R), SEARCH_MAX) + 1):
            at = (min(n, N), min(n, R))
            if self.progress is not None:
                self.progress(KEPT, at)
            two = _TwoPasses(policy, at, ARRIVALS if n > 1 else 1)
            solver = z3.Solver()
            solver.set("rlimit", self.limits.rlimit)
            add_in_time(solver, [*two.constraints, two.violated])
            result = solver.check()
            if result == z3.unsat:
                cleared = at
                continue
            budget = running()
            if result == z3.unknown and budget is not None and budget.expired():
                return self.unknown(f"{unproved}; " + budget.reason(
                    f"in the two-pass counterexample search at N={at[0]}, R={at[1]}")
                    + _cleared(cleared))
            if result == z3.unknown:
                return self.unknown(f"{unproved}; the two-pass counterexample search ran out "
                                    f"of Z3's resource limit at N={at[0]}, R={at[1]} "
                                    f"({solver.reason_unknown()}): raise --rlimit"
                                    + _cleared(cleared))
            return self.confirmed(two, unproved, solver.model())
        return self.unknown(f"{unproved}; no two-pass counterexample with up to "
                            f"{cleared[0] if cleared else 0} queued and "
                            f"{cleared[1] if cleared else 0} running jobs (searched up to "
                            f"{SEARCH_MAX}), and none beyond was looked for")

    def confirmed(self, two: _TwoPasses, unproved: str, found: z3.ModelRef) -> Verdict:
        """The least counterexample the simulator's replay confirms (others excluded in
        turn; none: unknown). ``found``: the search's model, if the least is not found."""
        excluded: list[z3.BoolRef] = []
        misses: list[str] = []
        for _ in range(REPLAY_TRIES if self.replay is not None else 1):
            model = _least(two, [two.violated, *excluded], self.limits)
            if model is None and not excluded:
                model = found  # the minimiser gave up: the search's own model
            if model is None:
                break
            cex = two.counterexample(model)
            failure = two.describe(model)
            if self.replay is None:
                return self.violated(cex, failure)
            kind, message = self.replay(cex)
            if kind == KEPT:
                return self.violated(cex, failure)
            misses.append(message)
            excluded.append(z3.Not(two.same_state(model)))
        return self.unknown(f"{unproved}; Z3 finds two passes that move a reservation later, "
                            f"but the simulator does not stop on the {len(misses)} tried"
                            + (f" (the first: {misses[0]})" if misses else ""))

    def violated(self, cex: dict[str, Any], failure: str) -> Verdict:
        return Verdict(KEPT, "violated", 0.0, self.bound, location=_where(self.policy),
                       reason=f"{failure} (assuming {ENDS_BY_ESTIMATES})",
                       counterexample=cex)

    def unknown(self, reason: str) -> Verdict:
        return Verdict(KEPT, "unknown", 0.0, self.bound, location=_where(self.policy),
                       reason=reason)


def _cleared(cleared: tuple[int, int] | None) -> str:
    if cleared is None:
        return ""
    return f"; no counterexample with up to {cleared[0]} queued and {cleared[1]} running jobs"


# -- terms of one pass ------------------------------------------------------------------------

def _use(k: int, point: int, step: int) -> z3.ArithRef:
    """The plan's use of resource k at checkpoint ``point`` (0: now, b + 1: slot b's
    reservation time) after ``step`` steps: the encoder's variable, by its name (a
    ``SymbolicPass`` does not hand it out)."""
    return z3.Int(f"use_{k}_at_{point}_after_{step}")


def _grows(sym: SymbolicPass, j: int, s: int) -> z3.BoolRef:
    """Step s adds to the plan's use at slot j's reservation time at least its start, if
    the start still runs then, and (step j) j's own reservation."""
    d = sym.decisions[s]
    at = sym.decisions[j].reservation
    claims = []
    for k in range(len(sym.capacity)):
        least = z3.If(z3.And(d.started, sym.now + d.estimate > at), d.alloc[k], 0)
        if s == j:
            least = least + z3.If(d.reserved, d.alloc[k], 0)
        claims.append(_use(k, j + 1, s + 1) - _use(k, j + 1, s) >= least)
    return z3.And(claims)


def _after_a_release(sym: SymbolicPass, j: int, h: z3.ArithRef) -> z3.BoolRef:
    """Some job running after the pass (running before it, or started by it, other than j)
    has its estimated end at or before h."""
    ends = [z3.And(r.present, r.start + r.estimate <= h) for r in sym.running]
    ends += [z3.And(d.started, sym.now + d.estimate <= h)
             for b, d in enumerate(sym.decisions) if b != j]
    return z3.Or(ends) if ends else z3.BoolVal(False)


def _fits_after(sym: SymbolicPass, j: int, h: z3.ArithRef) -> list[z3.BoolRef]:
    """Slot j's allocation fits at h beside every job running after the pass (their use
    only falls after h, so at h is enough)."""
    use = _running_use(sym, h)
    for k in range(len(sym.capacity)):
        use[k] = use[k] + _sum(z3.If(z3.And(d.started, sym.now + d.estimate > h),
                                     d.alloc[k], 0) for d in sym.decisions)
    return [use[k] + sym.decisions[j].alloc[k] <= sym.capacity[k]
            for k in range(len(sym.capacity))]


def _running_use(sym: SymbolicPass, t: z3.ArithRef) -> list[z3.ArithRef]:
    """Per resource, what the running jobs hold at t (those with an estimated end after t)."""
    return [_sum(z3.If(z3.And(r.present, r.start + r.estimate > t), held[k], 0)
                 for r, held in zip(sym.running, sym.running_held, strict=True))
            for k in range(len(sym.capacity))]


def _sum(terms: Iterable[z3.ArithRef]) -> z3.ArithRef:
    terms = list(terms)
    return z3.Sum(terms) if terms else z3.IntVal(0)


def _rigid_job(name: str, K: int, labels: Iterable[str]) -> SymJob:
    request = tuple(z3.Int(f"{name}_request{k}") for k in range(K))
    return SymJob(present=z3.BoolVal(True), id=z3.Int(f"{name}_id"),
                  submit=z3.Int(f"{name}_submit"), estimate=z3.Int(f"{name}_estimate"),
                  request=request, moldable=z3.BoolVal(False), min_size=request[0],
                  max_size=request[0], work=z3.Int(f"{name}_work"),
                  labels={a: z3.Int(f"{name}_{a}") for a in labels})


def _plain(job: SymJob, capacity: Sequence[z3.ArithRef]) -> list[z3.BoolRef]:
    """What every queued rigid job satisfies (the encoder's assumptions of one job)."""
    return [job.estimate >= 1, job.request[0] >= 1, job.id >= 0,
            *(z3.And(job.request[k] >= 0, job.request[k] <= c)
              for k, c in enumerate(capacity)),
            *(v >= -1 for v in job.labels.values())]


def _lex_less(a: Sequence[tuple[z3.ExprRef, bool]], b: Sequence[tuple[z3.ExprRef, bool]]
              ) -> z3.BoolRef:
    """Key tuple ``a`` strictly before ``b`` (each key ascending or descending)."""
    result = z3.BoolVal(False)
    for (va, desc), (vb, _) in reversed(list(zip(a, b, strict=True))):
        result = z3.Or(va > vb if desc else va < vb, z3.And(va == vb, result))
    return result


# -- two exact passes, linked -------------------------------------------------------------------

_SHARED = ("param_", "capacity_", "bpu_", "power_")  # one machine and params for both passes


def _constants(formulas: Iterable[z3.ExprRef]) -> list[z3.ExprRef]:
    """The uninterpreted constants in ``formulas``."""
    found: dict[int, z3.ExprRef] = {}
    seen: set[int] = set()
    todo = list(formulas)
    while todo:
        e = todo.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_quantifier(e):
            todo.append(e.body())
        elif z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            found[e.get_id()] = e
        elif z3.is_app(e):
            todo.extend(e.children())
    return list(found.values())


def _job_terms(job: SymJob) -> list[z3.ExprRef]:
    terms = [job.present, job.id, job.submit, job.estimate, *job.request, job.moldable,
             job.min_size, job.max_size, job.work, *job.labels.values()]
    return terms + ([job.start] if job.start is not None else [])


class _Renamed:
    """The second pass's terms over fresh names (``next_``), so that both passes live in one
    query; the machine's capacities and the params stay shared."""

    def __init__(self, sym: SymbolicPass) -> None:
        terms: list[z3.ExprRef] = [a.formula for a in sym.assumptions]
        terms += sym.definitions.all()
        terms += [sym.now, completes(sym)]
        for job in (*sym.running, *sym.queue):
            terms += _job_terms(job)
        terms += [t for held in sym.running_held for t in held]
        for d in sym.decisions:
            terms += [d.visited, d.started, d.reserved, d.reservation, d.estimate, *d.alloc]
        if sym.queue_tail is not None:
            terms.append(sym.queue_tail.count)
        self.pairs = [(c, z3.Const(f"next_{c.decl().name()}", c.sort()))
                      for c in _constants(terms)
                      if not c.decl().name().startswith(_SHARED)]

    def __call__(self, term: z3.ExprRef) -> z3.ExprRef:
        return z3.substitute(term, *self.pairs) if self.pairs else term


class _TwoPasses:
    """A pass at ``now1`` and the next at ``now2`` (exact, the simulator's walks), linked:
    the events between them are the ends at ``now2`` of some jobs running after the first
    pass and arrivals at ``now2``; every other job waits or runs on unchanged. Jobs rigid."""

    def __init__(self, policy: ir.Policy, at: tuple[int, int], arrivals: int) -> None:
        n, r = at
        self.policy = policy
        self.first = one = _encode(policy, Bounds(n, r), full=False, tail="copies")
        second = _encode(policy, Bounds(n + arrivals, r + n), full=False, tail="copies")
        self.rename = rn = _Renamed(second)
        self.second = second
        self.now2 = rn(second.now)
        self.queue2 = [_Terms.of(job, rn) for job in second.queue]
        self.running2 = [_Terms.of(job, rn, tuple(rn(h) for h in held))
                         for job, held in zip(second.running, second.running_held, strict=True)]
        self.decisions2 = [(rn(d.started), rn(d.reserved), rn(d.reservation))
                           for d in second.decisions]
        cs: list[z3.BoolRef] = [a.formula for a in one.assumptions]
        cs += one.definitions.all()
        cs += [rn(a.formula) for a in second.assumptions]
        cs += [rn(f) for f in second.definitions.all()]
        cs += [completes(one), rn(completes(second)), self.now2 > one.now]
        for sym, name in ((one, None), (second, rn)):
            for job in (*sym.running, *sym.queue):  # a rigid story
                cs.append(z3.Not(job.moldable if name is None else name(job.moldable)))
            if sym.queue_tail is not None:  # no further jobs: the state file lists them all
                tail = sym.queue_tail.count
                cs.append((tail if name is None else name(tail)) == 0)
        self.constraints = cs + self.link()
        self.violated = self.moved()

    # the link, job by job

    def link(self) -> list[z3.BoolRef]:
        one, now2 = self.first, self.now2
        cs: list[z3.BoolRef] = []
        self.waits = [z3.And(q.present, z3.Not(d.started))
                      for q, d in zip(one.queue, one.decisions, strict=True)]
        self.match_q = [[z3.And(w, p.present, _Terms.of(q).same(p))
                         for p in self.queue2] for q, w in zip(one.queue, self.waits, strict=True)]
        # a waiting job waits on; a job of the second queue waited, or arrived at now2
        cs += [z3.Implies(w, z3.Or(row)) for w, row in zip(self.waits, self.match_q, strict=True)]
        # in file order still (the order's last tie-break: the second pass's slot order)
        m = self.match_q
        cs += [z3.Not(z3.And(m[q][p], m[q2][p2]))
               for q in range(len(m)) for q2 in range(q + 1, len(m))
               for p in range(len(self.queue2)) for p2 in range(p + 1)]
        ids1 = [j.id for j in (*one.running, *one.queue)]
        present1 = [j.present for j in (*one.running, *one.queue)]
        self.arrived = []
        for i, p in enumerate(self.queue2):
            arrival = z3.And(p.present, z3.Not(z3.Or([row[i] for row in self.match_q])))
            self.arrived.append(arrival)
            cs.append(z3.Implies(arrival, z3.And(p.submit == now2, *(
                z3.Implies(pr, p.id != x) for pr, x in zip(present1, ids1, strict=True)))))
        # running after the first pass: its running jobs and its starts
        after = [(r.present, _Terms.of(r, held=held)) for r, held
                 in zip(one.running, one.running_held, strict=True)]
        for q, d in zip(one.queue, one.decisions, strict=True):
            job = _Terms.of(q)
            after.append((d.started, attrs.evolve(job, start=one.now, estimate=d.estimate,
                                                  held=tuple(d.alloc))))
        self.after = after
        self.runs_on = []
        for on, job in after:
            here = [z3.And(on, s.present, job.same(s, running=True)) for s in self.running2]
            self.runs_on.append(z3.Or(here) if here else z3.BoolVal(False))
            # nothing ends strictly between the passes (the next pass would come first)
            cs.append(z3.Implies(on, job.start + job.estimate >= now2))
        cs += [z3.Implies(s.present, z3.Or([z3.And(on, job.same(s, running=True))
                                            for on, job in after]))
               for s in self.running2]
        # the second pass has a reason: a job ends at now2, or one arrives
        self.ends = [z3.And(on, z3.Not(stays)) for (on, _), stays
                     in zip(after, self.runs_on, strict=True)]
        cs.append(z3.Or(*self.ends, *self.arrived))
        return cs

    def moved(self) -> z3.BoolRef:
        """Some job reserved at h by the first pass is, at the second, started after h or
        reserved later than h."""
        one, now2 = self.first, self.now2
        cases = []
        for q, d in enumerate(one.decisions):
            for p, (started2, reserved2, at2) in enumerate(self.decisions2):
                cases.append(z3.And(d.reserved, self.match_q[q][p], z3.Or(
                    z3.And(started2, now2 > d.reservation),
                    z3.And(reserved2, at2 > d.reservation))))
        return z3.Or(cases) if cases else z3.BoolVal(False)

    # reading a model

    def counterexample(self, model: z3.ModelRef) -> dict[str, Any]:
        """The state before the first pass (``counterexample.counterexample``), with the jobs that
        end at now2 given that run time, the arrivals, the opt-in check, and what the second
        pass decided (``next_pass``, a record like ``pass``)."""
        cex = counterexample(self.first, model)
        now2 = _int(model, self.now2)
        ending = {_int(model, job.id): now2 - _int(model, job.start)
                  for (on, job), end in zip(self.after, self.ends, strict=True)
                  if _true(model, end)}
        for job in (*cex["running"], *cex["queue"]):
            if job["id"] in ending:
                job["run_time"] = ending[job["id"]]
        names = [r.name for r in self.policy.machine.resources]
        arrivals = []
        for p, arrived in zip(self.queue2, self.arrived, strict=True):
            if _true(model, arrived):
                estimate = _int(model, p.estimate)
                arrivals.append({"id": _int(model, p.id), "submit": _int(model, p.submit),
                                 "estimate": estimate, "run_time": estimate,
                                 "request": {n: _int(model, p.request[k])
                                             for k, n in enumerate(names)},
                                 **{a: _int(model, v) for a, v in p.labels}})
        started, reservations = [], {}
        for p, (s, r, at) in zip(self.queue2, self.decisions2, strict=True):
            if _true(model, p.present) and _true(model, s):
                started.append(_int(model, p.id))
            elif _true(model, p.present) and _true(model, r):
                reservations[str(_int(model, p.id))] = _int(model, at)
        return {**cex, "arrivals": arrivals, "check": [KEPT],
                "next_pass": {"now": now2, "started": started, "reservations": reservations}}

    def describe(self, model: z3.ModelRef) -> str:
        """The violation in the monitor's words."""
        one = self.first
        now1, now2 = _int(model, one.now), _int(model, self.now2)
        for q, d in enumerate(one.decisions):
            for p, (started2, reserved2, at2) in enumerate(self.decisions2):
                if not (_true(model, d.reserved) and _true(model, self.match_q[q][p])):
                    continue
                held, job = _int(model, d.reservation), _int(model, one.queue[q].id)
                if _true(model, started2) and now2 > held:
                    return (f"job {job} reserved at {held} by the pass at {now1} starts at "
                            f"{now2}, later, at the next pass")
                if _true(model, reserved2) and _int(model, at2) > held:
                    return (f"job {job}'s reservation moved from {held} to "
                            f"{_int(model, at2)} between the passes at {now1} and {now2}")
        return "a reservation moves later from one pass to the next"

    def numbers(self) -> list[z3.ArithRef]:
        """Every number of the two-pass story, for the least counterexample."""
        one = self.first
        out = [one.now, self.now2 - one.now]
        out += [c for c in one.capacity if not z3.is_int_value(c)]
        out += [v for v in one.params.values() if v.sort() == z3.IntSort()]
        for j in (*one.running, *one.queue):
            fields = [j.id, j.submit, j.estimate, *j.request, *(v + 1 for v in j.labels.values())]
            if j.start is not None:
                fields.append(j.start)
            out.append(z3.If(j.present, z3.Sum(fields), 0))
        for p, arrived in zip(self.queue2, self.arrived, strict=True):
            out.append(z3.If(arrived, z3.Sum([p.id, p.estimate, *p.request]), 0))
        return out

    def jobs(self) -> z3.ArithRef:
        one = self.first
        return z3.Sum([z3.If(j.present, 1, 0) for j in (*one.running, *one.queue)]
                      + [z3.If(a, 1, 0) for a in self.arrived])

    def same_state(self, model: z3.ModelRef) -> z3.BoolRef:
        """The story's inputs equal their values in ``model`` (to exclude it)."""
        one = self.first
        terms = [one.now, self.now2, *one.capacity, *one.params.values()]
        for j in (*one.running, *one.queue):
            terms += _job_terms(j)
        for p in self.queue2:
            terms += [p.present, p.id, p.submit, p.estimate, *p.request]
        terms += [t for _, job in self.after for t in (job.estimate,)] + self.ends
        return z3.And([t == model.eval(t, model_completion=True) for t in terms
                       if not z3.is_int_value(t)])


@frozen
class _Terms:
    """A job's fields as terms (of either pass), for the link."""

    present: z3.BoolRef
    id: z3.ArithRef
    submit: z3.ArithRef
    estimate: z3.ArithRef
    request: tuple[z3.ArithRef, ...]
    labels: tuple[tuple[str, z3.ArithRef], ...]
    start: z3.ArithRef | None = None
    held: tuple[z3.ArithRef, ...] | None = None

    @classmethod
    def of(cls, job: SymJob, name: Callable[[z3.ExprRef], z3.ExprRef] | None = None,
           held: tuple[z3.ArithRef, ...] | None = None) -> _Terms:
        rn = name or (lambda t: t)
        return cls(rn(job.present), rn(job.id), rn(job.submit), rn(job.estimate),
                   tuple(rn(t) for t in job.request),
                   tuple((a, rn(v)) for a, v in job.labels.items()),
                   None if job.start is None else rn(job.start), held)

    def same(self, other: _Terms, running: bool = False) -> z3.BoolRef:
        """The same job (in the second pass ``other``): its fields, and running, the same
        start and cpus held."""
        eq = [self.id == other.id, self.submit == other.submit,
              self.estimate == other.estimate,
              *(a == b for a, b in zip(self.request, other.request, strict=True)),
              *(v == w for (_, v), (_, w) in zip(self.labels, other.labels, strict=True))]
        if running:
            assert self.start is not None and other.start is not None
            eq.append(self.start == other.start)
            if self.held is not None and other.held is not None:
                eq += [a == b for a, b in zip(self.held, other.held, strict=True)]
        return z3.And(eq)


def _int(model: z3.ModelRef, term: z3.ExprRef) -> int:
    return model.eval(term, model_completion=True).as_long()


def _true(model: z3.ModelRef, term: z3.ExprRef) -> bool:
    return z3.is_true(model.eval(term, model_completion=True))


# checks a least counterexample may take in all (each bounded by the rlimit)
MINIMISING_CHECKS = 24
MINIMISING_SHARE = 4


def _least(two: _TwoPasses, constraints: Sequence[z3.BoolRef], limits: Limits
           ) -> z3.ModelRef | None:
    """A model least in the number of jobs, then in the sum of its numbers, then in the ids
    of the first jobs (each pushed down by galloping, then bisection, as the one-pass least
    counterexample, ``counterexample.py``: within MINIMISING_CHECKS checks, each bounded by
    the rlimit; out of time, the least found so far)."""
    solver = z3.Solver()
    solver.set("rlimit", limits.rlimit)
    add_in_time(solver, [*two.constraints, *constraints])
    budget = running()
    if solver.check() != z3.sat:
        return None
    model, checks = solver.model(), 1
    # each smaller model is sought with a quarter of the rlimit: a hard one is given up (the
    # least model found so far stands), and the same on any machine
    solver.set("rlimit", max(1, limits.rlimit // MINIMISING_SHARE))
    one = two.first
    jobs = [*one.queue, *one.running]  # the least ids to the queue, in its order
    ids = z3.Sum([z3.If(j.present, w * j.id, 0)
                  for w, j in zip(range(len(jobs), 0, -1), jobs, strict=True)])
    for objective in (two.jobs(), z3.Sum(two.numbers()), ids):
        best = model.eval(objective, model_completion=True).as_long()
        infeasible: int | None = None  # a value known to be below every model's
        step = 1
        while checks < MINIMISING_CHECKS:  # down by galloping, then by bisection
            target = best - step if infeasible is None else (infeasible + best) // 2
            if target < 0 or infeasible is not None and target <= infeasible:
                break
            if budget is not None and budget.expired():
                break
            solver.push()
            solver.add(objective <= target)
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
