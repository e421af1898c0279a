"""The `schedc` command line: the top-level parser and the dispatch. Each command is one
module of this folder with its `add_parser` (its options) and its `run` (the command);
option types and groups that several share are `options.py`'s.

Every user mistake ends in a diagnostic and exit status 2, never a traceback (`errors`). The
heavy modules (the simulator, rich, z3) are imported inside the commands that need them, so
that `schedc --help` and `schedc check` start fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from schedc.runtime.cli import compare as compare_cmd
from schedc.runtime.cli import compile as compile_cmd
from schedc.runtime.cli import optimal, plot, run, sweep, verify, workload
from schedc.runtime.cli.errors import (
    EXIT_INTERNAL,
    EXIT_USER_ERROR,
    closed_streams,
    err,
    handled,
)
from schedc.runtime.cli.usage import (
    ArgumentsError,
    Parser,
    bad_arguments,
    unknown_arguments,
    unknown_command,
)
from schedc.runtime.cli.verify import VERIFY_QUEUED, VERIFY_RUNNING
from schedc.runtime.run import bundled_trace
from schedc.runtime.version import version

__all__ = ["VERIFY_QUEUED", "VERIFY_RUNNING", "build_parser", "bundled_trace", "main"]

# One module per command, each with its `add_parser` and its `run` (`compile` has two
# commands), in the order `schedc --help` lists them
COMMAND_MODULES = (compile_cmd, run, verify, workload, compare_cmd, optimal, plot, sweep)
# in the order an unknown command's help lists them
COMMANDS = {"check": compile_cmd.run_check, "compile": compile_cmd.run_compile,
            "run": run.run, "compare": compare_cmd.run, "verify": verify.run,
            "workload": workload.run, "optimal": optimal.run, "plot": plot.run,
            "sweep": sweep.run}


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="schedc",
        description="Compile, check, run and compare parallel-job scheduling policies "
        "written in the .pol language.",
    )
    parser.add_argument("--version", action="version", version=f"schedc {version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    for module in COMMAND_MODULES:
        module.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    closed = closed_streams()  # `schedc run ... >&-`: said at once, on the stream still open
    if closed is not None:
        return closed
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else [os.fspath(a) for a in argv]
    if any("\0" in a for a in argv):  # only a program can pass one; no path holds it
        err("error: an argument contains a NUL character")
        return EXIT_USER_ERROR
    if argv and not argv[0].startswith("-") and argv[0] not in COMMANDS:
        return unknown_command(parser, argv, COMMANDS)
    try:
        args, extras = parser.parse_known_args(argv)
    except ArgumentsError as error:
        return bad_arguments(error, argv)
    if extras:  # argparse would print the top-level usage and no suggestion
        return unknown_arguments(parser, args, argv, extras)
    args.argv = tuple(argv)  # for a result's provenance
    try:
        return handled(COMMANDS[args.command], args)
    except KeyboardInterrupt:  # also while the heavy modules load
        err("interrupted")
        return 130
    except Exception as error:  # a bug of ours: one line and its own status, no traceback
        if os.environ.get("SCHEDC_DEBUG"):
            raise
        err(f"internal error: {type(error).__name__}: {error}".rstrip(": ")[:300])
        err("this is a bug in schedc: please report it with the command and its input files "
            "(SCHEDC_DEBUG=1 shows the traceback)")
        return EXIT_INTERNAL


def entry() -> None:
    """The `schedc` command (its console script and `python -m schedc.runtime.cli`)."""
    from schedc.runtime.cli.exit import finish

    finish(main())


if __name__ == "__main__":
    entry()
