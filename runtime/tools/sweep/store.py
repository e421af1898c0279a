"""The result store of a sweep: one JSON file per run, `OUT/runs/KEY[:2]/KEY.json`, written
by the worker that made the run, atomically and durably (a temporary file in the same folder,
fsync, rename, fsync of the folder): a run that finished survives `kill -9` of the sweep or
of the worker, and a file in the store is always whole. A rerun lists the store and submits
only the keys it lacks.

A record that is not one (it does not parse, or parses into wrong types, no status, NaN,
deep nesting, another key) is named in a warning on standard error and counted as missing:
the run is made again and its file replaced. One sweep at a time works in a folder: the
first look at the store (`Store.records`) takes a lock on `OUT/.schedc-sweep.lock`, which
the Store holds until it is closed or dropped; a second sweep is refused at once."""

from __future__ import annotations

import errno
import fcntl
import json
import math
import os
import sys
import weakref
from collections.abc import Iterable, Iterator, Mapping
from contextlib import suppress
from pathlib import Path
from typing import Any

from schedc.runtime.atomicio import held_temporary
from schedc.runtime.run import OptionError

OK = "ok"
FAILED = "failed"
LOCK = ".schedc-sweep.lock"  # in the output folder, beside runs/
MAX_RECORD = 4 << 20  # bytes of a record read at most (a record is a few kB)
MAX_DEPTH = 32  # nesting of a record's values (a provenance nests 3 deep)
_NUMBER = (int, float)


class Store:
    def __init__(self, out: str | os.PathLike[str]) -> None:
        self.out = Path(out)
        self.root = self.out / "runs"
        self._lock: int | None = None
        self._release: Any = None  # the finalizer that lets go of the lock

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def write(self, record: Mapping[str, Any]) -> None:
        """``record`` (with its "key") stored whole or not at all, on disk when this returns.
        Its temporary file is removed if SIGTERM ends the process meanwhile (the workers
        set `remove_temporaries_at_termination`)."""
        target = self.path(record["key"])
        target.parent.mkdir(parents=True, exist_ok=True)
        data = json.dumps(record, sort_keys=True, indent=1, ensure_ascii=False,
                          allow_nan=False).encode("utf-8") + b"\n"
        with held_temporary(target) as (fd, tmp):
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
        """The record of ``key`` (None: not stored, or not a record)."""
        return self.load(key)[0]

    def load(self, key: str) -> tuple[dict[str, Any] | None, str | None]:
        """(the record of ``key``, None), or (None, why the file there is not a record), or
        (None, None) when nothing is stored."""
        try:
            with open(self.path(key), "rb") as f:
                data = f.read(MAX_RECORD + 1)
        except FileNotFoundError:
            return None, None
        except OSError as error:
            return None, f"it cannot be read: {(error.strerror or str(error)).lower()}"
        if len(data) > MAX_RECORD:
            return None, f"it is over {MAX_RECORD >> 20} MiB"
        try:
            record = json.loads(data.decode("utf-8"), parse_constant=_no_constant,
                                parse_float=_finite)
        except RecursionError:
            return None, "it is nested too deep"
        except ValueError as error:  # not UTF-8, not JSON, NaN, an integer too long
            return None, f"it is not JSON: {str(error).splitlines()[0]}"
        problem = record_problem(record, key)
        return (None, problem) if problem else (record, None)

    def records(self, keys: set[str]) -> dict[str, dict[str, Any]]:
        """The stored records among ``keys``; each file there that is not a record is named
        in a warning and left out (its run is made again). The first call takes the
        folder's lock (`lock`)."""
        self.lock()
        out = {}
        for key in self.stored():
            if key in keys:
                record, problem = self.load(key)
                if record is not None:
                    out[key] = record
                elif problem is not None:
                    _warn(f"{self.path(key)} is not a run's record: {problem}",
                          "the run is made again and the file replaced")
        return out

    def lock(self) -> None:
        """Hold `OUT/.schedc-sweep.lock` (flock) for as long as this Store lives, or raise
        `OptionError` at once naming the folder and the holder's pid. The kernel drops the
        lock when its holder dies: the lock of a dead sweep is taken over."""
        if self._lock is not None:
            return
        try:
            fd = os.open(self.out / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as error:
            raise _unwritable(self.out, error) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                os.close(fd)  # a file system without locks: nothing to hold
                return
            holder = _holder(fd)
            os.close(fd)
            raise OptionError(f"the folder {self.out} is in use by another sweep{holder}",
                              help="wait for it to end, or give this sweep another --out"
                              ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock = fd
        _HELD.add(fd)
        self._release = weakref.finalize(self, _unlock, fd)

    def close(self) -> None:
        """Let go of the folder's lock (if held)."""
        if self._release is not None:
            self._release()  # once: a finalizer runs at most once
            self._lock = self._release = None

    def check_writable(self, keys: Iterable[str]) -> None:
        """Raise `OptionError` now if the records of ``keys`` could not be written: the
        store's folder, or one of their subfolders, is not writable (found before any run
        is made, not after)."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            with held_temporary(self.root / "probe") as (fd, tmp):
                os.close(fd)
                os.unlink(tmp)
        except OSError as error:
            raise _unwritable(self.root, error) from None
        for prefix in sorted({k[:2] for k in keys}):
            folder = self.root / prefix
            if folder.exists() and not os.access(folder, os.W_OK | os.X_OK):
                raise _unwritable(folder, PermissionError(errno.EACCES, "permission denied"))


def record_problem(record: Any, key: str) -> str | None:
    """Why ``record`` is not the record of ``key`` as the tables read it (None: it is)."""
    if not isinstance(record, dict):
        return "it is not a JSON object"
    if record.get("key") != key:
        return "its key is not its file's name"
    status = record.get("status")
    if status not in (OK, FAILED):
        return "it has no status" if status is None else f"its status {status!r} is unknown"
    if _depth(record) > MAX_DEPTH:
        return "it is nested too deep"
    checks = (("error", lambda v: isinstance(v, str)),
              ("wall_s", _is_number), ("run_s", _is_number),
              ("metrics", lambda v: isinstance(v, dict) and _metrics_ok(v)),
              ("categories", lambda v: isinstance(v, list) and all(map(_category_ok, v))),
              ("provenance", lambda v: isinstance(v, dict)))
    for name, fits in checks:
        if record.get(name) is not None and not fits(record[name]):
            return f"its {name} is not of the right type"
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, _NUMBER) and not isinstance(value, bool)


def _metrics_ok(metrics: Mapping[str, Any]) -> bool:
    """Scalars are numbers (or None), lists lists of them; the per class lists, when there,
    are all three and as long as the classes."""
    from schedc.runtime.results.metrics import CLASSES

    for value in metrics.values():
        items = value if isinstance(value, list) else [value]
        if not all(v is None or _is_number(v) for v in items):
            return False
    lists = ("class_jobs", "class_mean_response", "class_mean_bounded_slowdown")
    if "class_jobs" in metrics:
        return all(isinstance(metrics.get(n), list) and len(metrics[n]) == len(CLASSES)
                   for n in lists)
    return True


def _category_ok(category: Any) -> bool:
    return (isinstance(category, dict) and isinstance(category.get("category"), int)
            and _is_number(category.get("jobs"))
            and (category.get("mean_response") is None
                 or _is_number(category.get("mean_response"))))


def _depth(value: Any) -> int:
    """How deep ``value`` nests (iteratively: a record is never trusted with recursion)."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, depth = todo.pop()
        deepest = max(deepest, depth)
        if depth > MAX_DEPTH:
            break
        if isinstance(item, dict):
            todo.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            todo.extend((v, depth + 1) for v in item)
    return deepest


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is no number of a record")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is beyond the floating-point range")
    return value


def _warn(message: str, help: str) -> None:
    from schedc.dsl import render_diagnostics
    from schedc.dsl.diagnostics import Diagnostic

    sys.stderr.write(render_diagnostics([Diagnostic(message, severity="warning", help=help)]))


def _unwritable(folder: Path, error: OSError) -> OptionError:
    reason = (error.strerror or str(error)).lower()
    return OptionError(f"cannot write the sweep's store in {folder}: {reason}",
                       help="make the folder writable, or give the sweep another --out")


def _holder(fd: int) -> str:
    """`` (pid N)`` of the lock's holder, as it wrote it (empty when unreadable)."""
    try:
        text = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
    except OSError:
        return ""
    return f" (pid {text})" if text.isdigit() else ""


# Locks held by this process: a forked child (a local worker) closes its copies, so a
# worker left behind by a killed sweep does not keep the folder locked
_HELD: set[int] = set()


def _unlock(fd: int) -> None:
    if fd in _HELD:
        _HELD.discard(fd)
        os.close(fd)  # the lock goes with the file's last descriptor


def _close_in_child() -> None:
    for fd in list(_HELD):
        with suppress(OSError):
            os.close(fd)
    _HELD.clear()


os.register_at_fork(after_in_child=_close_in_child)
