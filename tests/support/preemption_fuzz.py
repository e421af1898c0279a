"""A fuzzer of preemptive policies: random, well-typed `.pol` texts with every preemption
clause (a rule over `cand` and `victim` or `preempt by order` with or without sizes,
leftovers and SUBSET, mechanisms per job, `keep`, costs, limits, quanta, resident limits),
compiled and run on random workloads of rigid and moldable jobs under the preemptive
loop's monitor.

What must hold for every policy and workload (else ``fuzz_one`` returns the failure):

- the run ends with every job completed, its work done exactly once (its runs at the speed
  of their sizes add up to its work, ending at the first whole second where it is done;
  ``acquired - lost == run_time x procs`` at its recorded size), its segments back to back
  from its first start, its sizes in its range (one size if migratable), a suspended job
  resumed only on the processors it ran on, at most ``limit`` preemptions of any job;
- the loop's monitor never stops for capacity (what suspended and checkpointing jobs and
  claims hold) or for its books; a stop is allowed only for a formula without a value
  (``well-defined``: a division by zero the policy wrote) or a livelock the policy causes;
- the same policy and workload give the same schedule twice (determinism), and the same
  with its rule asked whole as by side (``rule_split.py``), stops included;
- a policy whose jobs are all of mechanism `none`, without dispatch costs or an order that
  reads what jobs have run, gives the rigid simulator's schedule of its order and backfill
  (a differential against ``simulate``).

No pytest here: ``tests/runtime/engine/test_preemption_fuzz.py`` runs a few seeds and
``benchmarks/fuzz_preemption.py`` a campaign. Deterministic for a seed.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from fractions import Fraction

import attrs
from attrs import frozen

from schedc.dsl import compile_source
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.monitor import MonitorViolation
from schedc.runtime.engine.preemptive import simulate_preemptive
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.jobs import Job, Moldable
from schedc.runtime.speedup import Amdahl, Linear
from schedc.runtime.workloads.workload import Workload

CPUS, MEMORY = 8, 20
VARS_ATTRS_INT = ("acquired", "since_start", "preemptions", "procs", "estimate", "wait",
                  "submit", "id")
STALL = 3000  # preemptions with no completion before a run counts as a livelock


@frozen
class Failure:
    seed: int
    policy: str
    workload: str
    what: str


class _Gen:
    def __init__(self, rng: random.Random, encodable: bool = False) -> None:
        self.rng = rng
        # only what the verifier's encoded pass covers (dsl/verify/preemption/slots.py):
        # no formula reads the queue, the running jobs or the machine's use (the same random
        # choices are drawn, so seeds stay comparable)
        self.encodable = encodable

    def int_expr(self, vars_: tuple[str, ...], depth: int = 2) -> str:
        r = self.rng
        if depth == 0 or r.random() < 0.35:
            pick = r.random()
            if pick < 0.6 and vars_:
                return f"{r.choice(vars_)}.{r.choice(VARS_ATTRS_INT)}"
            if pick < 0.7:
                return "now"
            if pick < 0.8:
                state = r.choice(("count(j in queue where j.procs > 1)", "machine.used.cpus",
                                  "count(r in running where r.procs > 2)"))
                return "now" if self.encodable else state
            return str(r.choice((0, 1, 2, 3, 5, 10, 60)))
        op = r.choice(("+", "-", "*", "+"))
        return f"({self.int_expr(vars_, depth - 1)} {op} {self.int_expr(vars_, depth - 1)})"

    def num_expr(self, vars_: tuple[str, ...], depth: int = 2) -> str:
        r = self.rng
        if r.random() < 0.25 and vars_:
            v = r.choice(vars_)
            return r.choice((f"{v}.xfactor", f"{v}.acquired / ({v}.procs + 1)",
                             f"{v}.estimate / {v}.procs", f"{v}.progress",
                             f"{v}.work * (1 - {v}.progress)"))
        return self.int_expr(vars_, depth)

    def bool_expr(self, vars_: tuple[str, ...], depth: int = 2) -> str:
        r = self.rng
        if depth == 0 or r.random() < 0.5:
            if r.random() < 0.1:
                return r.choice(("true", "false"))
            if r.random() < 0.15 and vars_:
                return f"{r.choice(vars_)}.suspended"
            op = r.choice(("<", "<=", ">", ">=", "==", "!="))
            return f"{self.num_expr(vars_, 1)} {op} {self.num_expr(vars_, 1)}"
        if r.random() < 0.2:
            return f"not ({self.bool_expr(vars_, depth - 1)})"
        op = r.choice(("and", "or"))
        return f"({self.bool_expr(vars_, depth - 1)} {op} {self.bool_expr(vars_, depth - 1)})"

    def policy(self) -> str:
        r = self.rng
        lines = []
        keys = [f"{self.num_expr(('job',), 1)} {r.choice(('asc', 'desc'))}"
                for _ in range(r.randint(0, 2))]
        if keys:
            lines.append("order " + ", ".join(keys))
        lines.append("reserve 0")
        lines.append(f"backfill {r.choice(('first_fit', 'first_fit', 'none'))}")
        kinds = ("suspend", "checkpoint", "requeue", "malleable", "none")
        for _ in range(r.randint(0, 2)):
            lines.append(f"mechanism {r.choice(kinds)} when "
                         f"job.{r.choice(('id', 'procs', 'estimate'))} % {r.randint(2, 3)} == 0")
        lines.append(f"mechanism {r.choice(kinds[:4])}")
        by_order = r.random() < 0.4
        if by_order:
            lines.append("preempt by order")
            if r.random() < 0.5:  # papers/003's adaptive disciplines
                lines.append("size " + r.choice((
                    "job.min_size", "job.max_size", "(job.min_size + job.max_size) div 2",
                    "max(job.min_size, min(job.max_size, 3))", "job.procs")))
                if self.encodable and r.random() < 0.15:  # a pass that stops: size-bounds
                    lines[-1] = "size job.procs + job.id % 2"
            if r.random() < 0.5:
                lines.append(f"leftover {r.choice(('equal', 'efficient'))}")
            if r.random() < 0.3:
                lines.append(f"subset {r.randint(1, 6)}")
        else:
            lines.append(f"preempt when {self.bool_expr(('cand', 'victim'))}")
            if self.encodable and r.random() < 0.15:  # a pass that stops: well-defined
                lines[-1] += " and cand.estimate / (victim.procs - 1) >= 0"
            if r.random() < 0.5:
                lines.append(f"victims order {self.num_expr(('victim',), 1)} "
                             f"{r.choice(('asc', 'desc'))}")
        if r.random() < 0.3:
            lines.append(f"resident {r.randint(1, 3)}")
        if r.random() < 0.7:
            lines.append(f"keep job.since_start < {r.choice((1, 2, 5))}"
                         + (f" or {self.bool_expr(('job',), 1)}" if r.random() < 0.3 else ""))
        for cost in ("dispatch", "resume", "checkpoint"):
            if r.random() < 0.4:
                lines.append(f"cost {cost} {r.choice(('0', '1', '3', 'job.procs', '2.5'))}")
        if r.random() < 0.4:
            lines.append(f"limit preemptions {r.randint(1, 3)}")
        if r.random() < 0.5:
            lines.append(f"quantum {r.randint(1, 6)}")
        body = "\n  ".join(lines)
        return f"policy fuzz {{\n  machine m\n  {body}\n}}\n"


MACHINE = f"machine m {{\n  resource cpus = {CPUS}\n  resource memory = {MEMORY}\n}}\n"


def generate(seed: int) -> str:
    """A random preemptive policy, deterministic for ``seed``."""
    return MACHINE + _Gen(random.Random(seed)).policy()


def random_workload(rng: random.Random) -> Workload:
    """Rigid jobs, and in one workload of two moldable ones too (a range around the
    request, linear or Amdahl speedup)."""
    jobs, t = [], 0
    moldable = rng.random() < 0.5
    for i in range(rng.randint(1, 14)):
        t += rng.randint(0, 6)
        est = rng.randint(1, 14)
        run = rng.randint(0, est)
        procs = rng.randint(1, CPUS)
        shape = None
        if moldable and rng.random() < 0.7:
            speedup = rng.choice((Linear(), Amdahl(0.1), Amdahl(0.5)))
            shape = Moldable(rng.randint(1, procs), rng.randint(procs, CPUS), speedup)
        jobs.append(Job(i + 1, i, t, run, est, (procs, rng.randint(0, MEMORY)),
                        moldable=shape))
    return Workload(tuple(jobs), ("cpus", "memory"), (CPUS, MEMORY))


def _show(load: Workload) -> str:
    return "; ".join(f"{j.id}:{j.submit}+{j.run_time}/{j.estimate}x{j.request}"
                     for j in load.jobs)


def _check_run(run, policy_text: str, limit: int | None) -> str | None:
    for life in run.lives:
        job = life.job
        if life.phase != "completed" or life.done != Fraction(1):
            return f"job {job.id} ended {life.phase} with {life.done} done"
        segments = life.segments
        runs = [s for s in segments if s.phase == "running"]
        sizes = {len(s.processors) for s in runs}
        if sizes == {job.procs} and life.acquired - life.lost != job.run_time * job.procs:
            return f"job {job.id}: acquired {life.acquired} - lost {life.lost} != work"
        if not sizes <= set(range(job.min_procs, job.max_procs + 1)):
            return f"job {job.id} ran at sizes {sorted(sizes)} outside its range"
        if life.mechanism == "checkpoint" and len(sizes) > 1:
            return f"job {job.id}, migratable, ran at sizes {sorted(sizes)}"
        if not life.lost and all(life.time_at(n) for n in sizes):
            # its runs at the speed of their sizes do its work once, ending at the first
            # whole second where it is done
            work = sum(Fraction(s.end - s.start, life.time_at(len(s.processors)))
                       for s in runs)
            if not 1 <= work < 1 + Fraction(1, life.time_at(len(runs[-1].processors))):
                return f"job {job.id}: its runs did {work} of its work"
        for a, b in zip(segments, segments[1:], strict=False):
            if a.end != b.start and life.mechanism != "requeue":  # requeued: pending between
                return f"job {job.id}: a gap between its segments at {a.end}..{b.start}"
        if segments and segments[0].start < job.submit:
            return f"job {job.id} starts before its submission"
        if life.mechanism == "suspend" and len({s.processors for s in segments}) > 1:
            return f"job {job.id} resumed on other processors"
        if limit is not None and life.preemptions.total() > limit:
            return f"job {job.id} preempted {life.preemptions.total()} times, limit {limit}"
    return None


def fuzz_one(seed: int, workloads: int = 6,
             on_failure: Callable[[Failure], None] | None = None) -> list[Failure]:
    """Generate policy ``seed`` and run it on ``workloads`` random workloads; the failures."""
    text = generate(seed)
    ir_policy = compile_source(text, f"<fuzz {seed}>")
    policy = to_runtime(ir_policy)
    rules = policy.preemption
    assert rules is not None
    rng = random.Random(seed * 7919 + 1)
    out = []
    for _ in range(workloads):
        load = random_workload(rng)
        what = _one(policy, rules, load, text)
        if what is not None:
            failure = Failure(seed, text, _show(load), what)
            out.append(failure)
            if on_failure is not None:
                on_failure(failure)
    return out


def _one(policy, rules, load: Workload, text: str) -> str | None:
    try:
        run = simulate_preemptive(policy, rules, load, stall=STALL)
    except MonitorViolation as stop:
        message = str(stop)
        if stop.kind == "well-defined" or "livelocks" in message:
            if rules.split is not None:  # the whole rule stops the same way
                try:
                    simulate_preemptive(policy, attrs.evolve(rules, split=None), load, stall=STALL)
                except MonitorViolation as whole:
                    if str(whole) != message:
                        return f"split: {message}; whole: {whole}"
                else:
                    return f"the split rule stops the run, the whole one does not: {message}"
            return None  # the policy's own doing
        return f"monitor: {message}"
    except Exception as exc:  # noqa: BLE001 - any crash is a finding
        return f"crash: {type(exc).__name__}: {exc}"
    problem = _check_run(run, text, rules.limit)
    if problem is not None:
        return problem
    again = simulate_preemptive(policy, rules, load, stall=STALL)
    if [(r.start, r.end) for r in again.schedule.records] != [
            (r.start, r.end) for r in run.schedule.records]:
        return "not deterministic: a second run differs"
    if rules.split is not None:  # the rule by side (rule_split.py) decides as the whole rule
        try:
            whole = simulate_preemptive(policy, attrs.evolve(rules, split=None), load, stall=STALL)
        except MonitorViolation as stop:
            return f"the whole rule stops the run, the split one does not: {stop}"
        if [(r.start, r.end) for r in whole.schedule.records] != [
                (r.start, r.end) for r in run.schedule.records]:
            return "the rule by side gives another schedule than the whole rule"
    if comparable(text) and all(m == "none" for m in map(rules.mechanism, load.jobs)):
        rigid = to_runtime(compile_source(_rigid_text(text), "<rigid>"))
        want = [(r.start, r.end) for r in simulate(rigid, load).records]
        if [(r.start, r.end) for r in run.schedule.records] != want:
            return "jobs never preempted, yet the schedule is not the rigid one"
    return None


def comparable(text: str) -> bool:
    """The policy without preemption means the same: its order reads nothing a job has run
    and no dispatch cost delays its starts."""
    order = next((line for line in text.splitlines() if line.strip().startswith("order")), "")
    return "cost dispatch" not in text and not any(
        a in order for a in ("acquired", "since_start", "preemptions", "suspended")) and not any(
        f"\n  {clause} " in text for clause in ("size", "leftover", "subset"))


def _rigid_text(text: str) -> str:
    """The policy without its preemption clauses (its machine, order and backfill kept)."""
    head, policy = text.split("policy ", 1)
    keep = ("machine", "order", "reserve", "backfill")
    lines = [line for line in policy.splitlines()[1:]
             if line.strip().split(" ")[0] in keep]
    return head + "policy " + policy.splitlines()[0] + "\n" + "\n".join(lines) + "\n}\n"
