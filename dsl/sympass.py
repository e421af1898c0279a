"""One scheduling pass of a compiled policy, encoded for Z3 over a bounded symbolic state.

The state: K resources with capacities, R running-job slots and N queued-job slots (a slot
may be empty, so every smaller state is covered too), the time ``now`` and the policy's
params over their domains. The pass is the simulator's (``runtime/simulator.py``; DESIGN,
"Rigid-job semantics") decision for decision:

* order: the policy's keys, then submit time, then file order (the slot index);
* walk in that order; with rigid sizes the walk stops once the free cpus are below every
  later request (nothing later can start; the simulator does the same);
* ``backfill none``: jobs start in order while each fits, the first that does not ends it;
* ``first_fit`` with depth D: a job starts if it fits now, for its whole estimate, in the
  profile of running jobs' estimated ends, the jobs started so far and the reservations made
  so far; otherwise, while fewer than D reservations exist, it is reserved at its earliest
  fit; ``when C``: after D reservations, a job starts if it fits the free resources now and
  C holds (the reservations are not consulted: that is what a verifier must catch).

Why the encoding is finite: usage only rises at reservation starts (running jobs only
release), so a window fits if it fits at its start and at each reservation start inside it;
and the earliest fit is ``now`` or a release time (a running job's, a started job's or a
reservation's end): if a job fits from a reservation start S but not from the release or
``now`` just before, it fails at a point before S whose usage ends at a release, and from
that release it fits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import z3
from attrs import frozen

from schedc.dsl import ir
from schedc.dsl.symbolic import FreshNames, Obligation, SymJob, SymState, sym_eval


@frozen
class Bounds:
    # 4 and 4 prove every example in about a second a property; at 8 and 8 the
    # reservation-safety lemmas of reserving policies exceed the default rlimit (open work).
    queued: int = 4  # N
    running: int = 4  # R


class Definitions:
    """The equations that define the pass's fresh terms, each tagged with the queue slot whose
    decision it defines (None: shared). A lemma about one job's step needs only that job's
    equations: the earlier decisions may stay free, which proves a stronger statement."""

    def __init__(self) -> None:
        self.items: list[tuple[object, z3.BoolRef]] = []
        self.current: object = None  # None, a slot, or ("exact", slot)

    def add(self, formula: z3.BoolRef) -> None:
        self.items.append((self.current, formula))

    def add_all(self, formulas: Sequence[z3.BoolRef]) -> None:
        for f in formulas:
            self.add(f)

    def all(self) -> list[z3.BoolRef]:
        return [f for _, f in self.items]

    def for_step(self, slot: int) -> list[z3.BoolRef]:
        return [f for tag, f in self.items if tag is None or tag == slot]


class Unsupported(Exception):
    """A policy feature the symbolic pass does not encode yet (the verdict is unknown)."""


@frozen
class Assumption:
    name: str  # shown in reports and unsat cores
    formula: z3.BoolRef


@frozen
class JobDecision:
    slot: int
    visited: z3.BoolRef
    started: z3.BoolRef
    reserved: z3.BoolRef
    reservation: z3.ArithRef  # meaningful when reserved
    alloc: tuple[z3.ArithRef, ...]  # per resource, what it gets if it starts


@frozen
class SymbolicPass:
    """The encoded pass: inputs, assumptions on them, and every decision."""

    policy: ir.Policy
    bounds: Bounds
    now: z3.ArithRef
    capacity: tuple[z3.ArithRef, ...]
    running: tuple[SymJob, ...]
    queue: tuple[SymJob, ...]
    params: dict[str, z3.ExprRef]
    assumptions: tuple[Assumption, ...]
    # Shared with ``evaluate``: evaluating more expressions (invariants) appends to them.
    definitions: Definitions  # what defines fresh terms (decisions, sqrt, ...)
    decisions: tuple[JobDecision, ...]  # by queue slot
    state_at: Callable[..., SymState]  # state_at(a, including=False): what job a's visit sees
    evaluate: Callable[..., z3.ExprRef]  # evaluate(expr, job, state, guard, size=None)
    reservations_hold: tuple[z3.BoolRef, ...]  # per slot: reserved -> still fits after
    used_after: tuple[z3.ArithRef, ...]  # per resource, after the pass
    profile_ok: Callable[[int], z3.BoolRef]  # the plan after s jobs never overcommits
    obligations: list[Obligation]  # partial operations met in the pass
    size_results: tuple[tuple[int, z3.ArithRef], ...]  # (slot, size) when a size formula exists
    uses_log: Callable[[], bool]



def _sum(terms) -> z3.ArithRef:
    terms = list(terms)
    return z3.Sum(terms) if terms else z3.IntVal(0)


def encode_pass(policy: ir.Policy, bounds: Bounds | None = None, *, idle: bool = False,
                depth_value: int | None | str = "policy") -> SymbolicPass:
    """Encode one pass of ``policy``. ``idle``: no running job (for the progress property)."""
    if policy.backfill.kind == "best":
        raise Unsupported("backfill `best` is not encoded for Z3 yet")
    bounds = bounds or Bounds()
    K = len(policy.machine.resources)
    N, R = bounds.queued, bounds.running
    fresh = FreshNames()
    assumptions: list[Assumption] = []

    def assume(name: str, formula) -> None:
        assumptions.append(Assumption(name, z3.simplify(z3.And(formula))
                                      if isinstance(formula, list) else formula))

    now = z3.Int("now")
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
    capacity_t = tuple(capacity)

    params = _params(policy, assume)
    depth = _depth(policy, params, depth_value)

    running = tuple(_job(f"run{r}", K, running=True) for r in range(R))
    queue = tuple(_job(f"q{q}", K, running=False) for q in range(N))
    _assume_jobs(running, queue, now, capacity_t, assume, idle)

    used0 = tuple(_sum(z3.If(r.present, r.request[k], 0) for r in running) for k in range(K))
    assume("the machine is not overcommitted before the pass",
           [used0[k] <= capacity_t[k] for k in range(K)])

    obligations: list[Obligation] = []
    definitions = Definitions()
    uses_log = False

    def evaluate(expr: ir.Expr, job: SymJob | None, state: SymState, guard: z3.BoolRef,
                 size: z3.ArithRef | None = None) -> z3.ExprRef:
        nonlocal uses_log
        result = sym_eval(expr, job=job, state=state, params=params, size=size, fresh=fresh)
        definitions.add_all(result.definitions)
        obligations.extend(
            Obligation(o.kind, z3.And(guard, o.guard), o.safe, o.span, o.text)
            for o in result.obligations)
        uses_log = uses_log or result.uses_log
        return result.value

    # -- order ----------------------------------------------------------------------------
    start_state = SymState(now=now, capacity=capacity_t, used=used0, queue=queue,
                           running=running)
    keys: list[list[tuple[z3.ExprRef, bool]]] = []
    for q, job in enumerate(queue):
        row = []
        for key in policy.order:
            value = evaluate(key.expr, job, start_state, job.present)
            if key.expr.type == "bool":
                value = z3.If(value, 1, 0)
            row.append((value, key.descending))
        row.append((job.submit, False))
        row.append((z3.IntVal(q), False))  # file order: a strict total order
        keys.append(row)

    # Without loss of generality the slots hold the queue in policy order: any queue can be
    # laid out so, with the file order of tied jobs kept, and nothing in the language reads
    # a slot's position. This keeps the pass free of a symbolic sort.
    def not_after(b: int, a: int) -> z3.BoolRef:
        """Slot b's key tuple is at most slot a's (lexicographic)."""
        result = z3.BoolVal(True)
        for (vb, desc), (va, _) in reversed(list(zip(keys[b][:-1], keys[a][:-1],
                                                     strict=True))):
            less = vb > va if desc else vb < va
            result = z3.Or(less, z3.And(vb == va, result))
        return result

    assume("queue slots hold the queue in policy order",
           [z3.Implies(queue[q + 1].present, not_after(q, q + 1)) for q in range(N - 1)])

    # -- the walk -------------------------------------------------------------------------
    # Per-job decisions are fresh variables tied by equations; each refers only to the jobs
    # before it (slots < a), so the equations have exactly one solution.
    started = [z3.Bool(f"started_{q}") for q in range(N)]
    reserved = [z3.Bool(f"reserved_{q}") for q in range(N)]
    res_time = [z3.Int(f"reservation_{q}") for q in range(N)]
    visited = [z3.Bool(f"visited_{q}") for q in range(N)]
    rigid = policy.size is None
    kind = policy.backfill.kind
    # Sizes are fresh variables (a size may read the state at the job's visit, which depends
    # on the sizes of the jobs before it).
    size_vars = [z3.Int(f"size_{q}") for q in range(N)]
    allocs = [queue[q].request if rigid else (size_vars[q], *queue[q].request[1:])
              for q in range(N)]
    # Use of each resource when the walk reaches slot a: before the pass, plus the earlier
    # starts. A fresh variable per visit keeps every later formula small.
    used_at = [[z3.Int(f"used_{k}_at_{a}") for k in range(K)] for a in range(N + 1)]
    for k in range(K):
        definitions.add(used_at[0][k] == used0[k])
        for a in range(N):
            definitions.add(
                used_at[a + 1][k] == used_at[a][k] + z3.If(started[a], allocs[a][k], 0))

    def state_at(a: int, including: bool = False) -> SymState:
        """What the policy sees when the walk reaches job a (``including``: right after a
        itself started, as invariants see it)."""
        gone = [started[b] if b < a else z3.BoolVal(including and b == a) for b in range(N)]
        used = tuple(used_at[a + 1 if including else a][k] for k in range(K))
        launched = tuple(
            SymJob(present=gone[b], id=queue[b].id, submit=queue[b].submit,
                   estimate=queue[b].estimate, request=allocs[b], start=now)
            for b in range(a + 1))
        member = tuple(z3.And(queue[b].present, z3.Not(gone[b])) for b in range(N))
        return SymState(now=now, capacity=capacity_t, used=used, queue=queue,
                        running=running + launched, queue_member=member)

    sizes: list[tuple[int, z3.ArithRef]] = []
    if not rigid:
        for q in range(N):
            definitions.current = q
            value = evaluate(policy.size, queue[q], state_at(q), visited[q])
            definitions.add(z3.Implies(queue[q].present, size_vars[q] == value))
            sizes.append((q, size_vars[q]))
        definitions.current = None

    def usage(a: int, k: int, t: z3.ArithRef, final: bool) -> z3.ArithRef:
        """Use of resource k at time t in the profile job a is tested against; ``final``:
        after the whole pass, every other job's start and reservation included."""
        terms = [z3.If(z3.And(r.present, r.start + r.estimate > t), r.request[k], 0)
                 for r in running]
        for b in (range(N) if final else range(a)):
            if b == a:
                continue
            terms.append(z3.If(z3.And(started[b], now + queue[b].estimate > t),
                               allocs[b][k], 0))
            terms.append(z3.If(z3.And(reserved[b], res_time[b] <= t,
                                      t < res_time[b] + queue[b].estimate), allocs[b][k], 0))
        return _sum(terms)

    def fits(a: int, t: z3.ArithRef, final: bool = False) -> z3.BoolRef:
        end = t + queue[a].estimate
        checks = []
        for k in range(K):
            checks.append(usage(a, k, t, final) + allocs[a][k] <= capacity_t[k])
            for b in (range(N) if final else range(a)):
                if b == a:
                    continue
                inside = z3.And(reserved[b], t < res_time[b], res_time[b] < end)
                checks.append(z3.Implies(
                    inside, usage(a, k, res_time[b], final) + allocs[a][k] <= capacity_t[k]))
        return z3.And(checks)

    def fits_physically(a: int) -> z3.BoolRef:
        return z3.And([used_at[a][k] + allocs[a][k] <= capacity_t[k] for k in range(K)])

    def below_depth(a: int) -> z3.BoolRef:
        if depth is None:
            return z3.BoolVal(True)
        return _sum(z3.If(reserved[b], 1, 0) for b in range(a)) < depth

    # The early stop of the rigid walk: at job a, free cpus below every request from a on.
    def stops_at(a: int) -> z3.BoolRef:
        free = capacity_t[0] - used_at[a][0]
        return z3.And(queue[a].present,
                      z3.And([z3.Implies(queue[b].present, free < allocs[b][0])
                              for b in range(a, N)]))

    stops = [z3.Bool(f"stops_{q}") for q in range(N)]
    for a in range(N):
        definitions.add(stops[a] == (stops_at(a) if rigid else z3.BoolVal(False)))
    for a in range(N):
        definitions.current = a
        job = queue[a]
        not_stopped = z3.Not(z3.Or(stops[: a + 1]))
        if kind == "none":
            blocked = z3.Or([z3.And(visited[b], z3.Not(started[b])) for b in range(a)])
            definitions.add(visited[a] == z3.And(job.present, not_stopped,
                                                    z3.Not(blocked)))
            definitions.add(started[a] == z3.And(visited[a], fits_physically(a)))
            definitions.add(z3.Not(reserved[a]))
            continue
        if kind == "first_fit":
            starts = fits(a, now)
        elif kind == "when":
            # evaluated, as in the simulator, only once the job fits the free resources
            condition = evaluate(policy.backfill.condition, job, state_at(a),
                                 z3.And(visited[a], z3.Not(below_depth(a)),
                                        fits_physically(a)))
            starts = z3.If(below_depth(a), fits(a, now), z3.And(fits_physically(a), condition))
        else:
            raise Unsupported(f"backfill `{kind}` is not encoded")
        # What a safety lemma needs of this job's step: a start fits, a reservation fits at
        # its time. Any decisions with these properties keep the plan safe, so lemmas leave
        # the exact decisions (tagged "exact" below) out and prove that stronger statement.
        definitions.add(z3.Implies(started[a], starts))
        definitions.add(z3.Implies(reserved[a], fits(a, res_time[a])))
        # Facts of every job's step that lemmas about later steps rely on (shared): only a
        # present job starts or is reserved, never both, and a reservation lies after now
        # (the job did not fit now).
        definitions.current = None
        definitions.add(z3.Implies(started[a], job.present))
        definitions.add(z3.Implies(reserved[a], z3.And(job.present, z3.Not(started[a]),
                                                       res_time[a] > now)))
        definitions.current = ("exact", a)
        definitions.add(visited[a] == z3.And(job.present, not_stopped))
        definitions.add(started[a] == z3.And(visited[a], starts))
        definitions.add(reserved[a] == z3.And(visited[a], z3.Not(started[a]),
                                              below_depth(a)))
        # The reservation: the least candidate time (now or a release) at which a fits.
        candidates: list[tuple[z3.BoolRef, z3.ArithRef]] = [(z3.BoolVal(True), now)]
        candidates += [(r.present, r.start + r.estimate) for r in running]
        for b in range(a):
            candidates.append((started[b], now + queue[b].estimate))
            candidates.append((reserved[b], res_time[b] + queue[b].estimate))
        fitting = [(z3.And(valid, t >= now, fits(a, t)), t) for valid, t in candidates]
        definitions.add(z3.Implies(
            reserved[a], z3.Or([z3.And(ok, res_time[a] == t) for ok, t in fitting])))
        definitions.add(z3.Implies(
            reserved[a], z3.And([z3.Implies(ok, res_time[a] <= t) for ok, t in fitting])))

    definitions.current = None
    decisions = tuple(
        JobDecision(q, visited[q], started[q], reserved[q], res_time[q], allocs[q])
        for q in range(N))
    def profile_ok(s: int) -> z3.BoolRef:
        """The plan after the first s jobs of the walk (running jobs, starts, reservations)
        never exceeds a capacity. Use rises only at ``now`` and at reservation starts, so
        checking those points covers all time."""
        points = [(z3.BoolVal(True), now)] + [(reserved[b], res_time[b]) for b in range(s)]
        checks = []
        for k in range(K):
            for when, p in points:
                terms = [z3.If(z3.And(r.present, r.start + r.estimate > p), r.request[k], 0)
                         for r in running]
                for b in range(s):
                    terms.append(z3.If(z3.And(started[b], now + queue[b].estimate > p),
                                       allocs[b][k], 0))
                    terms.append(z3.If(z3.And(reserved[b], res_time[b] <= p,
                                              p < res_time[b] + queue[b].estimate),
                                       allocs[b][k], 0))
                checks.append(z3.Implies(when, _sum(terms) <= capacity_t[k]))
        return z3.And(checks)

    # After the whole pass, each reservation still fits beside every start and every other
    # reservation: no job started in the pass delayed it.
    reservations_hold = tuple(z3.Implies(reserved[a], fits(a, res_time[a], final=True))
                              for a in range(N)) if kind != "none" else ()
    return SymbolicPass(policy=policy, bounds=bounds, now=now, capacity=capacity_t,
                        running=running, queue=queue, params=params,
                        assumptions=tuple(assumptions), definitions=definitions,
                        decisions=decisions, state_at=state_at, evaluate=evaluate,
                        reservations_hold=reservations_hold, used_after=tuple(used_at[N]),
                        profile_ok=profile_ok,
                        obligations=obligations, size_results=tuple(sizes),
                        uses_log=lambda: uses_log)


def _job(prefix: str, K: int, running: bool) -> SymJob:
    return SymJob(
        present=z3.Bool(f"{prefix}_present"),
        id=z3.Int(f"{prefix}_id"),
        submit=z3.Int(f"{prefix}_submit"),
        estimate=z3.Int(f"{prefix}_estimate"),
        request=tuple(z3.Int(f"{prefix}_request{k}") for k in range(K)),
        start=z3.Int(f"{prefix}_start") if running else None,
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
        assume("running jobs started by now and end after it (they are killed at their "
               "estimate)",
               z3.Implies(r.present, z3.And(r.submit >= 0, r.submit <= r.start,
                                            r.start <= now, now < r.start + r.estimate)))
    for j in (*running, *queue):
        assume("estimates are at least 1 s", z3.Implies(j.present, j.estimate >= 1))
        assume("requests lie in [0, capacity], cpus at least 1",
               z3.Implies(j.present, z3.And(
                   [j.request[0] >= 1] + [z3.And(j.request[k] >= 0, j.request[k] <= capacity[k])
                                          for k in range(K)])))
        assume("ids are not negative", z3.Implies(j.present, j.id >= 0))
    for q in queue:
        assume("queued jobs were submitted by now",
               z3.Implies(q.present, z3.And(q.submit >= 0, q.submit <= now)))
    jobs = [*running, *queue]
    assume("job ids are distinct",
           [z3.Implies(z3.And(x.present, y.present), x.id != y.id)
            for i, x in enumerate(jobs) for y in jobs[i + 1:]])


def _params(policy: ir.Policy, assume) -> dict[str, z3.ExprRef]:
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
            assume(f"param `{p.name}` lies in [{p.lo}, {p.hi}]", bounds)
    return out


def _depth(policy: ir.Policy, params: dict[str, z3.ExprRef],
           override: int | None | str) -> int | None | z3.ArithRef:
    if override != "policy":
        return override  # type: ignore[return-value]
    if isinstance(policy.depth, ir.ParamRef):
        return params[policy.depth.name]
    return policy.depth
