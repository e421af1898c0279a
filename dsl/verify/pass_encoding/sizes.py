"""Sizes: each slot's size at its visit (kept from an earlier pass with `size fixed`, or
the size rule's value), `size choose`'s candidates and the one that completes first.
Twin: the size rule's call and ``choose_size`` in ``PassWalk`` (runtime/engine/walk.py)."""

from __future__ import annotations

import z3

from schedc.dsl import ir
from schedc.dsl.verify.pass_encoding.plan import PlanSteps
from schedc.dsl.verify.pass_encoding.record import ChoiceEstimate, FreshSize, SizeResult
from schedc.dsl.verify.symbolic import sym_eval


class SizeSteps(PlanSteps):
    """The sizes the pass computes and weighs."""

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
                self.fresh_sizes.append(FreshSize(z3.And(self.visited[q], z3.Not(fixed[q])),
                                                  q, size_walk[q]))
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
                sizes += [SizeResult(z3.And(self.choice_made[q], ok), c, q, q)
                          for ok, c in choices[q]]
            if policy.size_choices is None:
                sizes.append(SizeResult(self.visited[q], size_walk[q], q, q))
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
            self.choice_estimates.append(ChoiceEstimate(a, ok, size, est_i))
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

    def fits_machine(self, a: int) -> z3.BoolRef:
        """Job a's size is at most the cpus (a request is, by assumption): else no time
        fits it, and the simulator stops on the size before it looks for one (size-bounds).
        So that state has a pass, in which the job is not reserved."""
        if self.rigid:
            return z3.BoolVal(True)
        return self.alloc_walk[a][0] <= self.capacity[0]


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
