"""Replaying a counterexample of `schedc verify` in the simulator, in process.

The verifier reports a property violated only when the simulator agrees: it hands each
counterexample state it finds to ``replay_stop``, which runs the policy from that state under
the runtime monitor, exactly as ``schedc run POLICY --state FILE`` does, and says how the run
stopped. This module is the only bridge from the verifier to the simulator; the verifier
receives it as a plain callable, so the language side imports nothing from the runtime.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from attrs import frozen

from schedc.dsl import ir
from schedc.dsl.diagnostics import DiagnosticError
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.monitor import MonitorViolation
from schedc.runtime.engine.preemptive import simulate_preemptive, state_problem
from schedc.runtime.engine.simulator import machine_for, simulate
from schedc.runtime.workloads.state_file import merged_params, state_from_data


@frozen
class Stop:
    """How a replay ended: ``kind`` is the property the monitor's stop refutes (None: the run
    ended normally, or stopped for a reason no property covers), ``message`` what it said."""

    kind: str | None
    message: str


def replay_stop(policy: ir.Policy, counterexample: Mapping[str, Any]) -> Stop:
    """Run ``policy`` from the counterexample's state (its records of what the passes
    decided, `pass` and `next_pass`, are ignored; a two-pass one's `check` turns on the
    monitor check across passes). A preemptive policy's state (its suspended and stopped
    jobs, the jobs' histories) runs in the preemptive simulator."""
    # through JSON text, as the user's file: numbers read back as the decimals written
    data = json.loads(json.dumps(state_part(counterexample)), parse_float=Fraction)
    resources = tuple(r.name for r in policy.machine.resources)
    try:
        state = state_from_data(data, resources, "<counterexample>")
        runtime = to_runtime(policy, merged_params(state, {}))
    except DiagnosticError as exc:  # the state breaks a reader's rule (WorkloadError too)
        return Stop(None, f"the state is not valid input: {exc}")
    problem = state_problem(runtime, state)
    if problem is not None:
        return Stop(None, f"the state cannot be replayed: {problem[0]}")
    if state.sizes and not runtime.active(state.active).size_fixed:
        return Stop(None, "the state gives queued jobs a `size`, but the policy has none kept")
    if runtime.preemption is not None:
        try:
            machine_for(runtime, state.workload, initial=state)
        except DiagnosticError as exc:  # the state's machine is not the policy's
            return Stop(None, f"the state is not valid input: {exc}")
    try:
        if runtime.preemption is not None:
            simulate_preemptive(runtime, runtime.preemption, state.workload, initial=state)
        else:
            simulate(runtime, state.workload, initial=state)
    except MonitorViolation as exc:
        return Stop(exc.kind, str(exc))
    return Stop(None, "the run ended without a monitor stop")


# What a counterexample records beside its state: the decisions of its pass (and, for a
# property across passes, of the next one); not part of the state file
RECORDS = ("pass", "next_pass")


def state_part(counterexample: Mapping[str, Any]) -> dict[str, Any]:
    """The counterexample without its records: the state file `schedc run --state` reads."""
    return {k: v for k, v in counterexample.items() if k not in RECORDS}


def replayer(policy: ir.Policy) -> Callable[[Mapping[str, Any]], tuple[str | None, str]]:
    """``verify_policy``'s ``replay`` for ``policy``: (the property refuted, the message)."""
    def replay(counterexample: Mapping[str, Any]) -> tuple[str | None, str]:
        stop = replay_stop(policy, counterexample)
        return stop.kind, stop.message

    return replay
