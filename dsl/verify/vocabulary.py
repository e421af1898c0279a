"""The verifier's vocabulary and defaults, in one place and without z3 (which loads slowly):
the property names, the bounds of the symbolic state, Z3's limits and the ranges the CLI
accepts. The prover, the monitor and `schedc verify` all read them from here."""

from __future__ import annotations

# The properties of one pass, in report order; "invariant `TEXT`" names a policy's own
PROPERTIES = ("capacity", "size-bounds", "well-defined", "reservation-safety", "progress")
KEPT = "reservations-kept"  # the property across passes (across.py)
OPT_IN_CHECKS = (KEPT,)  # the monitor's checks a state file may turn on (its `check` key)

QUEUED = 8  # N: queued-job slots of the symbolic state
RUNNING = 8  # R: running-job slots
MAX_SLOTS = 64  # N and R at most: each slot is terms of its own
MAX_RESOURCES = 8  # K of `--resources K`: the machine's own, then generic ones

RLIMIT = 50_000_000  # Z3 resource units per property (deterministic)
TIMEOUT_S = 60.0  # wall clock per property, all its checks together
# Z3 reads both limits as unsigned 32-bit numbers (a larger rlimit wraps round; 0 is none)
MAX_RLIMIT = 2**32 - 1
# seconds: at least 1 ms, below 2^32 ms
MIN_TIMEOUT_S, MAX_TIMEOUT_S = 0.001, 2**32 / 1000

# why a preemptive policy's verdicts are unknown, until its pass is encoded (issue 34)
PREEMPTION_NOT_ENCODED = (
    "the policy preempts (`preempt when`), and a preemptive pass (its suspensions, requeues "
    "and the jobs they make room for) is not encoded for Z3 yet: nothing is proved of it; "
    "`schedc run` checks capacity, held memory and processes after every pass")
