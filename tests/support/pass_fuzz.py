"""Random policies against the simulator, one pass at a time: the encoded pass of a generated
policy (``policy_fuzz.generate``), pinned to a random concrete state, must have a model (a
state with no pass vanishes from every proof: each property is then proved of it, whatever
the simulator does), must stop (a formula fails, a size is out of range) exactly where the
simulator's pass at ``now`` stops, and otherwise must decide exactly what the simulator
decides (which jobs start on what, which are reserved when), and nothing else.

``fuzz_verify`` compares verdicts with simulations: it finds a vacuous proof only if some
simulation happens to break the property. This check needs no property: it found, in one
run, the class that a size above a declared capacity belonged to (every `choose` policy
proved vacuously). No pytest here: ``tests/dsl/verify/test_pass_fuzz.py`` and
``benchmarks/fuzz_pass.py`` import it. Deterministic for a seed.

A seed that ``GenConfig.preemptive_rate`` makes preemptive (``policy_fuzz.is_preemptive``)
is checked by ``check_preemptive``: the encoded preemptive pass against the simulator's first
pass (``preemptive_agreement.agree_one``, wrapped, not repeated here).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import z3
from attrs import evolve, field, frozen

from schedc.dsl import compile_source, ir
from schedc.dsl.diagnostics import DiagnosticError
from schedc.dsl.semantics.decisions import PassDecisions
from schedc.dsl.semantics.numbers import EvaluationError
from schedc.dsl.tuning import candidate_policies
from schedc.dsl.verify.pass_encoding.encoder import encode_pass
from schedc.dsl.verify.pass_encoding.record import Unsupported
from schedc.dsl.verify.preemption.books import ACTIONS
from schedc.dsl.verify.properties import completes
from schedc.dsl.verify.verdict import Bounds
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.monitor import MonitorViolation
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.jobs import Job
from schedc.runtime.tools.optimal.instance import state_at
from schedc.runtime.workloads.state_file import (
    InitialState,
    param_text,
    state_from_data,
    state_to_data,
)
from schedc.runtime.workloads.workload import Workload
from tests.support.pass_agreement import (
    first_pass,
    pass_solver,
    policy_order,
    state_pins,
    symbolic_decisions,
    without_invariants,
)
from tests.support.policy_fuzz import GenConfig, generate, is_preemptive, param_settings
from tests.support.policy_fuzz.kinds import KINDS, KindRates, preemptive_case
from tests.support.policy_fuzz.preemptive import unlocated
from tests.support.preemptive_agreement import agree_one

QUEUED, RUNNING = 3, 2  # the encoded pass's slots (a state fills at most these)
LABELS = ("user", "group", "executable", "queue", "partition")


@frozen
class Mismatch:
    seed: int
    policy: str  # its text
    state: dict[str, Any]  # a state file `schedc run --state` reads
    what: str


@frozen
class PolicyCheck:
    seed: int
    skipped: str | None  # why the policy was not checked (None: it was)
    states: int  # states checked
    stops: int  # of which the simulator's pass stopped
    mismatches: tuple[Mismatch, ...]
    preemptive: bool = False  # a preemptive policy (``check_preemptive``)
    # a preemptive policy's: what the first passes of its states did (action kind -> jobs)
    actions: dict[str, int] = field(factory=dict)
    kinds: tuple[str, ...] = ()  # a preemptive policy's classes of issue 44 (``kinds.py``)


def _inexact(policy: ir.Policy) -> str | None:
    """What makes the pinned pass's decisions not unique: `log` is an unknown function to
    Z3, and a `sqrt` is any value within a tolerance of the root (the simulator's float is
    one of them). Such a policy is checked for a pass only."""
    exprs = ir.decision_exprs(policy) + [i.expr for i in policy.invariants]
    for e in exprs:
        for n in ir.walk(e):
            if isinstance(n, ir.Call) and n.fn in ("sqrt", "log"):
                return n.fn
    return None


def random_state(rng: random.Random, policy: ir.Policy, params: dict[str, Any],
                 resized: bool | None = None, queued: int = QUEUED) -> dict[str, Any]:
    """A small state on the policy's machine: declared capacities kept, the others drawn;
    running jobs that fit, queued jobs (moldable ones with measured speedups over every size,
    sizes kept by `size fixed`), labels from few values so that jobs share them. ``resized``
    (default: the policy has a size rule): running rigid jobs may hold other cpus than they
    asked. ``queued``: at most this many queued jobs (the encoded pass's slots)."""
    if resized is None:
        resized = policy.size is not None
    res = [r.name for r in policy.machine.resources]
    caps = [r.capacity if r.capacity is not None else rng.choice([1, 2, 3, 4, 6, 8, 12])
            for r in policy.machine.resources]
    now = rng.choice([0, 1, 5, 20, 50])
    # (12 ids at the default slots: the draws of earlier campaigns)
    ids = rng.sample(range(0, max(12, 2 * (queued + RUNNING))), queued + RUNNING)

    def small(lo: int, hi: int) -> int:
        return rng.randint(lo, max(lo, hi // 3)) if rng.random() < 0.5 else rng.randint(lo, hi)

    def labels() -> dict[str, int]:
        return {a: rng.choice([-1, 0, 1]) for a in LABELS if rng.random() < 0.5}

    def estimate() -> int:
        return rng.choice([rng.randint(1, 60), 10, 20, 21, 30])

    # a size kept by `size fixed` satisfied the invariants of the job and its size when it
    # was chosen (the verifier assumes it): with such invariants, no kept size is drawn
    job_invariants = any(ir.dependencies(i.expr) <= {"job", "param"}
                         for i in policy.invariants)
    left = list(caps)
    running = []
    for _ in range(rng.randint(0, RUNNING)):
        if left[0] < 1:
            break
        request = [small(1, left[0])] + [small(0, c) for c in left[1:]]
        left = [c - r for c, r in zip(left, request, strict=True)]
        est = estimate()
        start = rng.randint(max(0, now - est + 1), now)
        running.append({"id": ids.pop(), "submit": rng.randint(0, start), "start": start,
                        "estimate": est, "run_time": est,
                        "request": dict(zip(res, request, strict=True)), **labels()})
        if resized and rng.random() < 0.3:
            # a rigid job a size rule started on other cpus than it asked: it holds the
            # cpus drawn, and asked for any number
            running[-1]["size"] = request[0]
            running[-1]["request"]["cpus"] = rng.randint(1, caps[0])
    queue = []
    for _ in range(rng.randint(1, queued)):
        est = estimate()
        request = [small(1, caps[0])] + [small(0, c) for c in caps[1:]]
        job = {"id": ids.pop(), "submit": rng.randint(0, now), "estimate": est,
               "run_time": est, "request": dict(zip(res, request, strict=True)), **labels()}
        if policy.size is not None and rng.random() < 0.5:
            lo = rng.randint(1, request[0])
            hi = rng.randint(request[0], caps[0])
            times = [rng.randint(1, 80) for _ in range(caps[0])]
            job |= {"min_size": lo, "max_size": hi, "speedup": "measured(" + ", ".join(
                f"{n}:{t}" for n, t in enumerate(times, 1)) + ")"}
        if policy.size_fixed and not job_invariants and rng.random() < 0.5:
            job["size"] = rng.randint(job.get("min_size", 1), job.get("max_size", caps[0]))
        queue.append(job)
    return {"now": now, "capacity": dict(zip(res, caps, strict=True)), "running": running,
            "queue": queue, "params": params}


def _param_values(policy: ir.Policy, rng: random.Random) -> dict[str, Any]:
    chosen = param_settings(policy, rng)[rng.choice(["lo", "hi", "default", "mixed"])]
    return {k: Fraction(str(v)) if isinstance(v, float) else v for k, v in chosen.items()}


def check_policy(seed: int, states: int = 20, config: GenConfig | None = None,
                 queued: int = QUEUED) -> PolicyCheck:
    """The generated policy of ``seed`` on ``states`` random states (a preemptive one, if
    ``config.preemptive_rate`` draws it: ``check_preemptive``)."""
    if is_preemptive(seed, config):
        return check_preemptive(seed, states, (config or GenConfig()).preemptive_kinds)
    generated = generate(seed, config)
    return check_text(generated.text, seed, states, generated.name, queued)


def check_text(text: str, seed: int, states: int = 20, name: str | None = None,
               queued: int = QUEUED) -> PolicyCheck:
    """The policy ``name`` of the file ``text`` (None: its one policy) on ``states`` random
    states of ``seed``, of up to ``queued`` queued jobs (the encoding's slots: more than a
    proof's N, the passes start and reserve jobs past the N first, as the search past N
    does)."""
    try:
        policy = compile_source(text, f"fuzz{seed}.pol", name)
    except DiagnosticError as exc:
        return PolicyCheck(seed, f"invalid: {exc}", 0, 0, ())
    # A dynP policy's pass is its active candidate's (a state naming it pins it): each
    # candidate is encoded as `schedc verify` encodes it (dsl/verify/prover.py), on the
    # tuned policy's machine, its running jobs resized if any candidate has a size rule,
    # and compared with the tuned policy's simulated pass from states naming it active
    tuned = policy.tuning is not None
    sized = (any(c.size is not None for c in policy.tuning.candidates) if tuned
             else policy.size is not None)
    try:
        encoded = [_Encoded.of(evolve(c, machine=policy.machine), sized, queued)
                   for c in candidate_policies(policy)]
    except Unsupported as exc:
        return PolicyCheck(seed, f"unsupported: {exc}", 0, 0, ())
    rng = random.Random(seed)
    mismatches: list[Mismatch] = []
    stops = 0
    runtime: dict[tuple, Any] = {}
    for _ in range(states):
        # one draw more for dynP only: other seeds draw the states they drew before
        which = rng.randrange(len(encoded)) if tuned else 0  # as rng.choice draws
        candidate = encoded[which].policy
        params = _param_values(policy, rng)
        data = random_state(rng, candidate, params, resized=sized, queued=queued)
        if tuned:
            data["active"] = candidate.name
        key = tuple(sorted(params.items()))
        if key not in runtime:
            runtime[key] = to_runtime(policy, {k: param_text(v) for k, v in params.items()})
        rpolicy = runtime[key]
        state = state_from_data(data, [r.name for r in policy.machine.resources])
        stop, record, message = first_pass(rpolicy, state)
        stops += stop is not None
        own = {p.name for p in candidate.params}  # the candidate's params are pinned
        pinned = evolve(state, params={k: v for k, v in state.params.items() if k in own})
        active = rpolicy.tuning.candidates[which] if tuned else rpolicy
        what = encoded[which].compare(active, pinned, stop, record, message)
        if what is not None:
            mismatches.append(Mismatch(seed, text, data, what))
            break  # one witness a policy
    return PolicyCheck(seed, None, states, stops, tuple(mismatches))


PREEMPTIVE_ACTIONS = ACTIONS[1:]  # start, resume, claim, suspend, checkpoint, requeue


def check_preemptive(seed: int, states: int = 4, rates: KindRates | None = None
                     ) -> PolicyCheck:
    """The random preemptive policy of ``seed`` (``preemptive_agreement.encodable_policy``
    with the classes of issue 44 ``rates`` draws: ``policy_fuzz.kinds``) on ``states``
    random states of jobs in every phase, by ``preemptive_agreement.agree_one``: the encoded
    preemptive pass (of the case's P and `--overrun`) pinned to each must admit it and have
    the simulator's first pass as its only outcome, job by job and processor by processor
    (or both stop). Its ``actions`` count what those first passes did; its mismatch (the
    first, as agree_one stops there) holds the policy's text and a state `schedc run
    --state` replays. A policy the encoding does not cover is skipped ("unsupported"); one
    `check` must refuse is skipped if refused located ("refused by check"), else a mismatch.
    Its ``kinds`` are the classes drawn."""
    case = preemptive_case(seed, rates)
    kinds = case.kinds
    try:
        compile_source(case.text, "<agreement>")
    except DiagnosticError as exc:
        problem = unlocated(exc.diagnostics, case.text, case.refused) if case.refused else \
            f"the generator made an invalid policy: {exc}"
        if problem is None:
            return PolicyCheck(seed, "refused by check", 0, 0, (), True, kinds=kinds)
        return PolicyCheck(seed, None, 0, 0, (Mismatch(seed, case.text, {}, problem),), True,
                           kinds=kinds)
    if case.refused is not None:
        what = f"`check` accepts `{case.refused}` although the params make it non-positive"
        return PolicyCheck(seed, None, 0, 0, (Mismatch(seed, case.text, {}, what),), True,
                           kinds=kinds)
    tally: Counter = Counter()
    try:
        found = agree_one(seed, states, tally, text=case.text, processors=case.processors,
                          overrun=case.overrun)
    except Exception as exc:  # a simulator or encoder crash: shown, never skipped
        what = f"crash: {type(exc).__name__}: {exc}"
        return PolicyCheck(seed, None, tally["states"], tally["stops"],
                           (Mismatch(seed, case.text, {}, what),), True,
                           _actions(tally), kinds=kinds)
    if found == "skip":
        return PolicyCheck(seed, "unsupported: not encoded", 0, 0, (), True, kinds=kinds)
    mismatches = () if found is None else (Mismatch(seed, found.policy, found.state,
                                                    found.what),)
    return PolicyCheck(seed, None, tally["states"], tally["stops"], mismatches, True,
                       _actions(tally), kinds=kinds)


def _actions(tally: Counter) -> dict[str, int]:
    """agree_one's counts of action kinds (the verifier's six first, 0 where none)."""
    return {kind: tally[kind] for kind in PREEMPTIVE_ACTIONS} | {
        k: n for k, n in tally.items() if k not in ("states", "stops")}


@frozen
class _Encoded:
    """One pass a policy makes (dynP: one candidate's), encoded once for many states."""

    policy: ir.Policy
    sym: Any
    solver: z3.Solver
    fine: z3.BoolRef  # the pass runs to its end
    only_a_pass: bool  # `sqrt`/`log`: checked for a model only

    @classmethod
    def of(cls, policy: ir.Policy, resized: bool, queued: int = QUEUED) -> _Encoded:
        """Raises ``Unsupported`` where the encoding does."""
        sym = encode_pass(policy, Bounds(queued, RUNNING), resized=resized)
        solver = pass_solver(sym)
        solver.set("timeout", 20_000)
        return cls(policy, sym, solver, completes(sym), _inexact(policy) is not None)

    def compare(self, rpolicy, state: InitialState, stop: str | None,
                record: PassDecisions | None, message: str) -> str | None:
        return _compare(self.sym, self.solver, self.fine, rpolicy, state, stop, record,
                        message, self.only_a_pass)


def _compare(sym, solver: z3.Solver, fine: z3.BoolRef, rpolicy, state: InitialState,
             stop: str | None, record: PassDecisions | None, message: str,
             only_a_pass: bool = False) -> str | None:
    try:
        ordered = policy_order(rpolicy, state)
    except EvaluationError:
        return None  # an order key fails: the slots' order is undefined (the pass stops)
    solver.push()
    try:
        solver.add(*state_pins(sym, state, ordered))
        result = solver.check()
        if result == z3.unknown:
            return None  # nonlinear beyond Z3 here: nothing to say
        if result == z3.unsat:
            return (f"the state has no pass in the encoding (the simulator "
                    f"{'stops: ' + message if stop else 'completes its pass'})")
        if only_a_pass:
            return None
        solver.push()
        solver.add(fine if stop else z3.Not(fine))
        result = solver.check()
        solver.pop()
        if result == z3.sat:
            return ("the simulator stops (" + message + "), the encoding may complete"
                    if stop else "the simulator completes its pass, the encoding may stop")
    finally:
        solver.pop()
    if record is None:
        return None
    try:
        symbolic, _ = symbolic_decisions(sym, solver, state, ordered)
    except AssertionError as exc:
        if "unknown" in str(exc):
            return None  # Z3 gave up on the pinned pass: nothing to say
        return f"decisions: {exc}"
    if symbolic != record:
        return f"decisions: simulator {record}, encoding {symbolic}"
    return None


def tally(checks: Sequence[PolicyCheck]) -> dict[str, Any]:
    """A campaign's figures: "policies" and "mismatches" (their seeds) count every policy;
    the others ("checked", "skipped", "states", "stops", "rigid_mismatches") are the rigid
    policies', and "preemptive" gives the preemptive ones' apart (the same figures, and the
    actions their states' first passes took)."""
    rigid = [c for c in checks if not c.preemptive]
    preemptive = [c for c in checks if c.preemptive]
    actions = dict.fromkeys(PREEMPTIVE_ACTIONS, 0)
    for c in preemptive:
        for kind, n in c.actions.items():
            actions[kind] = actions.get(kind, 0) + n
    figures = _figures(rigid)
    return {**figures, "policies": len(checks), "rigid_policies": len(rigid),
            "rigid_mismatches": figures["mismatches"],
            "mismatches": [m.seed for c in checks for m in c.mismatches],
            "preemptive": _figures(preemptive) | {
                "actions": actions,
                "kinds": {k: sum(k in c.kinds for c in preemptive) for k in KINDS}}}


def _figures(checks: Sequence[PolicyCheck]) -> dict[str, Any]:
    skipped: dict[str, int] = {}
    for c in checks:
        if c.skipped is not None:
            reason = c.skipped.split(":")[0]
            skipped[reason] = skipped.get(reason, 0) + 1
    return {"policies": len(checks), "checked": sum(c.skipped is None for c in checks),
            "skipped": skipped, "states": sum(c.states for c in checks),
            "stops": sum(c.stops for c in checks),
            "mismatches": [m.seed for c in checks for m in c.mismatches]}


# -- states a run reaches ---------------------------------------------------------------------


def random_workload(rng: random.Random, policy: ir.Policy) -> Workload:
    """A few rigid jobs on the policy's machine (declared capacities kept), submitted close
    together, some ending before their estimate: the states a run of them reaches hold
    running jobs a pass started, ends before estimates and jobs that waited."""
    caps = tuple(r.capacity if r.capacity is not None else rng.choice([2, 3, 4, 6, 8])
                 for r in policy.machine.resources)
    jobs = []
    for i in range(rng.randint(3, 9)):
        estimate = rng.choice([rng.randint(1, 40), 10, 20])
        run_time = estimate if rng.random() < 0.6 else rng.randint(1, estimate)
        request = (rng.randint(1, caps[0]),) + tuple(rng.randint(0, c) for c in caps[1:])
        labels = {a: rng.choice([0, 1]) for a in LABELS if rng.random() < 0.5}
        jobs.append(Job(id=i + 1, index=i, submit=rng.choice([0, 0, 5, 10, 20, 30]),
                        run_time=run_time, estimate=estimate, request=request, **labels))
    jobs.sort(key=lambda j: j.submit)
    jobs = [evolve(j, index=i) for i, j in enumerate(jobs)]
    return Workload(tuple(jobs), tuple(r.name for r in policy.machine.resources), caps,
                    source="fuzz")


def check_reachable(seed: int, runs: int = 6, config: GenConfig | None = None,
                    queued: int = QUEUED) -> PolicyCheck:
    """The generated policy of ``seed`` on the states its runs of ``runs`` random workloads
    reach (each instant with a pass, as ``optimal.instance.state_at`` rebuilds it: the state
    file a counterexample would be): the state's replayed pass must make the run's pass, and
    the encoded pass must agree with it as in ``check_text``. Not for dynP, moldable jobs or
    `size fixed` (a state file carries no active candidate's history nor kept sizes here),
    nor for a preemptive policy (``config.preemptive_rate``: ``check_policy`` checks it on
    random states)."""
    if is_preemptive(seed, config):
        return PolicyCheck(seed, "preemptive: no reachable states", 0, 0, (), True)
    generated = generate(seed, config)
    try:
        policy = compile_source(generated.text, f"fuzz{seed}.pol", generated.name)
    except DiagnosticError as exc:
        return PolicyCheck(seed, f"invalid: {exc}", 0, 0, ())
    if policy.tuning is not None or policy.size_fixed:
        return PolicyCheck(seed, "dynP or size fixed", 0, 0, ())
    try:
        encoded = _Encoded.of(policy, policy.size is not None, queued)
    except Unsupported as exc:
        return PolicyCheck(seed, f"unsupported: {exc}", 0, 0, ())
    rng = random.Random(seed)
    checked = stops = 0
    for _ in range(runs):
        params = _param_values(policy, rng)
        rpolicy = to_runtime(policy, {k: param_text(v) for k, v in params.items()})
        workload = random_workload(rng, policy)
        passes: list[PassDecisions] = []
        try:
            schedule = simulate(without_invariants(rpolicy), workload, monitor=False,
                                on_pass=passes.append)
        except (MonitorViolation, EvaluationError):
            continue  # the run stops: its states are not all rebuilt here
        for made in passes:
            state = evolve(state_at(schedule, made.now, "fuzz"), params=params)
            if not state.queue or len(state.queue) > queued or len(state.running) > RUNNING:
                continue
            checked += 1
            stop, record, message = first_pass(rpolicy, state)
            stops += stop is not None
            if stop is not None or record != made:
                what = (f"the state's replay does not make the run's pass: run {made}, replay "
                        f"{record if stop is None else message}")
            else:
                what = encoded.compare(rpolicy, state, stop, record, message)
            if what is not None:
                return PolicyCheck(seed, None, checked, stops, (Mismatch(
                    seed, generated.text, state_to_data(state), what),))
    return PolicyCheck(seed, None, checked, stops, ())
