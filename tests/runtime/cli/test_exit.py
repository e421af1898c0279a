"""How the `schedc` command ends (runtime/cli/exit.py): a command that allowed a quick exit
still flushes what it printed, runs every atexit handler and keeps its exit status; without
the permission the interpreter exits as usual. (`schedc sweep` allowing it, and only once
its work is written, is tested in tests/runtime/tools/sweep/test_sweep_local.py.)"""

from __future__ import annotations

import subprocess
import sys

import pytest

PROGRAM = """\
import atexit, sys
from schedc.runtime.cli.exit import allow_quick_exit, finish

class Teardown:  # its __del__ runs only when the interpreter is torn down
    def __del__(self):
        sys.stderr.write("torn down\\n")

kept = Teardown()
atexit.register(lambda: print("atexit ran"))
sys.stdout.write("x" * 100000)  # buffered: a pipe is not a terminal
sys.stderr.write("stderr line\\n")
{allow}
finish(3)
"""


@pytest.mark.parametrize("allow", [True, False])
def test_the_exit_flushes_runs_atexit_and_keeps_the_status(allow: bool) -> None:
    done = subprocess.run([sys.executable, "-c", PROGRAM.format(
        allow="allow_quick_exit()" if allow else "")], capture_output=True, text=True)
    assert done.returncode == 3
    assert done.stdout == "x" * 100000 + "atexit ran\n"
    assert done.stderr.startswith("stderr line\n")
    # the quick exit skips the teardown, the usual one does not
    assert ("torn down" in done.stderr) is not allow
