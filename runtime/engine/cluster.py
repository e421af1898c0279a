"""A heterogeneous, non-dedicated cluster (papers/002, Chhabra & Singh, section 5).

Each processor has a speed in basic processor units (BPU) and a background load: the
fraction of it that local, sequential jobs take. Its computing power for parallel jobs is
BPU x (1 - load) (eq. 6). The loads are drawn uniformly in [0, max_load] for every processor
when the run starts and again at every instant with an arrival or a departure (the paper's
scheduler collects them at those times), from a seeded generator: the same seed gives the
same loads.

How a job's time follows (the paper leaves it abstract; this is our model): a job's run time
and estimate on n cpus are its times on n dedicated 1-BPU processors (a moldable job's follow
its speedup model). Started on processors P with powers c_k, it runs faster or slower by
their mean power: wall time = ceil(time x n / sum(c_k)). Its tasks are equal and each
processor's power is the one seen at the start: a running job keeps its speed when the loads
are redrawn (only later starts, and the policy's view of the machine, see new loads). The
job gets the n idle processors of most power now (ties: the lower processor number). With
the paper's demand d on Pmax 1-BPU cpus and linear speedup (``schedc workload generate``),
the wall time is d / sum(c_k).

A job's wall time is known only once its processors are chosen, so plans made before that
(reservations) cannot hold: the simulator runs these machines only with policies that make
no reservation.
"""

from __future__ import annotations

import math
import random
import re

from attrs import frozen

_PART = re.compile(r"\s*(\d+)\s*x\s*(\d+(?:\.\d+)?)\s*")


class ClusterError(ValueError):
    def __init__(self, message: str, help: str | None = None) -> None:
        super().__init__(message)
        self.help = help


@frozen
class Cluster:
    """The processors of the machine's cpus resource (in processor order) and the range of
    their background load."""

    speeds: tuple[float, ...]  # BPU of each processor
    max_load: float = 0.0  # loads uniform in [0, max_load], 0 <= max_load < 1
    seed: int = 0

    def __attrs_post_init__(self) -> None:
        if not self.speeds:
            raise ClusterError("a cluster needs at least one processor")
        if any(not (math.isfinite(s) and s > 0) for s in self.speeds):
            raise ClusterError("every processor speed must be a positive number of BPU")
        if not 0 <= self.max_load < 1:
            raise ClusterError(f"background load {self.max_load} is not in [0, 1)",
                               "give the largest fraction of a processor local jobs take, "
                               "e.g. 0.3")

    def describe(self) -> str:
        groups: list[list[float]] = []
        for s in self.speeds:
            if groups and groups[-1][1] == s:
                groups[-1][0] += 1
            else:
                groups.append([1, s])
        text = " + ".join(f"{int(n)} x {_number(s)} BPU" for n, s in groups)
        return text + (f", load U(0, {_number(self.max_load)})" if self.max_load else "")


def _number(x: float) -> str:
    return f"{x:g}"


def parse_speeds(text: str) -> tuple[float, ...]:
    """`32x1,32x2`: 32 processors of 1 BPU, then 32 of 2 BPU."""
    speeds: list[float] = []
    for part in text.split(","):
        m = _PART.fullmatch(part)
        if m is None or int(m.group(1)) < 1 or float(m.group(2)) <= 0:
            raise ClusterError(f"bad processor group {part.strip()!r} in {text!r}",
                               "write COUNTxBPU groups separated by commas, e.g. 32x1,32x2")
        speeds += [float(m.group(2))] * int(m.group(1))
    return tuple(speeds)


class ClusterState:
    """The processors during a run: their loads, which are idle, who holds which."""

    __slots__ = ("cluster", "rng", "loads", "power", "idle", "held", "given")

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.rng = random.Random(cluster.seed)
        self.loads = [0.0] * len(cluster.speeds)
        self.power = list(cluster.speeds)
        self.idle = set(range(len(cluster.speeds)))
        self.held: dict[int, tuple[int, ...]] = {}  # job index -> its processors
        # every job's processors, kept after it ends: the run's `Schedule.processors`
        # (None on copies: a planning copy's choices are not the run's)
        self.given: dict[int, tuple[int, ...]] | None = {}
        self.refresh()

    def refresh(self) -> None:
        """Draw every processor's background load anew (one draw each, in processor
        order), as at an arrival or a departure."""
        high = self.cluster.max_load
        if high == 0:
            return
        uniform = self.rng.uniform
        self.loads = [uniform(0.0, high) for _ in self.cluster.speeds]
        self.power = [s * (1.0 - x) for s, x in zip(self.cluster.speeds, self.loads,
                                                      strict=True)]

    @property
    def total_bpu(self) -> float:
        return math.fsum(self.cluster.speeds)

    @property
    def total_power(self) -> float:
        return math.fsum(self.power)

    def take(self, job_index: int, n: int) -> float:
        """Give the job the n idle processors of most power; return their summed power."""
        power = self.power
        chosen = sorted(self.idle, key=lambda k: (-power[k], k))[:n]
        assert len(chosen) == n, "the simulator allocates only what is idle"
        self.idle.difference_update(chosen)
        self.held[job_index] = tuple(chosen)
        if self.given is not None:
            self.given[job_index] = tuple(sorted(chosen))
        return math.fsum(power[k] for k in chosen)

    def release(self, job_index: int) -> None:
        self.idle.update(self.held.pop(job_index))

    def copy(self) -> ClusterState:
        """The same processors, loads and random stream, changed independently."""
        new = ClusterState.__new__(ClusterState)
        new.cluster = self.cluster
        new.rng = random.Random()
        new.rng.setstate(self.rng.getstate())
        new.loads = list(self.loads)
        new.power = list(self.power)
        new.idle = set(self.idle)
        new.held = dict(self.held)
        new.given = None
        return new


def wall_time(time: int, n: int, power: float) -> int:
    """A job's time on n dedicated 1-BPU processors, on processors of summed ``power``:
    whole seconds, rounded up (a zero time stays zero)."""
    if time == 0:
        return 0
    return max(1, math.ceil(time * n / power - 1e-9))


def check_fits(cluster: Cluster, capacity: int) -> None:
    if len(cluster.speeds) != capacity:
        raise ClusterError(f"the cluster has {len(cluster.speeds)} processors but the machine "
                           f"{capacity} cpus",
                           "give as many processor speeds as cpus (e.g. --capacity cpus=64)")

