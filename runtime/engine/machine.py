"""The machine and its queue during a simulation: what a pass reads and changes.

Per-event work stays proportional to what changed: running jobs are kept sorted by expected
end (bisect), real ends in a heap; the queue is kept in policy order with its keys. A pass
(``walk.py``) plans on a ``Machine``; ``copy`` gives a pass its own machine to plan on
without side effects (jobs are frozen, so only the lists are copied).
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort
from collections import defaultdict
from typing import Any

from attrs import evolve

from schedc.runtime.engine.cluster import ClusterState, wall_time
from schedc.runtime.engine.policy import PassState
from schedc.runtime.jobs import Job, RunningJob


def timed(job: Job, req: tuple[int, ...]) -> Job:
    """The job with the run time and estimate it has on ``req``'s cpus: a moldable job's
    follow its speedup; a rigid job keeps its own whatever a size rule gives it."""
    return job if job.moldable is None else job.at_size(req[0])


class Machine:
    """Capacities and use, running jobs, the end heap, the queue, and every job's record."""

    __slots__ = ("cap", "K", "M", "rigid", "used", "running", "run_keys", "heap", "holder",
                 "queue", "qkeys", "keyof", "qprocs", "starts", "allocs", "fixed_sizes",
                 "cluster", "run_times", "view")

    def __init__(self, cap: tuple[int, ...], n_jobs: int, rigid: bool,
                 cluster: ClusterState | None = None) -> None:
        self.cap = cap
        self.K = len(cap)
        self.rigid = rigid  # sizes are the requests: ``qprocs`` is kept
        # Time-and-index keys packed in one int (t * M + index): int compares beat tuples.
        self.M = M = n_jobs + 1
        self.used = [0] * self.K
        self.running: list[RunningJob] = []  # sorted by (expected end, index)
        self.run_keys: list[int] = []  # expected end * M + index, parallel to running
        self.heap: list[int] = []  # real end * M + index
        self.holder: list[RunningJob | None] = [None] * M  # index -> its RunningJob
        self.queue: list[Job] = []  # policy order
        self.qkeys: list[Any] = []  # submit * M + index for FCFS, else key + (submit, index)
        self.keyof: list[Any] = [None] * M  # index -> its queue key
        self.qprocs: list[int] = []  # sorted cpus requests of the queue (rigid sizes)
        self.starts: list[int] = [-1] * n_jobs
        self.allocs: list[tuple[int, ...]] = [()] * n_jobs
        # `size fixed`: job index -> the allocation chosen at its first visit
        self.fixed_sizes: dict[int, tuple[int, ...]] = {}
        self.cluster = cluster
        self.run_times: list[int] = [0] * n_jobs if cluster is not None else []
        # What the policy's formulas read (the language's PassState): it shares the lists.
        self.view = PassState(now=0, queue=self.queue, running=self.running, capacity=cap,
                              used=self.used)
        if cluster is not None:
            self.view.bpu[0] = cluster.total_bpu
            self.view.power[0] = cluster.total_power

    def copy(self) -> Machine:
        """The same state, with lists of its own: launching, finishing or queueing on the
        copy leaves this machine untouched. Jobs and running records are shared (frozen)."""
        new = Machine.__new__(Machine)
        new.cap, new.K, new.M, new.rigid = self.cap, self.K, self.M, self.rigid
        new.used = list(self.used)
        new.running = list(self.running)
        new.run_keys = list(self.run_keys)
        new.heap = list(self.heap)
        new.holder = list(self.holder)
        new.queue = list(self.queue)
        new.qkeys = list(self.qkeys)
        new.keyof = list(self.keyof)
        new.qprocs = list(self.qprocs)
        new.starts = list(self.starts)
        new.allocs = list(self.allocs)
        new.fixed_sizes = dict(self.fixed_sizes)
        new.cluster = None if self.cluster is None else self.cluster.copy()
        new.run_times = list(self.run_times)
        v = self.view
        new.view = PassState(now=v.now, queue=new.queue, running=new.running,
                             capacity=v.capacity, used=new.used, bpu=list(v.bpu),
                             power=list(v.power))
        return new

    def plan_copy(self) -> Machine:
        """A copy for one planning pass (papers/001's self-tuning step): the state a pass
        reads and writes, without the per-job lists as long as the whole workload. The
        per-job records (holder, starts, allocs, keyof) become dicts holding the queued
        and running jobs only, read as the lists are for them (any other job reads as not
        started: -1, ``()``, None), so the copy costs O(queue + running), not O(workload)."""
        new = Machine.__new__(Machine)
        new.cap, new.K, new.M, new.rigid = self.cap, self.K, self.M, self.rigid
        new.used = list(self.used)
        new.running = list(self.running)
        new.run_keys = list(self.run_keys)
        new.heap = list(self.heap)
        new.holder = defaultdict(_none, {rj.job.index: rj for rj in self.running})  # type: ignore[assignment]
        new.queue = list(self.queue)
        new.qkeys = list(self.qkeys)
        keyof = self.keyof
        new.keyof = defaultdict(_none, {j.index: keyof[j.index] for j in self.queue})  # type: ignore[assignment]
        new.qprocs = list(self.qprocs)
        running = [rj.job.index for rj in self.running]
        new.starts = defaultdict(_unstarted, {i: self.starts[i] for i in running})  # type: ignore[assignment]
        new.allocs = defaultdict(tuple, {i: self.allocs[i] for i in running})  # type: ignore[assignment]
        new.fixed_sizes = dict(self.fixed_sizes)
        new.cluster = None if self.cluster is None else self.cluster.copy()
        new.run_times = defaultdict(int) if self.cluster is not None else []  # type: ignore[assignment]
        v = self.view
        new.view = PassState(now=v.now, queue=new.queue, running=new.running,
                             capacity=v.capacity, used=new.used, bpu=list(v.bpu),
                             power=list(v.power))
        return new

    def launch(self, job: Job, req: tuple[int, ...], now: int) -> None:
        """Start ``job`` on ``req`` at ``now``: running list, end heap, usage, the record."""
        job = timed(job, req)
        if self.cluster is not None:  # times scale by the power of the processors it gets
            power = self.cluster.take(job.index, req[0])
            job = evolve(job, run_time=wall_time(job.run_time, req[0], power),
                         estimate=wall_time(job.estimate, req[0], power))
            self.run_times[job.index] = job.run_time
        rj = RunningJob(job, now, req)
        M = self.M
        idx = job.index
        key = (now + job.estimate) * M + idx
        i = bisect_left(self.run_keys, key)
        self.run_keys.insert(i, key)
        self.running.insert(i, rj)
        heapq.heappush(self.heap, (now + job.run_time) * M + idx)
        self.holder[idx] = rj
        used = self.used
        for k, r in enumerate(req):
            used[k] += r
        self.starts[idx] = now
        self.allocs[idx] = req

    def finish(self, index: int) -> None:
        """Job ``index`` ends (its end was popped from the heap): it frees its resources."""
        rj = self.holder[index]
        assert rj is not None
        self.holder[index] = None
        if self.cluster is not None:
            self.cluster.release(index)
        i = bisect_left(self.run_keys, rj.expected_end * self.M + index)
        del self.running[i], self.run_keys[i]
        for k, a in enumerate(rj.alloc):
            self.used[k] -= a

    def extend_overdue(self, now: int) -> bool:
        """Running jobs past their estimate (`--overrun extend`) are planned to end at
        ``now + 1``, the least they can still run: their estimate is raised to that. Every
        pass then plans on running jobs that end after ``now`` (what the proofs assume), and
        no pass frees resources a job still holds. True if some job was moved."""
        keys, M = self.run_keys, self.M
        cut = bisect_left(keys, (now + 1) * M)  # expected end <= now
        if not cut:
            return False
        overdue = self.running[:cut]
        del self.running[:cut], keys[:cut]
        for rj in overdue:
            moved = RunningJob(evolve(rj.job, estimate=now + 1 - rj.start), rj.start, rj.alloc)
            self.holder[rj.job.index] = moved
            key = (now + 1) * M + rj.job.index
            i = bisect_left(keys, key)
            keys.insert(i, key)
            self.running.insert(i, moved)
        return True

    def enqueue(self, job: Job, key: Any, old: int) -> bool:
        """Queue ``job`` with ``key``; True if it lands after the ``old`` jobs that were
        queued before."""
        qkeys = self.qkeys
        # FCFS arrivals come in key order: append without a search
        pos = len(qkeys) if not qkeys or qkeys[-1] <= key else bisect_left(qkeys, key)
        self.keyof[job.index] = key
        qkeys.insert(pos, key)
        self.queue.insert(pos, job)
        if self.rigid:
            insort(self.qprocs, job.procs)
        return pos >= old

    def reorder(self, pairs: list[tuple[Any, Job]]) -> None:
        """The queue anew, as (key, job) pairs sorted by key (a dynamic order)."""
        self.qkeys[:] = [k for k, _ in pairs]
        self.queue[:] = [j for _, j in pairs]
        for k, j in pairs:
            self.keyof[j.index] = k

    def unqueue(self, job: Job) -> None:
        """Remove a started job from the queue at once (formulas read an exact queue)."""
        i = bisect_left(self.qkeys, self.keyof[job.index])
        del self.queue[i], self.qkeys[i]

    def unqueue_started(self, started: list[Job], queue_too: bool) -> None:
        """After a pass: drop its started jobs from the sorted requests and, ``queue_too``
        (not already done by ``unqueue``), from the queue, last position first."""
        if queue_too:
            qkeys, keyof, queue = self.qkeys, self.keyof, self.queue
            for i in sorted((bisect_left(qkeys, keyof[j.index]) for j in started),
                            reverse=True):
                del queue[i], qkeys[i]
        if self.rigid:
            qprocs = self.qprocs
            for job in started:
                del qprocs[bisect_left(qprocs, job.procs)]

    def free(self) -> list[int]:
        """Free resources now, per resource."""
        return [c - u for c, u in zip(self.cap, self.used, strict=True)]

    def nothing_fits(self) -> bool:
        """Rigid sizes: the free cpus are below the smallest request queued, so no pass can
        start anything (and a pass that starts nothing changes nothing)."""
        return self.rigid and self.cap[0] - self.used[0] < self.qprocs[0]


def _none() -> None:
    return None


def _unstarted() -> int:
    return -1
