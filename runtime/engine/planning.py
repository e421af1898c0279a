"""A planning policy's full plan at an instant (papers/001, section 2).

A planning-based scheduler (CCS) gives every waiting job a planned start: in schedc that is a
policy with `reserve all` and a backfill that plans (`first_fit`, `best`, `when`). Its plan
at ``now`` is one pass run on a copy of the machine, with the queue in the policy's own
order, visiting every job (the walk's ``full`` mode: a job that cannot start now is still
reserved): the jobs it starts now start at ``now``, every other one at its reservation.

``Planner`` plans several policies on copies of one machine (the self-tuning step of dynP);
``schedc optimal`` reads the same plans as the policies' schedules of a quasi off-line
problem. The machine planned on is never changed: each plan has a machine of its own, the
state right after that policy's pass (``Machine.plan_copy``: its per-job records hold the
queued and running jobs only).
"""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from schedc.dsl.semantics.decisions import PassDecisions
from schedc.runtime.engine.machine import Machine
from schedc.runtime.engine.monitor import call_policy
from schedc.runtime.engine.policy import RuntimePolicy
from schedc.runtime.engine.walk import PassWalk, share_packing
from schedc.runtime.jobs import Job


class NotPlanning(ValueError):
    """The policy does not plan every waiting job (no `reserve all`, or `backfill none`)."""


def why_not_planning(policy: RuntimePolicy) -> str | None:
    """Why ``policy`` has no full plan, or None if it has one."""
    if policy.preemption is not None:
        return "it preempts (`preempt when`): its passes plan nothing ahead"
    if policy.depth is not None or policy.selective:
        return "it does not reserve every waiting job (`reserve all`)"
    if policy.backfill == "none":
        return "with `backfill none` a pass stops at the first job that does not fit"
    return None


@frozen
class PlannedJob:
    """One waiting job in a plan: planned ``start`` on ``alloc`` for ``estimate`` seconds."""

    job: Job
    start: int
    estimate: int  # on its allocation (a moldable job's scales with its size)
    alloc: tuple[int, ...]

    @property
    def width(self) -> int:
        """Its cpus: the paper's w_i."""
        return self.alloc[0]

    @property
    def end(self) -> int:
        return self.start + self.estimate


@frozen
class Plan:
    """``policy``'s plan at ``now``: every job that waited, in the pass's decision order."""

    policy: str
    now: int
    jobs: tuple[PlannedJob, ...]
    decisions: PassDecisions

    def starts(self) -> dict[int, int]:
        """Planned start by job index."""
        return {p.job.index: p.start for p in self.jobs}


def order_queue(policy: RuntimePolicy, machine: Machine) -> None:
    """Re-key ``machine``'s queue in ``policy``'s order (as the simulator keys it)."""
    M = machine.M
    fn = policy.order_key
    if fn is None:
        pairs = sorted(((j.submit * M + j.index, j) for j in machine.queue),
                       key=lambda p: p[0])
    else:
        view = machine.view
        pairs = sorted(((call_policy(policy, fn, j, view, "order key") + (j.submit, j.index),
                         j) for j in machine.queue), key=lambda p: p[0])
    machine.reorder(pairs)


class Planner:
    """Full plans of ``policies`` (each a planning policy) on copies of one machine."""

    def __init__(self, policies: Sequence[RuntimePolicy], resources: Sequence[str],
                 capacities: tuple[int, ...], jobs: Sequence[Job], *, fast: bool = True,
                 monitor: bool = True) -> None:
        for p in policies:
            why = why_not_planning(p)
            if why is not None:
                raise NotPlanning(f"policy {p.name} has no full plan: {why}")
        self.policies = tuple(policies)
        self.resources = tuple(resources)
        self.fast = fast
        self.monitor = monitor
        # rigid requests packed once per run, shared by every plan's walk
        probe = Machine(capacities, len(jobs), True)
        walkers = [PassWalk(p, probe, self.resources, fast=fast) for p in self.policies]
        share_packing(walkers, list(jobs))
        self.packed = walkers[0].packed

    def plan(self, k: int, machine: Machine, now: int) -> tuple[Plan, Machine]:
        """Policy ``k``'s plan at ``now`` and the machine after its pass (a copy)."""
        policy = self.policies[k]
        copy = machine.plan_copy()  # O(queue + running): a step plans every candidate
        copy.view.now = now
        if copy.queue:
            order_queue(policy, copy)
        walker = PassWalk(policy, copy, self.resources, fast=self.fast, monitor=self.monitor,
                          record=True, full=True)
        walker.packed = self.packed
        walker.begin(now)
        walker.walk(0)
        planned = [PlannedJob(j, now, copy.holder[j.index].job.estimate,  # type: ignore[union-attr]
                              copy.allocs[j.index]) for j in walker.started]
        planned += [PlannedJob(r.job, r.start, r.end - r.start, r.alloc)
                    for r in walker.reservations]
        if len(planned) != len(machine.queue):
            raise AssertionError(f"policy {policy.name}: the plan at t={now} holds "
                                 f"{len(planned)} of {len(machine.queue)} waiting jobs")
        return Plan(policy.name, now, tuple(planned), walker.decided()), copy

    def plans(self, machine: Machine, now: int) -> list[tuple[Plan, Machine]]:
        """Every policy's plan, in the policies' order."""
        return [self.plan(k, machine, now) for k in range(len(self.policies))]


def plan_once(policy: RuntimePolicy, machine: Machine, now: int, resources: Sequence[str],
              jobs: Sequence[Job]) -> Plan:
    """One policy's plan (a ``Planner`` of one)."""
    return Planner([policy], resources, machine.cap, jobs).plan(0, machine, now)[0]
