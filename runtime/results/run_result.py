"""One simulated run as the library returns it: the policy, the workload as simulated, the
schedule and what it ran (provenance, warnings), with its metrics computed once on first
use. Made by `schedc.runtime.run.run_policy`; the reports, pages and figures read it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attrs import Factory, field, frozen

from schedc.dsl.diagnostics import Diagnostic

if TYPE_CHECKING:
    from schedc.runtime.engine.policy import RuntimePolicy
    from schedc.runtime.engine.schedule import Schedule
    from schedc.runtime.results.metrics import MetricOptions
    from schedc.runtime.results.provenance import Provenance
    from schedc.runtime.workloads.workload import Workload


@frozen
class RunResult:
    policy_file: str  # as given ("" for a compiled policy)
    policy: RuntimePolicy
    workload: Workload  # as simulated (transformed, if the options say so)
    schedule: Schedule
    cluster: str | None = None  # a heterogeneous cluster's description
    wall: float = 0.0  # seconds of the simulation alone
    provenance: Provenance | None = None  # what it ran: versions, hashes, params, options
    warnings: tuple[Diagnostic, ...] = ()  # likely mistakes (runtime/run_warnings.py), shown once
    measure: MetricOptions | None = None  # the run's `RunOptions.metric_options()`
    # computed once: a table, --json and --csv of one run all read it
    _metrics: dict[str, Any] = field(init=False, eq=False, repr=False, default=Factory(
        lambda self: _metrics_of(self.schedule, self.measure), takes_self=True))

    def metrics(self) -> dict[str, Any]:
        return self._metrics


def _metrics_of(schedule: Schedule, measure: MetricOptions | None = None) -> dict[str, Any]:
    from schedc.runtime.results.metrics import compute_metrics

    return compute_metrics(schedule, measure).to_dict()
