"""A differential fuzzer between `schedc verify` and the simulator's runtime monitor.

The project's promise: a property that `verify` proves never makes the runtime monitor stop
a run, and every counterexample of a violated property replays (the monitor stops for it).
This package tests that promise on random policies, as Cedar tests its Rust code against its
Lean model:

* ``generate(seed)``: a random, well-typed policy (`.pol` text), biased toward the edges
  where the two sides may disagree (a literal equal to a param's domain bound, real
  arithmetic that is exactly 0 in rationals, counts compared with capacities, inputs the
  verifier assumes away);
* ``generate(seed, GenConfig(preemptive_rate=P))``: for a share P of the seeds, a random
  preemptive policy instead (``preemptive_agreement.encodable_policy``, with the classes of
  issue 44 drawn onto it at ``GenConfig.preemptive_kinds``' rates: ``kinds.py``), which
  ``fuzz_seed`` checks with ``fuzz_preemptive`` (refused where it must be; else
  ``preemptive_agreement.verify_one``: verified, then random states replayed against its
  proofs; then small workloads run), its verdicts and disagreements in the same records;
* ``fuzz_policy(text)``: verifies it with small bounds, simulates it on small random
  workloads and a prefix of the bundled KTH-SP2 trace with param values at both domain
  bounds, replays every counterexample, and reports each disagreement with its evidence
  (a workload or a state that `schedc run` replays, the params, the monitor's message) and a
  triage class.

No pytest here: `tests/dsl/verify/test_fuzz_verify.py` and `benchmarks/fuzz_verify.py` import
it. Everything is deterministic for a seed: budgets count policy calls, Z3 work (rlimit) and
replays; wall-clock limits are far-away guards only.

The modules: ``generate`` (the policy generator), ``workloads`` (random workloads, the trace
prefix, job tables), ``budget`` (simulations under a deterministic budget), ``records`` (the
harness's configs and results), ``harness`` (``fuzz_seed``, ``fuzz_policy``), ``triage``
(classifying a failing state), ``kinds`` (issue 44's classes drawn onto a preemptive policy),
``preemptive`` (a preemptive policy's check) and ``report``
(descriptions, evidence folders, figures). This module re-exports their public names. (The
functions ``generate`` and ``report`` shadow their modules as attributes of the package:
`from tests.support.policy_fuzz.generate import _Gen` still works.)
"""

from __future__ import annotations

from .budget import Outcome, OutOfBudget, run_simulation, signature, stop_property
from .generate import (
    FIXED_CAPACITIES,
    JOB_INTS,
    LABELS,
    MORE_PATTERNS,
    PATTERNS,
    PRELUDE_SIZES,
    REAL_POINTS,
    RESOURCE_NAMES,
    RUNNING_INTS,
    GenConfig,
    GeneratedPolicy,
    generate,
    is_preemptive,
    promote,
)
from .harness import fuzz_policy, fuzz_seed, param_settings
from .kinds import KINDS, NO_KINDS, KindRates, PreemptiveCase, preemptive_case
from .preemptive import (
    BAD_SETTING,
    PREEMPTIVE,
    PREEMPTIVE_COUNTEREXAMPLE,
    PREEMPTIVE_RUN,
    fuzz_preemptive,
)
from .records import (
    STATED_BOUNDS,
    Disagreement,
    Evidence,
    HarnessConfig,
    PolicyResult,
    Stop,
    VerdictRecord,
)
from .report import commands, describe, evidence_name, report, tally, write_evidence
from .triage import MAX_RECHECK, record_failing_pass, state_data
from .workloads import (
    SPEEDUPS,
    has_odd_inputs,
    normalised,
    random_workload,
    through_reader,
    trace_prefix,
    workload_csv,
)

__all__ = [
    "BAD_SETTING", "KINDS", "NO_KINDS", "PREEMPTIVE_RUN", "KindRates", "PreemptiveCase",
    "preemptive_case", "FIXED_CAPACITIES", "JOB_INTS", "LABELS", "MAX_RECHECK",
    "MORE_PATTERNS", "PATTERNS",
    "PRELUDE_SIZES", "REAL_POINTS", "RESOURCE_NAMES", "RUNNING_INTS", "SPEEDUPS",
    "STATED_BOUNDS", "Disagreement", "Evidence", "GenConfig", "GeneratedPolicy",
    "HarnessConfig", "OutOfBudget", "Outcome", "PREEMPTIVE", "PREEMPTIVE_COUNTEREXAMPLE",
    "PolicyResult", "Stop", "VerdictRecord", "commands", "describe", "evidence_name",
    "fuzz_policy", "fuzz_preemptive", "fuzz_seed", "generate", "has_odd_inputs",
    "is_preemptive", "normalised", "param_settings", "promote", "random_workload",
    "record_failing_pass", "report", "run_simulation", "signature", "state_data",
    "stop_property", "tally", "through_reader", "trace_prefix", "workload_csv",
    "write_evidence",
]
