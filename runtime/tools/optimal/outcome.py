"""One instance solved: the policies' plans (the paper's policies), the best one as the
solver's hint and upper bound, the optimum, every plan checked, and each policy's quality
perf(optimal) / perf(policy) (papers/001, section 4)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from fractions import Fraction

from attrs import frozen

from schedc.runtime.engine.planning import Planner
from schedc.runtime.engine.policy import RuntimePolicy
from schedc.runtime.engine.simulator import machine_at
from schedc.runtime.run import OptionError
from schedc.runtime.tools.optimal.check import plan_errors
from schedc.runtime.tools.optimal.instance import Instance, instance_of, too_large
from schedc.runtime.tools.optimal.model import Solution, artww_of, sldwa_of, solve, weighted_starts
from schedc.runtime.workloads.state_file import InitialState

METRIC_OF = {"artww": artww_of, "sldwa": sldwa_of}


class BadPlan(AssertionError):
    """A plan the monitor refuses: a bug of the model or of a policy's planner."""


@frozen
class PolicyPlan:
    name: str
    starts: dict[int, int]  # job index -> planned start
    weighted: int  # sum(w s)


@frozen
class Outcome:
    instance: Instance
    solution: Solution
    plans: tuple[PolicyPlan, ...]  # in the policies' order

    def value(self, metric: str, weighted: int | None) -> Fraction | None:
        return None if weighted is None else METRIC_OF[metric](self.instance, weighted)

    def quality(self, metric: str, plan: PolicyPlan) -> Fraction | None:
        """perf(optimal) / perf(policy): 1 when the policy's plan is optimal, below when it
        loses."""
        best, mine = self.value(metric, self.solution.weighted), self.value(metric,
                                                                             plan.weighted)
        if best is None or mine is None or mine == 0:
            return None
        return best / mine


def candidates(policies: Sequence[RuntimePolicy]) -> list[RuntimePolicy]:
    """The policies whose plans are compared: a self-tuning policy stands for its
    candidates; each policy once, by name, in the order given."""
    out: dict[str, RuntimePolicy] = {}
    for p in policies:
        for c in (p.tuning.candidates if p.tuning is not None else (p,)):
            out.setdefault(c.name, c)
    return list(out.values())


def optimise(policies: Sequence[RuntimePolicy], initial: InitialState, *, time_limit: float,
             workers: int) -> Outcome:
    """Plan ``initial``'s waiting jobs with every policy and optimally, all within
    ``time_limit`` (the policies' plans too: the solver has what they leave)."""
    began = time.perf_counter()
    machine = machine_at(policies[0], initial)
    instance = instance_of(machine, initial.now, initial.resources)
    problem = too_large(instance)
    if problem is not None:
        raise OptionError(problem, help="solve a smaller instance: fewer waiting jobs, shorter "
                          "estimates or a smaller machine (docs/reference/limits.md)")
    planner = Planner(policies, initial.resources, machine.cap, initial.workload.jobs)
    plans = []
    for k, policy in enumerate(policies):
        starts = planner.plan(k, machine, initial.now)[0].starts()
        _checked(instance, starts, f"policy {policy.name}'s plan")
        plans.append(PolicyPlan(policy.name, starts, weighted_starts(instance, starts)))
    hint = min(plans, key=lambda p: p.weighted).starts if plans and instance.jobs else None
    if not instance.jobs:
        solution = Solution("optimal", 0, 0, 0.0, {})
    else:
        left = max(0.0, time_limit - (time.perf_counter() - began))
        solution = solve(instance, time_limit=left, workers=workers, hint=hint)
    if solution.status != "unknown":
        _checked(instance, solution.starts, "the solver's plan")
    return Outcome(instance, solution, tuple(plans))


def _checked(instance: Instance, starts: dict[int, int], what: str) -> None:
    errors = plan_errors(instance, starts)
    if errors:
        raise BadPlan(f"{what} at t={instance.now} is wrong: {'; '.join(errors)}")
