"""The harness: verify a policy, simulate it on random workloads and the trace with params
at their bounds, replay its counterexamples, and record every disagreement."""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from schedc.dsl import DiagnosticError, compile_source, ir, render_diagnostics
from schedc.dsl.tuning import candidate_policies
from schedc.dsl.verify.prover import verify_policy
from schedc.dsl.verify.verdict import Bounds, Limits, Verdict
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.policy import RuntimePolicy
from schedc.runtime.replay import replayer
from schedc.runtime.workloads.state_file import (
    InitialState,
    merged_params,
    param_text,
    state_from_data,
)
from schedc.runtime.workloads.workload import Workload, WorkloadError
from tests.support.vacuity import VACUOUS, vacuous_proofs

from .budget import Outcome, run_simulation, stop_property
from .generate import GenConfig, generate, is_preemptive
from .preemptive import fuzz_preemptive
from .records import (
    STATED_BOUNDS,
    Disagreement,
    Evidence,
    HarnessConfig,
    PolicyResult,
    Stop,
    VerdictRecord,
    _Case,
)
from .triage import _Triage
from .workloads import random_workload, through_reader, trace_prefix, workload_csv


def fuzz_seed(seed: int, gen: GenConfig | None = None,
              config: HarnessConfig | None = None) -> PolicyResult:
    """Generate the policy of ``seed`` and fuzz it (a preemptive one, if ``gen``'s
    ``preemptive_rate`` draws it, with ``preemptive.fuzz_preemptive``)."""
    if is_preemptive(seed, gen):
        return fuzz_preemptive(seed, config, (gen or GenConfig()).preemptive_kinds)
    g = generate(seed, gen)
    return fuzz_policy(g.text, seed, config, g.features, g.name)


def fuzz_policy(text: str, seed: int | None = None, config: HarnessConfig | None = None,
                features: tuple[str, ...] = (), name: str | None = None) -> PolicyResult:
    """Verify the policy ``name`` of ``text`` (or its only one), simulate it, replay its
    counterexamples, and report every disagreement between the verdicts and the runtime
    monitor."""
    started = time.perf_counter()
    cfg = config or HarnessConfig()
    try:
        policy = compile_source(text, "<fuzz>", name)
    except DiagnosticError as exc:
        return PolicyResult(seed, "?", text, features, (), (), 0, 0, 0,
                            time.perf_counter() - started,
                            compile_error=render_diagnostics(exc.diagnostics))
    h = _Harness(policy, cfg, seed or 0)
    h.run()
    return PolicyResult(seed, policy.name, text, features, h.verdicts,
                        tuple(h.found.values()), h.simulations, h.budget, h.agreed,
                        time.perf_counter() - started, stops=tuple(h.stops))


class _Harness:
    def __init__(self, policy: ir.Policy, cfg: HarnessConfig, seed: int) -> None:
        self.policy, self.cfg = policy, cfg
        self.rng = random.Random(seed * 7919 + 17)  # the workloads' and params' draws
        self.resources = tuple(r.name for r in policy.machine.resources)
        self.fixed = tuple(r.capacity for r in policy.machine.resources)
        # a dynP policy's passes are its candidates', each checking its own invariants too
        self.invariants = tuple(dict.fromkeys(
            i.text for c in candidate_policies(policy) for i in c.invariants))
        self.verdicts: tuple[VerdictRecord, ...] = ()
        self.status: dict[str, str] = {}
        self.found: dict[tuple[str, str], Disagreement] = {}
        self.simulations = self.budget = self.agreed = 0
        self.stops: list[Stop] = []
        self._runtime: dict[tuple, RuntimePolicy | str] = {}

    # -- the steps
    def run(self) -> None:
        verdicts = self.verify()
        for case in self.cases():
            self.judge(case, self.simulate(case))
        for v in verdicts:
            if v.status == "violated" and v.counterexample is not None:
                state = {k: x for k, x in v.counterexample.items() if k != "pass"}
                if v.candidate is not None:  # a dynP verdict: that candidate's pass replays
                    state["active"] = v.candidate
                case = _Case(f"counterexample of {v.property}", dict(state["params"]),
                             state=state)
                self.judge(case, self.simulate(case), expected=v.property)

    def verify(self) -> list[Verdict]:
        n, r = self.cfg.bounds
        try:
            limits = Limits(rlimit=self.cfg.rlimit, timeout_ms=self.cfg.timeout_ms)
            # a dynP policy's counterexamples replay with their candidate's pass
            verdicts = verify_policy(self.policy, Bounds(n, r), limits,
                                     replay_for=replayer) if self.policy.tuning else \
                verify_policy(self.policy, Bounds(n, r), limits, replay=replayer(self.policy))
        except Exception as exc:  # a verifier bug
            ev = Evidence("verify_policy", {}, f"{type(exc).__name__}: {exc}")
            self.found[("crash", "verify")] = Disagreement("crash", "crash", "verify", ev)
            return []
        self.verdicts = tuple(VerdictRecord(v.property, v.status, round(v.seconds, 3),
                                            v.reason, v.caveats) for v in verdicts)
        self.status = {v.property: v.status for v in verdicts}
        # every verdict's vacuity, checked apart from the prover: a proof of no state fails
        for prop in vacuous_proofs(self.policy, verdicts, Bounds(n, r)):
            ev = Evidence("the vacuity check (tests/support/vacuity.py)", {},
                          f"{prop} is proved, but its assumptions admit no state in which a "
                          "job waits")
            self.found[("vacuous", prop)] = Disagreement("vacuous", VACUOUS, prop, ev)
        return verdicts

    def cases(self) -> list[_Case]:
        """Small random workloads and the trace prefix, each with params at their bounds."""
        rng, sized = self.rng, self.policy.size is not None
        settings = param_settings(self.policy, rng)
        w = {
            "tiny": random_workload(rng, self.resources, self.fixed, "tiny", False),
            "tiny moldable" if sized else "tiny 2": random_workload(
                rng, self.resources, self.fixed, "tiny", sized and rng.random() < 0.7),
            "long queue": random_workload(rng, self.resources, self.fixed, "long",
                                          sized and rng.random() < 0.5),
            "KTH-SP2": trace_prefix(self.resources, self.fixed, self.cfg.trace_jobs,
                                    sized and rng.random() < 0.5),
        }
        if rng.random() < self.cfg.odd_inputs:  # what `--lenient` leaves of them
            w["odd inputs"] = through_reader(
                random_workload(rng, self.resources, self.fixed, "odd", False))
        plan = {"tiny": ("lo", "hi"), "tiny moldable": ("mixed",), "tiny 2": ("mixed",),
                "long queue": ("hi", "lo"), "KTH-SP2": ("lo", "hi"),
                "odd inputs": ("default",)}
        out, seen = [], set()
        for label, workload in w.items():
            for which in plan[label]:
                params = settings[which]
                key = (label, tuple(sorted(params.items())))
                if key not in seen:  # params at lo and hi may be the same run
                    seen.add(key)
                    src = f"{label} workload ({workload.source}), params at {which}"
                    out.append(_Case(src, params, workload=workload))
        return out

    def runtime(self, params: Mapping[str, str]) -> RuntimePolicy | str:
        """The runtime policy for param values as text (or the binder's complaint)."""
        key = tuple(sorted(params.items()))
        if key not in self._runtime:
            try:
                self._runtime[key] = to_runtime(self.policy, params)
            except DiagnosticError as exc:
                self._runtime[key] = "; ".join(d.message for d in exc.diagnostics)
        return self._runtime[key]

    def prepare(self, case: _Case) -> tuple[RuntimePolicy, Workload, InitialState | None] \
            | Outcome:
        """What `schedc run` would simulate: a workload with --param values, or a state
        whose params are defaults that the case's override (`run --state`)."""
        given = {k: param_text(v) for k, v in case.params.items()}
        if case.state is None:
            rt = self.runtime(given)
            return Outcome("error", f"params rejected: {rt}") if isinstance(rt, str) \
                else (rt, case.workload, None)
        try:
            state = state_from_data(case.state, self.resources, "<state>")
        except WorkloadError as exc:
            return Outcome("rejected", f"state rejected: {exc.message}")
        rt = self.runtime(merged_params(state, given))
        if isinstance(rt, str):
            return Outcome("rejected", f"params rejected: {rt}")
        if state.sizes and not rt.active(state.active).size_fixed:
            return Outcome("rejected", "state rejected: kept sizes for a policy without "
                           "`size fixed`")
        return rt, state.workload, state

    def simulate(self, case: _Case) -> Outcome:
        self.simulations += 1
        return self.execute(case)

    def execute(self, case: _Case) -> Outcome:
        prepared = self.prepare(case)
        if isinstance(prepared, Outcome):
            return prepared
        out = run_simulation(*prepared, self.cfg.sim_calls, self.cfg.sim_seconds)
        self.budget += out.status == "budget"
        return out

    # -- judging
    def judge(self, case: _Case, out: Outcome, expected: str | None = None) -> None:
        """Record the disagreement ``out`` shows, if any. ``expected``: the violated
        property whose counterexample ``case`` is."""
        prop = stop_property(out.message, self.invariants) if out.status == "stop" else None
        if prop is not None:
            self.stops.append(Stop(case.source, prop, self.status.get(prop, ""),
                                   out.message[:300]))
        if out.status == "error" or prop == "crash":
            self.record("crash", "crash", case, out)
        elif prop is not None and self.status.get(prop) == "proved":
            self.record("proved-but-stopped", prop, case, out)
        elif prop is not None and prop != expected:
            self.agreed += 1
        if expected is None:
            return
        if prop == expected:
            self.agreed += 1
        elif out.status != "budget":
            self.record("counterexample", expected, case, out)

    def record(self, kind: str, prop: str, case: _Case, out: Outcome) -> None:
        key = (kind, prop)
        if key in self.found:
            return  # one witness per disagreement and policy
        ev = Evidence(case.source, dict(case.params), out.message,
                      workload_csv(case.workload) if case.workload is not None else None,
                      case.state, out.queued, out.running)
        d = Disagreement(kind, "crash" if kind == "crash" else
                         "counterexample" if kind == "counterexample" else "other", prop, ev)
        if kind == "proved-but-stopped" and self.cfg.triage:
            d = _Triage(self, case, out, prop).classify(d)
            stated = [c for v in self.verdicts if v.property == prop for c in v.caveats
                      if "raise --queued" in c or "raise --running" in c]
            if d.category == "bounds" and stated:
                # the proof said it covers at most N queued or R running jobs, and the run
                # failed with more: what the verdict promised, not a disagreement
                d = attrs.evolve(d, category=STATED_BOUNDS)
        elif kind == "counterexample":
            other = stop_property(out.message, self.invariants) if out.status == "stop" \
                else None
            masked = other is not None and self.status.get(other) in ("violated", "unknown")
            bound = None if out.status == "stop" else _literal_bound(self.policy, case.params)
            category = "counterexample-masked" if masked else \
                "constant-vs-bound" if bound else d.category
            note = _why_no_replay(out, self.invariants) + (f"; {bound}" if bound else "")
            d = attrs.evolve(d, category=category, note=note)
        self.found[key] = d


def param_settings(policy: ir.Policy, rng: random.Random) -> dict[str, dict[str, Any]]:
    """Param values: every param at its default, at the low end of its domain, at the high
    end (both bounds exactly as declared), and a random mix of those."""
    low, high, default, mixed = {}, {}, {}, {}
    for p in policy.params:
        if p.type == "bool":
            lo, hi = False, True
        elif p.lo is not None:
            lo, hi = p.lo, p.hi
        else:  # no domain: the verifier takes every value; try 0 and one above the default
            lo, hi = (0, p.default + 1) if p.type == "int" else (0.0, p.default + 1.0)
        if p.type == "real":
            lo, hi = float(lo), float(hi)
        dflt = float(p.default) if p.type == "real" else p.default
        low[p.name], high[p.name], default[p.name] = lo, hi, dflt
        mixed[p.name] = rng.choice((lo, hi, dflt))
    return {"lo": low, "hi": high, "default": default, "mixed": mixed}


def _literal_bound(policy: ir.Policy, params: Mapping[str, Any]) -> str | None:
    """A real param of the counterexample at a domain bound that the policy also writes
    as a literal: the verifier may read the two as different numbers (class 1)."""
    for p in policy.params:
        v = params.get(p.name)
        if p.type == "real" and p.lo is not None and v in (float(p.lo), float(p.hi)) and \
                any(isinstance(n, ir.Const) and n.value == v
                    for e in _exprs(policy) for n in ir.walk(e)):
            return f"{p.name} = {v!r} is a domain bound and a literal of the policy"
    return None


def _exprs(policy: ir.Policy) -> list[ir.Expr]:
    found = [k.expr for k in policy.order] + [i.expr for i in policy.invariants]
    return found + [e for e in (policy.size, policy.size_low, policy.backfill.score,
                                policy.backfill.condition, policy.reserve_per,
                                policy.reserve_when, policy.slack) if e is not None]


def _why_no_replay(out: Outcome, invariants: Sequence[str]) -> str:
    if out.status == "stop":
        return f"the replay stopped for {stop_property(out.message, invariants)} instead"
    if out.status == "rejected":
        return out.message
    if out.status == "error":
        return f"the replay crashed: {out.message}"
    return "the replay ran to the end without a monitor stop"
