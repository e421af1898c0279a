"""`schedc sweep SPEC.toml`: a spec's product of runs on Dask, resumable from its result store,
written as tables (see the modules: spec, runs, keys, store, execute, tables, summary)."""

from __future__ import annotations

import os
from typing import Any


def read_summary(out: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The `summary.csv` of a sweep's output folder, numbers as numbers, empty cells None."""
    from schedc.runtime.tools.sweep.tables import SUMMARY, read_rows

    return read_rows(os.path.join(os.fspath(out), SUMMARY))


__all__ = ["read_summary"]
