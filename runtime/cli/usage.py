"""Arguments a command does not take: its own usage and a diagnostic located on the command
line, with a did-you-mean for a mistyped flag (argparse alone prints the top-level usage and
no suggestion)."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence

from schedc.dsl.diagnostics import Diagnostic, did_you_mean
from schedc.runtime.cli.errors import EXIT_USER_ERROR, report

COMMAND_LINE = "<command line>"


def unknown_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace,
                      argv: Sequence[str], extras: Sequence[str]) -> int:
    """Report the first argument of ``extras`` (left over by ``parse_known_args``) that the
    command does not take; exit status 2."""
    sub, name = command_parser(parser, args)
    first = extras[0]
    flag = first.split("=", 1)[0]
    if first.startswith("-") and first != "-":
        options = [o for a in sub._actions for o in a.option_strings if o.startswith("--")]
        message = f"`{name}` has no option `{flag}`"
        help = did_you_mean(flag, options) or f"see `{name} --help` for its options"
    else:
        message = f"`{name}` does not take the argument `{first}`"
        help = f"see `{name} --help` (quote a path that has spaces)"
    words = ["schedc", *argv]
    at = len(words) - 1 - words[::-1].index(first)  # extras keep the command line's order
    line = " ".join(shlex.quote(w) for w in words)
    col = len(" ".join(shlex.quote(w) for w in words[:at])) + 2
    width = len(shlex.quote(first)) if first == flag else len(flag)
    sys.stderr.write(sub.format_usage())
    report([Diagnostic(message, COMMAND_LINE, 1, col, 1, col + width, help, source=line)])
    return EXIT_USER_ERROR


def unknown_command(parser: argparse.ArgumentParser, argv: Sequence[str],
                    commands: Sequence[str]) -> int:
    """`schedc runn ...`: the top-level usage and the closest command; exit status 2."""
    line = " ".join(shlex.quote(w) for w in ["schedc", *argv])
    word = shlex.quote(argv[0])
    sys.stderr.write(parser.format_usage())
    report([Diagnostic(f"no command `{argv[0]}`", COMMAND_LINE, 1, 8, 1, 8 + len(word),
                       did_you_mean(argv[0], commands) or "the commands are "
                       + ", ".join(commands), source=line)])
    return EXIT_USER_ERROR


def command_parser(parser: argparse.ArgumentParser, args: argparse.Namespace
                   ) -> tuple[argparse.ArgumentParser, str]:
    """The (sub)command's own parser and its name (`schedc workload generate`)."""
    name = "schedc"
    for dest in ("command", "workload_command"):
        chosen = getattr(args, dest, None)
        subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if chosen is None or not subparsers:
            break
        parser = subparsers[0].choices[chosen]
        name += f" {chosen}"
    return parser, name
