"""The walk over the queue slots in policy order: each job's visit (it starts, waits or is
reserved, by the backfill rule and the reservation depth), its reservation and slack, the
rigid walk's early stop, then the rounds of backfill `best`.
Twin: ``PassWalk`` in runtime/engine/walk.py, step for step."""

from __future__ import annotations

import z3

from schedc.dsl.verify.budget import check as in_time
from schedc.dsl.verify.pass_encoding.record import SizeResult, Start, Unsupported
from schedc.dsl.verify.pass_encoding.sizes import SizeSteps
from schedc.dsl.verify.pass_encoding.state import z3_sum


class WalkSteps(SizeSteps):
    """Each slot's decision, then the rounds of backfill `best`."""

    def walk(self) -> None:
        """The walk over the queue slots in policy order, then the rounds of backfill `best`.
        Twin: `PassWalk.walk` in runtime/engine/walk.py."""
        self.exact_slots = self.N if self.exact else 0
        self.stops = [z3.Bool(f"stops_{q}") for q in range(self.N)]
        # left to backfill `best`
        self.candidate = [z3.Bool(f"candidate_{q}") for q in range(self.N)]
        self.starts_list = []
        for a in range(self.N):
            self.visit(a)
        self.best_rounds()

    def below_depth(self, a: int) -> z3.BoolRef:
        """Fewer than D reservations were made before job a."""
        if self.depth is None:
            return z3.BoolVal(True)
        return z3_sum(z3.If(self.reserved[b], 1, 0) for b in range(a)) < self.depth

    def would_start(self, a: int) -> z3.BoolRef:
        """Whether job a starts if visited, by the backfill rule."""
        policy, kind, alloc, est = self.policy, self.kind, self.alloc_walk[a], self.est_walk[a]
        if kind == "none":
            return self.fits_physically(a, alloc)
        if kind in ("first_fit", "best"):
            return self.fits_now(a, alloc, est)
        if kind == "when":
            # evaluated, as in the simulator, only once the job fits the free resources
            condition = self.evaluate(policy.backfill.condition, self.queue[a],
                                      self.state_at(a),
                                      z3.And(self.visited[a], z3.Not(self.below_depth(a)),
                                             self.fits_physically(a, alloc)))
            return z3.If(self.below_depth(a), self.fits_now(a, alloc, est),
                         z3.And(self.fits_physically(a, alloc), condition))
        raise Unsupported(f"backfill `{kind}` is not encoded")

    def visit(self, a: int) -> None:
        """Job slot a's decision: it starts if it fits by the backfill rule, else it waits
        or is reserved; with the exact equations, whether the walk reaches it at all (the
        early stop, `backfill none`'s block, the candidates left to `best`).
        Twin: `PassWalk.visit` in runtime/engine/walk.py."""
        in_time()  # the property's time limit (``budget.py``), between steps
        job, definitions, now = self.queue[a], self.definitions, self.now
        started_walk, reserved, res_time = self.started_walk, self.reserved, self.res_time
        visited, candidate, kind = self.visited, self.candidate, self.kind
        definitions.current = a
        starts = self.would_start(a)
        self.start(a, lambda i, k, a=a: [
            z3.If(z3.And(started_walk[a], self.active(self.est_walk[a], i)),
                  self.alloc_walk[a][k], 0),
            *([] if i == 0 else [z3.If(z3.And(reserved[a], res_time[a] <= self.points[i],
                                              self.points[i] < res_time[a] + self.est_walk[a]),
                                       self.alloc_walk[a][k], 0)])])
        # What a safety lemma needs of this job's step: a start fits, a reservation fits at
        # its time. Any decisions with these properties keep the plan safe, so lemmas leave
        # the exact decisions (tagged "exact" below) out and prove that stronger statement.
        definitions.add(z3.Implies(started_walk[a], z3.And(visited[a], starts)))
        self.may_reserve.append(self.wait_or_reserve(a, z3.Not(starts)))
        if self.slack_on:
            # shared: a later step's lemma (a start after the reservation) reads the window
            definitions.current = None
            self.slack(a)
            definitions.current = a
        if self.choices:
            self.define_choice_made(a)
        definitions.add(z3.Implies(reserved[a], z3.And(visited[a], self.fits_reservation(a))))
        self.starts_list.append(Start(started_walk[a], a, self.state_at(a, including=True),
                                      self.alloc_walk[a][0], a))
        # Facts of every job's step that lemmas about later steps rely on (shared): only a
        # present job is visited, it never both starts and is reserved, and a reservation
        # lies after now (the job did not fit now).
        definitions.current = None
        definitions.add(z3.Implies(visited[a], job.present))
        definitions.add(z3.Implies(z3.Or(started_walk[a], reserved[a]), visited[a]))
        definitions.add(z3.Implies(candidate[a], z3.And(job.present, z3.Not(visited[a]))))
        definitions.add(z3.Implies(reserved[a], z3.And(z3.Not(started_walk[a]),
                                                       res_time[a] > now, self.may_reserve[a])))
        # ... and at a release of the plan before it (the earliest fit is one: see the
        # module's doc), which a rule like "ends before the first release" relies on
        releases = self.release_times(a)[1:]
        if not self.slack_on:
            definitions.add(z3.Implies(reserved[a], z3.Or([
                z3.And(valid, res_time[a] == t) for valid, t in releases])))
        else:  # `slack`: the earliest fit is one, the reservation there or its slack later
            earliest = self.earliest_time[a]
            definitions.add(z3.Implies(reserved[a], z3.And(
                z3.Or([z3.And(valid, earliest == t) for valid, t in releases]),
                z3.Or(res_time[a] == earliest, res_time[a] == earliest + self.slack_of[a]),
                self.slack_of[a] >= 0, earliest > now)))
            # The first reservation always fits its slack later: the plan before it holds
            # only running jobs and starts, whose use never rises after now.
            definitions.add(z3.Implies(z3.And(reserved[a], *(z3.Not(reserved[b])
                                                             for b in range(a))),
                                       res_time[a] == earliest + self.slack_of[a]))
        if kind == "none":
            definitions.add(z3.Not(reserved[a]))
        if a >= self.exact_slots:
            return
        definitions.current = ("exact", a)
        stops = self.stops
        definitions.add(stops[a] == (self.stops_at(a) if self.rigid else z3.BoolVal(False)))
        reached = z3.And(job.present, z3.Not(z3.Or(stops[: a + 1])))
        if kind == "none":
            blocked = z3.Or([z3.And(visited[b], z3.Not(started_walk[b])) for b in range(a)])
            definitions.add(visited[a] == z3.And(reached, z3.Not(blocked)))
            definitions.add(started_walk[a] == z3.And(visited[a], starts))
            if self.choices and self.earliest:
                self.choose_size(a, self.release_times(a))
            return
        if self.best:
            definitions.add(visited[a] == z3.And(reached, self.below_depth(a)))
            definitions.add(candidate[a] == z3.And(reached, z3.Not(self.below_depth(a))))
        else:
            definitions.add(visited[a] == reached)
            definitions.add(z3.Not(candidate[a]))
        definitions.add(started_walk[a] == z3.And(visited[a], starts))
        definitions.add(reserved[a] == z3.And(visited[a], z3.Not(started_walk[a]),
                                              self.may_reserve[a], self.fits_machine(a)))
        if self.earliest:
            self.reserve(a)

    def stops_at(self, a: int) -> z3.BoolRef:
        """The early stop of the rigid walk: at job a, no request from a on fits the free
        resources now (each lacks some resource). Twin: the walk's stop in `PassWalk.walk`."""
        K, queue = self.K, self.queue
        free = [self.capacity[k] - self.use[a][0][k] for k in range(K)]
        return z3.And(queue[a].present, z3.And([
            z3.Implies(queue[b].present,
                       z3.Or([free[k] < self.alloc_walk[b][k] for k in range(K)]))
            for b in range(a, self.N)]))

    def wait_or_reserve(self, a: int, not_started: z3.BoolRef) -> z3.BoolRef:
        """Whether job a, visited and not started, may be reserved (else it waits): while
        fewer than D reservations exist, or with `reserve D per KEY or when COND`, while
        fewer than D earlier jobs of its key are reserved, or else if COND holds (evaluated,
        as in the simulator, only then). Twin: `PassWalk.wait_or_reserve` in
        runtime/engine/walk.py."""
        if not self.selective:
            return self.below_depth(a)
        policy, queue, reserved, key_of = self.policy, self.queue, self.reserved, self.key_of
        assert self.depth is not None  # the compiler rejects `reserve all per ...`
        if policy.reserve_per is not None:
            key_of[a] = self.evaluate(policy.reserve_per, queue[a], self.state_at(a),
                                      z3.And(self.visited[a], not_started))
            same = [z3.And(reserved[b], key_of[b] == key_of[a]) for b in range(a)]
        else:
            same = [reserved[b] for b in range(a)]
        room = z3_sum(z3.If(x, 1, 0) for x in same) < self.depth
        if policy.reserve_when is None:
            return room
        when = self.evaluate(policy.reserve_when, queue[a], self.state_at(a),
                             z3.And(self.visited[a], not_started, z3.Not(room)))
        return z3.Or(room, when)

    def reserve(self, a: int) -> None:
        """The reservation's time: the least candidate time (now or a release) at which job a
        fits (and, `size choose`, its size). Twin: `PassWalk.reserve` in
        runtime/engine/walk.py."""
        definitions, reserved, res_time = self.definitions, self.reserved, self.res_time
        times = self.release_times(a)
        fitting = [(z3.And(valid, t >= self.now, self.fits_at(a, t)), t) for valid, t in times]
        # `slack`: the least fitting time is the earliest fit, held from later (below)
        first = self.earliest_time[a] if self.slack_on else res_time[a]
        definitions.add(z3.Implies(
            reserved[a], z3.Or([z3.And(ok, first == t) for ok, t in fitting])))
        definitions.add(z3.Implies(
            reserved[a], z3.And([z3.Implies(ok, first <= t) for ok, t in fitting])))
        if self.slack_on:
            # held its slack later if it fits there (twin: `PassWalk.reserve_late`)
            late = first + self.slack_of[a]
            definitions.add(z3.Implies(reserved[a], res_time[a] == z3.If(
                self.fits_at(a, late), late, first)))
        if self.choices:
            self.choose_size(a, times)

    def slack(self, a: int) -> None:
        """`slack`: job a's slack, the policy's formula for it in the state of its visit,
        floored, 0 if negative; evaluated (its obligations too) only if it is reserved.
        Twin: the slack's evaluation in `PassWalk.reserve_late` in runtime/engine/walk.py."""
        policy = self.policy
        assert policy.slack is not None
        value = self.evaluate(policy.slack, self.queue[a], self.state_at(a), self.reserved[a])
        whole = z3.ToInt(value) if z3.is_real(value) else value  # ToInt is floor
        self.definitions.add(z3.Implies(self.reserved[a], self.slack_of[a] == z3.If(
            whole > 0, whole, 0)))

    def best_rounds(self) -> None:
        """Backfill `best`: after the walk, rounds; each starts the fitting candidate of best
        score (ties: queue order) until none fits. A candidate that does not fit in a round
        never fits later (starts only take resources), so it leaves the pool.
        Twin: `PassWalk.best_rounds` in runtime/engine/walk.py."""
        N, K, policy, definitions = self.N, self.K, self.policy, self.definitions
        queue, picked, candidate = self.queue, self.picked, self.candidate
        pool = [[z3.Bool(f"pool_{j}_{q}") for q in range(N)] for j in range(self.rounds)]
        fit_prev: list[z3.BoolRef] = []
        for j in range(self.rounds):
            s = N + j
            definitions.current = s
            state, after = self.state_in_round(j), self.state_in_round(j + 1)
            alloc_j = [self.alloc_of(q, self.size_round[j][q]) for q in range(N)]
            est_j = self.est_round[j]
            if not self.rigid:
                for q in range(N):
                    first = len(self.obligations)
                    value = self.evaluate(policy.size, queue[q], state, pool[j][q])
                    definitions.add(z3.Implies(queue[q].present,
                                               self.size_round[j][q] == value))
                    self.sizes.append(SizeResult(pool[j][q], self.size_round[j][q], s, q))
                    self.size_obligations.append(tuple(self.obligations[first:]))
            # The round's start, if any, as one job: what the step facts and the plan need.
            any_pick = z3.Or(picked[j])
            pick_est, pick_alloc = z3.Int(f"estimate_round_{j}"), [
                z3.Int(f"alloc_{k}_round_{j}") for k in range(K)]
            definitions.add(pick_est == z3_sum(z3.If(picked[j][q], est_j[q], 0)
                                             for q in range(N)))
            definitions.add_all([pick_alloc[k] == z3_sum(z3.If(picked[j][q], alloc_j[q][k], 0)
                                                       for q in range(N)) for k in range(K)])
            self.start(s, lambda i, k, any_pick=any_pick, pick_est=pick_est,
                       pick_alloc=pick_alloc: [
                           z3.If(z3.And(any_pick, self.active(pick_est, i)), pick_alloc[k], 0)])
            definitions.add(z3.Implies(any_pick, self.fits_now(s, pick_alloc, pick_est)))
            self.starts_list += [Start(picked[j][q], q, after, alloc_j[q][0], s) for q in range(N)]
            # who fits the round: the score is computed for those only (a step fact too: a
            # score that is defined only for a job that fits, as `sqrt` of the cpus left,
            # needs it)
            fit = [z3.And(pool[j][q], self.fits_now(s, alloc_j[q], est_j[q])) for q in range(N)]
            score = []
            for q in range(N):
                value = self.evaluate(policy.backfill.score, queue[q], state, fit[q])
                score.append(z3.If(value, 1, 0) if policy.backfill.score.type == "bool"
                             else value)
            definitions.current = None
            definitions.add(z3.AtMost(*picked[j], 1))
            definitions.add_all([z3.Implies(picked[j][q], pool[j][q]) for q in range(N)])
            definitions.add_all([z3.Implies(pool[j][q], candidate[q]) for q in range(N)])
            if self.exact:
                definitions.current = ("exact", s)
                for q in range(N):
                    definitions.add(pool[j][q] == (candidate[q] if j == 0 else
                                                   z3.And(fit_prev[q],
                                                          z3.Not(picked[j - 1][q]))))
                    beats = []
                    for o in range(N):
                        if o == q:
                            continue
                        better = (score[q] > score[o] if policy.backfill.descending
                                  else score[q] < score[o])
                        if q < o:
                            better = z3.Or(better, score[q] == score[o])
                        beats.append(z3.Implies(fit[o], better))
                    definitions.add(picked[j][q] == z3.And(fit[q], *beats))
            fit_prev = fit
        definitions.current = None
