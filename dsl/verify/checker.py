"""The solver driver, ``Checker``: each property's lemmas proved over the step facts, on one
solver per encoded pass that holds its assumptions and the facts learned on it; where a lemma
fails, the exact pass searched at growing bounds (``REPLAY_TRIES``, ``BEYOND``), its least
counterexample replayed by the simulator before it is reported. Also Z3's resource counts
(``context_work``) that make a verdict's work the same on any machine.

Apart from the properties (``properties.py``) so that what a property states and how Z3 is
driven to prove or refute it can be read, and changed, one without the other.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import attrs
import z3
from attrs import frozen

from schedc.dsl import ir
from schedc.dsl.diagnostics import Span
from schedc.dsl.verify.budget import Budget, OutOfTime
from schedc.dsl.verify.budget import add as add_in_time
from schedc.dsl.verify.budget import check as in_time
from schedc.dsl.verify.counterexample import counterexample, same_state, small_model
from schedc.dsl.verify.pass_encoding.encoder import TAILS, encode_pass
from schedc.dsl.verify.pass_encoding.record import SymbolicPass
from schedc.dsl.verify.verdict import (
    Assumed,
    Bounds,
    Limits,
    Verdict,
    unknown_reason,
    vacuous,
)

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

Property = Callable[[SymbolicPass], z3.BoolRef]

# What a vacuity check adds to a proof's assumptions: a pass with no waiting job decides
# nothing (every property holds of it), so a proof must cover some state where one waits
WAITING = "at least one job waits"
# a preemptive pass's equations (its books at each step), tracked as one assumption: they
# define fresh terms from the inputs (each state has its pass), so they clash with nothing
# unless the encoding is wrong
EQUATIONS = "the encoded pass's equations"


class Checker:
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
        # the running property's CPU time (``timed``), and what the properties share of it:
        # the CPU seconds of the work they all read (``sharing``), counted in each one's
        self.budget: Budget | None = None
        self.shared = 0.0
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
        # each encoded pass's vacuity check (``vacuity``), made once for all its proofs
        self._vacuity: dict[int, Vacuity] = {}

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
        started = time.process_time()
        cores: set[str] = set()
        proved: list[tuple[z3.BoolRef, tuple[str, ...]]] = []
        if self.budget is not None:
            self.budget.doing = "while proving it from the step facts"
        for what, step, lemma in lemmas:
            formula = lemma(sym)
            result, core = self.solve(sym, formula, None if sym.exact else step)
            if result == z3.unsat:
                cores.update(core)
                proved.append((formula, core))
                continue
            verdict = self._refute(name, whole or lemma, location, failure or what or
                                   f"{name} does not hold", idle)
            if verdict is None:  # the exact pass holds it at every bound, the given ones too
                verdict = Verdict(name, "proved", 0.0, self.bound, location=location,
                                  reason=note, caveats=self._bounded(idle, what))
            return attrs.evolve(verdict, seconds=time.process_time() - started)
        for formula, core in proved if learn else []:
            self.learn(sym, formula, core)
        return Verdict(name, "proved", time.process_time() - started, self.bound,
                       location=location, core=tuple(sorted(cores)), reason=note)

    def unless_vacuous(self, verdict: Verdict, sym: SymbolicPass) -> Verdict:
        """``verdict``, proved on ``sym``, unless the pass's assumptions admit no state in
        which a job waits (then vacuous, naming the clash) or Z3 cannot tell (unknown). A
        proof by the exact passes (a failed lemma) has ``sym``'s assumptions too: the same
        encoder on the same bounds."""
        if verdict.status != "proved":
            return verdict
        return settled(verdict, self.vacuity(sym), self.policy)

    def vacuity(self, sym: SymbolicPass) -> Vacuity:
        """Whether ``sym``'s assumptions and a waiting job admit a state: one check per pass,
        on a solver of its own (a property's checks never share one with it), a least clash
        only when there is none. The pass's equations are left out: they define what the
        pass computes from any state (every state has an encoded pass, which
        ``tests/support/pass_fuzz.py`` checks on random states), and with them the check
        is as hard as a counterexample search (43 million units where a `backfill best`
        score multiplies utilisations; tens of thousands without). An unknown is not kept:
        the next property asks again, so that no verdict depends on another's."""
        if id(sym) in self._vacuity:
            return self._vacuity[id(sym)]
        found = least_clash([*((a.name, a.formula) for a in sym.assumptions),
                             (WAITING, sym.queue[0].present)], self.limits)
        if found.unknown is None:
            self._vacuity[id(sym)] = found
        return found

    def start(self, name: str) -> None:
        """A property starts, on a fresh solver (what the others' checks left in one must
        not change its verdict)."""
        self._base_of = self._base_solver = None
        if self.progress is not None:
            self.progress(name, None)

    def timed(self, name: str, compute: Callable[[], Verdict]) -> Verdict:
        """``compute()``, the verdict of property ``name``, within its time limit: CPU
        seconds over all it does (``budget.py``), those of the work the properties share
        (``shared``) counted in. Its ``seconds`` are the CPU seconds it took. Out of time
        outside a counterexample search (whose verdict says how far it got): unknown, and
        why."""
        self.start(name)
        budget = self.budget = Budget(self.limits.timeout_ms / 1000, z3.main_ctx().interrupt,
                                      self.shared)
        try:
            with budget:
                verdict = compute()
        except OutOfTime as exc:
            verdict = Verdict(name, "unknown", 0.0, self.bound, reason=str(exc))
        finally:
            self.budget = None
        return attrs.evolve(verdict, seconds=budget.spent())

    @contextmanager
    def sharing(self, doing: str) -> Iterator[Budget]:
        """A block of the work every property reads (the pass they share, its facts), within
        the time limit of one property; its CPU seconds are added to ``shared``. Out of time,
        it raises ``OutOfTime``: every verdict is then unknown."""
        with Budget(self.limits.timeout_ms / 1000, z3.main_ctx().interrupt,
                    self.shared) as budget:
            budget.doing = doing
            self.budget = budget
            try:
                yield budget
            finally:
                self.budget = None
                self.shared = budget.spent()

    def _expired(self) -> bool:
        """The running property's time ran out."""
        return self.budget is not None and self.budget.expired()

    def learn_lemmas(self, sym: SymbolicPass, lemmas: list[Property],
                     steps: list[int]) -> bool:
        """Prove each lemma with its step's equations; if all hold, learn them."""
        proved = []
        for lemma, step in zip(lemmas, steps, strict=True):
            formula = lemma(sym)
            result, core = self.solve(sym, formula, step)
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

    def solve(self, sym: SymbolicPass, prop: z3.BoolRef,
              step: int | None) -> tuple[z3.CheckSatResult, tuple[str, ...]]:
        # One solver per encoded pass holds the assumptions; each check adds its own
        # equations and the negated property in a scope (they are internalised once).
        if self.budget is not None:
            self.budget.check()  # out of time: no further check
        solver = self._base(sym)
        solver.push()
        try:
            add_in_time(solver, sym.definitions.all() if step is None
                        else sym.definitions.for_step(step))
            solver.add(z3.Not(prop))
            result = solver.check()
            if result == z3.unknown:
                in_time()  # interrupted by the time limit: out of time
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
        for i, assumption in enumerate(sym.assumptions):
            solver.assert_and_track(assumption.formula, z3.Bool(f"assumption_{i}"))
        add_in_time(solver, equations)
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
            if self._expired():
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
        if self.budget is not None:
            self.budget.doing = f"while searching for a counterexample at N={bounds[0]}, " \
                f"R={bounds[1]}"
        # any further queued jobs (sound: it decides), then copies of one (a state to show)
        for tail in TAILS:
            sym = self._exact_pass(bounds, idle, tail)
            violated = z3.Not(prop(sym))
            if rigid:
                violated = z3.And(violated, *(z3.Not(j.moldable)
                                              for j in (*sym.running, *sym.queue)))
            solver = self._solver(sym, sym.definitions.all())
            solver.add(violated)
            spent, clock = _rlimit_count(solver), time.process_time()
            result = solver.check()
            if result == z3.unsat and tail == "any":
                searched[rigid] = bounds
                return None  # it holds at these bounds, whatever waits after the slots
            if result == z3.unknown:
                # the property's time ran out, however Z3 names a check it stopped
                why = "timeout" if self._expired() else solver.reason_unknown()
                return Verdict(name, "unknown", 0.0, self.bound, location=location,
                               reason=unknown_reason(
                                   why, bounds, self.limits,
                                   time.process_time() - clock,
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
        if key not in self._exact:  # kept once whole (a property out of time leaves none)
            sym = encode_pass(self.policy, Bounds(*bounds), idle=idle, tail=tail,
                              resized=self.resized, kept=self.kept)
            self.prepare(sym)
            self._exact[key] = sym
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
                found = small_model(sym, [violated, *excluded, *extra], self.limits)
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
                                   reason=unknown_reason("log", at, self.limits))
                return Verdict(name, "violated", 0.0, self.bound, location=location,
                               reason=failure, counterexample=cex)
            kind, message = self.replay(cex)
            if kind == name:
                return Verdict(name, "violated", 0.0, self.bound, location=location,
                               reason=failure, counterexample=cex)
            misses.append(message)
            excluded.append(z3.Not(same_state(sym, found)))
        return Verdict(name, "unknown", 0.0, self.bound, location=location, reason=(
            f"Z3 finds states that violate it in the verifier's model, but the simulator "
            f"does not fail on the {len(misses)} tried (the first: {misses[0]})" if misses
            else "Z3 finds a violation but no counterexample state to replay"))


@frozen
class Vacuity:
    """A vacuity check: the names of the assumptions that admit no state together (an unsat
    core), none if some state satisfies them all; or why Z3 could not tell."""

    clash: tuple[str, ...] = ()
    unknown: str | None = None


def least_clash(named: Sequence[tuple[str, z3.BoolRef]], limits: Limits) -> Vacuity:
    """Whether the assumptions ``named`` (name, formula; a name may repeat: one assumption
    of many slots) admit a state; if not, a clash no assumption of which can be left out:
    Z3's unsat core over the names, then each name dropped in turn while the rest still
    clash (a check each; made only where a proof is vacuous)."""
    names = list(dict.fromkeys(name for name, _ in named))
    solver = z3.Solver()
    solver.set("rlimit", limits.rlimit)  # the time limit is the property's (``Budget``)
    for i, name in enumerate(names):
        solver.add(z3.Implies(z3.Bool(f"vacuity_{i}"), z3.And(
            [f for n, f in named if n == name])))
    result = solver.check(*(z3.Bool(f"vacuity_{i}") for i in range(len(names))))
    if result == z3.sat:
        return Vacuity()
    if result == z3.unknown:
        in_time()  # cut short by the time limit: the property's, not an answer to keep
        return Vacuity(unknown=solver.reason_unknown())
    core = sorted(int(str(t).split("_")[1]) for t in solver.unsat_core())
    for i in list(core):
        rest = [z3.Bool(f"vacuity_{j}") for j in core if j != i]
        outcome = solver.check(*rest)
        if outcome == z3.unknown:
            in_time()
        if outcome == z3.unsat:  # the others clash without it
            core.remove(i)
    return Vacuity(clash=tuple(names[i] for i in core))


def located(policy: ir.Policy, names: Sequence[str]) -> tuple[Assumed, ...]:
    """Each assumption with where the policy states it: a param's domain at its declaration,
    the `limit`, `resident` and `subset` clauses of a preemptive policy at their values;
    the encoding's own facts have no source."""
    rules = policy.preemption
    clauses = {} if rules is None else {"limit": rules.limit, "resident": rules.resident,
                                         "subset": rules.subset}

    def where(name: str) -> Span | None:
        for p in policy.params:
            if name.startswith(f"param `{p.name}` "):
                return p.span
        for clause, expr in clauses.items():
            if f"`{clause}`" in name and expr is not None:
                return expr.span
        return None

    return tuple(Assumed(name, where(name)) for name in names)


def undecided(why: str) -> str:
    """The reason of a proof whose assumptions Z3 could not show to admit a state."""
    return (f"proved, but Z3 could not tell whether the proof's assumptions admit a state in "
            f"which a job waits ({why}): a proof of no state would be vacuous; raise --rlimit "
            "or --timeout")


def _searched(searched: dict[bool, tuple[int, int]]) -> str:
    """How far a search that ran out got (by whether its jobs were all rigid: the largest
    bounds with no counterexample): what an unknown verdict still tells."""
    if not searched:
        return "; no bound was searched through before that"
    q, r = searched.get(False) or searched[True]
    rigid = "" if False in searched else ", all rigid (moldable ones not searched yet)"
    return f"; no counterexample with up to {q} queued and {r} running jobs{rigid}"


def context_work() -> int:
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


def settled(verdict: Verdict, found: Vacuity, policy: ir.Policy) -> Verdict:
    """A proved ``verdict`` once its vacuity check ``found`` is in: vacuous where the
    assumptions clash (located in ``policy``), unknown where Z3 could not tell, else as is."""
    if found.clash:
        return vacuous(verdict, located(policy, found.clash))
    if found.unknown is not None:
        return attrs.evolve(verdict, status="unknown", caveats=(), core=(),
                            reason=undecided(found.unknown))
    return verdict
