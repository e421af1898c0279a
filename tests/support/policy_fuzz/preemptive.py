"""A preemptive policy in the harness's records: ``fuzz_preemptive(seed)`` verifies the random
preemptive policy of ``seed`` and replays random states against its proofs
(``tests/support/preemptive_agreement.verify_one``, which this module only wraps), and gives
the verdicts and disagreements as a ``PolicyResult``, as ``fuzz_seed`` gives a rigid one's.

``fuzz_seed`` calls it for the seeds ``generate.is_preemptive`` chooses
(``GenConfig.preemptive_rate``). Deterministic for a seed.
"""

from __future__ import annotations

import time
from collections import Counter

from schedc.dsl import DiagnosticError, render_diagnostics
from tests.support.vacuity import VACUOUS

from .records import Disagreement, Evidence, HarnessConfig, PolicyResult, VerdictRecord

# the categories of a preemptive policy's disagreements (records.Disagreement.category)
PREEMPTIVE = "preemptive"  # a proved property that a replayed state stops for
PREEMPTIVE_COUNTEREXAMPLE = "preemptive-counterexample"  # a violation no replay confirms
NAME = "fuzz"  # the policy's name in its file


def fuzz_preemptive(seed: int, config: HarnessConfig | None = None) -> PolicyResult:
    """Verify the preemptive policy of ``seed`` with ``config.preemptive_bounds`` (P = 8
    processors, counterexamples replayed), replay ``config.preemptive_states`` random states
    within them, and report each disagreement: a proved property a replay stops for
    (category "preemptive", its state as evidence) or a counterexample no replay stops for
    ("preemptive-counterexample"). A policy the encoding does not cover is ``skipped``."""
    from tests.support.preemptive_agreement import encodable_policy, verify_one

    started = time.perf_counter()
    cfg = config or HarnessConfig()
    text = encodable_policy(seed)
    tally: Counter = Counter()
    try:
        found = verify_one(seed, cfg.preemptive_states, cfg.preemptive_bounds, tally)
    except DiagnosticError as exc:  # the generator made an invalid policy
        return PolicyResult(seed, NAME, text, ("preemptive",), (), (), 0, 0, 0,
                            time.perf_counter() - started, preemptive=True,
                            compile_error=render_diagnostics(exc.diagnostics))
    except Exception as exc:  # a verifier or simulator bug
        ev = Evidence("verify_one", {}, f"{type(exc).__name__}: {exc}")
        return PolicyResult(seed, NAME, text, ("preemptive",), _verdicts(tally),
                            (Disagreement("crash", "crash", "verify", ev),), tally["replays"],
                            0, 0, time.perf_counter() - started, preemptive=True)
    verdicts = _verdicts(tally)
    if found == "skip":
        return PolicyResult(seed, NAME, text, ("preemptive",), verdicts, (), 0, 0, 0,
                            time.perf_counter() - started, preemptive=True,
                            skipped="not encoded")
    properties = sorted({v.property for v in verdicts}, key=len, reverse=True)
    disagreements = tuple(_record(d.what, d.state, properties) for d in found)
    stops = sum(n for k, n in tally.items() if k.startswith("replay stops "))
    agreed = stops - sum(d.kind == "proved-but-stopped" for d in disagreements)
    return PolicyResult(seed, NAME, text, ("preemptive",), verdicts, disagreements,
                        tally["replays"], 0, agreed, time.perf_counter() - started,
                        preemptive=True)


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
