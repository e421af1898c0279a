"""The monitor of a plan, written apart from the model: every waiting job planned once, no
start before ``now`` or its submission, and no resource over its capacity at any instant,
the running jobs holding theirs until their estimated ends."""

from __future__ import annotations

from collections.abc import Mapping

from schedc.runtime.tools.optimal.instance import Instance


def plan_errors(instance: Instance, starts: Mapping[int, int]) -> list[str]:
    """What is wrong with ``starts`` (job index -> start) on ``instance``; empty if nothing."""
    errors = []
    mine = {j.index for j in instance.jobs}
    if set(starts) != mine:
        errors.append(f"the plan's jobs {sorted(set(starts) ^ mine)} differ from the waiting "
                      "jobs")
        return errors
    for job in instance.jobs:
        s = starts[job.index]
        if s < instance.now or s < job.submit:
            errors.append(f"job {job.id} starts at {s}, before max(now={instance.now}, "
                          f"submit={job.submit})")
    # (time, +use or -use) per resource; at one instant ends come before starts
    for k, (name, cap) in enumerate(zip(instance.resources, instance.capacities, strict=True)):
        events: list[tuple[int, int]] = []
        for rj in instance.running:
            if rj.expected_end > instance.now:
                events += [(instance.now, rj.alloc[k]), (rj.expected_end, -rj.alloc[k])]
        for job in instance.jobs:
            s = starts[job.index]
            events += [(s, job.request[k]), (s + job.estimate, -job.request[k])]
        used = 0
        for t, delta in sorted(events):
            used += delta
            if used > cap:
                errors.append(f"`{name}` is used {used} > capacity {cap} at t={t}")
                break
    return errors
