"""Silent traps of a run: what compiles and runs but is probably not what the user meant.
Each is a warning (on standard error; the exit status is unchanged), never an error: the
result is still exact, only likely not the one the user wanted."""

from __future__ import annotations

from typing import TYPE_CHECKING

from schedc.dsl.diagnostics import Diagnostic
from schedc.dsl.exact import show

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
    return tuple(out)


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
