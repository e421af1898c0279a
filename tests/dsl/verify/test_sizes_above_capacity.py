"""Sizes above a declared cpus capacity (found by `fuzz_verify.py --count 100 --seed 4000
--tuned-rate 0.3`, seed 4045). The exact pass made a visited job that does not start be
reserved at a time it fits, and `size choose` give each candidate such a time: with a size
above a fixed capacity no time fits, so the equations had no solution and every such state
vanished; `size-bounds` (and with `choose`, every property) came out proved while the
simulator stops at the size. Now such a job has no reservation, and a size out of range is a
stop of the pass like a failing formula: after-pass checks and invariants are excused in the
states where the simulator stops first, and only there (a `choose` is checked when the
simulator makes it)."""

from __future__ import annotations

import json

import pytest
import z3

from schedc.dsl import compile_source
from schedc.dsl.verify.pass_encoding.encoder import encode_pass
from schedc.dsl.verify.properties import size_stops
from schedc.dsl.verify.prover import verify_policy
from schedc.dsl.verify.verdict import Bounds, Limits
from schedc.runtime.engine.monitor import MonitorViolation
from schedc.runtime.replay import replay_stop, replayer
from schedc.runtime.run import RunOptions, run_policy
from tests.support.pass_agreement import pass_solver

LIMITS = Limits(rlimit=4_000_000)

POLICY = """\
machine m {{ resource cpus{capacity} }}
policy p {{
  machine m
  reserve 1
  backfill {backfill}
  size {size}
  invariant job.estimate > 99999
}}
"""


def _verdicts(size: str, capacity: str = " = 8", backfill: str = "first_fit"
              ) -> dict[str, object]:
    policy = compile_source(POLICY.format(capacity=capacity, size=size, backfill=backfill),
                            "<test>")
    verdicts = verify_policy(policy, Bounds(2, 2), LIMITS, replay=replayer(policy))
    return {v.property.split()[0]: v for v in verdicts} | {"policy": policy}


@pytest.mark.parametrize("size", ["99", "choose 4 in [1, 99]", "min(job.procs * 2, 16)",
                                  "fixed min(job.procs * 2, 16)"])
@pytest.mark.parametrize("capacity", [" = 8", ""])
def test_a_size_above_the_capacity_is_violated_and_replays(size: str, capacity: str) -> None:
    verdicts = _verdicts(size, capacity)
    verdict = verdicts["size-bounds"]
    assert verdict.status == "violated", verdict.reason
    stop = replay_stop(verdicts["policy"], verdict.counterexample)
    assert stop.kind == "size-bounds", stop.message


def test_a_pass_that_stops_on_its_size_excuses_what_comes_after() -> None:
    # `size 99` on 8 cpus: every pass with a queued job stops at its size, so no job ever
    # starts: the after-pass checks and the invariant hold of every pass that completes
    verdicts = _verdicts("99")
    for name in ("capacity", "well-defined", "reservation-safety", "progress", "invariant"):
        assert verdicts[name].status == "proved", (name, verdicts[name].reason)


def test_only_where_the_simulator_stops() -> None:
    # narrow jobs get a size in range and start: the invariant fails for them, and replays
    verdicts = _verdicts("min(job.procs * 2, 16)")
    verdict = verdicts["invariant"]
    assert verdict.status == "violated", verdict.reason
    assert replay_stop(verdicts["policy"], verdict.counterexample).kind.startswith("invariant")


def test_a_choice_not_made_is_no_stop() -> None:
    # `reserve 0` and fewer cpus free than LOW: the simulator passes over the job without
    # making its choice, so its candidate above the capacity stops nothing: that state must
    # stay among those the after-pass checks and invariants cover
    policy = compile_source(POLICY.format(capacity=" = 8", size="choose 2 in [2, 99]",
                                          backfill="first_fit").replace("reserve 1",
                                                                        "reserve 0"), "<t>")
    sym = encode_pass(policy, Bounds(1, 1))
    solver = pass_solver(sym)
    solver.add(sym.decisions[0].visited, sym.capacity[0] - sym.running_held[0][0] < 2,
               sym.running[0].present)
    solver.add(*(z3.Not(o.violated()) for o, _ in size_stops(sym)))
    assert solver.check() == z3.sat


def test_the_simulator_stops_on_it(tmp_path) -> None:
    policy = tmp_path / "p.pol"
    policy.write_text(POLICY.format(capacity=" = 8", size="99", backfill="first_fit"))
    state = tmp_path / "s.json"
    state.write_text(json.dumps({"now": 0, "capacity": {"cpus": 8}, "running": [], "queue": [
        {"id": 1, "submit": 0, "estimate": 60, "run_time": 60, "request": {"cpus": 1}}]}))
    with pytest.raises(MonitorViolation, match=r"size 99 is outside \[1, 8\]"):
        run_policy(str(policy), None, RunOptions(state=str(state)))
