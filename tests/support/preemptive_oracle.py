"""An exact reference for preemption by the order on one processor, written apart from
``runtime/engine/preemptive.py``: every job asks for the whole machine (one processor), costs
are 0, a preempted job is suspended and resumes where it stopped, and a pass chooses again
which one job runs.

A **pass** happens at an instant where something happens (a job arrives, the running job
completes, or the quantum expires) and some job waits; nothing else makes one. It puts every
active job in order by its key, then submit time, then file order; the first runs, and the
running job, if it is not that one, is preempted. With a quantum ``q``, a pass that leaves a
job waiting sets the quantum to expire at ``now + q``, unless an expiry is already due; an
expiry where no job waits makes no pass and sets none.

Keys read a ``Seen`` job: the seconds it ran so far, its preemptions, whether it holds the
processor, its estimate. The loop keeps time as whole seconds, and each step is one line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from attrs import frozen


@frozen
class OracleJob:
    id: int
    submit: int
    run: int  # seconds, at least 1
    estimate: int


@frozen
class Seen:
    """What a key reads of a job at a pass."""

    job: OracleJob
    ran: int  # seconds run so far, up to now
    preemptions: int
    running: bool  # it holds the processor now


@frozen
class OracleRun:
    runs: dict[int, tuple[tuple[int, int], ...]]  # per job id: its stretches [start, end)
    preemptions: dict[int, int]
    passes: int


Key = Callable[[Seen], object]


def least_attained(seen: Seen) -> object:
    return seen.ran


def shortest_remaining(seen: Seen) -> object:
    return seen.job.estimate - seen.ran


def turns(seen: Seen) -> object:
    """The turns it has begun: one per preemption, and the one it is having now."""
    return seen.preemptions + (1 if seen.running else 0)


def simulate(jobs: Sequence[OracleJob], key: Key, quantum: int | None = None) -> OracleRun:
    """``jobs`` (in file order) under the order ``key`` (the module's doc)."""
    order = {job.id: i for i, job in enumerate(jobs)}
    arrivals = sorted(jobs, key=lambda j: (j.submit, order[j.id]))
    ran = {job.id: 0 for job in jobs}
    preemptions = {job.id: 0 for job in jobs}
    runs: dict[int, list[tuple[int, int]]] = {job.id: [] for job in jobs}
    active: list[OracleJob] = []  # arrived, not completed
    running: OracleJob | None = None
    since = 0  # when the running job (re)started
    expiry: int | None = None
    passes, nxt, now = 0, 0, 0
    while nxt < len(arrivals) or active:
        times = []
        if nxt < len(arrivals):
            times.append(arrivals[nxt].submit)
        if running is not None:
            times.append(since + running.run - ran[running.id])
        if expiry is not None:
            times.append(expiry)
        now = min(times)
        if running is not None:  # its run up to now
            ran[running.id] += now - since
            since = now
        if running is not None and ran[running.id] == running.run:  # it completes
            runs[running.id].append((runs[running.id].pop()[0], now))
            active.remove(running)
            running = None
        if expiry == now:
            expiry = None
        while nxt < len(arrivals) and arrivals[nxt].submit == now:
            active.append(arrivals[nxt])
            nxt += 1
        if not [job for job in active if job is not running]:
            continue  # nothing waits: no pass
        passes += 1
        first = min(active, key=lambda job: (
            key(Seen(job, ran[job.id], preemptions[job.id], job is running)), job.submit,
            order[job.id]))
        if first is not running:
            if running is not None:  # preempted: its stretch ends now
                preemptions[running.id] += 1
                runs[running.id].append((runs[running.id].pop()[0], now))
            running, since = first, now
            runs[first.id].append((now, -1))  # its end is set when it stops
        if quantum is not None and expiry is None and len(active) > 1:
            expiry = now + quantum
    return OracleRun({i: tuple(r) for i, r in runs.items()}, preemptions, passes)
