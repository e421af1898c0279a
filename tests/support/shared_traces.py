"""Where the tests find the shared real traces: ``$SCHEDC_TRACES``, else ``../shared/traces``
beside the project root (see ../shared/traces/README.md). Absent traces skip, saying why."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TRACES = Path(os.environ.get("SCHEDC_TRACES") or ROOT.parent / "shared" / "traces")


def shared_trace(name: str) -> Path:
    path = TRACES / name
    if not path.exists():
        pytest.skip(f"{path} is not here (set SCHEDC_TRACES to the folder of shared traces)")
    return path
