"""File output that never loses data and never replaces what the user pointed at.

- A regular file (or a new one) is written whole or not at all: a temporary file beside it,
  renamed over it on success.
- A symbolic link is followed: its target is written (atomically, if a regular file) and the
  link stays a link.
- ``-`` is standard output, and so is every other name of it (``/dev/stdout``,
  ``/dev/fd/1``, a link to them, the file standard output is redirected to): written
  through ``sys.stdout``, in order with what the command prints, never replaced (a rename
  over ``> f`` would drop what was printed before). ``/dev/stderr`` alike.
- A FIFO, a character device (``/dev/null``, ``/dev/full``), a socket or a pipe named by
  ``/dev/fd/N`` (a shell's ``>(cmd)``) is opened and streamed to, never replaced by a
  regular file.
- A temporary file is removed when the process is ended by SIGTERM or SIGHUP while it is
  written (``remove_temporaries``): a killed command leaves the old file and no ``.tmp``.

``OutputError`` (an ``OSError``) names the user's path, not a temporary file, and says what
to do: the CLI reports it as a diagnostic. ``check_output`` finds the usual mistakes (a
missing folder, a directory, a path ending in a separator, no permission) before a long run
starts; ``runtime/outputs.py`` compares a command's outputs with its inputs.
"""

from __future__ import annotations

import atexit
import os
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
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


def _streamed(given: str) -> bool:
    """Whether ``given`` exists and is not a regular file (a FIFO, a device, a socket, a pipe
    named by ``/dev/fd/N``). Stat'ed as given, not by its resolved path: ``/dev/fd/63``
    resolves to ``pipe:[...]``, which names nothing, while the kernel follows it."""
    try:
        mode = os.stat(given).st_mode
    except (OSError, ValueError):
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


# Names of a process's file descriptors: /dev/stdout and /dev/fd/N are links to /proc/self/fd/N
_FD_NAMES = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
_FD_FOLDERS = ("/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/")


def named_descriptor(path: str | os.PathLike[str]) -> int | None:
    """The file descriptor ``path`` names (``/dev/stdout``: 1, ``/dev/fd/5``: 5), through the
    user's links to those names; None for any other path."""
    current = os.path.abspath(os.fspath(path))
    for _ in range(40):  # the kernel's own limit of links in a path
        current = os.path.normpath(current)
        if current in _FD_NAMES:
            return _FD_NAMES[current]
        for folder in (*_FD_FOLDERS, f"/proc/{os.getpid()}/fd/"):
            rest = current.removeprefix(folder)
            if rest != current and rest.isdigit():
                return int(rest)
        try:
            link = os.readlink(current)
        except (OSError, ValueError):
            return None
        current = os.path.join(os.path.dirname(current), link)
    return None


def _identity(stats: os.stat_result) -> tuple[int, int]:
    return (stats.st_dev, stats.st_ino)


def standard_stream(path: str | os.PathLike[str]) -> int | None:
    """1 if ``path`` is standard output (``-``, ``/dev/stdout``, ``/dev/fd/1``, a link to
    one, or the very file or pipe standard output goes to), 2 if it is standard error alike,
    else None. A terminal or ``/dev/null`` counts only by those names: writing it by its own
    name loses nothing."""
    given = os.fspath(path)
    if given == STDOUT:
        return 1
    named = named_descriptor(given)
    if named in (1, 2):
        return named
    try:
        stats = os.stat(given)
    except (OSError, ValueError):
        return None
    if stat.S_ISCHR(stats.st_mode):
        return None
    for fd in (1, 2):
        try:
            if _identity(os.fstat(fd)) == _identity(stats):
                return fd
        except OSError:  # closed
            continue
    return None


def _shape_error(given: str) -> OutputError | None:
    """A path that names a folder by its shape (``newdir/``, ``out/.``) is no file to write:
    resolved, it would write a file named ``newdir``."""
    if given.endswith(("/", os.sep)) or os.path.basename(given) in (".", ".."):
        if os.path.isdir(given):
            return OutputError(given, "it is a directory", _HELP["is a directory"])
        return OutputError(given, "the path ends in a separator: it names a folder",
                           "give a file name, e.g. " + os.path.join(given, "out.html"))
    return None


def check_output(path: str | os.PathLike[str]) -> None:
    """Raise ``OutputError`` now if ``path`` cannot be written later: its folder is missing
    or not writable, it is a directory (or ends in a separator), it names a file descriptor
    that is not open, or it exists and is read-only."""
    given = os.fspath(path)
    if given == STDOUT or standard_stream(given) is not None:
        return
    shape = _shape_error(given)
    if shape is not None:
        raise shape
    fd = named_descriptor(given)
    if fd is not None and not os.path.exists(given):
        raise OutputError(given, f"file descriptor {fd} is not open",
                          f"open it in the shell (e.g. {fd}> FILE), or give a file name")
    target = Path(os.path.realpath(given))
    if target.is_dir():
        raise OutputError(given, "it is a directory", _HELP["is a directory"])
    if _streamed(given):
        if not os.access(given, os.W_OK):
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
    stream = standard_stream(given)
    if stream is not None:  # in order with what is printed, never replaced
        yield from _to_stream(sys.stdout if stream == 1 else sys.stderr, binary)
        return
    shape = _shape_error(given)
    if shape is not None:
        raise shape
    try:
        if _streamed(given):  # opened as given: /dev/fd/N of a pipe resolves to no path
            with (open(given, "wb") if binary
                  else open(given, "w", encoding="utf-8", newline=newline)) as out:
                yield out
            return
        # write through links, keep them links
        yield from _replace(Path(os.path.realpath(given)), newline, binary)
    except OutputError:
        raise
    except OSError as error:
        raise _named(given, error) from None


def _to_stream(stream: TextIO, binary: bool) -> Iterator[Any]:
    if binary:
        stream.flush()  # what was printed comes first
    out = stream.buffer if binary else stream
    yield out
    out.flush()


def _replace(target: Path, newline: str | None, binary: bool) -> Iterator[Any]:
    """Write a temporary file in the target's folder, then rename it over the target.

    Same folder so that ``os.replace`` is a rename on one file system (atomic on POSIX); on
    any error the temporary file is removed and the old target, if any, is left untouched."""
    with _held_temporary(target) as (fd, tmp):
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


# --- temporary files removed when the process is ended while it writes them -------------

_held: set[str] = set()  # temporary files being written, by any thread
_TERMINATING = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP")
                     if hasattr(signal, name))
_installed: list[int] = []  # the signals whose handler is ours, while a file is written
_depth = 0  # writes in progress in the main thread (nested: one handler for all)
_lock = threading.Lock()
_at_exit: list[bool] = []  # remove_temporaries registered with atexit


def remove_temporaries() -> None:
    """Remove every temporary file being written (at a terminating signal, or at exit)."""
    for tmp in list(_held):
        with suppress(OSError):
            os.unlink(tmp)
        _held.discard(tmp)


def remove_temporaries_at_termination() -> None:
    """For a process whose other threads write files (a sweep's worker, whose runs write
    their records): from now on SIGTERM and SIGHUP remove the temporary files being written
    by any thread (``held_temporary``), then end the process as the signal does. Set from
    the main thread only (where Python runs handlers), and only over the default action."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in _TERMINATING:
        if signal.getsignal(sig) is signal.SIG_DFL:
            signal.signal(sig, _on_terminating_signal)


def _on_terminating_signal(signum: int, frame: object) -> None:
    """Remove the temporary files, then die of the signal as if no handler had been set:
    the exit status stays the signal's (143 for SIGTERM) and the old target is untouched."""
    remove_temporaries()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


@contextmanager
def _held_temporary(target: Path) -> Iterator[tuple[int, str]]:
    """A temporary file beside ``target`` (its descriptor and path), removed if SIGTERM or
    SIGHUP ends the process before it is renamed. The handler is set only for the time of
    the write, in the main thread, and only over the default action: a command's own
    handler (Dask's, an interrupt's) is left alone."""
    main = threading.current_thread() is threading.main_thread()
    if main:
        _acquire()
    try:
        fd, tmp = _registered_temporary(target, block=main)
    except BaseException:
        if main:
            _release()
        raise
    try:
        yield fd, tmp
    finally:
        _held.discard(tmp)
        if main:
            _release()


held_temporary = _held_temporary  # for writers of their own: the sweep's store (fsynced)


def _registered_temporary(target: Path, block: bool) -> tuple[int, str]:
    """mkstemp's file, in ``_held`` before a terminating signal can be handled (``block``:
    the signals wait meanwhile; the main thread's, where Python runs the handlers)."""
    block = block and hasattr(signal, "pthread_sigmask") and bool(_TERMINATING)
    if block:
        signal.pthread_sigmask(signal.SIG_BLOCK, _TERMINATING)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                   dir=target.parent)
        _held.add(tmp)
        return fd, tmp
    finally:
        if block:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _TERMINATING)


def _acquire() -> None:
    global _depth
    with _lock:
        if _depth == 0:
            if not _at_exit:
                atexit.register(remove_temporaries)  # a daemon thread's write at exit
                _at_exit.append(True)
            for sig in _TERMINATING:
                if signal.getsignal(sig) is signal.SIG_DFL:
                    signal.signal(sig, _on_terminating_signal)
                    _installed.append(sig)
        _depth += 1


def _release() -> None:
    global _depth
    with _lock:
        _depth -= 1
        if _depth:
            return
        while _installed:
            sig = _installed.pop()
            if signal.getsignal(sig) is _on_terminating_signal:
                signal.signal(sig, signal.SIG_DFL)
