"""papers/003's adaptive run-to-completion disciplines (LSF-RTC-AD and its SUBSET variant)
against an independent oracle: a few lines that count free processors, take jobs by first
fit at their minimum sizes, give the leftover out (equally or by efficiency) and, for
SUBSET, choose the best-filling subset by brute force. The preemptive loop, with its
processor identities, claims and books, must give the same start, end and size for every
job of random moldable workloads."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from schedc.runtime.engine.policy import PreemptionRules, RuntimePolicy
from schedc.runtime.engine.preemptive import simulate_preemptive
from schedc.runtime.jobs import Job, Moldable
from schedc.runtime.speedup import Amdahl, Linear
from schedc.runtime.workloads.workload import Workload

CPUS = 8
FIRST_FIT = RuntimePolicy("rtc_ad", ("cpus",), (None,), depth=0, backfill="first_fit")


def oracle(jobs: list[Job], leftover: str, delta: int | None) -> dict[int, tuple[int, int, int]]:
    """Job id -> (start, end, size), by the disciplines' text (papers/003 section 5)."""
    pending = sorted(jobs, key=lambda j: (j.submit, j.index))
    arrived: list[Job] = []
    running: list[tuple[int, int]] = []  # (end, size)
    out: dict[int, tuple[int, int, int]] = {}
    times = sorted({j.submit for j in jobs})
    while times:
        now = times.pop(0)
        running = [(e, n) for e, n in running if e > now]
        arrived += [j for j in pending if j.submit == now]
        if not arrived:
            continue
        free = CPUS - sum(n for _, n in running)
        chosen, left = [], free
        for j in arrived:  # first fit at minimum sizes, in arrival order
            if j.min_procs <= left:
                chosen.append(j)
                left -= j.min_procs
        if delta is not None:
            in_system = len(arrived) + len(running)
            keep = max(0, (len(chosen) * delta - in_system) // delta)
            chosen = chosen[:keep]
            room = free - sum(j.min_procs for j in chosen)
            rest = [j for j in arrived if j not in chosen]
            # the fullest subset; among equally full ones, the one that leaves the last job
            # out if it can, then the one before... (the loop's subset sum drops a later
            # job whenever the total is made without it)
            subsets = [c for r in range(len(rest) + 1)
                       for c in itertools.combinations(range(len(rest)), r)
                       if sum(rest[i].min_procs for i in c) <= room]
            most = max(sum(rest[i].min_procs for i in c) for c in subsets)
            best = min((c for c in subsets if sum(rest[i].min_procs for i in c) == most),
                       key=lambda c: [i in c for i in reversed(range(len(rest)))])
            picked = {rest[i].index for i in best}
            chosen = [j for j in arrived if j in chosen or j.index in picked]
        sizes = {j.index: j.min_procs for j in chosen}
        spare = free - sum(sizes.values())
        while spare > 0:
            open_ = [j for j in chosen if sizes[j.index] < j.max_procs]
            if not open_:
                break
            if leftover == "equal":
                j = min(open_, key=lambda j: sizes[j.index])
            else:
                j = max(open_, key=lambda j: _efficiency(j, sizes[j.index] + 1))
            sizes[j.index] += 1
            spare -= 1
        for j in chosen:
            n = sizes[j.index]
            end = now + j.at_size(n).run_time
            out[j.id] = (now, end, n)
            running.append((end, n))
            times = sorted(set(times) | {end})
        arrived = [j for j in arrived if j not in chosen]
    return out


def _efficiency(job: Job, n: int) -> tuple[float, int]:
    m = job.moldable
    s = float(n) if m is None else m.speedup.speedup(n)
    return (s / n, -job.index)  # ties: the earlier job


@st.composite
def moldable_workloads(draw: st.DrawFn) -> list[Job]:
    jobs, t = [], 0
    for i in range(draw(st.integers(1, 9))):
        t += draw(st.integers(0, 8))
        low = draw(st.integers(1, CPUS))
        high = draw(st.integers(low, CPUS))
        procs = draw(st.integers(low, high))
        run = draw(st.integers(1, 40))
        speedup = draw(st.sampled_from((Linear(), Amdahl(0.2), Amdahl(0.6))))
        jobs.append(Job(i + 1, i, t, run, run, (procs,),
                        moldable=Moldable(low, high, speedup)))
    return jobs


def at_minimum(life, state) -> int:
    return life.job.min_procs


@settings(max_examples=150, deadline=None)
@given(moldable_workloads(), st.sampled_from(("equal", "efficient")),
       st.sampled_from((None, 1, 2, 5)))
def test_adaptive_run_to_completion_matches_the_oracle(jobs: list[Job], leftover: str,
                                                       delta: int | None) -> None:
    rules = PreemptionRules(select=True, size=at_minimum, leftover=leftover, subset=delta)
    run = simulate_preemptive(FIRST_FIT, rules, Workload(tuple(jobs), ("cpus",), (CPUS,)))
    got = {life.job.id: (life.segments[0].start, life.segments[-1].end, life.size)
           for life in run.lives}
    assert got == oracle(jobs, leftover, delta)
