"""The exhaustive oracle of the quasi off-line problem, written apart from the CP-SAT model:
for a regular objective the serial schedules (each job in turn at its earliest fit) over all
job orders contain an optimum. Shared by the model's and the bounds' tests."""

from __future__ import annotations

import itertools
import random

from schedc.runtime.jobs import Job, RunningJob
from schedc.runtime.tools.optimal.instance import Instance
from schedc.runtime.tools.optimal.model import weighted_starts


def random_instance(rng: random.Random) -> Instance:
    k = rng.choice((1, 1, 2))
    caps = tuple(rng.randint(3, 8) for _ in range(k))
    now = rng.randint(0, 20)
    running, used = [], [0] * k
    for i in range(rng.randint(0, 2)):
        alloc = tuple(rng.randint(0, c - u) for c, u in zip(caps, used, strict=True))
        if alloc[0] == 0:
            continue
        used = [u + a for u, a in zip(used, alloc, strict=True)]
        est = rng.randint(1, 15)
        start = now - rng.randint(0, est - 1)
        job = Job(id=100 + i, index=len(running), submit=max(0, start - 3), run_time=est,
                  estimate=est, request=alloc)
        running.append(RunningJob(job, start, alloc))
    jobs = []
    for i in range(rng.randint(2, 6)):
        req = (rng.randint(1, caps[0]), *(rng.randint(0, c) for c in caps[1:]))
        est = rng.randint(1, 10)
        jobs.append(Job(id=i, index=len(running) + i, submit=rng.randint(0, now),
                        run_time=est, estimate=est, request=req))
    return Instance(now, ("cpus", "mem")[:k], caps, tuple(running), tuple(jobs))


def crowded_instance(rng: random.Random, resources: int = 1) -> Instance:
    """Five to seven narrow jobs of varied estimates beside up to two running ones: states
    with the same jobs left meet at one instant after different starts, holding the cpus
    for different times (the event search's dominance must tell them apart). With two
    resources a job may need no cpu at all."""
    caps = tuple(rng.randint(3, 6) for _ in range(resources))
    running, used = [], [0] * resources
    for i in range(rng.randint(0, 2)):
        alloc = tuple(rng.randint(1, max(1, c - u - 1)) for c, u in zip(caps, used,
                                                                       strict=True))
        used = [u + a for u, a in zip(used, alloc, strict=True)]
        est = rng.randint(2, 12)
        job = Job(id=100 + i, index=i, submit=0, run_time=est, estimate=est, request=alloc)
        running.append(RunningJob(job, 0, alloc))
    jobs = []
    for i in range(rng.randint(5, 7)):
        least = 0 if resources > 1 and rng.random() < 0.2 else 1
        req = tuple(rng.randint(least if k == 0 else 0, max(1, c // 2))
                    for k, c in enumerate(caps))
        est = rng.randint(1, 12)
        jobs.append(Job(id=i, index=len(running) + i, submit=0, run_time=est, estimate=est,
                        request=req))
    return Instance(0, ("cpus", "mem")[:resources], caps, tuple(running), tuple(jobs))


def serial_plan(inst: Instance, order: tuple[Job, ...]) -> dict[int, int]:
    """Each job at the earliest instant from which it fits for its whole estimate."""
    held = [(inst.now, rj.expected_end, rj.alloc) for rj in inst.running
            if rj.expected_end > inst.now]
    starts = {}
    for job in order:
        for t in sorted({inst.now, *(e for _, e, _ in held)}):
            if t < inst.now:
                continue
            points = {t, *(b for b, _, _ in held if t < b < t + job.estimate)}
            if all(sum(a[k] for b, e, a in held if b <= p < e) + job.request[k] <= cap
                   for p in points for k, cap in enumerate(inst.capacities)):
                starts[job.index] = t
                held.append((t, t + job.estimate, job.request))
                break
    return starts


def exhaustive_minimum(inst: Instance) -> int:
    return min(weighted_starts(inst, serial_plan(inst, order))
               for order in itertools.permutations(inst.jobs))
