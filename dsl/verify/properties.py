"""Each property, one small function (or lemma chain) apiece, with its obligations: no
resource overcommitted (``capacity``), sizes in range (``size_bounds``, ``size_stops``),
a pass that runs to its end (``completes``), progress on an idle machine, reservations
kept within the pass (``reservation_safety``), the invariants (``Invariant``), formulas
that never fail (``well_defined``).

Apart from the solver driver (``checker.py``), which proves them, and from the prover
(``prover.py``), which chooses and orders them: here is only what each property states of
one symbolic pass, and how its proof is split into per-step lemmas.
"""

from __future__ import annotations

import time

import attrs
import z3

from schedc.dsl import ir
from schedc.dsl.verify.checker import Checker, Property
from schedc.dsl.verify.pass_encoding.record import SizeResult, SymbolicPass
from schedc.dsl.verify.symbolic import Obligation, running_total
from schedc.dsl.verify.verdict import Verdict


def capacity_steps(sym: SymbolicPass) -> list[tuple[int, Property]]:
    """No step overcommits, by induction: (step, lemma) pairs."""
    return [(-1, lambda s: s.capacity_ok(0))] + [
        (c, lambda s, c=c: z3.Implies(s.capacity_ok(c), s.capacity_ok(c + 1)))
        for c in range(sym.steps)]


def use_is_held(sym: SymbolicPass, a: int) -> z3.BoolRef:
    """When the walk reaches slot a, the use of each resource is what the running jobs
    (those of the state and those started so far) ask of it: false where a size rule gave
    a rigid job other cpus than it asked (never learned then)."""
    state = sym.state_at(a)
    return z3.And([u == running_total(state, k) for k, u in enumerate(state.used)])


def capacity(sym: SymbolicPass) -> z3.BoolRef:
    return z3.And([u <= c for u, c in zip(sym.used_after, sym.capacity, strict=True)])


def _in_range(sym: SymbolicPass, size: z3.ArithRef, slot: int) -> z3.BoolRef:
    """In [1, capacity], and in its range for a moldable job (DESIGN: [job min, min(job max,
    capacity)])."""
    job = sym.queue[slot]
    return z3.And(size >= 1, size <= sym.capacity[0], z3.Implies(
        job.moldable, z3.And(job.min_size <= size, size <= job.max_size)))


def size_ok(sym: SymbolicPass, result: SizeResult) -> z3.BoolRef:
    return z3.Implies(result.guard, _in_range(sym, result.size, result.slot))


def size_stops(sym: SymbolicPass) -> list[tuple[Obligation, int | None]]:
    """Each size the simulator checks, as an obligation of its step: a size out of range
    stops the simulator there (for `size-bounds`), like a failing formula, so no later
    decision, start or after-pass check happens (the size results' guards are when the
    simulator computes each size, no more: an excused state is one it stops in)."""
    return [(Obligation("SIZE_BOUNDS", r.guard, _in_range(sym, r.size, r.slot), None,
                        "a size in range"), r.step)
            for r in sym.size_results]


def size_bounds(sym: SymbolicPass) -> z3.BoolRef:
    """Every size computed without a failure is in range: a failing formula stops the
    simulator before its size is used (that is `well-defined`'s), its own or one evaluated
    before it: an order key, a formula or a size of an earlier step."""
    through = _fine_through(sym, [*zip(sym.obligations, sym.obligation_steps, strict=True),
                                  *size_stops(sym)])
    return z3.And([z3.Implies(z3.And(through[r.step - 1], nothing_fails(own)), size_ok(sym, r))
                   for r, own in zip(sym.size_results, sym.size_obligations, strict=True)])


def _fine_through(sym: SymbolicPass, obligations: list[tuple[Obligation, int | None]]
                  ) -> list[z3.BoolRef]:
    """``[s]``: no failure among ``obligations`` of no step (order keys, evaluated first)
    and of steps 0 to s; ``[-1]`` (one more entry): of no step only, before step 0. So
    ``[s - 1]`` is "before step s" for every s."""
    steps: dict[int | None, list[Obligation]] = {}
    for ob, step in obligations:
        steps.setdefault(step, []).append(ob)
    fine = nothing_fails(steps.get(None, []))
    through = []
    for s in range(sym.steps + 1):
        fine = z3.And(fine, nothing_fails(steps.get(s, [])))
        through.append(fine)
    return [*through, nothing_fails(steps.get(None, []))]  # [-1]: before step 0


def nothing_fails(obligations) -> z3.BoolRef:
    return z3.And([z3.Not(o.violated()) for o in obligations])


def completes(sym: SymbolicPass) -> z3.BoolRef:
    """The pass runs to its end: no formula fails and no size is out of range (either stops
    the simulator there)."""
    return z3.And(nothing_fails(sym.obligations), nothing_fails(o for o, _ in size_stops(sym)))


def after_the_pass(prop: Property) -> Property:
    """``prop``, which the monitor checks after the pass (capacity, reservations, progress),
    of every pass that runs to its end."""
    return lambda s: z3.Implies(completes(s), prop(s))


def makes_progress(sym: SymbolicPass) -> z3.BoolRef:
    return z3.Or([d.started for d in sym.decisions])


def _reservations_hold(sym: SymbolicPass) -> z3.BoolRef:
    return z3.And(list(sym.reservations_hold))


class Invariant:
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
        return z3.Implies(z3.And(guard, nothing_fails(sym.obligations[first:])), value)

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
                for f in sym.fresh_sizes:
                    checks.setdefault(f.slot, []).append(
                        self._holds(sym, f.guard, f.slot, sym.state_at(f.slot), f.size, f.slot))
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


def base(name: str) -> str:
    return "invariant" if name.startswith("invariant") else name


def reservation_safety(checker: Checker, sym: SymbolicPass) -> Verdict:
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
                         whole=after_the_pass(_reservations_hold),
                         failure="a job started in the pass delays a reservation"
                         + (" beyond its slack" if sym.policy.slack is not None else ""))


def well_defined(checker: Checker, sym: SymbolicPass) -> Verdict:
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
        result, core = checker.solve(sym, formula, None if sym.exact else step)
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
