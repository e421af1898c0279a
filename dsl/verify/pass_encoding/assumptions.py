"""The symbolic state a pass starts from, and what every such state satisfies: time,
capacities, params, speeds, the running and queued job slots, the queue's further jobs and
the use before the pass. Twin: what ``runtime/workloads/assumptions.py`` checks of a state
file before a counterexample is replayed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import z3

from schedc.dsl import ir
from schedc.dsl.number_text import show
from schedc.dsl.params import depth_param
from schedc.dsl.verify.budget import check as in_time
from schedc.dsl.verify.pass_encoding.order import OrderSteps
from schedc.dsl.verify.pass_encoding.state import z3_sum
from schedc.dsl.verify.symbolic import ParamTerms, QueueTail, SymJob


class InputSteps(OrderSteps):
    """The inputs and the assumptions on them."""

    def inputs(self) -> None:
        """The symbolic state: time, capacities, params, speeds, job slots, the queue's tail
        and the use before the pass, with what every state satisfies."""
        policy, K, assume = self.policy, self.K, self.assume
        now = self.now = z3.Int("now")
        assume("time is not negative", now >= 0)
        capacity = []
        for k, res in enumerate(policy.machine.resources):
            if res.capacity is not None:
                capacity.append(z3.IntVal(res.capacity))
            else:
                c = z3.Int(f"capacity_{res.name}")
                capacity.append(c)
                assume(f"capacity of `{res.name}` is at least 1", c >= 1)
            del k
        capacity_t = self.capacity = tuple(capacity)

        self.params = param_terms(policy, assume)
        self.depth = _depth(policy, self.params, self.depth_value)

        # The processors' speeds and available power (papers/002), per resource: any positive
        # speeds, any background load below 100% (power in (0, bpu]); read only if the policy
        # does
        self.bpu = self.power = None
        if _reads_speeds(policy):
            self.bpu = tuple(z3.Real(f"bpu_{r.name}") for r in policy.machine.resources)
            self.power = tuple(z3.Real(f"power_{r.name}") for r in policy.machine.resources)
            for r, b, p in zip(policy.machine.resources, self.bpu, self.power, strict=True):
                assume(f"`{r.name}` has speed and available power, 0 < power <= bpu",
                       [b > 0, p > 0, p <= b])

        # labels (user, group, ...) only if some formula reads them: no variables for nothing
        labels = self.labels = ir.labels_read(policy)
        running = self.running = tuple(_job(f"run{r}", K, True, labels) for r in range(self.R))
        queue = self.queue = tuple(_job(f"q{q}", K, False, labels) for q in range(self.N))
        _assume_jobs(running, queue, now, capacity_t, assume, self.idle)
        self.queue_tail = None
        self.tail_copy = None
        if _reads_queue(policy):
            tail_count = z3.Int("queue_tail")
            assume("any number of further jobs wait after the slots in the policy's order",
                   tail_count >= 0)
            made = iter(range(1 << 30))

            def other_id(job: SymJob) -> list[z3.BoolRef]:
                """A further job's id is none of the slots' (ids are distinct)."""
                return [z3.Implies(x.present, job.id != x.id) for x in (*running, *queue)]

            def template() -> tuple[SymJob, z3.BoolRef]:
                job = _job(f"{self.fresh.prefix}tail{next(made)}", K, False, labels)
                return job, z3.And(*_queued_ok(job, now, capacity_t), *other_id(job),
                                   *self.after_slots(job))

            if self.tail == "copies":
                tail_copy = self.tail_copy = _job("tail", K, False, labels)
                assume("the further jobs are copies of one rigid queued job",
                       z3.Implies(tail_count >= 1, z3.And(
                           *_queued_ok(tail_copy, now, capacity_t), *other_id(tail_copy),
                           z3.Not(tail_copy.moldable))))
            self.queue_tail = QueueTail(tail_count, template, self.tail_copy)

        # What each running job holds: its request, except the cpus of a rigid job a size
        # rule started on another size (formulas still read its request: the simulator's
        # RunningJob keeps the job as submitted); a moldable one runs as a job of its size
        if self.resized:
            self.held = tuple((z3.Int(f"run{r}_holds"), *job.request[1:])
                              for r, job in enumerate(running))
            assume("a running job holds its request, or, rigid and sized by a size rule, "
                   "a size in [1, capacity]",
                   [z3.Implies(job.present, z3.If(
                       job.moldable, held[0] == job.request[0],
                       z3.And(held[0] >= 1, held[0] <= capacity_t[0])))
                    for job, held in zip(running, self.held, strict=True)])
        else:
            self.held = tuple(job.request for job in running)
        self.used0 = tuple(z3_sum(z3.If(r.present, held[k], 0)
                                for r, held in zip(running, self.held, strict=True))
                           for k in range(K))
        assume("the machine is not overcommitted before the pass",
               [self.used0[k] <= capacity_t[k] for k in range(K)])


def _reads_queue(policy: ir.Policy) -> bool:
    """Some formula aggregates over the queue or reads its length."""
    exprs = ir.decision_exprs(policy) + [i.expr for i in policy.invariants]
    return any(isinstance(n, ir.Aggregate) and n.domain == "queue"
               or isinstance(n, ir.StateAttr) and n.attr == "queue.count"
               for e in exprs for n in ir.walk(e))


def _queued_ok(j: SymJob, now: z3.ArithRef, capacity: Sequence[z3.ArithRef]
               ) -> list[z3.BoolRef]:
    """What every queued job satisfies (``_assume_jobs``' assumptions of one job)."""
    K = len(capacity)
    return [j.present, j.estimate >= 1, j.request[0] >= 1, j.id >= 0,
            *(z3.And(j.request[k] >= 0, j.request[k] <= capacity[k]) for k in range(K)),
            z3.If(j.moldable,
                  z3.And(j.min_size >= 1, j.min_size <= j.request[0],
                         j.request[0] <= j.max_size, j.max_size <= capacity[0]),
                  z3.And(j.min_size == j.request[0], j.max_size == j.request[0])),
            z3.Implies(j.moldable, z3.And(j.work >= 1, z3.Implies(j.request[0] == 1,
                                                                   j.work == j.estimate))),
            j.submit >= 0, j.submit <= now, *(v >= -1 for v in j.labels.values())]


def _reads_speeds(policy: ir.Policy) -> bool:
    exprs = ir.decision_exprs(policy) + [i.expr for i in policy.invariants]
    return any(isinstance(n, ir.MachineAttr | ir.ResourceAttr) and n.attr in ("bpu", "power")
               for e in exprs for n in ir.walk(e))


def _job(prefix: str, K: int, running: bool, labels: Sequence[str] = ()) -> SymJob:
    return SymJob(
        present=z3.Bool(f"{prefix}_present"),
        id=z3.Int(f"{prefix}_id"),
        submit=z3.Int(f"{prefix}_submit"),
        estimate=z3.Int(f"{prefix}_estimate"),
        request=tuple(z3.Int(f"{prefix}_request{k}") for k in range(K)),
        start=z3.Int(f"{prefix}_start") if running else None,
        moldable=z3.Bool(f"{prefix}_moldable"),
        min_size=z3.Int(f"{prefix}_min_size"),
        max_size=z3.Int(f"{prefix}_max_size"),
        work=z3.Int(f"{prefix}_work"),
        labels={a: z3.Int(f"{prefix}_{a}") for a in labels},
    )


def _assume_jobs(running: Sequence[SymJob], queue: Sequence[SymJob], now, capacity,
                 assume: Callable[[str, Any], None], idle: bool) -> None:
    K = len(capacity)
    # Empty slots come last: every state with fewer jobs is covered once.
    assume("empty job slots come last",
           [z3.Implies(s[i + 1].present, s[i].present)
            for s in (running, queue) for i in range(len(s) - 1)])
    if idle:
        assume("the machine is idle", [z3.Not(r.present) for r in running])
        assume("the queue is not empty", queue[0].present)
    for r in running:
        # every `--overrun` mode: killed at the estimate, the estimate raised to the run, or
        # (extend) an overdue job planned to end a second from now (Machine.extend_overdue)
        assume("running jobs started by now and are planned to end after it",
               z3.Implies(r.present, z3.And(r.submit >= 0, r.submit <= r.start,
                                            r.start <= now, now < r.start + r.estimate)))
    for j in (*running, *queue):
        assume("estimates are at least 1 s", z3.Implies(j.present, j.estimate >= 1))
        assume("requests lie in [0, capacity], cpus at least 1",
               z3.Implies(j.present, z3.And(
                   [j.request[0] >= 1] + [z3.And(j.request[k] >= 0, j.request[k] <= capacity[k])
                                          for k in range(K)])))
        assume("ids are not negative", z3.Implies(j.present, j.id >= 0))
        if j.labels:
            assume("users, groups, executables, queues and partitions are at least -1 "
                   "(unknown)", z3.Implies(j.present, z3.And([v >= -1
                                                             for v in j.labels.values()])))
        assume("a moldable job's sizes lie in [1, capacity] around its request, a rigid "
               "job's are its request",
               z3.Implies(j.present, z3.If(
                   j.moldable,
                   z3.And(j.min_size >= 1, j.min_size <= j.request[0],
                          j.request[0] <= j.max_size, j.max_size <= capacity[0]),
                   z3.And(j.min_size == j.request[0], j.max_size == j.request[0]))))
        assume("a moldable job's sequential time is at least 1 s, its estimate if it asks "
               "for 1 cpu",
               z3.Implies(z3.And(j.present, j.moldable), z3.And(
                   j.work >= 1, z3.Implies(j.request[0] == 1, j.work == j.estimate))))
    for q in queue:
        assume("queued jobs were submitted by now",
               z3.Implies(q.present, z3.And(q.submit >= 0, q.submit <= now)))
    jobs = [*running, *queue]
    distinct: list[z3.BoolRef] = []
    for i, x in enumerate(jobs):
        in_time()  # pairs of slots: half a second of Python at N = R = 64
        distinct += [z3.Implies(z3.And(x.present, y.present), x.id != y.id)
                     for y in jobs[i + 1:]]
    assume("job ids are distinct", distinct)


def param_terms(policy: ir.Policy, assume) -> ParamTerms:
    """A term per param of ``policy`` (its name), each within its declared domain (told to
    ``assume``), and the domains for the range analysis."""
    out: dict[str, z3.ExprRef] = {}
    for p in policy.params:
        var = {"int": z3.Int, "real": z3.Real, "bool": z3.Bool}[p.type](f"param_{p.name}")
        out[p.name] = var
        bounds = []
        if p.lo is not None:
            bounds.append(var >= p.lo)
        if p.hi is not None:
            bounds.append(var <= p.hi)
        if bounds:
            assume(f"param `{p.name}` lies in [{show(p.lo)}, {show(p.hi)}]", bounds)
        elif p.name == depth_param(policy):  # `run` rejects a negative depth (dsl/params.py)
            assume(f"param `{p.name}` is a reservation depth: at least 0", [var >= 0])
    # the domains, for the range analysis of formulas (dsl/verify/ranges.py)
    domains = {p.name: (None if p.lo is None else Fraction(p.lo),
                        None if p.hi is None else Fraction(p.hi))
               for p in policy.params if p.type != "bool"}
    return ParamTerms(out, domains)


def _depth(policy: ir.Policy, params: dict[str, z3.ExprRef],
           override: int | None | str) -> int | None | z3.ArithRef:
    if override != "policy":
        return override  # type: ignore[return-value]
    if isinstance(policy.depth, ir.ParamRef):
        return params[policy.depth.name]
    return policy.depth
