"""Exit statuses, and what every error of a command becomes: a diagnostic on standard
error and exit status 2 for a user mistake, 1 for a runtime monitor's stop, never a
traceback."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable

from schedc.dsl.diagnostics import Diagnostic, DiagnosticError
from schedc.runtime.run import OptionError

EXIT_OK = 0
EXIT_VIOLATION = 1
EXIT_USER_ERROR = 2
EXIT_UNKNOWN = 3  # `verify`: some verdict unknown; `run`, `compare`: stopped at --max-passes
EXIT_INTERNAL = 70  # a bug of schedc's (EX_SOFTWARE of sysexits.h)
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a shell reports a pipe's writer that was cut off

# A mistake in the command line itself (not in a file): one message and a help line. The
# library raises the same type for options that do not fit the policy or the workload.
UserError = OptionError


def err(text: str) -> None:
    sys.stderr.write(text if text.endswith("\n") else text + "\n")


def closed_streams() -> int | None:
    """Exit status 2 if standard output or standard error is closed (`schedc run ... >&-`),
    said on the one that is open; None when both are. Checked before anything else: the
    results or the diagnostics would be lost, and a file the command opens would take the
    closed descriptor's number, so that what it prints would go into that file."""
    out, error = _closed(sys.stdout), _closed(sys.stderr)
    if not out and not error:
        return None
    if not error:  # standard output is closed
        err("error: standard output is closed: schedc prints its results there\n"
            "help: run it with standard output open: > FILE, or > /dev/null to discard it")
    elif not out:
        sys.stdout.write("error: standard error is closed: schedc reports its errors there\n"
                         "help: run it with standard error open: 2> FILE, or 2> /dev/null "
                         "to discard them\n")
        sys.stdout.flush()
    return EXIT_USER_ERROR


def _closed(stream: object) -> bool:
    """Whether a standard stream has no open file: Python makes it None when its descriptor
    was closed at start; a stream without a descriptor (a test's capture) is open."""
    if stream is None:
        return True
    try:
        fd = stream.fileno()  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


def report(diagnostics: Iterable[Diagnostic]) -> None:
    """Diagnostics on standard error: coloured through rich on a terminal, plain otherwise."""
    from schedc.dsl import render_diagnostics

    if sys.stderr.isatty():
        from schedc.runtime.results.report import stderr_console

        stderr_console().print(render_diagnostics(diagnostics, color=True), end="",
                               highlight=False, soft_wrap=True)
    else:
        err(render_diagnostics(diagnostics))


def handled(command: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """``command(args)``'s exit status, with its errors reported and mapped to theirs."""
    try:
        return command(args)
    except DiagnosticError as error:  # policy, workload, state and option mistakes alike
        report(error.diagnostics)
        return EXIT_USER_ERROR
    except _cluster_error() as error:
        report([Diagnostic(str(error), help=error.help)])
        return EXIT_USER_ERROR
    except _pass_limit() as error:  # a bound the user set (or its default), not a fault
        report([Diagnostic(
            f"policy {error.policy} stopped at t={error.now}: it reached --max-passes "
            f"{error.limit:,} with {error.completed:,} of {error.jobs:,} jobs completed; "
            "nothing written", help="give a larger --max-passes N, or 0 for no bound (a small "
            "`quantum` makes a pass every quantum while a job waits)")])
        return EXIT_UNKNOWN
    except _monitor_violation() as error:  # a policy bug, not a user mistake
        err(f"runtime monitor: {error}")
        return EXIT_VIOLATION
    except BrokenPipeError:  # `schedc run ... --jobs-out - | head`: the reader is done
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except _output_error() as error:  # an output that cannot be written, named as given
        report([Diagnostic(str(error), help=error.help)])
        return EXIT_USER_ERROR
    except OSError as error:  # unreadable input
        err(f"error: {error.strerror or error}: {error.filename or ''}".rstrip(": "))
        return EXIT_USER_ERROR


# The engine's exception types, imported only when an error is being matched: the simulator
# loads slowly, and `schedc check` never needs it.
def _cluster_error() -> type[Exception]:
    from schedc.runtime.engine.cluster import ClusterError

    return ClusterError


def _silence_stdout() -> None:
    """Point standard output at /dev/null so that Python's flush at exit raises nothing."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _output_error() -> type[OSError]:
    from schedc.runtime.atomicio import OutputError

    return OutputError


def _pass_limit() -> type[Exception]:
    from schedc.runtime.engine.preemptive import PassLimit

    return PassLimit


def _monitor_violation() -> type[Exception]:
    from schedc.runtime.engine.monitor import MonitorViolation

    return MonitorViolation
