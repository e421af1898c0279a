"""The event search against CP-SAT on random instances too large for the exhaustive oracle
of the tests (8 to --max-jobs waiting jobs): both alone, each must prove its optimum, and
the two optima must be equal; every plan is checked by the monitor. Instances mix one and
two resources, identical jobs and jobs wider than half the machine, as the tests' do.

    python -m benchmarks.fuzz_optimal [--count 100] [--seed 0] [--max-jobs 12]

Prints each disagreement (and the seed that makes it), then a tally. Where one of the two is
not proven within --seconds, what can still be compared is: no plan beats a proven optimum,
and CP-SAT's bound is not above the search's optimum.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from schedc.runtime.jobs import Job, RunningJob
from schedc.runtime.tools.optimal.check import plan_errors
from schedc.runtime.tools.optimal.instance import Instance
from schedc.runtime.tools.optimal.model import solve
from schedc.runtime.tools.optimal.search import Incumbent, event_search


def random_instance(rng: random.Random, max_jobs: int) -> Instance:
    k = rng.choice((1, 1, 2))
    caps = tuple(rng.randint(4, 32) for _ in range(k))
    now = rng.randint(0, 100)
    running, used = [], [0] * k
    for i in range(rng.randint(0, 4)):
        alloc = tuple(rng.randint(0, (c - u) // 2) for c, u in zip(caps, used, strict=True))
        if alloc[0] == 0:
            continue
        used = [u + a for u, a in zip(used, alloc, strict=True)]
        est = rng.randint(1, 60)
        job = Job(id=1000 + i, index=len(running), submit=0, run_time=est, estimate=est,
                  request=alloc)
        running.append(RunningJob(job, now - rng.randint(0, est - 1), alloc))
    shapes = [((rng.randint(1, caps[0]), *(rng.randint(0, c) for c in caps[1:])),
               rng.randint(1, 50)) for _ in range(rng.randint(2, max_jobs))]
    jobs = []
    for i in range(rng.randint(8, max_jobs)):
        request, est = rng.choice(shapes)  # identical jobs are common
        if rng.random() < 0.1:  # now and then one wider than half the machine
            request = (rng.randint(caps[0] // 2 + 1, caps[0]), *request[1:])
        jobs.append(Job(id=i, index=len(running) + i, submit=rng.randint(0, now),
                        run_time=est, estimate=est, request=request))
    return Instance(now, ("cpus", "mem")[:k], caps, tuple(running), tuple(jobs))


def check(seed: int, max_jobs: int, seconds: float) -> str:
    """"same", "search open" / "cp-sat open" (not proven by it) or a disagreement."""
    inst = random_instance(random.Random(seed), max_jobs)
    best = Incumbent(inst)
    found = event_search(inst, best, time.perf_counter() + seconds)
    alone = solve(inst, time_limit=seconds, workers=2, search=False)
    plan, weighted = best.plan()
    for who, starts in (("search", plan), ("cp-sat", alone.starts)):
        errors = plan_errors(inst, starts or {}) if starts is not None else []
        if errors:
            return f"{who}'s plan is wrong: {errors}"
    if found.complete and alone.weighted is not None and alone.weighted < weighted:
        return f"cp-sat's plan {alone.weighted} beats the search's optimum {weighted}"
    if alone.status == "optimal" and weighted is not None and weighted < alone.weighted:
        return f"the search's plan {weighted} beats cp-sat's optimum {alone.weighted}"
    if not found.complete:
        return "search open"
    if alone.status != "optimal":
        # still checked above: its plan is no better than the search's optimum
        return "cp-sat open" if alone.bound is None or alone.bound <= weighted else \
            f"cp-sat's bound {alone.bound} is above the search's optimum {weighted}"
    return "same"


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.fuzz_optimal",
                                description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-jobs", type=int, default=12)
    p.add_argument("--seconds", type=float, default=30.0, help="per solver and instance")
    args = p.parse_args()
    started = time.perf_counter()
    tally = {"same": 0, "search open": 0, "cp-sat open": 0, "disagree": 0}
    for seed in range(args.seed, args.seed + args.count):
        verdict = check(seed, args.max_jobs, args.seconds)
        if verdict in tally:
            tally[verdict] += 1
        else:
            tally["disagree"] += 1
            print(f"seed {seed}: {verdict}", flush=True)
    print(f"instances: {args.count} (seeds {args.seed}..{args.seed + args.count - 1}, 8.."
          f"{args.max_jobs} jobs): {tally['same']} agree, {tally['disagree']} disagree; not "
          f"proven in {args.seconds:g} s: {tally['search open']} by the search, "
          f"{tally['cp-sat open']} by CP-SAT (then only plans and bounds compared); "
          f"{time.perf_counter() - started:.0f} s")
    sys.exit(1 if tally["disagree"] else 0)


if __name__ == "__main__":
    main()
