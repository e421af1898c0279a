"""The plan a pass builds: the decisions' terms, the use of each resource at its
checkpoints after each step (``now`` and every reservation start), the fit tests on it and
the states the policy sees. Twin: the profile ``PassWalk`` plans on (runtime/engine/walk.py,
``fits_now`` and ``start``)."""

from __future__ import annotations

from collections.abc import Sequence

import z3

from schedc.dsl.verify.budget import check as in_time
from schedc.dsl.verify.pass_encoding.assumptions import InputSteps
from schedc.dsl.verify.pass_encoding.record import SizedEstimate
from schedc.dsl.verify.pass_encoding.state import Terms, z3_sum
from schedc.dsl.verify.symbolic import SymJob, SymState


class PlanSteps(InputSteps):
    """The decisions' terms and the plan's use, and what is checked on them."""

    def declare(self) -> None:
        """The decisions' fresh variables and the plan's use at its checkpoints. Per-job
        decisions are fresh variables tied by equations; each refers only to the jobs
        before it (slots < a), so the equations have exactly one solution."""
        N, K, policy, definitions = self.N, self.K, self.policy, self.definitions
        self.started_walk = [z3.Bool(f"started_{q}") for q in range(N)]
        self.reserved = [z3.Bool(f"reserved_{q}") for q in range(N)]
        self.res_time = [z3.Int(f"reservation_{q}") for q in range(N)]
        self.visited = [z3.Bool(f"visited_{q}") for q in range(N)]
        self.rigid = policy.size is None
        self.kind = policy.backfill.kind
        self.best = self.kind == "best"
        rounds = self.rounds = N if self.best else 0
        # walk steps (one a slot), then the rounds of backfill `best`
        steps = self.steps = N + rounds

        # Sizes are fresh variables (a size may read the state at the job's visit, which
        # depends on the sizes of the jobs before it).
        self.size_walk = [None if self.rigid else z3.Int(f"size_{q}") for q in range(N)]
        self.alloc_walk = [self.alloc_of(q, self.size_walk[q]) for q in range(N)]

        # A moldable job's estimate on another size than its request follows its speedup
        # model, which the state does not fix: a fresh value >= 1 (any one is some measured
        # speedup's), so proofs hold for every model; counterexamples name the model that
        # gives it.
        self.sized_estimates = []
        self.choice_estimates = []
        self.est_walk = [self.estimate_at(q, self.size_walk[q], "walk") for q in range(N)]

        # The plan's use of each resource at its checkpoints after each step: point 0 is
        # `now`, point b + 1 is job b's reservation time. Use only rises at these points
        # (running jobs only release), so they are all a fit test or a capacity check needs;
        # a fresh variable per (step, point) keeps every lemma small.
        self.points = [self.now, *self.res_time]
        use = self.use = [[[z3.Int(f"use_{k}_at_{i}_after_{s}") for k in range(K)]
                           for i in range(N + 1)] for s in range(steps + 1)]
        for k in range(K):
            definitions.add(use[0][0][k] == self.used0[k])
            for i in range(N):
                definitions.add(use[0][i + 1][k] == z3_sum(
                    z3.If(z3.And(r.present, r.start + r.estimate > self.res_time[i]),
                          held[k], 0)
                    for r, held in zip(self.running, self.held, strict=True)))

        self.selective = policy.reserve_per is not None or policy.reserve_when is not None
        self.key_of = [None] * N
        self.may_reserve = []
        # `slack`: per slot, its reservation's earliest fit and its slack (the plan holds it
        # from ``res_time``: the earliest fit plus the slack if it fits there, else the
        # earliest fit); no terms at all without a slack
        self.slack_on = policy.slack is not None
        if self.slack_on:
            self.earliest_time = [z3.Int(f"earliest_{q}") for q in range(N)]
            self.slack_of = [z3.Int(f"slack_{q}") for q in range(N)]

        # Rounds of backfill `best` (declared here: the state a later job sees reads them).
        rigid = self.rigid
        self.picked = [[z3.Bool(f"picked_{j}_{q}") for q in range(N)] for j in range(rounds)]
        self.size_round = [[None if rigid else z3.Int(f"size_{q}_round_{j}") for q in range(N)]
                           for j in range(rounds)]
        self.est_round = [[self.estimate_at(q, self.size_round[j][q], f"round_{j}")
                           for q in range(N)] for j in range(rounds)]
        if self.best:
            self.started = [z3.Or(self.started_walk[q],
                                  *(self.picked[j][q] for j in range(rounds)))
                            for q in range(N)]
            final_size: list[z3.ArithRef | None] = []
            self.final_est = []
            for q in range(N):
                size, est = self.size_walk[q], self.est_walk[q]
                for j in reversed(range(rounds)):
                    size = None if rigid else z3.If(self.picked[j][q], self.size_round[j][q],
                                                    size)
                    est = est if rigid else z3.If(self.picked[j][q], self.est_round[j][q], est)
                final_size.append(size)
                self.final_est.append(est)
            self.allocs = [self.alloc_of(q, final_size[q]) for q in range(N)]
        else:
            self.started, self.allocs, self.final_est = (self.started_walk, self.alloc_walk,
                                                         self.est_walk)

        self.sizes = []
        self.size_obligations = []
        self.choices = []
        # `size fixed`: a queued job may have its size from an earlier pass (an input, in its
        # range: the size-bounds property of that pass); only the others compute one now
        # (``sizes_at_visits``)
        self.fixed = [z3.BoolVal(False)] * N
        self.fresh_sizes = []

    def alloc_of(self, q: int, size: z3.ArithRef | None) -> tuple[z3.ArithRef, ...]:
        queue = self.queue
        return queue[q].request if size is None else (size, *queue[q].request[1:])

    def estimate_at(self, q: int, size: z3.ArithRef | None, name: str) -> z3.ArithRef:
        """Job q's estimate on ``size`` (a fresh value on another size than its request)."""
        queue = self.queue
        if size is None:
            return queue[q].estimate
        other = z3.Int(f"estimate_{q}_{name}")
        # on 1 cpu: the sequential time (``job.work``)
        self.definitions.add(z3.And(other >= 1, z3.Implies(size == 1, other == queue[q].work)))
        self.sized_estimates.append(SizedEstimate(q, size, other))
        return z3.If(z3.And(queue[q].moldable, size != queue[q].request[0]), other,
                     queue[q].estimate)

    # -- states the policy sees -------------------------------------------------------------

    def running_request(self, b: int) -> tuple[z3.ArithRef, ...]:
        """A started job as the running set shows it: a moldable one on its size, a rigid one
        with its own request whatever a size rule gave it (the simulator's RunningJob.job)."""
        queue = self.queue
        if self.rigid:
            return queue[b].request
        return (z3.If(queue[b].moldable, self.allocs[b][0], queue[b].request[0]),
                *queue[b].request[1:])

    def state_of(self, s: int, gone: Sequence[z3.BoolRef]) -> SymState:
        queue, N = self.queue, self.N
        launched = tuple(
            SymJob(present=gone[b], id=queue[b].id, submit=queue[b].submit,
                   estimate=self.final_est[b], request=self.running_request(b), start=self.now,
                   moldable=queue[b].moldable, min_size=queue[b].min_size,
                   max_size=queue[b].max_size, work=queue[b].work, labels=queue[b].labels)
            for b in range(N) if not z3.is_false(gone[b]))
        member = tuple(z3.And(queue[b].present, z3.Not(gone[b])) for b in range(N))
        return SymState(now=self.now, capacity=self.capacity, used=tuple(self.use[s][0]),
                        queue=queue, bpu=self.bpu, power=self.power,
                        queue_tail=self.queue_tail, running=self.running + launched,
                        queue_member=member)

    def state_at(self, a: int, including: bool = False) -> SymState:
        """What the policy sees when the walk reaches job a (``including``: right after a
        itself started, as invariants see it)."""
        gone = [self.started_walk[b] if b < a else z3.BoolVal(including and b == a)
                for b in range(self.N)]
        return self.state_of(a + 1 if including else a, gone)

    def state_in_round(self, j: int) -> SymState:
        """What backfill `best` sees in round j (after the walk and rounds < j)."""
        gone = [z3.Or(self.started_walk[q], *(self.picked[i][q] for i in range(j)))
                for q in range(self.N)]
        return self.state_of(self.N + j, gone)

    # -- the plan ---------------------------------------------------------------------------

    def active(self, est: z3.ArithRef, i: int) -> z3.BoolRef:
        """A job started now with estimate ``est`` holds its resources at point i."""
        return z3.BoolVal(True) if i == 0 else self.now + est > self.points[i]

    def start(self, s: int, terms_at: Terms) -> None:
        """Step s's update of the plan: the use at each checkpoint after it is the use before
        plus ``terms_at(point, resource)`` (a start's and a reservation's allocation where
        they hold it). Twin: `PassWalk.start` in runtime/engine/walk.py."""
        use = self.use
        for i in range(self.N + 1):
            in_time()  # the property's time limit (``budget.py``), between steps
            for k in range(self.K):
                self.definitions.add(use[s + 1][i][k] == use[s][i][k] + z3_sum(terms_at(i, k)))

    def fits_now(self, s: int, alloc: Sequence[z3.ArithRef], est: z3.ArithRef) -> z3.BoolRef:
        """Fits the plan after step s from now for ``est``: at now and at each reservation
        start inside the window. Twin: `PassWalk.fits_now` in runtime/engine/walk.py."""
        use, capacity_t, now = self.use, self.capacity, self.now
        made = min(s, self.N)
        checks = []
        for k in range(self.K):
            checks.append(use[s][0][k] + alloc[k] <= capacity_t[k])
            checks += [z3.Implies(z3.And(self.reserved[b], self.res_time[b] < now + est),
                                  use[s][b + 1][k] + alloc[k] <= capacity_t[k])
                       for b in range(made)]
        return z3.And(checks)

    def starts_inside(self, s: int, t: z3.ArithRef, end: z3.ArithRef, k: int,
                      extra: z3.ArithRef | None, slots: Sequence[int]) -> list[z3.BoolRef]:
        """At each start in [t, end) of a reservation of ``slots``, the use of resource k
        after step s (plus ``extra``) is within capacity. `t <= res_b` (not `<`): an equal
        start is checked at b's own checkpoint, so a lemma never needs to know that two
        checkpoints at one time hold one value."""
        use, reserved, res_time = self.use, self.reserved, self.res_time
        return [z3.Implies(z3.And(reserved[b], t <= res_time[b], res_time[b] < end),
                           (use[s][b + 1][k] if extra is None else use[s][b + 1][k] + extra)
                           <= self.capacity[k])
                for b in slots]

    def fits_reservation(self, a: int) -> z3.BoolRef:
        """Job a fits the plan before its step from its reservation time on."""
        t, end = self.res_time[a], self.res_time[a] + self.est_walk[a]
        alloc = self.alloc_walk[a]
        checks = []
        for k in range(self.K):
            checks.append(self.use[a][a + 1][k] + alloc[k] <= self.capacity[k])
            checks += self.starts_inside(a, t, end, k, alloc[k], range(a))
        return z3.And(checks)

    def fits_physically(self, s: int, alloc: Sequence[z3.ArithRef]) -> z3.BoolRef:
        """Fits the free resources now (the plan's reservations are not consulted)."""
        return z3.And([self.use[s][0][k] + alloc[k] <= self.capacity[k] for k in range(self.K)])

    def fits_at(self, a: int, t: z3.ArithRef, alloc: Sequence[z3.ArithRef] | None = None,
                est: z3.ArithRef | None = None) -> z3.BoolRef:
        """Job a (on ``alloc`` for ``est``, by default its walk's) fits the plan of the walk
        before it from any time t >= now on: the use at t summed in full (t need not be a
        checkpoint), then the reservation starts inside."""
        in_time()  # a reservation tests one time after another: the most of a large pass
        alloc = self.alloc_walk[a] if alloc is None else alloc
        end = t + (self.est_walk[a] if est is None else est)
        started_walk, reserved, res_time = self.started_walk, self.reserved, self.res_time
        est_walk, alloc_walk = self.est_walk, self.alloc_walk
        checks = []
        for k in range(self.K):
            at_t = [z3.If(z3.And(r.present, r.start + r.estimate > t), held[k], 0)
                    for r, held in zip(self.running, self.held, strict=True)]
            for b in range(a):
                at_t.append(z3.If(z3.And(started_walk[b], self.now + est_walk[b] > t),
                                  alloc_walk[b][k], 0))
                at_t.append(z3.If(z3.And(reserved[b], res_time[b] <= t,
                                         t < res_time[b] + est_walk[b]),
                                  alloc_walk[b][k], 0))
            checks.append(z3_sum(at_t) + alloc[k] <= self.capacity[k])
            checks += self.starts_inside(a, t, end, k, alloc[k], range(a))
        return z3.And(checks)

    def release_times(self, a: int) -> list[tuple[z3.BoolRef, z3.ArithRef]]:
        """Where an earliest fit of job a may lie: now or a release of the plan before a."""
        times: list[tuple[z3.BoolRef, z3.ArithRef]] = [(z3.BoolVal(True), self.now)]
        times += [(r.present, r.start + r.estimate) for r in self.running]
        for b in range(a):
            times.append((self.started_walk[b], self.now + self.est_walk[b]))
            times.append((self.reserved[b], self.res_time[b] + self.est_walk[b]))
        return times

    # -- checks after steps -----------------------------------------------------------------

    def profile_ok(self, s: int) -> z3.BoolRef:
        """The plan after step s (running jobs, starts, reservations) never exceeds a
        capacity: use rises only at now and at reservation starts."""
        in_time()  # one a step: quadratic in the slots
        use, capacity_t = self.use, self.capacity
        checks = []
        for k in range(self.K):
            checks.append(use[s][0][k] <= capacity_t[k])
            checks += [z3.Implies(self.reserved[b], use[s][b + 1][k] <= capacity_t[k])
                       for b in range(min(s, self.N))]
        return z3.And(checks)

    def capacity_ok(self, s: int) -> z3.BoolRef:
        return z3.And([self.use[s][0][k] <= self.capacity[k] for k in range(self.K)])

    def use_nonnegative(self, s: int) -> z3.BoolRef:
        return z3.And([self.use[s][0][k] >= 0 for k in range(self.K)])

    def holds(self, a: int) -> z3.BoolRef:
        """After the whole pass, reservation a still fits beside every start and every other
        reservation: no job started in the pass delayed it."""
        in_time()  # one a slot: quadratic in the slots
        t, end = self.res_time[a], self.res_time[a] + self.est_walk[a]
        checks = []
        for k in range(self.K):
            checks.append(self.use[self.steps][a + 1][k] <= self.capacity[k])
            checks += self.starts_inside(self.steps, t, end, k, None,
                                         [b for b in range(self.N) if b != a])
        return z3.Implies(self.reserved[a], z3.And(checks))
