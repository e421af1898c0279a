"""Where the tests find the shared real traces: ``$SCHEDC_TRACES``, else ``../shared/traces``
beside the project root (see ../shared/traces/README.md).

KTH-SP2 is also bundled with the package (``runtime/data``, the same bytes), so a test that
asks for it always runs. ``any_real_workload`` is for tests whose assertions hold on any real
trace: without the shared one they run on the start of the bundled KTH-SP2. Other absent
traces skip, saying why.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TRACES = Path(os.environ.get("SCHEDC_TRACES") or ROOT.parent / "shared" / "traces")
BUNDLED = ROOT / "runtime" / "data" / "KTH-SP2-1996-2.1-cln.swf.gz"


def shared_trace(name: str) -> Path:
    path = TRACES / name
    if path.exists():
        return path
    if name == BUNDLED.name:
        return BUNDLED
    pytest.skip(f"{path} is not here (set SCHEDC_TRACES to the folder of shared traces)")


def any_real_workload(name: str, stand_in_jobs: int = 3000):
    """The shared trace ``name`` loaded on its own machine, else the bundled KTH-SP2's first
    ``stand_in_jobs`` jobs: for tests whose assertions hold on any real trace, kept to a
    size whose run takes seconds (the whole of KTH-SP2, longer than NASA's, would take
    minutes where a pass reads the whole queue)."""
    import attrs

    from schedc.runtime.workloads.load import load_workload

    path = TRACES / name
    if path.exists():
        return load_workload(str(path), capacities={})
    whole = load_workload(str(BUNDLED), capacities={})
    return attrs.evolve(whole, jobs=whole.jobs[:stand_in_jobs])
