"""The result store of a sweep: one JSON file per run, `OUT/runs/KEY[:2]/KEY.json`, written
by the worker that made the run, atomically and durably (a temporary file in the same folder,
fsync, rename, fsync of the folder): a run that finished survives `kill -9` of the sweep or
of the worker, and a file in the store is always whole. A rerun lists the store and submits
only the keys it lacks."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

OK = "ok"
FAILED = "failed"


class Store:
    def __init__(self, out: str | os.PathLike[str]) -> None:
        self.root = Path(out) / "runs"

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def write(self, record: Mapping[str, Any]) -> None:
        """``record`` (with its "key") stored whole or not at all, on disk when this returns."""
        target = self.path(record["key"])
        target.parent.mkdir(parents=True, exist_ok=True)
        data = json.dumps(record, sort_keys=True, indent=1, ensure_ascii=False,
                          allow_nan=False).encode("utf-8") + b"\n"
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        folder = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(folder)  # the rename itself on disk
        finally:
            os.close(folder)

    def stored(self) -> Iterator[str]:
        """The keys stored (temporary files of interrupted writes are not results)."""
        if not self.root.is_dir():
            return
        for folder in os.scandir(self.root):
            if folder.is_dir():
                for entry in os.scandir(folder.path):
                    if entry.name.endswith(".json") and not entry.name.startswith("."):
                        yield entry.name[:-5]

    def read(self, key: str) -> dict[str, Any] | None:
        """The record of ``key`` (None: not stored, or not readable as one)."""
        try:
            with open(self.path(key), encoding="utf-8") as f:
                record = json.load(f)
        except (OSError, ValueError):
            return None
        return record if isinstance(record, dict) and record.get("key") == key else None

    def records(self, keys: set[str]) -> dict[str, dict[str, Any]]:
        """The stored records among ``keys``."""
        out = {}
        for key in self.stored():
            if key in keys:
                record = self.read(key)
                if record is not None:
                    out[key] = record
        return out
