"""The encoded preemptive pass against the simulator's, state by state: a random preemptive
policy (``preemption_fuzz``'s generator, without what the encoding refuses) and a random
state of jobs in every phase (running on processors, suspended on theirs, stopped,
pending or requeued) are given to both. The simulator replays the state (``--state``) and
reports its first pass's actions; the encoding, its slots pinned to the state's jobs, must
(1) admit the state (else an assumption excludes states the simulator reaches: proofs
would be unsound), (2) give every job the simulator's action on the simulator's
processors, and (3) give nothing else (no other outcome of the pass is satisfiable). A
first pass the simulator stops (a formula fails, a `size` out of range) must be one the
encoding says does not run through. The proofs' encoding (``symmetric``: any free
processors where the simulator takes the lowest) must (4) admit the simulator's pass,
actions and processors, or its stop: it may allow more, never less.

No pytest here: ``tests/dsl/verify/test_preemptive_agreement.py`` runs seeds and
``benchmarks/fuzz_preemptive_verify.py`` a campaign. Deterministic for a seed.
"""

from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction
from typing import Any

import z3
from attrs import frozen

from schedc.dsl import compile_source
from schedc.dsl.semantics.numbers import EvaluationError
from schedc.dsl.verify.preemption.books import ACTIONS
from schedc.dsl.verify.preemption.groups import group_count
from schedc.dsl.verify.preemption.passes import PreemptivePass, encode_preemptive
from schedc.dsl.verify.preemption.properties import runs_through
from schedc.dsl.verify.preemption.slots import (
    MECHANISMS,
    PENDING,
    PHASES,
    RUNNING,
    STOPPED,
    SUSPENDED,
    Unencodable,
)
from schedc.dsl.verify.vocabulary import OVERRUN
from schedc.dsl.verify.z3context import fresh_context
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.monitor import MonitorViolation
from schedc.runtime.engine.preemptive import simulate_preemptive
from schedc.runtime.jobs import Job
from tests.support.preemption_fuzz import CPUS, MACHINE, MEMORY, _Gen

PROCESSORS = CPUS  # the encoding's processor bound: the fuzz machine's cpus
GROUPS_CHECKED = 160  # ``admitted_grouped``'s most groups


@frozen
class Disagreement:
    seed: int
    policy: str
    state: dict[str, Any]
    what: str


def encodable_policy(seed: int) -> str:
    """A random preemptive policy the encoding covers, deterministic for ``seed``."""
    return MACHINE + _Gen(random.Random(seed), encodable=True).policy()


def random_state(rng: random.Random, mechanism: Any, limit: int | None,
                 resident: int | None, most: tuple[int, int] | None = None,
                 cpus: int = CPUS) -> dict[str, Any]:
    """A state file's data: jobs in phases their mechanisms allow, on processors; ``most``:
    at most so many waiting and running jobs (a verifier's bounds); a machine of ``cpus``."""
    now = rng.randint(0, 30)
    owner: dict[int, int] = {}  # processor -> running job id
    residents = [0] * cpus
    memory = 0
    lists: dict[int, list[dict[str, Any]]] = {p: [] for p in range(4)}
    for jid in range(rng.randint(1, 7)):
        procs = rng.choice((rng.randint(1, cpus), rng.randint(1, 3)))
        estimate = rng.randint(1, 14)
        job: dict[str, Any] = {"id": jid, "submit": rng.randint(0, now), "estimate": estimate,
                               "run_time": estimate,
                               "request": {"cpus": procs, "memory": rng.randint(0, MEMORY // 2)}}
        try:
            mech = mechanism(Job(jid, jid, job["submit"], estimate, estimate,
                                 (procs, job["request"]["memory"])))
        except EvaluationError:  # its mechanism's condition fails: the replay stops there
            mech = None
        cap = limit if limit is not None else 3
        low = high = procs  # its size range: moldable jobs sometimes
        if rng.random() < 0.3:
            low, high = rng.randint(1, procs), rng.randint(procs, cpus)
            job |= {"min_size": low, "max_size": high, "speedup": "linear"}
        phases = [PENDING]
        free = [p for p in range(cpus) if p not in owner and (
            resident is None or residents[p] < resident)]
        fits_memory = memory + job["request"]["memory"] <= MEMORY
        if len(free) >= procs and fits_memory and job["submit"] <= now - 0:
            phases.append(RUNNING)
        room = [p for p in range(cpus) if resident is None or residents[p] < resident]
        if mech == "suspend" and len(room) >= procs and fits_memory and cap >= 1:
            phases.append(SUSPENDED)
        if mech in ("checkpoint", "malleable") and cap >= 1:
            phases.append(STOPPED)
        # running jobs often: a full machine is where preemptions happen
        if most is not None:  # within the bounds
            counts = (sum(len(lists[p]) for p in (PENDING, SUSPENDED, STOPPED)),
                      len(lists[RUNNING]))
            phases = [p for p in phases if counts[p == RUNNING] < most[p == RUNNING]]
            if not phases:
                break
        phase = rng.choices(phases, [{PENDING: 2, RUNNING: 4, SUSPENDED: 2, STOPPED: 1}[p]
                                     for p in phases])[0]
        preempted = rng.randint(1, cap) if cap >= 1 else 0
        if phase == RUNNING:
            chosen = sorted(rng.sample(free, procs))
            # often as long ago as it can: a job protected for its first seconds is not
            start = max(job["submit"], now - estimate + 1)
            if rng.random() < 0.4:
                start = rng.randint(start, now)
            for p in chosen:
                owner[p] = jid
                residents[p] += 1
            memory += job["request"]["memory"]
            job |= {"start": start, "processors": chosen, "acquired": rng.randint(0, 30),
                    "preemptions": 0 if mech == "none" else rng.randint(0, cap)}
        elif phase == SUSPENDED:
            chosen = sorted(rng.sample(room, rng.randint(low, min(high, len(room)))
                                       if len(room) >= low else procs))
            for p in chosen:
                residents[p] += 1
            memory += job["request"]["memory"]
            job |= {"processors": chosen, "acquired": rng.randint(1, 30),
                    "preemptions": preempted,
                    "last_start": rng.randint(job["submit"], now)}
        elif phase == STOPPED:
            job |= {"size": rng.randint(low, high), "acquired": rng.randint(1, 30),
                    "preemptions": preempted, "last_start": rng.randint(job["submit"], now)}
        elif mech == "requeue" and cap >= 1 and rng.random() < 0.4:
            job |= {"acquired": rng.randint(1, 30), "preemptions": preempted,
                    "last_start": rng.randint(job["submit"], now)}
        if "acquired" in job and rng.random() < 0.5:  # it ran: some of its work done
            # a running job's at its start: its run since (over its estimate, its run time
            # at its request) must not finish it before now
            room = Fraction(1) - (Fraction(now - job["start"], estimate) if "start" in job
                                  else 0)
            done = Fraction(rng.randint(0, 9), 10) * room
            if done:
                job["progress"] = f"{done.numerator}/{done.denominator}"
        lists[phase].append(job)
    out: dict[str, Any] = {"now": now, "capacity": {"cpus": cpus, "memory": MEMORY},
                           "running": lists[RUNNING], "queue": lists[PENDING]}
    if lists[SUSPENDED]:
        out["suspended"] = lists[SUSPENDED]
    if lists[STOPPED]:
        out["stopped"] = lists[STOPPED]
    return out


def _concrete(policy_ir: Any, state: Any) -> tuple[dict[int, tuple], str | None]:
    """The simulator's first pass of the state: job id -> (action, processors), and the
    kind of a monitor stop in it (None: it ran through)."""
    runtime = to_runtime(policy_ir, {})
    first: dict[int, tuple] = {}
    seen: list[int] = []

    def on_pass(now: int, actions: tuple) -> None:
        seen.append(now)
        if len(seen) == 1:
            for a in actions:
                first[a.job] = (a.kind, tuple(sorted(a.processors)))

    try:  # the whole run: its monitor checks the first pass's books too
        simulate_preemptive(runtime, runtime.preemption, state.workload, initial=state,
                            on_pass=on_pass, stall=50)
    except MonitorViolation as exc:
        if exc.kind == "capacity":  # never, for any policy: the simulator's own books
            raise
        if not seen:  # the first pass stopped before it was done
            return first, exc.kind or "stop"
    return first, None


def _pin(sym: PreemptivePass, policy_ir: Any, data: dict[str, Any], state: Any
         ) -> list[z3.BoolRef]:
    """The symbolic state equal to ``data``: every job in some slot, the rest empty."""
    st = sym.state
    out = [st.now == data["now"]]
    for k, name in enumerate(("cpus", "memory")):
        out.append(st.capacity[k] == data["capacity"][name])
    for p in policy_ir.params:
        v = st.params[p.name]
        out.append(v == (z3.RealVal(Fraction(p.default)) if p.type == "real"
                         else p.default))
    jobs = []
    index = 0
    for phase, key in ((RUNNING, "running"), (PENDING, "queue"), (SUSPENDED, "suspended"),
                       (STOPPED, "stopped")):
        for job in data.get(key, []):
            jobs.append((phase, index, job))
            index += 1
    out.append(z3.Sum([z3.If(s.present, 1, 0) for s in st.slots]) == len(jobs))
    work = {j.id: j.work for j in state.workload.jobs}
    for phase, index, job in jobs:
        options = []
        moldable = "min_size" in job
        for s in st.slots:
            j = s.job
            procs = set(job.get("processors", []))
            ran = "start" in job or "last_start" in job
            done = Fraction(job.get("progress", 0))
            if phase == RUNNING:  # its progress now: at its start and its run since
                done = min(Fraction(1), done + Fraction(data["now"] - job["start"],
                                                        job["estimate"]))
            fields = [s.present, j.id == job["id"], j.submit == job["submit"],
                      s.job.active.progress == z3.RealVal(done),
                      j.estimate == job["estimate"],
                      j.request[0] == job["request"]["cpus"],
                      j.request[1] == job["request"]["memory"], j.moldable == moldable,
                      j.min_size == job.get("min_size", job["request"]["cpus"]),
                      j.max_size == job.get("max_size", job["request"]["cpus"]),
                      *([j.work == work[job["id"]]] if moldable else []),
                      s.index == index, s.phase == phase,
                      # grouped: the groups' lengths say it (``_pin_groups``)
                      *(b == (p in procs) for p, b in enumerate(s.procs)
                        if not st.grouped),
                      s.acquired == job.get("acquired", 0),
                      s.preemptions == job.get("preemptions", 0), s.ran == ran]
            if phase in (RUNNING, SUSPENDED):
                fields.append(s.size == len(procs))
            elif phase == STOPPED:
                fields.append(s.size == job["size"])
            if ran:
                fields.append(s.last_start == job.get("start", job.get("last_start")))
            options.append(z3.And(fields))
        out.append(z3.Or(options))
    return out


def _symbolic(sym: PreemptivePass, model: z3.ModelRef) -> dict[int, tuple]:
    out = {}
    for s in sym.state.slots:
        if not z3.is_true(model.eval(s.present, model_completion=True)):
            continue
        action = model.eval(sym.books.action[s.n], model_completion=True).as_long()
        if action:
            procs = tuple(p for p, b in enumerate(sym.books.action_procs[s.n])
                          if z3.is_true(model.eval(b, model_completion=True)))
            jid = model.eval(s.job.id, model_completion=True).as_long()
            out[jid] = (ACTIONS[action], procs)
    return out


def _same_actions(sym: PreemptivePass, expected: dict[int, tuple]) -> z3.BoolRef:
    """Every job's action and processors are ``expected``'s."""
    terms = []
    for s in sym.state.slots:
        for jid in {*expected}:
            kind, procs = expected[jid]
            want = z3.And(sym.books.action[s.n] == ACTIONS.index(kind),
                          *(b == (p in procs) for p, b in enumerate(sym.books.action_procs[s.n])))
            terms.append(z3.Implies(z3.And(s.present, s.job.id == jid), want))
        terms.append(z3.Implies(z3.And(s.present, *(s.job.id != j for j in expected)),
                                sym.books.action[s.n] == 0))
    return z3.And(terms)


def agree_one(seed: int, states: int = 4, tally: Counter | None = None, *,
              text: str | None = None, processors: int = PROCESSORS,
              overrun: str = OVERRUN) -> Disagreement | None | str:
    """Check ``states`` random states of the policy of ``seed``; "skip" when the policy
    is not encodable. ``tally`` counts the states and what their first passes did (each
    action kind, "stops"), to show what a campaign exercised. ``text``: another policy
    (``policy_fuzz.kinds``), its machine of at most ``processors`` cpus, encoded for the
    ``overrun`` mode."""
    text = text if text is not None else encodable_policy(seed)
    policy_ir = compile_source(text, "<agreement>")
    runtime = to_runtime(policy_ir, {})
    rules = runtime.preemption
    rng = random.Random(seed * 7919 + 1)
    for _ in range(states):
        data = random_state(rng, rules.mechanism, rules.limit, rules.resident,
                            cpus=processors)
        from schedc.runtime.workloads.state_file import state_from_data

        try:
            state = state_from_data(data, ("cpus", "memory"), "<agreement>")
            expected, stop = _concrete(policy_ir, state)
        except ValueError as exc:  # the generator made a state the reader refuses
            return Disagreement(seed, text, data, f"the state does not replay: {exc}")
        if tally is not None:
            tally["states"] += 1
            tally.update(kind for kind, _ in expected.values())
            tally["stops"] += stop is not None
        waiting = len(data["queue"]) + len(data.get("suspended", [])) + len(
            data.get("stopped", []))
        running = len(data["running"])
        with fresh_context():
            try:
                sym = encode_preemptive(policy_ir, max(1, waiting), max(1, running),
                                        processors, overrun=overrun)
            except Unencodable:
                return "skip"
            solver = z3.Solver()
            solver.set("timeout", 60_000)
            solver.add(*(f for _, f in sym.state.assumptions), *sym.state.definitions,
                       *_pin(sym, policy_ir, data, state))
            if solver.check() != z3.sat:
                return Disagreement(seed, text, data, "the encoding's assumptions exclude "
                                    "the state")
            through = runs_through(sym)
            if stop is not None:
                solver.add(through)
                if solver.check() != z3.unsat:
                    return Disagreement(seed, text, data, f"the simulator stops ({stop}) "
                                        "in the first pass, the encoding runs through")
                continue
            solver.add(through)
            if solver.check() != z3.sat:
                return Disagreement(seed, text, data, "the simulator runs through the first "
                                    "pass, the encoding does not")
            got = _symbolic(sym, solver.model())
            if got != expected:
                return Disagreement(seed, text, data, f"actions differ: simulator {expected}, "
                                    f"encoding {got}")
            solver.add(z3.Not(_same_actions(sym, expected)))
            # `leftover efficient` is encoded as any order of giving the processors out
            # (the speedups are not modelled): the simulator's must be one, not the only
            if "leftover efficient" not in text and solver.check() != z3.unsat:
                return Disagreement(seed, text, data, "the encoding allows another outcome: "
                                    f"{_symbolic(sym, solver.model())}")
        if not admitted(policy_ir, data, state, (waiting, running), expected, stop,
                        processors, overrun):
            return Disagreement(seed, text, data, "the proofs' encoding (symmetric) does not "
                                f"admit the simulator's pass {expected}, stop {stop}")
        if not admitted_grouped(policy_ir, data, state, (waiting, running), expected, stop,
                                overrun):
            return Disagreement(seed, text, data, "the proofs' encoding over groups of "
                                f"processors does not admit the simulator's pass {expected}, "
                                f"stop {stop}")
    return None


def admitted_grouped(policy_ir: Any, data: dict[str, Any], state: Any,
                     slots: tuple[int, int], expected: dict[int, tuple], stop: str | None,
                     overrun: str = OVERRUN) -> bool:
    """Whether the encoding over groups of processors (``groups.py``: the proofs for every
    machine size) allows the simulator's first pass: each group as long as the processors
    of its kind in ``data`` and the pass (held by its column's jobs, taken by its taker),
    every job's action (``expected``) on as many processors, or its ``stop``. True
    without a check where the groups are too many to encode quickly (``GROUPS_CHECKED``:
    by-order suspension over many slots; smaller states of the same policies check it)."""
    if group_count(policy_ir, max(1, slots[0]), max(1, slots[1])) > GROUPS_CHECKED:
        return True
    with fresh_context():
        sym = encode_preemptive(policy_ir, max(1, slots[0]), max(1, slots[1]), 0,
                                overrun=overrun, grouped=True)
        solver = z3.Solver()
        solver.set("timeout", 60_000)
        solver.add(*(f for _, f in sym.state.assumptions), *sym.state.definitions,
                   *sym.lemmas, *_pin(sym, policy_ir, data, state),
                   *_pin_groups(sym, data, expected))
        through = runs_through(sym)
        if stop is not None:
            solver.add(z3.Not(through))
        else:
            solver.add(through)
            books, st = sym.books, sym.state
            for s in st.slots:
                for jid, (kind, procs) in expected.items():
                    solver.add(z3.Implies(z3.And(s.present, s.job.id == jid), z3.And(
                        books.action[s.n] == ACTIONS.index(kind),
                        st.weigh(books.action_procs[s.n]) == len(procs))))
                solver.add(z3.Implies(z3.And(s.present, *(s.job.id != j for j in expected)),
                                      books.action[s.n] == 0))
        return solver.check() == z3.sat


def _pin_groups(sym: PreemptivePass, data: dict[str, Any], expected: dict[int, tuple]
                ) -> list[z3.BoolRef]:
    """Each group's length: the processors whose holders (by the slots their jobs are in)
    are its column and whose taker in the pass (a job started or claiming there, not
    suspended before) is its taker."""
    st = sym.state
    holders: dict[int, set[int]] = {p: set() for p in range(data["capacity"]["cpus"])}
    for job in [*data["running"], *data.get("suspended", [])]:
        for p in job.get("processors", []):
            holders[p].add(job["id"])
    suspended = {job["id"] for job in data.get("suspended", [])}
    taker: dict[int, int] = {}
    for jid, (kind, procs) in expected.items():
        if kind in ("start", "claim") and jid not in suspended:
            taker |= {p: jid for p in procs}

    def is_job(s: Any, ids: set[int]) -> z3.BoolRef:
        return z3.And(s.present, z3.Or([s.job.id == j for j in ids] or [z3.BoolVal(False)]))

    out = []
    for g, group in enumerate(st.groups):
        kinds = []
        for p, ids in holders.items():
            column = z3.And([is_job(s, ids) == (s.n in group.column) for s in st.slots])
            took = (z3.BoolVal(p not in taker) if group.taker is None
                    else is_job(st.slots[group.taker], {taker[p]}) if p in taker
                    else z3.BoolVal(False))
            kinds.append(z3.If(z3.And(column, took), 1, 0))
        out.append(st.lengths[g] == z3.Sum(kinds))
    return out


def admitted(policy_ir: Any, data: dict[str, Any], state: Any, slots: tuple[int, int],
             expected: dict[int, tuple], stop: str | None,
             processors: int = PROCESSORS, overrun: str = OVERRUN) -> bool:
    """Whether the proofs' encoding (``symmetric``, every numbering: not ``canonical``)
    of ``data`` allows the simulator's first pass: its actions on its processors
    (``expected``), or its ``stop``."""
    with fresh_context():
        sym = encode_preemptive(policy_ir, max(1, slots[0]), max(1, slots[1]), processors,
                                overrun=overrun, symmetric=True, canonical=False)
        solver = z3.Solver()
        solver.set("timeout", 60_000)
        solver.add(*(f for _, f in sym.state.assumptions), *sym.state.definitions,
                   *sym.lemmas, *_pin(sym, policy_ir, data, state))
        through = runs_through(sym)
        solver.add(z3.Not(through) if stop is not None
                   else z3.And(through, _same_actions(sym, expected)))
        return solver.check() == z3.sat


def verify_one(seed: int, states: int = 8, bounds: tuple[int, int] = (2, 2),
               tally: Counter | None = None, *, text: str | None = None,
               processors: int = PROCESSORS, overrun: str = OVERRUN,
               verdicts_out: list | None = None) -> list[Disagreement] | str:
    """Verify the policy of ``seed`` (its counterexamples replayed, as `schedc verify`
    does), then replay random states within the bounds, each asking for the first pass's
    checks: a proved property the replay stops for, or a violation Z3 finds that no replay
    confirms, is a disagreement. "skip" when the policy is not encodable. ``text``: another
    policy (``policy_fuzz.kinds``), verified with ``processors`` (its states' machine) and
    ``overrun``; ``verdicts_out`` receives the verdicts."""
    from schedc.dsl.verify.prover import verify_policy
    from schedc.dsl.verify.verdict import Bounds, Limits
    from schedc.runtime.replay import replay_stop, replayer

    text = text if text is not None else encodable_policy(seed)
    policy_ir = compile_source(text, "<agreement>")
    bound = Bounds(*bounds, processors, preemptive=bounds, overrun=overrun)
    verdicts = verify_policy(policy_ir, bound, Limits(), replay=replayer(policy_ir))
    if verdicts_out is not None:
        verdicts_out.extend(verdicts)
    if all(v.status == "unknown" and "not encoded" in (v.reason or "") for v in verdicts):
        return "skip"
    out = []
    for v in verdicts:
        if tally is not None:
            tally[f"{v.property} {v.status}"] += 1
        if v.status == "unknown" and "replay does not stop" in (v.reason or ""):
            out.append(Disagreement(seed, text, {}, f"{v.property}: {v.reason}"))
    # every verdict's vacuity, checked apart from the prover (tests/support/vacuity.py)
    from tests.support.vacuity import vacuous_proofs

    for prop in vacuous_proofs(policy_ir, verdicts, bound):
        out.append(Disagreement(seed, text, {}, f"{prop} is proved, but its assumptions "
                                "admit no state in which a job waits"))
    proved = {v.property for v in verdicts if v.status == "proved"}
    rules = to_runtime(policy_ir, {}).preemption
    rng = random.Random(seed * 104729 + 7)
    for _ in range(states):
        data = random_state(rng, rules.mechanism, rules.limit, rules.resident, bounds,
                            processors)
        data["check"] = ["preemptive-pass"]
        stop = replay_stop(policy_ir, data)
        if tally is not None:
            tally["replays"] += 1
            tally[f"replay stops {stop.kind}"] += stop.kind is not None
        if stop.kind in proved:
            out.append(Disagreement(seed, text, data, f"{stop.kind} is proved, but the "
                                    f"replay of this state stops for it: {stop.message}"))
    return out


__all__ = ["MECHANISMS", "PHASES", "Disagreement", "agree_one", "encodable_policy",
           "random_state", "verify_one"]
