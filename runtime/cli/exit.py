"""How the `schedc` command ends. A command that has written and closed everything it makes
may ask for a quick exit: the standard streams are flushed and every `atexit` handler runs
(Dask's, multiprocessing's, `weakref.finalize`'s), then the process ends without tearing the
interpreter down. `schedc sweep` asks: with Dask, pyarrow and pandas loaded, the teardown
is a noticeable wait after its last line is written. Only the command's entry point acts
on it, never `main()`, which the tests call in their own process."""

from __future__ import annotations

import atexit
import os
import sys
from typing import NoReturn

_quick = False


def allow_quick_exit() -> None:
    """Called by a command once everything it writes is written and closed."""
    global _quick
    _quick = True


def finish(code: int) -> NoReturn:
    """End the process with ``code``: quickly if the command allowed it and the standard
    streams flush, else through the interpreter's usual exit."""
    if _quick:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):  # a closed pipe or stream: the usual exit reports it
            sys.exit(code)
        atexit._run_exitfuncs()
        try:  # what an atexit handler printed
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os._exit(code)
    sys.exit(code)
