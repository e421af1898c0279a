"""Triage of a proved property that failed in a simulation: the failing pass's state,
recorded and shrunk, then classified (real-arithmetic, constant-vs-bound, bounds, ...)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from schedc.dsl.verify.prover import verify_policy
from schedc.dsl.verify.verdict import Bounds, Limits
from schedc.runtime.engine import simulator
from schedc.runtime.engine.monitor import MonitorViolation
from schedc.runtime.engine.policy import RuntimePolicy
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.jobs import Job, RunningJob
from schedc.runtime.replay import replayer
from schedc.runtime.speedup import format_speedup
from schedc.runtime.workloads.state_file import InitialState
from schedc.runtime.workloads.workload import Workload

from .budget import Outcome, OutOfBudget, _Probe, signature, stop_property
from .records import Disagreement, Evidence, _Case
from .workloads import has_odd_inputs, normalised

if TYPE_CHECKING:
    from .harness import _Harness


MAX_RECHECK = 6  # a bounds disagreement is re-verified with up to this many job slots


class _Triage:
    """Why a proved property failed in a simulation: the state at the start of the failing
    pass, shrunk, then the first test that explains it:

    * real-arithmetic: the message shows a rounding residue (|x| < 1e-9) or an overflow;
    * constant-vs-bound: a real param at a domain bound fails, the next float inside does
      not (a literal and a bound read as two values);
    * input-assumption: the workload has repeated or negative ids or negative times, and
      with distinct ids 1..n and times from 0 it does not fail;
    * bounds: the failing state holds more queued or running jobs than the proof's slots
      (if it is small, the property is verified again with as many slots: proved there is
      "other", the verifier missing a state within its bounds);
    * outside-pass: the formula fails where the simulator evaluates it outside a pass (an
      order key at a job's submission), in a state the verifier's pass never sees;
    * other: none of these (a verifier or simulator bug to look at)."""

    def __init__(self, h: _Harness, case: _Case, out: Outcome, prop: str) -> None:
        self.h, self.case, self.out, self.prop = h, case, out, prop
        self.sig = signature(out.message, prop)
        self.where = ""  # "pass" or "submission": where the failing state was taken

    def same(self, out: Outcome) -> bool:
        return out.status == "stop" and signature(
            out.message, stop_property(out.message, self.h.invariants)) == self.sig

    def classify(self, d: Disagreement) -> Disagreement:
        case = self.case
        state = self.failing_state()
        ev = d.evidence
        if state is None:
            d = attrs.evolve(d, note="no state at a pass's start replays it")
        else:
            case = _Case(f"the failing pass's state ({case.source})", dict(case.params),
                         state=state)
            ev = attrs.evolve(ev, state=state, queued=len(state["queue"]),
                              running=len(state["running"]))
        d = attrs.evolve(d, evidence=ev)
        for test in (self.residue, lambda: self.at_bound(case), lambda: self.odd(case),
                     lambda: self.beyond_bounds(ev), self.outside_pass):
            found = test()
            if found is not None:
                return attrs.evolve(d, category=found[0], note=found[1])
        return d

    def residue(self) -> tuple[str, str] | None:
        for m in re.finditer(r"-?\d+\.\d+(?:e[-+]?\d+)?|-?\d+e[-+]?\d+", self.out.message):
            x = float(m.group())
            if 0 < abs(x) < 1e-9:
                return "real-arithmetic", f"a rounding residue {x!r}: exactly 0 in rationals"
        if re.search(r"\b(inf|nan)\b", self.out.message) or "too large" in self.out.message:
            return "real-arithmetic", "a float overflow"
        return None

    def at_bound(self, case: _Case) -> tuple[str, str] | None:
        for p in self.h.policy.params:
            if p.type != "real" or p.lo is None or p.lo == p.hi:
                continue
            lo, hi = float(p.lo), float(p.hi)
            v = case.params.get(p.name)
            if v not in (lo, hi):
                continue
            inward = math.nextafter(v, hi if v == lo else lo)
            nudged = attrs.evolve(case, params={**case.params, p.name: inward})
            if not self.same(self.h.execute(nudged)):
                return "constant-vs-bound", (f"fails with {p.name} = {v!r} (a bound of its "
                                             f"domain), not with {inward!r}")
        return None

    def odd(self, case: _Case) -> tuple[str, str] | None:
        w = case.workload
        if w is None or not has_odd_inputs(w):
            return None
        if not self.same(self.h.execute(attrs.evolve(case, workload=normalised(w)))):
            return "input-assumption", ("fails with repeated or negative ids or negative "
                                        "times, not with ids 1..n and times from 0")
        return None

    def outside_pass(self) -> tuple[str, str] | None:
        if self.where == "submission":
            return "outside-pass", ("fails where the simulator evaluates the formula at a "
                                    "job's submission, before it joins the queue: a state "
                                    "no pass sees")
        return None

    def beyond_bounds(self, ev: Evidence) -> tuple[str, str] | None:
        """More jobs than the proof's slots. A shrunk state small enough is re-verified
        with as many slots: violated there confirms the bounds; proved there means the
        verifier misses a state within its bounds (other)."""
        n, r = self.h.cfg.bounds
        q, run = ev.queued or 0, ev.running or 0
        if q <= n and run <= r:
            return None
        how = "in a shrunk state" if ev.state is not None else "at the failing call"
        note = f"fails with {q} queued and {run} running jobs {how}; the proof had N={n}, R={r}"
        stated = [c for v in self.h.verdicts if v.property == self.prop for c in v.caveats]
        note += f" (the report says: {'; '.join(stated)})" if stated else ""
        if ev.state is None or max(q, run) > MAX_RECHECK:
            return "bounds", note
        status = self.recheck(max(q, n), max(run, r))
        if status == "proved":
            return "other", note + f"; proved again with N={max(q, n)}, R={max(run, r)}: " \
                "the verifier misses this state"
        return "bounds", note + f"; with N={max(q, n)}, R={max(run, r)} it is {status}"

    def recheck(self, n: int, r: int) -> str:
        only = "invariant" if self.prop.startswith("invariant") else self.prop
        try:
            verdicts = verify_policy(self.h.policy, Bounds(n, r),
                                     Limits(rlimit=self.h.cfg.rlimit,
                                            timeout_ms=self.h.cfg.timeout_ms), only=[only],
                                     replay=replayer(self.h.policy))
        except Exception as exc:  # a verifier crash: the report still stands
            return f"not rechecked ({type(exc).__name__})"
        return next((v.status for v in verdicts if v.property == self.prop), "unknown")

    def failing_state(self) -> dict[str, Any] | None:
        """The state at the start of the failing pass, if it fails alike when replayed,
        shrunk (jobs removed while it still does)."""
        prepared = self.h.prepare(self.case)
        if isinstance(prepared, Outcome):
            return None
        snap = record_failing_pass(*prepared, self.h.cfg.sim_calls, self.h.cfg.sim_seconds)
        if snap is None:
            return None
        *snap, self.where = snap
        data = state_data(*snap, self.h.resources, self.case.params, prepared[0].size_fixed)
        if not self.same(self.h.execute(_Case("", {}, state=data))):
            return None
        return self.shrink(data)

    def shrink(self, data: dict[str, Any]) -> dict[str, Any]:
        items = [("running", j) for j in data["running"]] + [("queue", j) for j in data["queue"]]

        def build(kept: list[tuple[str, dict]]) -> dict[str, Any]:
            return {**data, "running": [j for k, j in kept if k == "running"],
                    "queue": [j for k, j in kept if k == "queue"]}

        runs = self.h.cfg.shrink_runs
        chunk = max(1, len(items) // 2)
        while runs > 0:
            i = 0
            while i < len(items) and runs > 0:
                trial = items[:i] + items[i + chunk:]
                runs -= 1
                if trial and self.same(self.h.execute(_Case("", {}, state=build(trial)))):
                    items = trial
                else:
                    i += chunk
            if chunk == 1:
                break
            chunk = max(1, chunk // 2)
        return build(items)


def record_failing_pass(rt: RuntimePolicy, workload: Workload, initial: InitialState | None,
                        calls: int, seconds: float) -> tuple | None:
    """(now, queue, running, kept sizes, capacities, "pass" or "submission"): the state at
    the start of the pass, or at the submission, where the monitor stops; None if it does
    not. The simulator has no hook for a pass's start state, so this test
    tool subclasses its private ``_Simulation`` for one run (without the optimisations, which
    never change a schedule)."""
    snap: list[tuple] = []
    where: list[str] = []
    base = simulator._Simulation

    class Recording(base):  # type: ignore[misc, valid-type]
        def _full_pass(self, now: int) -> None:
            m = self.machine
            snap[:] = [(now, tuple(m.queue), tuple(m.running), dict(m.fixed_sizes), m.cap)]
            where[:] = ["pass"]
            super()._full_pass(now)

        def _submit(self, job: Job, old: int) -> bool:
            # a dynamic order key is also evaluated here, before the job joins the queue
            init = self.initial
            now = init.now if init is not None and job.submit <= init.now else job.submit
            m = self.machine
            snap[:] = [(now, (*m.queue, job), tuple(m.running), dict(m.fixed_sizes), m.cap)]
            where[:] = ["submission"]
            return super()._submit(job, old)

    probe = _Probe(calls, seconds)
    simulator._Simulation = Recording
    try:
        simulate(probe.policy(rt), workload, probe.progress, initial=initial,
                 incremental=False, fast=False)
    except MonitorViolation:
        return (*snap[0], where[0]) if snap else None
    except (OutOfBudget, Exception):
        return None
    finally:
        simulator._Simulation = base
    return None


def state_data(now: int, queue: Sequence[Job], running: Sequence[RunningJob],
               sizes: Mapping[int, tuple[int, ...]], cap: Sequence[int],
               resources: Sequence[str], params: Mapping[str, Any],
               size_fixed: bool) -> dict[str, Any]:
    """A state file (runtime/workloads/state_file.py) of a simulator's state between passes."""
    def request(v: Sequence[int]) -> dict[str, int]:
        return dict(zip(resources, v, strict=True))

    run = [{"id": rj.job.id, "submit": rj.job.submit, "start": rj.start,
            "estimate": rj.job.estimate, "run_time": rj.job.run_time,
            "request": request(rj.alloc)}
           for rj in sorted(running, key=lambda rj: rj.job.index)]
    waiting = []
    for j in sorted(queue, key=lambda j: j.index):  # file order: ties break as they did
        item: dict[str, Any] = {"id": j.id, "submit": j.submit, "estimate": j.estimate,
                                "run_time": j.run_time, "request": request(j.request)}
        if j.moldable is not None:
            item |= {"min_size": j.moldable.min_procs, "max_size": j.moldable.max_procs,
                     "speedup": format_speedup(j.moldable.speedup)}
        if size_fixed and j.index in sizes:
            item["size"] = sizes[j.index][0]
        waiting.append(item)
    return {"now": now, "capacity": request(cap), "params": dict(params), "running": run,
            "queue": waiting}
