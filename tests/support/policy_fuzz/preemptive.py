"""A preemptive policy in the harness's records: ``fuzz_preemptive(seed)`` checks the random
preemptive policy of ``seed`` with the classes of issue 44 drawn onto it (``kinds.py``) and
gives the verdicts and disagreements as a ``PolicyResult``, as ``fuzz_seed`` gives a rigid
one's:

1. a policy whose setting the params' domains make non-positive must be refused by `check`,
   the error located at the clause; a value only `run` can see is bad must be refused by
   `run --param` (``binding.bind``), located at the clause;
2. it is verified and random states are replayed against its proofs
   (``preemptive_agreement.verify_one``, with the vacuity check), with the case's P and
   `--overrun`; no counterexample may carry a param value `run` refuses;
3. small random workloads (at most N and R jobs: every pass within the proofs' slots) run
   under the monitor, half of them with jobs that outrun their estimates under `--overrun
   extend`: a stop for a proved property is a disagreement unless the run had left the
   proofs' assumptions first (the monitor's note, ``preemptive_checks.Assumptions``).

``fuzz_seed`` calls it for the seeds ``generate.is_preemptive`` chooses
(``GenConfig.preemptive_rate``). Deterministic for a seed and its ``KindRates``.
"""

from __future__ import annotations

import random
import time
from collections import Counter

from schedc.dsl import DiagnosticError, compile_source, render_diagnostics
from schedc.dsl.diagnostics import Diagnostic
from tests.support.vacuity import VACUOUS

from .kinds import MEMORY, KindRates, PreemptiveCase, preemptive_case
from .records import Disagreement, Evidence, HarnessConfig, PolicyResult, VerdictRecord

# the categories of a preemptive policy's disagreements (records.Disagreement.category)
PREEMPTIVE = "preemptive"  # a proved property that a replayed state stops for
PREEMPTIVE_COUNTEREXAMPLE = "preemptive-counterexample"  # a violation no replay confirms
PREEMPTIVE_RUN = "preemptive-run"  # a proved property a run stops for, inside the assumptions
BAD_SETTING = "bad-setting"  # a non-positive setting let through, or refused unlocated
NAME = "fuzz"  # the policy's name in its file
RUNS = 4  # workloads run per policy
STALL = 3000  # preemptions with no completion before a run counts as a livelock


def fuzz_preemptive(seed: int, config: HarnessConfig | None = None,
                    rates: KindRates | None = None) -> PolicyResult:
    """Check the preemptive policy of ``seed`` with the kinds ``rates`` draws: verified with
    ``config.preemptive_bounds`` (fewer above P = 8: ``kinds.bounds_for``), its
    counterexamples replayed, ``config.preemptive_states`` random states replayed and
    ``RUNS`` workloads run. A disagreement is a proved property a replay stops for
    (category "preemptive", its state as evidence) or a run (``PREEMPTIVE_RUN``, its
    workload), a counterexample no replay stops for ("preemptive-counterexample"), a proof
    of no state (the vacuity check), a bad setting let through or refused unlocated
    (``BAD_SETTING``), a crash. A policy the encoding does not cover is ``skipped``, as is
    one `check` refuses as it must."""
    from tests.support.preemptive_agreement import verify_one

    started = time.perf_counter()
    cfg = config or HarnessConfig()
    case = preemptive_case(seed, rates, cfg.preemptive_bounds)
    text, features = case.text, ("preemptive", *case.kinds)
    flags = verify_flags(case)

    def result(verdicts: tuple = (), found: tuple = (), simulations: int = 0,
               agreed: int = 0, **kw) -> PolicyResult:
        return PolicyResult(seed, NAME, text, features, verdicts, found, simulations, 0,
                            agreed, time.perf_counter() - started, preemptive=True,
                            verify_flags=flags, **kw)

    try:
        policy_ir = compile_source(text, "<fuzz>")
    except DiagnosticError as exc:
        if case.refused is None:  # the generator made an invalid policy
            return result(compile_error=render_diagnostics(exc.diagnostics))
        problem = unlocated(exc.diagnostics, text, case.refused)
        found = () if problem is None else (_bad(case.refused, problem),)
        return result(found=found, skipped="refused by check")
    if case.refused is not None:
        return result(found=(_bad(case.refused, f"`check` accepts `{case.refused}` although "
                                  "the params' domains make it non-positive"),))
    found_bad = [_bad(name, p) for name, p in _bad_values(policy_ir, case)]
    tally: Counter = Counter()
    verdicts_out: list = []
    try:
        found = verify_one(seed, cfg.preemptive_states, case.bounds, tally, text=text,
                           processors=case.processors, overrun=case.overrun,
                           verdicts_out=verdicts_out)
        runs, run_found = (0, []) if found == "skip" else _runs(policy_ir, case, {
            v.property for v in verdicts_out if v.status == "proved"})
    except Exception as exc:  # a verifier or simulator bug
        ev = Evidence("verify_one", {}, f"{type(exc).__name__}: {exc}")
        return result(_verdicts(tally), (*found_bad, Disagreement("crash", "crash", "verify",
                                                                  ev)), tally["replays"])
    # with their reasons where verify_one kept them (an unknown's says why)
    verdicts = tuple(VerdictRecord(v.property, v.status, round(v.seconds, 3), v.reason,
                                   v.caveats) for v in verdicts_out) or _verdicts(tally)
    if found == "skip":
        return result(verdicts, tuple(found_bad), skipped="not encoded")
    found_bad += [_bad(v.property, p) for v in verdicts_out
                  if (p := _refused_params(policy_ir, v)) is not None]
    properties = sorted({v.property for v in verdicts}, key=len, reverse=True)
    disagreements = (*found_bad, *(_record(d.what, d.state, properties) for d in found),
                     *run_found)
    stops = sum(n for k, n in tally.items() if k.startswith("replay stops "))
    agreed = stops - sum(d.kind == "proved-but-stopped" for d in disagreements)
    return result(verdicts, disagreements, tally["replays"] + runs, agreed)


def verify_flags(case: PreemptiveCase) -> str:
    """The `schedc verify` options of the case's proofs (beside --queued and --running)."""
    return f"--processors {case.processors}" + (
        f" --overrun {case.overrun}" if case.overrun != "estimate" else "")


# -- 1. settings ---------------------------------------------------------------------------------

def unlocated(diagnostics: list[Diagnostic], text: str, clause: str) -> str | None:
    """Why the refusal of ``clause`` is not a located one (None: it is): an error at the
    clause's line and within it, naming the clause, with a help line."""
    line = next((i + 1 for i, x in enumerate(text.splitlines())
                 if x.strip().startswith(clause + " ")), None)
    d = next((d for d in diagnostics if d.severity == "error"), None)
    if d is None or line is None:
        return f"no error for `{clause}`"
    if d.line != line or d.col is None or d.col < 1:
        return (f"the error is at line {d.line}, col {d.col}, not at `{clause}` (line {line}): "
                f"{d.message}")
    if clause not in d.message or not d.help:
        return f"the error does not name `{clause}` or has no help: {d.message}"
    return None


def _bad_values(policy_ir, case: PreemptiveCase) -> list[tuple[str, str]]:
    """`run --param NAME=VALUE` for each of the case's bad values: refused, located at the
    clause (``binding.bind``, which `run` calls); else what is wrong."""
    from schedc.dsl.binding import bind

    out = []
    for name, value, clause in case.bad_values:
        try:
            bind(policy_ir, {name: value})
        except DiagnosticError as exc:
            problem = unlocated(exc.diagnostics, case.text, clause)
            if problem is not None:
                out.append((clause, f"run --param {name}={value}: {problem}"))
            continue
        out.append((clause, f"run --param {name}={value} is accepted: `{clause}` is then "
                    "non-positive"))
    return out


def _refused_params(policy_ir, verdict) -> str | None:
    """What is wrong with a counterexample's params: a value `run` refuses (no verdict may
    rest on one), or None."""
    from schedc.dsl.binding import bind
    from schedc.runtime.workloads.state_file import param_text

    params = (verdict.counterexample or {}).get("params") or {}
    try:
        bind(policy_ir, {k: param_text(v) for k, v in params.items()})
    except DiagnosticError as exc:
        return (f"the counterexample of {verdict.property} has params {params}, which `run` "
                f"refuses: {exc.diagnostics[0].message}")
    return None


def _bad(what: str, problem: str) -> Disagreement:
    return Disagreement("bad-setting", BAD_SETTING, what,
                        Evidence("schedc check / run --param", {}, problem))


# -- 3. runs -------------------------------------------------------------------------------------

def _runs(policy_ir, case: PreemptiveCase, proved: set[str], tally: Counter | None = None
          ) -> tuple[int, list[Disagreement]]:
    """``RUNS`` small workloads (at most N and R jobs: every pass is within the proofs'
    slots), half under `--overrun extend` with jobs running past their estimates; a stop for
    a proved property, with no departure from the proofs' assumptions noted before it, is a
    disagreement (its workload as evidence). The runs made, and the disagreements;
    ``tally`` counts the stops by property ("stops KIND") and those after a departure
    ("noted")."""
    from schedc.runtime.engine.from_ir import to_runtime
    from schedc.runtime.engine.monitor import MonitorViolation
    from schedc.runtime.engine.preemptive import simulate_preemptive

    from .workloads import workload_csv

    runtime = to_runtime(policy_ir, {})
    rng = random.Random(f"runs {case.seed}")
    out = []
    for i in range(RUNS):
        mode = "extend" if case.overrun == "extend" or i % 2 else "estimate"
        load = _workload(rng, case, min(case.bounds), mode)
        try:
            simulate_preemptive(runtime, runtime.preemption, load, stall=STALL)
        except MonitorViolation as stop:
            if tally is not None:
                tally[f"stops {stop.kind}"] += 1
                tally["noted"] += "(note: " in str(stop)
            if stop.kind in proved and "(note: " not in str(stop):
                ev = Evidence(f"a random workload (--overrun {mode})", {}, str(stop),
                              workload_csv=workload_csv(load), run_flags=f"--overrun {mode}")
                out.append(Disagreement("proved-but-stopped", PREEMPTIVE_RUN, stop.kind, ev))
                break  # one witness a policy
    return RUNS, out


def _workload(rng: random.Random, case: PreemptiveCase, jobs: int, mode: str):
    """At most ``jobs`` jobs on the case's machine; under `extend`, some run past their
    estimates."""
    from schedc.runtime.jobs import Job, Moldable
    from schedc.runtime.speedup import Linear
    from schedc.runtime.workloads.workload import Workload

    cpus, out, t = case.processors, [], 0
    for i in range(rng.randint(1, jobs)):
        t += rng.randint(0, 6)
        est = rng.randint(1, 14)
        run = rng.randint(1, est)
        if mode == "extend" and rng.random() < 0.6:
            run = rng.randint(est + 1, 3 * est + 2)
        procs = rng.randint(1, cpus)
        shape = Moldable(rng.randint(1, procs), rng.randint(procs, cpus), Linear()) \
            if rng.random() < 0.2 else None
        out.append(Job(i + 1, i, t, run, est, (procs, rng.randint(0, MEMORY)),
                       moldable=shape))
    return Workload(tuple(out), ("cpus", "memory"), (cpus, MEMORY), overrun=mode)


# -- records -------------------------------------------------------------------------------------

def _verdicts(tally: Counter) -> tuple[VerdictRecord, ...]:
    """The verdicts ``verify_one`` counted ("PROPERTY STATUS": one each), in its order."""
    out = []
    for key, n in tally.items():
        if key == "replays" or key.startswith("replay "):
            continue
        prop, status = key.rsplit(" ", 1)
        out += [VerdictRecord(prop, status, 0.0)] * n
    return tuple(out)


def _record(what: str, state: dict, properties: list[str]) -> Disagreement:
    """``verify_one``'s disagreement as the harness's: with a state, a proved property its
    replay stops for; without, a violation whose counterexample did not replay."""
    if " is proved, but its assumptions admit no state" in what:  # the vacuity check's
        prop = what.split(" is proved, but", 1)[0]
        ev = Evidence("the vacuity check (tests/support/vacuity.py)", {}, what)
        return Disagreement("vacuous", VACUOUS, prop, ev)
    if state:
        prop = what.split(" is proved, but", 1)[0]
        waiting = sum(len(state.get(k, [])) for k in ("queue", "suspended", "stopped"))
        ev = Evidence("a random state within the bounds, replayed (check: preemptive-pass)",
                      {}, what, state=state, queued=waiting,
                      running=len(state.get("running", [])))
        return Disagreement("proved-but-stopped", PREEMPTIVE, prop, ev)
    prop = next((p for p in properties if what.startswith(p + ": ")), what.split(": ")[0])
    ev = Evidence(f"counterexample of {prop}", {}, what)
    return Disagreement("counterexample", PREEMPTIVE_COUNTEREXAMPLE, prop, ev)
