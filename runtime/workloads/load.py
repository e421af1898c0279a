"""Reading a workload file, the reader chosen by its extension (SWF or a CSV job table)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path

from schedc.runtime.workloads import csv_table, swf
from schedc.runtime.workloads.workload import Workload, WorkloadError


def load_workload(
    path: str | Path,
    resources: tuple[str, ...] = ("cpus",),
    capacities: Mapping[str, int | None] | None = None,
    lenient: bool = False,
    labels: Collection[str] | None = None,
) -> Workload:
    """Read a workload, choosing the reader by extension (.swf, .swf.gz, .csv)."""
    caps = dict(capacities or {})
    name = str(path)
    if not resources or resources[0] != "cpus":
        raise WorkloadError(name, None, None, "the first resource must be `cpus`",
                            help=f"got resources {list(resources)}")
    if name.endswith((".swf", ".swf.gz")):
        return swf.read_swf(path, resources, caps, lenient, labels)
    if name.endswith((".csv", ".csv.gz")):
        return csv_table.read_csv_table(path, resources, caps, lenient)
    if name.endswith(".pol"):
        raise WorkloadError(name, None, None, "a policy file where a workload belongs",
                            help="--workload takes a trace (.swf, .swf.gz) or a job table "
                                 "(.csv); the policy comes first: `schedc run POLICY.pol "
                                 "--workload TRACE`")
    raise WorkloadError(name, None, None, "unknown workload format",
                        help="expected a .swf, .swf.gz or .csv file")
