"""The verdicts of a preemptive policy (``verify_preemptive``): each property of
``properties.py`` checked on its own solver, "assumptions and pass and not property"
unsatisfiable being a proof for every state within the bounds; a model is decoded as a
state file (``counterexample``: the fewest jobs, then the least numbers) that the
simulator's replay must stop on for the same property before it is reported.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from contextlib import nullcontext
from fractions import Fraction
from typing import Any

import attrs
import z3

from schedc.dsl import ir
from schedc.dsl.number_text import json_number
from schedc.dsl.verify.budget import Budget, OutOfTime, running
from schedc.dsl.verify.budget import add as add_in_time
from schedc.dsl.verify.budget import check as budget_check
from schedc.dsl.verify.checker import (
    EQUATIONS,
    REPLAY_TRIES,
    WAITING,
    Progress,
    Replay,
    Vacuity,
    context_work,
    least_clash,
    located,
    undecided,
)
from schedc.dsl.verify.counterexample import model_value
from schedc.dsl.verify.preemption.books import ACTIONS, NO_ACTION
from schedc.dsl.verify.preemption.groups import group_count
from schedc.dsl.verify.preemption.passes import PreemptivePass, encode_preemptive
from schedc.dsl.verify.preemption.properties import parts, runs_through
from schedc.dsl.verify.preemption.slots import (
    PENDING,
    RUNNING,
    STOPPED,
    SUSPENDED,
    PreemptiveState,
    Unencodable,
    count,
)
from schedc.dsl.verify.verdict import Bounds, Limits, Verdict, vacuous
from schedc.dsl.verify.vocabulary import (
    PREEMPTIVE_PASS,
    PREEMPTIVE_PROPERTIES,
    PREEMPTIVE_RLIMIT,
    PROCESSORS,
    RLIMIT,
)
from schedc.dsl.verify.z3context import entered, fresh_context

# a part is first tried on the symmetric encoding with 1/SYMMETRIC_SHARE of its rlimit
SYMMETRIC_SHARE = 4
# the properties whose proofs over groups are given the pass's lemmas (counts: a start's
# size against its take, a job's room). The others read no such count (capacity: who holds
# a group; well-defined: formulas), and there the lemmas only made Z3's search longer
# (measured, Z3's units at --processors 16: SLURM-SUSPEND's capacity 31.6 million with
# them, 20.1 without; MALL-AD's size-bounds 4.7 and 0.8)
COUNTED = ("mechanism", "progress")
# where the groups find a violation, a counterexample is first sought on a machine of at
# most this many processors (``_violated_on_small_machine``): the default processor bound
SMALL_MACHINE = PROCESSORS
# what a proof of a property other than well-defined and size-bounds assumes (``_check``)
RUNS_THROUGH = "the pass runs through (no formula fails, no size is out of range)"
# what a property was doing when its time ran out, encoding its pass (every property's: the
# others are not tried again, ``_AGAIN``)
ENCODING = "while encoding the pass"
_AGAIN = " (not tried again for this property: its pass is the same)"
# the same, of the pass over groups of processors (the others then skip it)
GROUPING = "while encoding the pass over groups of processors"
# what every verdict leaves out
SCOPE = ("states where no dispatch or checkpoint is in flight and no claim waits (the pass "
         "after such a state makes them: those are encoded)")
# what a verdict leaves out under `--overrun kill` or `estimate` (``slots.OVERRUN_ASSUMED``)
WITHIN_ESTIMATES = ("runs in which every running job has run less than its estimate "
                    "(`schedc run --overrun estimate`, the default, or `kill`): verify with "
                    "--overrun extend to cover jobs that outlive their estimates")


def caveats(st: PreemptiveState) -> tuple[str, ...]:
    """What a proof of ``st``'s pass leaves out, each a sentence: the scope, the overrun
    mode, and the processor bound where the machine's cpus are not fixed within it. The
    monitor checks a run against each (``runtime/engine/preemptive_checks.py``)."""
    out = [f"proved for {SCOPE}"]
    if not st.outruns:
        out.append(f"proved for {WITHIN_ESTIMATES}")
    if not st.grouped and st.policy.machine.resources[0].capacity is None:
        out.append(f"proved for machines of at most {st.P} processors: raise --processors")
    return tuple(out)


def bound_text(bounds: Bounds, policy: ir.Policy, every_size: bool = False) -> str:
    waiting, running = bounds.preemptive
    machine = "any number of processors" if every_size else f"P={bounds.processors} processors"
    return f"N={waiting} waiting, R={running} running, {machine}, K={len(policy.machine.resources)}"


def verify_preemptive(policy: ir.Policy, bounds: Bounds, limits: Limits,
                      only: Iterable[str] | None = None, replay: Replay | None = None,
                      progress: Progress | None = None
                      ) -> list[Verdict]:
    """Every property of a preemptive ``policy`` (those in ``only``), in report order;
    ``progress`` is told each property as it starts."""
    wanted = [n for n in PREEMPTIVE_PROPERTIES if only is None or n in set(only)]
    bound = bound_text(bounds, policy)
    location = policy.preemption.span  # type: ignore[union-attr]
    # the time limit is each property's CPU time, all it does (``budget.py``)
    seconds = limits.timeout_ms / 1000
    verdicts: list[Verdict] = []
    encoding_ran_out: Verdict | None = None  # every property's pass: it would run out again
    grouped = GroupedPass(policy, bounds) if GroupedPass.covers(policy, bounds) else None
    for name in wanted:
        if encoding_ran_out is not None:
            verdicts.append(attrs.evolve(encoding_ran_out, property=name, seconds=0.0,
                                         work=0, reason=encoding_ran_out.reason + _AGAIN))
            continue
        if progress is not None:
            progress(name, None)
        # each property in a Z3 context of its own, its pass encoded there: Z3's search
        # follows the terms' numbering, which every check made before moves, and a verdict
        # (a proof, or the counterexample found) depended on the properties asked before it
        with fresh_context():
            budget = Budget(seconds, z3.main_ctx().interrupt)
            try:
                with budget:
                    verdict = _verify_one(policy, bounds, name, bound, limits, replay, budget,
                                          grouped)
            except Unencodable as exc:
                reason = f"{exc}: nothing is proved of this policy's pass"
                return [*verdicts, *(Verdict(n, "unknown", 0.0, bound, location=location,
                                             reason=reason)
                                     for n in wanted[len(verdicts):])]
            except OutOfTime as exc:
                verdict = Verdict(name, "unknown", 0.0, bound, location=location,
                                  reason=str(exc))
            # Z3's resource units the property took (the same on any machine: its context
            # is fresh); its CPU seconds
            verdicts.append(attrs.evolve(verdict, work=context_work(),
                                         seconds=budget.spent()))
            if budget.doing == ENCODING:  # its time ran out before the pass was encoded
                encoding_ran_out = verdicts[-1]
    return verdicts


def _verify_one(policy: ir.Policy, bounds: Bounds, name: str, bound: str, limits: Limits,
                replay: Replay | None, budget: Budget, grouped: GroupedPass | None = None
                ) -> Verdict:
    """Property ``name``, its pass encoded in the current context (``budget`` counts it):
    first over groups of processors (a proof for every machine size), else over at most
    P processors."""
    if grouped is not None:
        verdict = grouped.prove(name, limits, budget)
        if verdict is not None:
            return verdict
        if name in grouped.refuted and bounds.processors > SMALL_MACHINE:
            verdict = _violated_on_small_machine(policy, bounds, name, bound, limits, replay,
                                                 budget)
            if verdict is not None:
                return verdict
    budget.doing = ENCODING
    sym = encode_preemptive(policy, *bounds.preemptive, bounds.processors,
                            overrun=bounds.overrun)
    # the proofs' encoding: any free processors, one numbering per state (``passes``'
    # doc); the exact one finds and replays counterexamples. Only for `preempt by order`:
    # a rule's victims are counted on the books its starts leave, which any choice of
    # processors makes harder, not easier
    proof = encode_preemptive(policy, *bounds.preemptive, bounds.processors,
                              overrun=bounds.overrun, symmetric=True) \
        if sym.state.select else None
    budget.doing = ""
    verdict = _check(sym, name, bound, limits, replay, proof)
    if verdict.status == "proved":
        verdict = _unless_vacuous(sym, verdict, limits)
    return verdict


def _violated_on_small_machine(policy: ir.Policy, bounds: Bounds, name: str, bound: str,
                               limits: Limits, replay: Replay | None, budget: Budget
                               ) -> Verdict | None:
    """Property ``name`` violated by a state of at most ``SMALL_MACHINE`` processors (one of
    the states within the bounds, found sooner than over P: most violations need few
    processors, and such a counterexample is smaller to read), or None: none found there,
    or the machine is larger."""
    budget.doing = ENCODING
    try:
        sym = encode_preemptive(policy, *bounds.preemptive, SMALL_MACHINE,
                                overrun=bounds.overrun)
    except Unencodable:  # the machine's cpus are fixed above it
        return None
    finally:
        budget.doing = ""
    verdict = _check(sym, name, bound, limits, replay)
    return verdict if verdict.status == "violated" else None


class GroupedPass:
    """The pass over groups of processors (``groups.py``), encoded once for every property
    in a Z3 context of its own: each property's check moves the formulas it reads into the
    property's context (their numbering there depends on them alone, as a fresh encoding's
    would). A property it proves holds for every machine size; its models choose any free
    processors, so a state it finds is not reported (the exact encoding looks for one)."""

    # more groups than this and the proofs take longer than the per-processor encoding's
    # (measured: 43 groups prove MLF's pass in seconds, 256 do not prove SRPT's in minutes)
    MOST = 96

    def __init__(self, policy: ir.Policy, bounds: Bounds) -> None:
        self.policy, self.bounds = policy, bounds
        self.sym: PreemptivePass | None = None
        self.context: z3.Context | None = None
        self.refused = False
        # whether its assumptions, a waiting job and a pass that runs through admit a state
        # (``admits_a_state``; None: not asked yet)
        self.admits: bool | None = None
        # the properties a state of the groups violates (the per-processor encodings then
        # look for a state that replays, first on a small machine)
        self.refuted: set[str] = set()

    @classmethod
    def covers(cls, policy: ir.Policy, bounds: Bounds) -> bool:
        return group_count(policy, *bounds.preemptive) <= cls.MOST

    def encoded(self) -> PreemptivePass | None:
        """The grouped pass, or None where it cannot be had: not encodable, or the time
        of the property that encodes it ran out (then the others use the per-processor
        encodings, each in its own time)."""
        if self.sym is None and not self.refused:
            self.refused = True  # until it is made
            with fresh_context() as context:
                try:
                    self.sym = encode_preemptive(self.policy, *self.bounds.preemptive,
                                                 self.bounds.processors,
                                                 overrun=self.bounds.overrun, grouped=True)
                    self.context, self.refused = context, False
                except Unencodable:
                    pass
        return self.sym

    def prove(self, name: str, limits: Limits, budget: Budget) -> Verdict | None:
        """Property ``name`` proved for every machine size (or vacuous), or None: not
        proved so (the caller tries the per-processor encodings)."""
        started = time.process_time()
        budget.doing = GROUPING
        sym = self.encoded()
        budget.doing = ""
        if sym is None:
            return None

        inside = self.inside
        with inside():  # all of its parts at once: over groups, faster than one by one
            made = [*_base(sym, name), z3.Not(z3.And(parts(sym, name)))]
        rlimit = PREEMPTIVE_RLIMIT if limits.rlimit == RLIMIT else limits.rlimit
        solver = _solver()
        solver.set("rlimit", rlimit)
        add_in_time(solver, moved(made))
        result = solver.check()
        if result != z3.unsat:
            budget_check()  # cut short by the time limit: this property's
            if result == z3.sat:
                self.refuted.add(name)
            return None
        st = sym.state
        verdict = Verdict(name, "proved", time.process_time() - started,
                          bound_text(self.bounds, self.policy, every_size=True),
                          location=self.policy.preemption.span,  # type: ignore[union-attr]
                          caveats=caveats(st))
        if self.admits_a_state(limits):
            return verdict
        return _unless_vacuous(sym, verdict, limits, moved, inside)

    def inside(self) -> Any:
        """The grouped pass's context entered (its terms are made there)."""
        assert self.context is not None
        return entered(self.context)

    def admits_a_state(self, limits: Limits) -> bool:
        """Whether the grouped pass's assumptions, its equations, a waiting job and a pass
        that runs through admit a state: then every property's do (a state of them is one
        of each property's: ``_unless_vacuous``), and no proof is vacuous. Asked once, in a
        context of its own, so that a property's search (its units counted) is the same
        whether it is verified alone or after others; where no state is found, each proof
        is checked on its own (``_unless_vacuous``: the clash, or unknown)."""
        if self.admits is None:
            assert self.sym is not None
            with fresh_context():
                found = _vacuity(self.sym, True, limits, moved, self.inside)
            self.admits = not found.clash and found.unknown is None
        return self.admits


def moved(formulas: list[z3.BoolRef]) -> list[z3.BoolRef]:
    """``formulas`` in the current context, moved in one call (their shared terms once)."""
    if not formulas or formulas[0].ctx == z3.main_ctx():
        return formulas
    vector = z3.AstVector(ctx=formulas[0].ctx)
    for f in formulas:
        vector.push(f)
    return list(vector.translate(z3.main_ctx()))


def _unless_vacuous(sym: PreemptivePass, verdict: Verdict, limits: Limits,
                    move: Callable[[list[z3.BoolRef]], list[z3.BoolRef]] = list,
                    inside: Callable[[], Any] = nullcontext) -> Verdict:
    """``verdict`` (proved), unless the assumptions its proof used (``_check``'s base), and
    a waiting job (the simulator passes only then: ``pass_runs``), admit no state: then
    vacuous, naming the clash (or unknown if Z3 cannot tell). Checked for each property
    in its own context, as its proof."""
    found = _vacuity(sym, _runs_through_assumed(verdict.property), limits, move, inside)
    if found.clash:
        return vacuous(verdict, located(sym.state.policy, found.clash), *(
            ["every pass where a job waits stops: see well-defined and size-bounds"]
            if RUNS_THROUGH in found.clash else []))
    if found.unknown is not None:
        return attrs.evolve(verdict, status="unknown", caveats=(),
                            reason=undecided(found.unknown))
    return verdict


def _vacuity(sym: PreemptivePass, through: bool, limits: Limits,
             move: Callable[[list[z3.BoolRef]], list[z3.BoolRef]] = list,
             inside: Callable[[], Any] = nullcontext) -> Vacuity:
    """Whether the pass's assumptions, its equations, a waiting job (and, with ``through``,
    a pass that runs through) admit a state: first on the fast solver of the proofs (no
    core), then, only if they do not, the least clash on a tracking one. ``move`` brings
    each formula into the current context from the one ``inside`` enters, where they are
    made (``GroupedPass``'s context)."""
    st = sym.state
    with inside():
        named = [*st.assumptions, (EQUATIONS, z3.And(st.definitions)),
                 (WAITING, st.pass_runs)]
        if through:
            named.append((RUNS_THROUGH, runs_through(sym)))
        alone = [z3.Not(s.present) for s in st.slots[1:]]
    formulas = move([f for _, f in named] + alone)
    named, alone = ([(n, f) for (n, _), f in zip(named, formulas[:len(named)], strict=True)],
                    formulas[len(named):])
    rlimit = PREEMPTIVE_RLIMIT if limits.rlimit == RLIMIT else limits.rlimit
    # first a state of one job, waiting (the other slots empty): a state of it is one of
    # the whole, and Z3 finds it at once where the whole search can run out of its limit
    # (a nonlinear `keep` ran out after capacity's checks had numbered the context)
    lone = _solver()
    lone.set("rlimit", max(1, rlimit // SYMMETRIC_SHARE))
    add_in_time(lone, [*(f for _, f in named), *alone])
    if lone.check() == z3.sat:
        return Vacuity()
    solver = _solver()
    solver.set("rlimit", rlimit)  # the time limit is the property's (``budget.py``)
    add_in_time(solver, [f for _, f in named])
    result = solver.check()
    if result == z3.sat:
        return Vacuity()
    if result == z3.unknown:
        budget_check()  # cut short by the time limit: this property's, not cached
        return Vacuity(unknown=str(solver.reason_unknown()))
    return least_clash(named, attrs.evolve(limits, rlimit=rlimit))


def _runs_through_assumed(name: str) -> bool:
    """Whether the proof of property ``name`` assumes that the pass runs through (no formula
    fails, no size is out of range: ``_check``); well-defined and size-bounds prove it."""
    return name not in ("well-defined", "size-bounds")


def _base(sym: PreemptivePass, name: str) -> list[z3.BoolRef]:
    """What a check of property ``name`` assumes: the state's assumptions, the pass's
    definitions and lemmas (over groups, only for the properties that count processors
    against sizes: ``COUNTED``), and (``_runs_through_assumed``) a pass that runs through."""
    st = sym.state
    lemmas = sym.lemmas if name in COUNTED or not st.grouped else ()
    base = [*(f for _, f in st.assumptions), *st.definitions, *lemmas]
    if _runs_through_assumed(name):
        base.append(runs_through(sym))
    return base


def _check(sym: PreemptivePass, name: str, bound: str, limits: Limits,
           replay: Replay | None, proof: PreemptivePass | None = None) -> Verdict:
    """One property: each of its parts (``properties.parts``) on a fresh solver of its
    own (an incremental one carries what earlier checks learned, and got slower), each check
    within the rlimit, all of them within the property's time limit (``budget.py``). A part
    is first proved on ``proof`` (the symmetric encoding: ``passes``' doc), and only where
    that fails (a state of any numbering, or out of limits) sought on ``sym``, whose states
    replay."""
    started = time.process_time()
    st = sym.state
    base = _base(sym, name)
    location = st.policy.preemption.span  # type: ignore[union-attr]
    rlimit = PREEMPTIVE_RLIMIT if limits.rlimit == RLIMIT else limits.rlimit
    exact = parts(sym, name)
    symmetric = parts(proof, name) if proof is not None else []
    # the two encodings make the same checks in the same order (only the takes differ)
    proof_base = _base(proof, name) if proof is not None and len(symmetric) == len(exact) \
        else None
    for i, part in enumerate(exact):
        budget_check()
        if proof_base is not None:
            solver = _solver()
            # a share of the part's units: where the symmetric encoding does not help (a
            # part that reads no take), the exact one still gets all of them
            solver.set("rlimit", max(1, rlimit // SYMMETRIC_SHARE))
            add_in_time(solver, [*proof_base, z3.Not(symmetric[i])])
            if solver.check() == z3.unsat:
                continue
        solver = _solver()
        solver.set("rlimit", rlimit)
        add_in_time(solver, [*base, z3.Not(part)])  # the time limit checked between
        verdict = _refute(sym, solver, name, bound, rlimit, replay, started, location, i)
        if verdict is not None:
            return verdict
    return Verdict(name, "proved", time.process_time() - started, bound, location=location,
                   caveats=caveats(st))


def _refute(sym: PreemptivePass, solver: z3.Solver, name: str, bound: str, rlimit: int,
            replay: Replay | None, started: float, location: Any,
            part: int) -> Verdict | None:
    """None if the solver's part holds; else the violated verdict of a counterexample that
    replays, or unknown."""
    last: str | None = None  # what the last replay said, of a state that did not replay
    replayable = sym.state.replayable()
    held_back = False  # a state no state file holds was found: only others are looked for
    budget = running()
    for _ in range(REPLAY_TRIES):
        out = budget is not None and budget.expired()
        result = z3.unknown if out else solver.check()  # the watchdog may interrupt it
        out = budget is not None and budget.expired()
        seconds = time.process_time() - started
        if result == z3.unsat:
            if held_back:
                return Verdict(name, "unknown", seconds, bound, location=location,
                               reason=_unreplayable(name, last))
            if last is None:
                return None
            break
        if result != z3.sat:
            where = f"on part {part + 1} of the property"
            return Verdict(name, "unknown", seconds, bound, location=location,
                           reason=budget.reason(where) if out and budget is not None
                           else _unknown(str(solver.reason_unknown()), part, rlimit))
        if not held_back and not z3.is_true(solver.model().eval(replayable,
                                                                model_completion=True)):
            held_back = True
            solver.add(replayable)
            continue
        model = _fewest_jobs(solver, sym)
        cex = counterexample(sym, model)
        if replay is None:
            return Verdict(name, "violated", seconds, bound, location=location,
                           reason=_what(name), counterexample=cex)
        kind, message = replay(cex)
        if kind == name:
            return Verdict(name, "violated", time.process_time() - started, bound,
                           location=location, reason=f"{_what(name)}; the replay: {message}",
                           counterexample=cex)
        last = message
        solver.add(z3.Not(_same_state(sym, model)))
    return Verdict(name, "unknown", time.process_time() - started, bound, location=location,
                   reason=(f"Z3 finds states that violate `{name}`, but the simulator's "
                           f"replay does not stop for it (the last: {last}): the encoding "
                           "and the simulator disagree, which is a bug of schedc; please "
                           "report it"))


def _unreplayable(name: str, last: str | None) -> str:
    """Why a property is unknown whose every violation Z3 finds has a running job that ran
    as long as its estimate or longer (``PreemptiveState.replayable``)."""
    tried = f" (the others' replay: {last})" if last is not None else ""
    return (f"Z3 finds states that violate `{name}` only where a running job has run as long "
            "as its estimate or longer (under --overrun extend, or on fewer cpus than it "
            "asked for), and a state file cannot hold such a job (its run time is at most "
            f"its estimate), so none is replayed{tried}: the property is not proved")


def _unknown(why: str, part: int, rlimit: int) -> str:
    # no time in it: the same inputs give the same report (the CPU seconds are the verdict's)
    where = f"on part {part + 1} of the property"
    if "canceled" in why or "resource" in why:  # out of time is the budget's to say
        return (f"Z3's resource limit ran out {where}: raise --rlimit (each part may spend "
                f"{rlimit:,} units), or lower --queued, --running or --processors")
    return f"Z3 gave up {where}: {why}"


def _solver() -> z3.Solver:
    """A solver that first substitutes the pass's definitions (its books, renamed at each
    step, are equations ``v == term``) and simplifies: the checks of a preemptive pass are
    several times faster so than on the default solver."""
    return z3.Then("simplify", "propagate-values", "solve-eqs", "elim-uncnstr",
                   "smt").solver()


def _what(name: str) -> str:
    return {
        "capacity": "a resource is overcommitted after the pass",
        "size-bounds": "a `size` lies outside the job's range",
        "well-defined": "a formula fails",
        "protected": "a protected job is preempted",
        "mechanism": "a job is moved against its mechanism",
        "no-superfluous-preemption": "a job is preempted that no placed job needed",
        "progress": ("the head of the order is not placed, though preempting the jobs that "
                     "may be preempted would make room for it"),
    }[name]


def _fewest_jobs(solver: z3.Solver, sym: PreemptivePass) -> z3.ModelRef:
    """A model with as few jobs as the solver finds within its limits (a readable
    counterexample; out of time, the least found so far)."""
    model = solver.model()
    slots = sym.state.slots
    budget = running()
    for objective in (count([s.present for s in slots]),
                      count([z3.And(s.present, s.job.moldable) for s in slots])):
        best = model.eval(objective, model_completion=True).as_long()
        for target in range(best):
            if budget is not None and budget.expired():
                break
            solver.push()
            solver.add(objective <= target)
            found = solver.check() == z3.sat
            if found:
                model = solver.model()
            solver.pop()
            if found:
                break
        solver.add(objective <= model.eval(objective, model_completion=True).as_long())
    return model


def counterexample(sym: PreemptivePass, model: z3.ModelRef) -> dict[str, Any]:
    """The model as a state file for `schedc run --state` (runtime/workloads/state_file.py),
    with the pass's actions (``pass``) beside it."""
    st = sym.state

    def value(term: z3.ExprRef) -> Any:
        return model_value(model, term)

    names = [r.name for r in st.policy.machine.resources]
    lists: dict[int, list[tuple[int, dict[str, Any]]]] = {p: [] for p in range(4)}
    actions = []
    for s in st.slots:
        if not value(s.present):
            continue
        j = s.job
        estimate = value(j.estimate)
        job: dict[str, Any] = {
            "id": value(j.id), "submit": value(j.submit),
            "estimate": estimate, "run_time": estimate,
            "request": {n: value(j.request[k]) for k, n in enumerate(names)},
            **{a: value(v) for a, v in j.labels.items()}}
        phase = value(s.phase)
        # a fraction done only where formulas read it (a state file checks a running
        # job's against its run time)
        progress = value(s.progress) if st.reads_progress else 0
        points = {1: value(j.work), value(j.request[0]): estimate}
        if phase == RUNNING:
            progress, point = _running_progress(value, s, points, st.reads_progress)
            points |= point
        if value(j.moldable):
            job |= {"min_size": value(j.min_size), "max_size": value(j.max_size),
                    "speedup": "measured(" + ", ".join(f"{n}:{t}" for n, t in
                                                        sorted(points.items())) + ")"}
        procs = [p for p, b in enumerate(s.procs) if value(b)]
        history: dict[str, Any] = {"acquired": value(s.acquired),
                                   "preemptions": value(s.preemptions)}
        if progress:
            history["progress"] = json_number(progress)
        if phase == RUNNING:
            # a moldable job running at another size than its request says so (the state
            # file reads a running job's size from its request otherwise)
            resized = value(s.size) != value(j.request[0])
            history = {"start": value(s.last_start),
                       **({"size": value(s.size)} if resized else {}), "processors": procs,
                       **history}
        elif phase == SUSPENDED:
            history = {"processors": procs, **history}
        elif phase == STOPPED:
            history = {"size": value(s.size), **history}
        if phase != RUNNING and value(s.ran):
            history["last_start"] = value(s.last_start)
        if phase == PENDING and not value(s.ran):
            history = {}
        lists[phase].append((value(s.index), job | history))
        action = value(sym.books.action[s.n])
        if action != NO_ACTION:
            actions.append({"job": job["id"], "action": ACTIONS[action],
                            "processors": [p for p, b in enumerate(sym.books.action_procs[s.n])
                                           if value(b)]})

    def ordered(phase: int) -> list[dict[str, Any]]:
        return [job for _, job in sorted(lists[phase], key=lambda p: p[0])]

    out: dict[str, Any] = {
        "now": value(st.now),
        "capacity": {n: value(st.capacity[k]) for k, n in enumerate(names)},
        "params": {name: json_number(value(v)) for name, v in st.params.items()},
        "running": ordered(RUNNING), "queue": ordered(PENDING),
    }
    if lists[SUSPENDED]:
        out["suspended"] = ordered(SUSPENDED)
    if lists[STOPPED]:
        out["stopped"] = ordered(STOPPED)
    # its replay checks the first pass for the properties the after-pass books do not see
    out["check"] = [PREEMPTIVE_PASS]
    out["pass"] = {"actions": actions}
    return out


def _running_progress(value: Any, s: Any, points: dict[int, int], reads: bool
                      ) -> tuple[Fraction, dict[int, int]]:
    """A running job's progress at its start, and the point of its speedup table that
    gives its run time T at its size: its estimate at its request, its work on one cpu
    (both in ``points``); on another size of a moldable job T is free. Where formulas read
    its progress (``reads``), its progress now must be the model's: the progress at start
    is that less its run since over T, and a free T is the least whole one that keeps it
    >= 0. Else the progress is 0 and a free T one second longer than its run."""
    elapsed = value(s.job.active.since_start)
    size = value(s.size)
    if not reads:
        return Fraction(0), ({} if size in points else {size: elapsed + 1})
    now_ = value(s.progress_now)
    if size in points:
        t = points[size]
        return now_ - Fraction(elapsed, t), {}
    t = max(1, math.ceil(elapsed / now_)) if now_ > 0 else value(s.job.estimate)
    return now_ - Fraction(elapsed, t), {size: t}


def _same_state(sym: PreemptivePass, model: z3.ModelRef) -> z3.BoolRef:
    """The pass's inputs equal their values in ``model`` (to exclude that state)."""
    st = sym.state
    inputs: list[z3.ExprRef] = [st.now, *st.capacity, *st.params.values()]
    for s in st.slots:
        j = s.job
        inputs += [j.present, j.id, j.submit, j.estimate, *j.request, j.moldable, j.min_size,
                   j.max_size, j.work, *j.labels.values(), s.index, s.phase, *s.procs, s.size,
                   s.acquired, s.ran, s.last_start, s.preemptions]
        if st.reads_progress:
            inputs += [s.progress, s.job.active.progress]  # type: ignore[union-attr]
    return z3.And([t == model.eval(t, model_completion=True) for t in inputs
                   if not (z3.is_int_value(t) or z3.is_true(t) or z3.is_false(t))])
