"""The verifier's vocabulary and defaults, in one place and without z3 (which loads slowly):
the property names, the bounds of the symbolic state, Z3's limits and the ranges the CLI
accepts. The prover, the monitor and `schedc verify` all read them from here."""

from __future__ import annotations

# The properties of one pass, in report order; "invariant `TEXT`" names a policy's own
PROPERTIES = ("capacity", "size-bounds", "well-defined", "reservation-safety", "progress")
# a preemptive policy's (papers/003; dsl/verify/preemption/properties.py says each)
PREEMPTIVE_PROPERTIES = ("capacity", "size-bounds", "well-defined", "protected", "mechanism",
                         "no-superfluous-preemption", "progress")
ALL_PROPERTIES = tuple(dict.fromkeys((*PROPERTIES, *PREEMPTIVE_PROPERTIES)))
KEPT = "reservations-kept"  # the property across passes (across.py)
# a preemptive state's first pass checked for `protected`, `mechanism` and `progress`
# (runtime/engine/preemptive_checks.py): what a preemptive counterexample turns on
PREEMPTIVE_PASS = "preemptive-pass"
OPT_IN_CHECKS = (KEPT, PREEMPTIVE_PASS)  # the monitor's checks a state file may turn on

QUEUED = 8  # N: queued-job slots of the symbolic state
RUNNING = 8  # R: running-job slots
# a preemptive pass's default slots (N waiting, R running): each slot carries P processor
# terms and the pass's loops over pairs of them
PREEMPTIVE_SLOTS = 3
PROCESSORS = 4  # P: processors of a preemptive pass's machine (each a term per job)
MAX_PROCESSORS = 32
MAX_SLOTS = 64  # N and R at most: each slot is terms of its own
MAX_RESOURCES = 8  # K of `--resources K`: the machine's own, then generic ones
# `--overrun`: the run mode a preemptive verdict covers (`schedc run --overrun`). In `kill`
# and `estimate` (the default of both) a running job has always run less than its
# estimate; in `extend` it may outrun it, which a proof then does not assume
OVERRUN_MODES = ("kill", "estimate", "extend")
OVERRUN = "estimate"

RLIMIT = 50_000_000  # Z3 resource units of each check (deterministic: it decides verdicts)
# a preemptive pass's property is checked part by part, each part on its own solver: the
# default limit of one part (a --rlimit given is taken as it is)
PREEMPTIVE_RLIMIT = 200_000_000
# CPU seconds per property, all of its verification (dsl/verify/budget.py), not wall-clock
# time: a guard, which the rlimit beats on every shipped example (the slowest property took
# 16 s of CPU time, benchmarks/bench_verify_limits.py), so their verdicts are the same on a
# quiet and a busy machine
TIMEOUT_S = 120.0
# Z3 reads the rlimit as an unsigned 32-bit number (a larger one wraps round; 0 is none)
MAX_RLIMIT = 2**32 - 1
# seconds: at least 1 ms, below 2^32 ms (49 days)
MIN_TIMEOUT_S, MAX_TIMEOUT_S = 0.001, 2**32 / 1000

# why `reservations-kept` says nothing of a preemptive policy
PREEMPTION_RESERVES_NOTHING = (
    "a preemptive pass makes no reservations (its jobs start by first fit, `reserve 0`): "
    "reservations-kept does not apply; see the preemptive properties of its pass")
