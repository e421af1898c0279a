"""The self-tuning step of dynP (papers/001, section 3): plan every candidate, measure each
plan, let the decider pick the policy whose passes run until the next step.

At a step with a non-empty queue every candidate's full plan is computed on a copy of the
same machine (``planning.Planner``), measured by the tuning metric (``plan_metrics``, exact
``Fraction`` values, so a tie is a tie), and the decider picks:

* ``simple``: the best value; ties go to the earlier candidate in the written order;
* ``advanced``: the active candidate stays if its value equals the best value (the paper's
  correction of the simple decider), else as ``simple``.

A step with an empty queue changes nothing and is not counted. Candidates that differ only
in their order and put the queue in the same order make the same plan (a pass reads its
policy's order only to sort the queue): it is planned once per step and its value shared,
which changes no value and so no decision (most steps have a few waiting jobs, where the
orders often agree); when all candidates make one plan the decision needs no value at all.
A candidate that is plain conservative planning on one resource (rigid sizes, `reserve all`,
`backfill first_fit`, no selective reservation, no invariant) is planned by ``serial_plan``:
serial earliest fit in its order on the availability profile, which is what its walk in
full mode does (a job starts now exactly when its earliest fit is now), without the walk's
machine copy and records; with ``fast`` off the general ``Planner`` plans it (tested equal).

The simulator decides when a step happens (``step submit | change``) and re-keys its queue
when the choice changes.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from fractions import Fraction

from attrs import evolve, field, frozen

from schedc.runtime.engine.machine import Machine
from schedc.runtime.engine.monitor import call_policy
from schedc.runtime.engine.plan_metrics import METRICS, PlanContext, PlanMetric
from schedc.runtime.engine.planning import PlannedJob, Planner
from schedc.runtime.engine.policy import RuntimePolicy, RuntimeTuning
from schedc.runtime.engine.profile import Profile1
from schedc.runtime.jobs import Job


@frozen
class Switch:
    """At ``time`` the active policy changed from ``old`` to ``new``; ``values`` is every
    candidate's metric value at that step, in the candidates' order."""

    time: int
    old: str
    new: str
    values: tuple[tuple[str, Fraction], ...]


@frozen
class TuningRecord:
    """What the self-tuning did during one run."""

    metric: str
    decider: str
    step: str
    candidates: tuple[str, ...]
    steps: int  # steps with a non-empty queue (the ones that plan)
    switches: tuple[Switch, ...]
    # Share of [first submit, last end] during which each candidate was active (by name,
    # in the candidates' order; a name written twice counts once); sums to 1.
    share: tuple[tuple[str, Fraction], ...]
    # Per step: the queue length and the wall time of planning and deciding (seconds).
    # Wall times vary from run to run: they never enter equality or --json without --timing.
    step_queue: tuple[int, ...]
    step_seconds: tuple[float, ...] = field(eq=False)


def queue_order(policy: RuntimePolicy, machine: Machine) -> tuple[int, ...]:
    """The queue's job indices in ``policy``'s order (as ``planning.order_queue`` sorts)."""
    queue = machine.queue
    fn = policy.order_key
    if fn is None:
        return tuple(j.index for j in sorted(queue, key=lambda j: (j.submit, j.index)))
    view = machine.view
    keyed = sorted((call_policy(policy, fn, j, view, "order key") + (j.submit, j.index),
                    j.index) for j in queue)
    return tuple(i for _, i in keyed)


def serial_plannable(policy: RuntimePolicy) -> bool:
    """``policy``'s full plan is serial earliest fit in its order (see the module doc)."""
    return (policy.size is None and policy.depth is None and policy.backfill == "first_fit"
            and not policy.selective and not policy.invariants)


def serial_plan(order: Sequence[int], machine: Machine, now: int) -> list[PlannedJob]:
    """The plan of a ``serial_plannable`` policy on one resource: each job of the queue, in
    ``order`` (job indices), at its earliest fit in the profile of the running jobs (until
    their estimated ends) and the jobs planned before it."""
    by_index = {j.index: j for j in machine.queue}
    profile = Profile1(now, machine.free(), machine.running)
    planned = []
    for i in order:
        job = by_index[i]
        req = job.request
        est = job.estimate_at(req[0])
        start = profile.earliest(est, req)
        profile.add(start, start + est, req)
        planned.append(PlannedJob(job, start, est, req))
    return planned


def decide(decider: str, metric: PlanMetric, values: Sequence[Fraction], current: int) -> int:
    """The candidate chosen among ``values`` (one per candidate) when ``current`` is active."""
    best = 0
    for k in range(1, len(values)):
        if metric.better(values[k], values[best]):
            best = k
    if decider == "advanced" and values[current] == values[best]:
        return current
    return best


class Tuner:
    """The self-tuning state of one run: the active candidate and the record so far."""

    def __init__(self, tuning: RuntimeTuning, resources: Sequence[str],
                 capacities: tuple[int, ...], jobs: Sequence[Job], *, fast: bool = True,
                 monitor: bool = True) -> None:
        self.tuning = tuning
        self.metric = METRICS[tuning.metric]
        self.names = tuple(c.name for c in tuning.candidates)
        # planning copies are not checked by the monitor: only the pass that runs is
        self.planner = Planner(tuning.candidates, resources, capacities, jobs, fast=fast,
                               monitor=False)
        # What a candidate's pass reads besides its order: equal ones plan alike on one order
        passes = [evolve(c, name="", order_key=None, order_static=True)
                  for c in tuning.candidates]
        self.group = [passes.index(p) for p in passes]  # the first candidate alike
        self.serial = [fast and len(capacities) == 1 and serial_plannable(c)
                       for c in tuning.candidates]
        self.active = 0
        self.switches: list[Switch] = []
        self.step_queue: list[int] = []
        self.step_seconds: list[float] = []

    def step(self, machine: Machine, now: int) -> bool:
        """One self-tuning step at ``now``; True if the active candidate changed."""
        if not machine.queue:
            return False
        started = time.perf_counter()
        sames = [(self.group[k], queue_order(c, machine))
                 for k, c in enumerate(self.tuning.candidates)]
        if all(same == sames[0] for same in sames):
            # one plan for all, so equal values: simple takes the first, advanced stays
            chosen = self.active if self.tuning.decider == "advanced" else 0
            if chosen == self.active:
                self.step_seconds.append(time.perf_counter() - started)
                self.step_queue.append(len(machine.queue))
                return False
        context = PlanContext(now, machine.cap[0], tuple(machine.running))
        shared: dict[tuple, Fraction] = {}
        values = []
        for k, same in enumerate(sames):
            value = shared.get(same)
            if value is None:
                if self.serial[k]:
                    jobs = serial_plan(same[1], machine, now)
                else:
                    jobs = list(self.planner.plan(k, machine, now)[0].jobs)
                value = shared[same] = self.metric(jobs, context)
            values.append(value)
        chosen = decide(self.tuning.decider, self.metric, values, self.active)
        self.step_seconds.append(time.perf_counter() - started)
        self.step_queue.append(len(machine.queue))
        if chosen == self.active:
            return False
        self.switches.append(Switch(now, self.names[self.active], self.names[chosen],
                                    tuple(zip(self.names, values, strict=True))))
        self.active = chosen
        return True

    def record(self, first: int, last: int) -> TuningRecord:
        """The record of the run, whose jobs span [``first`` submit, ``last`` end]."""
        share = dict.fromkeys(self.names, Fraction(0))
        span = last - first
        if span <= 0:
            share[self.names[0]] = Fraction(1)
        else:
            at, name = first, self.names[0]
            for s in self.switches:
                share[name] += Fraction(max(0, min(s.time, last) - at), span)
                at, name = max(at, min(s.time, last)), s.new
            share[name] += Fraction(last - at, span)
        t = self.tuning
        return TuningRecord(t.metric, t.decider, t.step, self.names, len(self.step_queue),
                            tuple(self.switches), tuple(share.items()),
                            tuple(self.step_queue), tuple(self.step_seconds))
