"""File output that never loses data and never replaces what the user pointed at.

- A regular file (or a new one) is written whole or not at all: a temporary file beside it,
  renamed over it on success.
- A symbolic link is followed: its target is written (atomically, if a regular file) and the
  link stays a link.
- ``-`` is standard output; a FIFO, a character device (``/dev/null``, ``/dev/full``) or a
  socket is opened and streamed to, never replaced by a regular file.

``OutputError`` (an ``OSError``) names the user's path, not a temporary file, and says what
to do: the CLI reports it as a diagnostic. ``check_output`` finds the usual mistakes (a
missing folder, a directory, no permission) before a long run starts.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

STDOUT = "-"

# What to do, by the reason an output cannot be written (the OS's words, lower case)
_HELP = {
    "no space left on device": "free some space or write elsewhere",
    "permission denied": "choose a path you may write",
    "read-only file system": "write to a writable file system",
    "no such file or directory": "create the folder first, or write elsewhere",
    "is a directory": "give a file name inside it",
}


class OutputError(OSError):
    """An output that cannot be written, named as the user gave it, with help."""

    def __init__(self, path: str | os.PathLike[str], reason: str, help: str) -> None:
        super().__init__(f"cannot write {os.fspath(path)}: {reason}")
        self.path = os.fspath(path)
        self.reason = reason
        self.help = help

    def __reduce__(self) -> tuple:  # picklable: experiments write from worker processes
        return (type(self), (self.path, self.reason, self.help))


def _streamed(target: Path) -> bool:
    """Whether ``target`` exists and is not a regular file (a FIFO, a device, a socket)."""
    try:
        mode = target.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def check_output(path: str | os.PathLike[str]) -> None:
    """Raise ``OutputError`` now if ``path`` cannot be written later: its folder is missing
    or not writable, it is a directory, or it exists and is read-only."""
    given = os.fspath(path)
    if given == STDOUT:
        return
    target = Path(os.path.realpath(given))
    if target.is_dir():
        raise OutputError(given, "it is a directory", _HELP["is a directory"])
    if _streamed(target):
        if not os.access(target, os.W_OK):
            raise OutputError(given, "permission denied", _HELP["permission denied"])
        return
    folder = target.parent
    if not folder.is_dir():
        raise OutputError(given, f"the folder {folder} does not exist",
                          _HELP["no such file or directory"])
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(given, f"the folder {folder} is not writable",
                          _HELP["permission denied"])
    if target.exists() and not os.access(target, os.W_OK):
        raise OutputError(given, "the file is read-only", "make it writable or write elsewhere")


@contextmanager
def open_atomic(path: str | os.PathLike[str], newline: str | None = "\n",
                binary: bool = False) -> Iterator[Any]:
    """A text (``binary``: bytes) handle for writing ``path``, as the module says: atomic
    for regular files, streamed to standard output, FIFOs and devices, through links."""
    given = os.fspath(path)
    if given == STDOUT:
        yield from _to_stdout(binary)
        return
    target = Path(os.path.realpath(given))  # write through links, keep them links
    try:
        if _streamed(target):
            with (open(target, "wb") if binary
                  else open(target, "w", encoding="utf-8", newline=newline)) as out:
                yield out
            return
        yield from _replace(target, newline, binary)
    except OutputError:
        raise
    except OSError as error:
        raise _named(given, error) from None


def _to_stdout(binary: bool) -> Iterator[Any]:
    out = sys.stdout.buffer if binary else sys.stdout
    yield out
    out.flush()


def _replace(target: Path, newline: str | None, binary: bool) -> Iterator[Any]:
    """Write a temporary file in the target's folder, then rename it over the target.

    Same folder so that ``os.replace`` is a rename on one file system (atomic on POSIX); on
    any error the temporary file is removed and the old target, if any, is left untouched."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        # mkstemp makes the file private (0600): give it the mode a plain open() would
        # (the old target's, else 0666 less the umask)
        os.chmod(fd, _mode_for(target))
        with (os.fdopen(fd, "wb") if binary
              else os.fdopen(fd, "w", encoding="utf-8", newline=newline)) as out:
            yield out
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _named(given: str, error: OSError) -> OutputError:
    """``error`` told about the user's path (not the temporary file), with help."""
    reason = (error.strerror or str(error)).lower()
    return OutputError(given, reason, _HELP.get(reason, "check the path and the disk"))


def _mode_for(target: Path) -> int:
    try:
        return target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def write_atomic(path: str | os.PathLike[str], fill: Callable[[TextIO], None]) -> None:
    """Call ``fill`` on the handle of ``open_atomic(path)``."""
    with open_atomic(path) as out:
        fill(out)


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    with open_atomic(path) as out:
        out.write(text)
