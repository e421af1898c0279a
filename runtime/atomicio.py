"""Whole-or-nothing file output: write a temporary file beside the target, then rename."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TextIO


def write_atomic(path: str | os.PathLike[str], fill: Callable[[TextIO], None]) -> None:
    """Call ``fill`` on a temp file in the target's folder and move it over ``path``.

    Same folder so that ``os.replace`` is a rename on one file system (atomic on POSIX); on
    any error the temp file is removed and the old target, if any, is left untouched.
    """
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            fill(out)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
