"""Whole-or-nothing file output: write a temporary file beside the target, then rename."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO


@contextmanager
def open_atomic(path: str | os.PathLike[str], newline: str | None = "\n",
                binary: bool = False) -> Iterator[Any]:
    """A text (``binary``: bytes) handle on a temp file in the target's folder, moved over
    ``path`` on success.

    Same folder so that ``os.replace`` is a rename on one file system (atomic on POSIX); on
    any error the temp file is removed and the old target, if any, is left untouched.
    """
    target = Path(path)
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
