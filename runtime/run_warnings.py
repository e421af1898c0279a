"""A run's warnings: what compiles and runs but is probably not what the user meant.
Each is a warning (on standard error; the exit status is unchanged), never an error: the
result is still exact, only likely not the one the user wanted."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from schedc.dsl.diagnostics import Diagnostic
from schedc.dsl.number_text import show

if TYPE_CHECKING:
    from schedc.dsl import ir
    from schedc.runtime.workloads.workload import Workload


def run_warnings(policy: ir.Policy, workload: Workload) -> tuple[Diagnostic, ...]:
    """The compiler's warnings of ``policy``, then those of running it on ``workload``."""
    out = list(policy.warnings)
    if not workload.jobs:
        out.append(_empty(workload))
    elif policy.size is not None and all(j.moldable is None for j in workload.jobs):
        out.append(_rigid(policy, workload))
    if workload.time_unit != 1:
        out.append(_unit(workload))
    out.extend(workload_warnings(workload))
    if policy.preemption is not None and workload.jobs:
        out.extend(_machine(policy, workload))
    return tuple(out)


def _machine(policy: ir.Policy, workload: Workload) -> list[Diagnostic]:
    """A preemptive run on more processors than `schedc verify` proves for by default: the
    run does not know the P a user verified with, so it names the bound it leaves."""
    from schedc.dsl.verify.vocabulary import MAX_PROCESSORS, PROCESSORS

    cpus = policy.machine.resources[0].capacity or workload.capacities[0]
    if cpus <= PROCESSORS:
        return []
    reach = (f"verify with --processors {cpus} to cover it" if cpus <= MAX_PROCESSORS else
             f"no bound of `schedc verify` reaches it (--processors takes at most "
             f"{MAX_PROCESSORS}): its preemptive verdicts are proved for smaller machines only")
    return [Diagnostic(
        f"the machine has {cpus:,} cpus: a verdict of `schedc verify` that says \"proved for "
        "machines of at most P processors\" (--processors, default "
        f"{PROCESSORS}) does not cover this run unless P >= {cpus:,}",
        file=policy.file or None, help=reach, severity="warning")]


# what to do about a run's pass outside a preemptive proof's assumptions, by kind
# (``runtime/engine/preemptive_checks.py``)
_DEPARTURE_HELP = {
    "scope": "passes from such states are not proved: with zero `cost dispatch`, `cost "
             "resume` and `cost checkpoint` none is in flight and no claim waits",
    "overrun": "verify with --overrun extend to cover jobs that outlive their estimates, or "
               "run with --overrun estimate (the default) or kill",
}


def departure_warnings(departures: Sequence[Any], file: str | None) -> tuple[Diagnostic, ...]:
    """A preemptive run's passes outside what `schedc verify`'s proofs assume (the
    ``Schedule``'s ``departures``), each kind once, as warnings on the policy's ``file``."""
    return tuple(Diagnostic(d.message, file=file or None, help=_DEPARTURE_HELP[d.kind],
                            severity="warning") for d in departures)


def workload_warnings(workload: Workload) -> list[Diagnostic]:
    """What the file records that the run does not simulate as it was: jobs past their
    estimate (`--overrun`), jobs with no requested time (perfect estimates)."""
    from schedc.runtime.workloads.overrun import overrun_facts

    facts = overrun_facts(workload)
    out = []
    if facts.over:
        out.append(_overrun(workload, facts))
    if facts.no_estimate:
        share = facts.no_estimate / facts.jobs
        who = "no job of the workload has a requested time" if share == 1 else (
            f"{facts.no_estimate:,} of {facts.jobs:,} jobs ({share:.1%}) "
            f"{'has' if facts.no_estimate == 1 else 'have'} no requested time")
        out.append(Diagnostic(
            f"{who}: their estimate is their run time, a perfect estimate that no user gives",
            file=workload.source or None,
            help="backfilling results depend on the estimates: compare with a trace that "
            "records them, or say in your results that estimates were exact",
            severity="warning"))
    return out


_MODES_SAID = {
    "kill": "they end at their estimate (--overrun kill): the work past it is not simulated",
    "estimate": "they run to completion, their estimates raised to their run times "
                "(--overrun estimate)",
    "extend": "they run to completion past the estimates the scheduler plans with "
              "(--overrun extend): reservations may slip behind them",
}
_MODES_HELP = {
    "kill": "--overrun estimate runs them to completion (the literature's usual cleaning)",
    "estimate": "--overrun kill ends them at their estimate, as a batch system enforces; "
                "--overrun extend keeps the estimates the scheduler saw",
    "extend": "--overrun estimate raises their estimates instead; --overrun kill ends them "
              "at their estimate",
}


def _overrun(workload: Workload, facts) -> Diagnostic:  # type: ignore[no-untyped-def]
    mode = workload.overrun
    return Diagnostic(
        f"{facts.over:,} of {facts.jobs:,} jobs ({facts.share_jobs:.1%}) ran past their "
        f"requested time, {facts.share_work:.1%} of the recorded work: {_MODES_SAID[mode]}",
        file=workload.source or None, help=_MODES_HELP[mode], severity="warning")


def _unit(workload: Workload) -> Diagnostic:
    unit = workload.time_unit
    shown = f"1/{unit.denominator} s" if unit.numerator == 1 else f"{show(unit)} s"
    return Diagnostic(
        f"the workload's times count units of {shown} (`# time-unit`): the simulation runs "
        f"in them, so the policy's durations do too (`1h` is 3600 units, "
        f"{show(3600 * unit)} s); the metrics are converted to seconds", file=workload.source,
        help="write the policy's durations in the table's units, or generate the table with "
        "--time-scale 1", severity="warning")


def _empty(workload: Workload) -> Diagnostic:
    skipped = workload.skipped_total
    left = f" left after skipping {skipped}" if skipped else ""
    return Diagnostic(
        f"the workload has no job{left}: every metric is 0", file=workload.source or None,
        help="the skipped lines are counted below the metrics: fix them, or check that the "
        "file is the trace you meant" if skipped else "an SWF trace has one job per line "
        "after its `;` header, a CSV table one per row after its column names",
        severity="warning")


def _rigid(policy: ir.Policy, workload: Workload) -> Diagnostic:
    return Diagnostic(
        f"policy `{policy.name}` chooses job sizes (`size`), but no job of the workload is "
        "moldable: each job's range is its request (job.min_size = job.max_size = "
        "job.procs) and it runs its recorded time on any size, so sizes in that range give "
        "the rigid schedule", file=policy.file or None,
        help="make the jobs moldable with --range-factor RF (papers/000), or run a moldable "
        "job table (`schedc workload generate`)", severity="warning")
