"""The harness's records: its config, verdicts, evidence, disagreements, a policy's result,
and one run (``_Case``), shared by the harness, the triage and the reports."""

from __future__ import annotations

from typing import Any

from attrs import frozen

from schedc.runtime.workloads.workload import Workload


@frozen
class HarnessConfig:
    bounds: tuple[int, int] = (3, 3)  # N queued, R running job slots of the proofs
    rlimit: int = 4_000_000  # Z3 work per property (deterministic)
    timeout_ms: int = 60_000  # a far-away guard; the rlimit decides
    sim_calls: int = 400_000  # policy calls per simulation (deterministic budget)
    sim_seconds: float = 30.0  # a far-away guard
    trace_jobs: int = 600  # the KTH-SP2 prefix
    odd_inputs: float = 0.3  # chance of a workload with repeated ids or negative times
    triage: bool = True  # extract, shrink and classify each disagreement's failing state
    shrink_runs: int = 60  # replays a shrink may make
    # a preemptive policy (GenConfig.preemptive_rate): verified with N waiting and R running
    # slots (P = 8 processors unless its kinds draw another, fewer slots above 8:
    # ``kinds.bounds_for``; the default Limits), then so many random states within those
    # bounds replayed against its proofs (``preemptive_agreement.verify_one``)
    preemptive_bounds: tuple[int, int] = (2, 2)
    preemptive_states: int = 8


@frozen
class VerdictRecord:
    property: str
    status: str  # proved | violated | unknown
    seconds: float
    reason: str | None = None
    caveats: tuple[str, ...] = ()  # a proof's limits, as the report states them


@frozen
class Evidence:
    source: str  # what was simulated: a workload, the trace, a counterexample
    params: dict[str, Any]  # the param values of the run
    message: str  # the monitor's (or the error's); "" when the run ended normally
    workload_csv: str | None = None  # a job table `schedc run --workload` reads
    state: dict[str, Any] | None = None  # a state `schedc run --state` replays
    queued: int | None = None  # jobs waiting and running where it failed (state or call)
    running: int | None = None
    run_flags: str = ""  # more `schedc run` options it needs (`--overrun extend`)


# The category of a stop with more jobs than a proof's slots, where the verdict states that
# it covers no more (its caveat says which bound to raise): reported, not a disagreement
STATED_BOUNDS = "beyond-stated-bounds"


@frozen
class Disagreement:
    kind: str  # proved-but-stopped | counterexample | crash | vacuous | bad-setting
    # constant-vs-bound | real-arithmetic | bounds | input-assumption | counterexample |
    # counterexample-masked (the replay stops first for another property, also not proved) |
    # outside-pass | crash | other; a preemptive policy's: preemptive (a proved property a
    # replayed state stops for) | preemptive-counterexample (a violation no replay confirms)
    # | preemptive-run (a proved property a run stops for) | bad-setting (a non-positive
    # setting let through, or refused unlocated: ``preemptive.py``);
    # either's vacuous-proof (proved, but its assumptions admit no state: tests/support/vacuity)
    category: str
    property: str
    evidence: Evidence
    note: str = ""  # why the triage chose the category


@frozen
class Stop:
    """A monitor stop seen in a run, and the verifier's verdict on its property."""

    source: str
    property: str
    verdict: str  # proved | violated | vacuous | unknown | "" (no verdict: a crash)
    message: str


@frozen
class PolicyResult:
    seed: int | None
    name: str
    text: str
    features: tuple[str, ...]
    verdicts: tuple[VerdictRecord, ...]
    disagreements: tuple[Disagreement, ...]
    simulations: int  # runs made (workloads, trace, counterexample replays)
    out_of_budget: int  # runs stopped by their budget (no conclusion)
    agreed_stops: int  # monitor stops for a property the verifier did not prove
    seconds: float
    compile_error: str | None = None
    stops: tuple[Stop, ...] = ()
    # a preemptive policy (``preemptive.fuzz_preemptive``): its verdicts carry no times or
    # reasons, ``simulations`` counts its replayed states
    preemptive: bool = False
    # why it was not checked: a preemptive policy "not encoded", or "refused by check" (as it
    # must be: a setting the params make non-positive, ``kinds.py``)
    skipped: str | None = None
    verify_flags: str = ""  # a preemptive policy's `schedc verify` options (P, --overrun)

    @property
    def unknown(self) -> int:
        return sum(v.status == "unknown" for v in self.verdicts)

    def status(self, prop: str) -> str | None:
        """The verdict on ``prop`` (None: not verified)."""
        return next((v.status for v in self.verdicts if v.property == prop), None)


@frozen
class _Case:
    """One run: a workload (or a state) and param values."""

    source: str
    params: dict[str, Any]
    workload: Workload | None = None
    state: dict[str, Any] | None = None
