"""The symbolic state of a preemptive pass and what every such state satisfies.

Job slots, each a job in one phase at the pass's instant, with what it has run so far
(``lifecycle.JobLife``): pending (never ran, or requeued), running (on its processors since
its last start), suspended (its processes still on its processors) or stopped (checkpointed,
holding nothing, its size kept). With `preempt when` the first N slots wait (pending,
suspended, stopped) in the policy's order and the next R run, in the victims' order; with
`preempt by order` the N + R slots hold jobs of any phase, those the selection orders in the
policy's order. Empty slots come last. Processors are numbered 0 .. C - 1 for a cpu capacity
C of at most P (the processor bound): a job's processors are one Bool per processor.

The assumptions are what every state the simulator can reach satisfies (so a proof covers
every such state), and what a state file must satisfy to be replayed
(``runtime/workloads/state_file.py``); a state no dispatch or checkpoint is in flight in and
no claim waits in (the encoded pass starts from such states: the caveat of every verdict).
Three assumptions are a run's, not every run's, and each proved verdict states them: that
scope, a machine of at most P processors, and (under ``overrun`` `kill` or `estimate`, not
`extend`) a running job that has run less than its estimate (``OVERRUN_ASSUMED``). The
monitor checks each in every pass of a run (``runtime/engine/preemptive_checks.py``,
``Assumptions``) and a run that leaves one says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import z3
from attrs import frozen

from schedc.dsl import ir
from schedc.dsl.verify.budget import check as in_time
from schedc.dsl.verify.pass_encoding.assumptions import param_terms
from schedc.dsl.verify.pass_encoding.record import Unsupported
from schedc.dsl.verify.preemption.groups import Group, processor_groups
from schedc.dsl.verify.symbolic import (
    ActiveTerms,
    FreshNames,
    Obligation,
    SymbolicError,
    SymJob,
    SymResult,
    SymState,
    describe,
    sym_eval,
)
from schedc.dsl.verify.terms import counted, weighed
from schedc.dsl.verify.vocabulary import OVERRUN, OVERRUN_MODES

PENDING, RUNNING, SUSPENDED, STOPPED = 0, 1, 2, 3
PHASES = ("pending", "running", "suspended", "stopped")
# each job's mechanism (``lifecycle.MECHANISMS``) as an Int
MECHANISMS = ("none", "suspend", "checkpoint", "malleable", "requeue")
NONE, SUSPEND, CHECKPOINT, MALLEABLE, REQUEUE = range(5)
# a state file lists its jobs running, then queued (pending), suspended, stopped: their
# positions (``Job.index``, the order's last tie-break) follow that order
FILE_RANK = {RUNNING: 0, PENDING: 1, SUSPENDED: 2, STOPPED: 3}
# what `--overrun kill` and `estimate` give every running job and `extend` does not (the
# assumptions' names, which the caveat of a verdict and the run's warning quote)
OVERRUN_ASSUMED = ("a running job has not run past its run time at its size (it would have "
                   "completed before the pass)")
OVERRUN_RATE = ("a running job's progress grows at least at the rate its estimate gives "
                "(its run time at its size is at most its estimate)")


def z3_sum(terms: Sequence[Any]) -> z3.ArithRef:
    terms = list(terms)
    return z3.Sum(terms) if terms else z3.IntVal(0)


def count(bits: Sequence[z3.BoolRef]) -> z3.ArithRef:
    return counted(bits)


def in_range(s: Slot, n: z3.ArithRef, cpus: z3.ArithRef) -> z3.BoolRef:
    """``n`` cpus lie in ``s``'s range and within the machine's ``cpus``."""
    return z3.And(n >= s.job.min_size, n <= s.job.max_size, n <= cpus)


@frozen(eq=False)
class Slot:
    """One job slot: the job (``job.active``: what formulas read of its history) and its
    phase, processors, size, service acquired before its current run (all of it unless it
    runs), its last start (if it ``ran``), its preemptions and mechanism."""

    n: int
    job: SymJob
    index: z3.ArithRef  # its position in the workload: the order's last tie-break
    phase: z3.ArithRef
    procs: tuple[z3.BoolRef, ...]  # held (running) or kept (suspended)
    size: z3.ArithRef  # cpus of its current or last allocation (0: never ran)
    acquired: z3.ArithRef
    ran: z3.BoolRef
    last_start: z3.ArithRef
    preemptions: z3.ArithRef
    mech: z3.ArithRef  # one of MECHANISMS, from the policy's `mechanism` clauses
    # the fraction of its work done: at its last start if it runs (a state file's
    # `progress`), and at the pass's instant (``job.active.progress``)
    progress: z3.ArithRef
    progress_now: z3.ArithRef

    @property
    def present(self) -> z3.BoolRef:
        return self.job.present

    def is_(self, *phases: int) -> z3.BoolRef:
        return z3.And(self.present, z3.Or([self.phase == p for p in phases]))


class Unencodable(Unsupported):
    """A preemptive policy the encoding does not cover (the verdicts say why)."""


def pass_formulas(policy: ir.Policy) -> list[ir.Expr]:
    """The formulas a preemptive pass evaluates: the order's keys, the preemption clauses'
    and `size`."""
    p = policy.preemption
    assert p is not None
    return [*(k.expr for k in policy.order), *p.exprs(),
            *([policy.size] if policy.size is not None else [])]


def check_encodable(policy: ir.Policy) -> None:
    """Raise ``Unencodable`` for what the encoded pass does not mirror yet."""
    p = policy.preemption
    assert p is not None
    if policy.invariants:
        raise Unencodable("invariants of a preemptive policy are not encoded yet")
    for e in pass_formulas(policy):
        for n in ir.walk(e):
            if isinstance(n, ir.Aggregate | ir.MachineAttr | ir.ResourceAttr) or (
                    isinstance(n, ir.StateAttr) and n.attr != "now"):
                raise Unencodable(f"`{describe(n)}`: a preemptive pass's formulas that read the "
                                  "queue, the running jobs or the machine's use are not "
                                  "encoded yet (the simulator's view of them changes within "
                                  "the pass)")
    for m in p.mechanisms:
        if m.when is not None and "now" in ir.dependencies(m.when):
            raise Unencodable("a `mechanism ... when` that reads the time is not encoded")


class PreemptiveState:
    """The symbolic state (``slots``), its assumptions, and the evaluation of formulas with
    their obligations (``evaluate``)."""

    def __init__(self, policy: ir.Policy, waiting: int, running: int, processors: int,
                 fresh: FreshNames, overrun: str = OVERRUN, grouped: bool = False) -> None:
        check_encodable(policy)
        if overrun not in OVERRUN_MODES:
            raise ValueError(f"unknown overrun mode {overrun!r}")
        self.policy, self.fresh = policy, fresh
        # `--overrun extend`: a running job may have run past its estimate (its run time)
        self.overrun = overrun
        self.outruns = overrun == "extend"
        rules = policy.preemption
        assert rules is not None
        self.select = rules.rule is None
        # the processor units the books keep: processors (each of weight 1, at most
        # ``processors`` of them), or with ``grouped`` groups of any length (``groups.py``)
        self.grouped = grouped
        self.groups: tuple[Group, ...] = ()
        if grouped:
            self.groups = processor_groups(policy, waiting, running)
        self.P = len(self.groups) if grouped else processors
        self.lengths: tuple[z3.ArithRef, ...] = ()
        self.K = len(policy.machine.resources)
        self.assumptions: list[tuple[str, z3.BoolRef]] = []
        self.definitions: list[z3.BoolRef] = []
        self.obligations: list[Obligation] = []
        self.uses_log = False
        self._names = 0  # of ``name``'s constants
        self.now = z3.Int("now")
        self.assume("time is not negative", self.now >= 0)
        capacity = []
        for res in policy.machine.resources:
            if res.capacity is not None:
                capacity.append(z3.IntVal(res.capacity))
            else:
                c = z3.Int(f"capacity_{res.name}")
                capacity.append(c)
                self.assume(f"capacity of `{res.name}` is at least 1", c >= 1)
        self.capacity = tuple(capacity)
        cpus = policy.machine.resources[0].capacity
        if grouped:
            self.lengths = tuple(z3.Int(f"group{g}_length") for g in range(self.P))
            self.assume("the processors fall into groups by what they hold and who takes "
                        "them in the pass (any number in each)",
                        [*(n >= 0 for n in self.lengths),
                         z3_sum(self.lengths) == self.capacity[0]])
        else:
            if cpus is not None and cpus > processors:
                raise Unencodable(f"the machine has {cpus} cpus, more than the processor "
                                  f"bound P={processors} (--processors): each processor is a "
                                  "term")
            self.assume(f"at most P={processors} processors", self.capacity[0] <= processors)
        self.params = param_terms(policy, self.assume)
        self.view = SymState(now=self.now, capacity=self.capacity, used=self.capacity,
                             queue=(), running=())
        # where what a formula needs is obliged: the constants and the mechanisms are
        # evaluated in every state (the mechanisms at each job's submission)
        self.pass_runs: z3.BoolRef = z3.BoolVal(True)
        self.limit = self._constant(rules.limit, "`limit preemptions`")
        self.resident = self._constant(rules.resident, "`resident`")
        self.delta = self._constant(rules.subset, "`subset`")  # `subset DELTA`
        if self.delta is not None:
            self.assume("`subset` is at least 1 (`run` refuses less)", self.delta >= 1)
        # rule 4 of dsl/params.py: `run` refuses any other value, so no state has one
        if self.limit is not None:
            self.assume("`limit` (preemptions) is at least 0 (`run` refuses less)",
                        self.limit >= 0)
        if self.resident is not None:
            self.assume("`resident` is at least 1 (`run` refuses less)", self.resident >= 1)
        # `leftover efficient when COND`: efficient where COND holds (params only), else equal
        self.efficient: z3.BoolRef = z3.BoolVal(rules.leftover == "efficient")
        if rules.leftover == "efficient" and rules.leftover_when is not None:
            self.efficient = self._defined(rules.leftover_when, "`leftover efficient when`")
        labels = ir.labels_read(policy)
        # `job.progress` adds a term and its assumptions per slot (nonlinear: only if read)
        self.reads_progress = any(isinstance(n, ir.JobAttr) and n.attr == "progress"
                                  for e in pass_formulas(policy) for n in ir.walk(e))
        total = waiting + running
        self.slots = tuple(self._slot(n, labels) for n in range(total))
        # the simulator passes only when some job waits (``preemptive._pass``): nothing the
        # pass evaluates is evaluated else
        self.pass_runs = z3.Or([s.is_(PENDING, SUSPENDED, STOPPED) for s in self.slots])
        # `preempt when`: waiting slots, then running ones; `preempt by order`: one region
        self.regions = ((range(total),) if self.select
                        else (range(waiting), range(waiting, total)))
        self._assume_slots()

    # -- processor units -----------------------------------------------------------------------

    def weigh(self, bits: Sequence[z3.BoolRef]) -> z3.ArithRef:
        """The processors of the units ``bits`` marks: a count, or the groups' lengths."""
        if not self.grouped:
            return count(bits)
        return weighed(bits, self.lengths)

    def exists(self, unit: int) -> z3.BoolRef:
        """Unit ``unit`` is a processor of the machine (a group: not empty)."""
        if self.grouped:
            return self.lengths[unit] >= 1
        return self.capacity[0] > unit

    # -- formulas ------------------------------------------------------------------------------

    def assume(self, text: str, formula: Any) -> None:
        in_time()  # the property's time limit (``budget.py``): the state's loops assume
        if isinstance(formula, list | tuple):
            formula = z3.And(*formula) if formula else z3.BoolVal(True)
        self.assumptions.append((text, formula))

    def evaluate(self, expr: ir.Expr, guard: z3.BoolRef, job: Slot | None = None,
                 **jobs: Slot) -> z3.ExprRef:
        """``expr``'s term, `job` (and ``jobs``: `cand`, `victim`) bound to slots; its
        obligations hold where ``guard`` does (the simulator evaluates it there)."""
        try:
            result: SymResult = sym_eval(expr, job=None if job is None else job.job,
                                         state=self.view, params=self.params,
                                         fresh=self.fresh,
                                         jobs={k: s.job for k, s in jobs.items()})
        except SymbolicError as exc:
            raise Unencodable(str(exc)) from None
        self.definitions.extend(result.definitions)
        self.uses_log |= result.uses_log
        for o in result.obligations:
            self.obligations.append(Obligation(o.kind, z3.And(guard, self.pass_runs,
                                                              o.guard), o.safe, o.span,
                                               o.text))
        return result.value

    def name(self, term: Any) -> Any:
        """A fresh constant defined as ``term`` (an Int or a Bool; a value stays itself):
        steps that read what earlier steps computed then never nest their terms."""
        if z3.is_int_value(term) or z3.is_true(term) or z3.is_false(term):
            return term
        self._names += 1
        make = z3.Bool if z3.is_bool(term) else z3.Int
        v = make(f"{self.fresh.prefix}v{self._names}")
        self.definitions.append(v == term)
        return v

    def evaluate_later(self, expr: ir.Expr, job: Slot | None = None, **jobs: Slot
                       ) -> tuple[z3.ExprRef, list[Obligation]]:
        """``expr``'s term and its obligations, to be guarded by ``oblige`` once the guard
        is known (it may read this term: a rule evaluated pair after pair)."""
        before = len(self.obligations)
        value = self.evaluate(expr, z3.BoolVal(True), job, **jobs)
        made = self.obligations[before:]
        del self.obligations[before:]
        return value, made

    def oblige(self, obligations: Sequence[Obligation], guard: z3.BoolRef) -> None:
        self.obligations.extend(Obligation(o.kind, z3.And(guard, self.pass_runs, o.guard),
                                           o.safe, o.span, o.text) for o in obligations)

    def _constant(self, e: ir.Expr | None, what: str) -> z3.ArithRef | None:
        """A constant clause (`limit`, `resident`: params allowed), as ``int()`` reads it."""
        if e is None:
            return None
        v = self._defined(e, what)
        return v if z3.is_int(v) else z3.ToInt(v)

    def _defined(self, e: ir.Expr, what: str) -> z3.ExprRef:
        """A constant clause's term (params only), assumed defined: `run` refuses the params
        it fails for, located (``runtime/engine/from_ir.py``), as out-of-domain ones."""
        v, made = self.evaluate_later(e)
        for o in made:
            self.assume(f"{what} has a value (`run` refuses params it fails for)",
                        z3.Not(o.violated()))
        return v

    # -- the slots -----------------------------------------------------------------------------

    def _slot(self, n: int, labels: Sequence[str]) -> Slot:
        name = f"s{n}"
        if self.grouped:  # a group's holders are its column: all its processors or none
            procs = tuple(self.exists(g) if n in group.column else z3.BoolVal(False)
                          for g, group in enumerate(self.groups))
        else:
            procs = tuple(z3.Bool(f"{name}_p{p}") for p in range(self.P))
        phase, ran = z3.Int(f"{name}_phase"), z3.Bool(f"{name}_ran")
        acquired, last_start = z3.Int(f"{name}_acquired"), z3.Int(f"{name}_last_start")
        preemptions = z3.Int(f"{name}_preemptions")
        progress = z3.Real(f"{name}_progress")
        run = phase == RUNNING
        # a running job's progress now: its run since its last start at the speed of its
        # size, which the state leaves free (its run time there); see ``_assume_slots``
        progress_now = z3.If(run, z3.Real(f"{name}_progress_now"), progress)
        # its service to now: a running job's current run counted on each processor
        if self.grouped:  # its size, as many processors as it holds (``_assume_slots``)
            acquired_now = acquired + z3.If(run, z3.Int(f"{name}_size")
                                            * (self.now - last_start), 0)
        else:
            acquired_now = acquired + z3.If(run, z3_sum([z3.If(b, self.now - last_start, 0)
                                                         for b in procs]), 0)
        active = ActiveTerms(acquired=acquired_now,
                             since_start=z3.If(ran, self.now - last_start, 0),
                             preemptions=preemptions, suspended=phase == SUSPENDED,
                             progress=progress_now)
        job = SymJob(
            present=z3.Bool(f"{name}_present"), id=z3.Int(f"{name}_id"),
            submit=z3.Int(f"{name}_submit"), estimate=z3.Int(f"{name}_estimate"),
            request=tuple(z3.Int(f"{name}_request{k}") for k in range(self.K)),
            moldable=z3.Bool(f"{name}_moldable"), min_size=z3.Int(f"{name}_min_size"),
            max_size=z3.Int(f"{name}_max_size"), work=z3.Int(f"{name}_work"),
            labels={a: z3.Int(f"{name}_{a}") for a in labels}, active=active)
        slot = Slot(n, job, z3.Int(f"{name}_index"), phase, procs, z3.Int(f"{name}_size"),
                    acquired, ran, last_start, preemptions, z3.IntVal(NONE), progress,
                    progress_now)
        # its mechanism: the first `mechanism` clause whose condition holds, at submission
        # (a condition is evaluated only where the clauses before it do not hold)
        parts: list[tuple[z3.BoolRef, int]] = []
        guard = job.present
        for m in self.policy.preemption.mechanisms:  # type: ignore[union-attr]
            code = MECHANISMS.index(m.kind)
            if m.when is None:
                parts.append((z3.BoolVal(True), code))
                break
            holds = self.evaluate(m.when, guard, slot)
            parts.append((holds, code))
            guard = z3.And(guard, z3.Not(holds))
        mech: z3.ArithRef = z3.IntVal(NONE)
        for holds, code in reversed(parts):
            mech = z3.If(holds, code, mech)
        return attrs.evolve(slot, mech=mech)

    def _assume_slots(self) -> None:
        assume, now, cap, K, P = self.assume, self.now, self.capacity, self.K, self.P
        slots = self.slots
        for region in self.regions:
            assume("empty job slots come last",
                   [z3.Implies(slots[i + 1].present, slots[i].present)
                    for i in list(region)[:-1]])
        if not self.select:
            waiting, running = self.regions
            for i in waiting:
                assume("the first slots wait: pending, suspended or stopped",
                       z3.Implies(slots[i].present, slots[i].phase != RUNNING))
            for i in running:
                assume("the last slots run", z3.Implies(slots[i].present,
                                                        slots[i].phase == RUNNING))
        for s in slots:
            j, present = s.job, s.present
            ok = [j.estimate >= 1, j.request[0] >= 1, j.id >= 0, s.index >= 0,
                  j.submit >= 0, j.submit <= now,
                  *(z3.And(j.request[k] >= 0, j.request[k] <= cap[k]) for k in range(K)),
                  z3.If(j.moldable,
                        z3.And(j.min_size >= 1, j.min_size <= j.request[0],
                               j.request[0] <= j.max_size, j.max_size <= cap[0]),
                        z3.And(j.min_size == j.request[0], j.max_size == j.request[0])),
                  z3.Implies(j.moldable, z3.And(j.work >= 1, z3.Implies(
                      j.request[0] == 1, j.work == j.estimate))),
                  *(v >= -1 for v in j.labels.values()),
                  s.phase >= PENDING, s.phase <= STOPPED,
                  s.acquired >= 0, s.preemptions >= 0, s.progress >= 0, s.progress < 1,
                  z3.Implies(s.ran, z3.And(s.last_start >= j.submit, s.last_start <= now)),
                  *(z3.Implies(b, self.exists(p)) for p, b in enumerate(s.procs))]
            assume("each job is a job of the machine (as a state file's)",
                   z3.Implies(present, z3.And(ok)))
            held = self.weigh(s.procs)
            in_range = z3.And(s.size >= j.min_size, s.size <= j.max_size)
            assume("a running job runs on its processors at a size in its range since its "
                   "last start",
                   z3.Implies(s.is_(RUNNING), z3.And(s.ran, held == s.size, in_range)))
            # its run time at its size: its estimate at its request (a state file's run
            # time), a moldable job's work on one cpu; elsewhere a counterexample's speedup
            # table gives it one longer than its run (``prover._running_progress``). Not
            # under `--overrun extend`, where a job runs its recorded time past them
            if not self.outruns:
                assume(OVERRUN_ASSUMED, z3.Implies(s.is_(RUNNING), self.within_estimate(s)))
            assume("a suspended job keeps its processes on its processors; it ran and was "
                   "suspended (its mechanism)",
                   z3.Implies(s.is_(SUSPENDED), z3.And(s.ran, held == s.size, in_range,
                                                       s.preemptions >= 1, s.mech == SUSPEND)))
            assume("a stopped job holds nothing, keeps its size, ran and was checkpointed",
                   z3.Implies(s.is_(STOPPED), z3.And(
                       s.ran, held == 0, in_range, s.preemptions >= 1,
                       z3.Or(s.mech == CHECKPOINT, s.mech == MALLEABLE))))
            assume("a pending job holds nothing; if it ran, it was requeued",
                   z3.Implies(s.is_(PENDING), z3.And(
                       held == 0, s.size == 0,
                       z3.Implies(s.ran, z3.And(s.preemptions >= 1, s.mech == REQUEUE)),
                       z3.Implies(z3.Not(s.ran), z3.And(s.preemptions == 0,
                                                        s.acquired == 0, s.progress == 0)))))
            if self.reads_progress:
                self._assume_progress(s)
            assume("a preempted job has a mechanism that preempts",
                   z3.Implies(z3.And(present, s.preemptions >= 1), s.mech != NONE))
            if self.limit is not None:
                assume("no job was preempted more than `limit` times",
                       z3.Implies(present, s.preemptions <= self.limit))
        for a_i, a in enumerate(slots):
            for b in slots[a_i + 1:]:
                both = z3.And(a.present, b.present)
                assume("job ids and positions are distinct",
                       z3.Implies(both, z3.And(a.job.id != b.job.id, a.index != b.index)))
                for ra, rb in ((a, b), (b, a)):
                    assume("positions follow the state file's lists: running, queue, "
                           "suspended, stopped",
                           z3.Implies(z3.And(both, _rank(ra) < _rank(rb)),
                                      ra.index < rb.index))
                assume("running jobs hold distinct processors",
                       z3.Implies(z3.And(a.is_(RUNNING), b.is_(RUNNING)),
                                  z3.And([z3.Not(z3.And(x, y))
                                          for x, y in zip(a.procs, b.procs, strict=True)])))
        holds = [z3.Or(s.is_(RUNNING), s.is_(SUSPENDED)) for s in slots]
        for k in range(1, K):
            assume("running and suspended jobs hold what the machine has",
                   z3_sum([z3.If(h, s.job.request[k], 0) for h, s in zip(holds, slots,
                                                                          strict=True)])
                   <= cap[k])
        if self.resident is not None:
            for p in range(P):
                assume("at most `resident` jobs have processes on a processor",
                       count([z3.And(h, s.procs[p]) for h, s in zip(holds, slots,
                                                                     strict=True)])
                       <= self.resident)


    def within_estimate(self, s: Slot) -> z3.BoolRef:
        """Running slot ``s`` has run less than its run time where the estimate fixes it:
        at its request, and a moldable job's work on one cpu (``OVERRUN_ASSUMED``)."""
        j, elapsed = s.job, self.now - s.last_start
        return z3.And(z3.Implies(s.size == j.request[0], elapsed < j.estimate),
                      z3.Implies(z3.And(j.moldable, s.size == 1), elapsed < j.work))

    def progress_rate(self, s: Slot) -> z3.BoolRef:
        """Running slot ``s``'s progress since its last start is at least its run since over
        its estimate (its work on one cpu of a moldable job), where a state file's speedup
        table cannot choose its run time (``OVERRUN_RATE``)."""
        elapsed = self.now - s.last_start
        fixed = z3.If(z3.And(s.job.moldable, s.size == 1, s.job.request[0] != 1),
                      s.job.work, s.job.estimate)
        at_table = z3.Or(z3.Not(s.job.moldable), s.size == s.job.request[0], s.size == 1)
        return z3.Implies(at_table, (s.progress_now - s.progress) * fixed >= elapsed)

    def replayable(self) -> z3.BoolRef:
        """What a state file needs of the running jobs beyond the assumptions: each one
        has run less than its estimate at any size (``state_file.py``: now < start +
        estimate), and under `--overrun extend` the run times the other modes fix
        (``OVERRUN_ASSUMED``, ``OVERRUN_RATE``): a state file's run time is at most its
        estimate."""
        parts = []
        for s in self.slots:
            run = [self.now - s.last_start < s.job.estimate]
            if self.outruns:
                run.append(self.within_estimate(s))
                if self.reads_progress:
                    run.append(self.progress_rate(s))
            parts.append(z3.Implies(s.is_(RUNNING), z3.And(run)))
        return z3.And(parts)

    def _assume_progress(self, s: Slot) -> None:
        """A running job's progress now: its progress at its last start plus its run since,
        over its run time T at its size, below 1 (else it completed before the pass; the
        state file's rule allows 1). T is left free
        (the proof covers every speedup), except where a counterexample cannot choose it:
        at the job's request T is at most its estimate (its run time), on one cpu of a
        moldable job it is its work (a state file's speedup passes through both); under
        `--overrun extend` T is free there too (a job runs its recorded time)."""
        elapsed = self.now - s.last_start
        self.assume("a running job's progress now is its progress at its last start and its "
                    "run since, below 1",
                    z3.Implies(s.is_(RUNNING), z3.And(
                        s.progress_now >= s.progress, s.progress_now < 1,
                        z3.Implies(elapsed == 0, s.progress_now == s.progress),
                        z3.Implies(elapsed > 0, s.progress_now > s.progress))))
        if not self.outruns:
            self.assume(OVERRUN_RATE, z3.Implies(s.is_(RUNNING), self.progress_rate(s)))


def _rank(s: Slot) -> z3.ArithRef:
    return z3.If(s.phase == RUNNING, 0, z3.If(s.phase == PENDING, 1,
                                              z3.If(s.phase == SUSPENDED, 2, 3)))
