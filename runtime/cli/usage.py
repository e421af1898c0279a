"""Command lines a command does not take: its own usage and a diagnostic located on the
command line. An unknown flag gets a did-you-mean (argparse alone prints the top-level usage
and no suggestion); a bad value, a missing value or argument gets the option's own help."""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from collections.abc import Sequence

from schedc.dsl.diagnostics import Diagnostic, did_you_mean
from schedc.runtime.cli.errors import EXIT_USER_ERROR, report

COMMAND_LINE = "<command line>"


class ArgumentsError(Exception):
    """What argparse found wrong, raised instead of its exit (``Parser.error``)."""

    def __init__(self, parser: argparse.ArgumentParser, message: str):
        super().__init__(message)
        self.parser = parser
        self.message = message


class Parser(argparse.ArgumentParser):
    """argparse's parser (and, as their class, its subcommands'), whose mistakes raise
    ``ArgumentsError`` so that they are reported as every other diagnostic."""

    def error(self, message: str):  # type: ignore[override]
        raise ArgumentsError(self, message)


_ABOUT_ARGUMENT = re.compile(r"argument (?P<names>[^:]+): (?P<detail>.*)", re.S)


def bad_arguments(error: ArgumentsError, argv: Sequence[str]) -> int:
    """argparse's complaint, located at the option (its value, if given) on the command
    line, with the option's help; exit status 2."""
    words = ["schedc", *argv]
    line = " ".join(shlex.quote(w) for w in words)
    about = _ABOUT_ARGUMENT.fullmatch(error.message)
    action = None
    at = None  # the index in ``words`` of what the caret points at
    if about is not None:
        names = about["names"].split("/")
        action = next((a for a in error.parser._actions
                       if set(a.option_strings) & set(names) or a.metavar in names
                       or a.dest in names), None)
        flags = [i for i, w in enumerate(words) if w.split("=", 1)[0] in names]
        if flags:
            at = flags[-1] + (1 if "=" not in words[flags[-1]]
                              and flags[-1] + 1 < len(words) else 0)
    if at is None:  # a missing argument or value: after the last word
        col, width = len(line) + 1, 1
    else:
        col = len(" ".join(shlex.quote(w) for w in words[:at])) + 2
        width = len(shlex.quote(words[at]))
    sys.stderr.write(error.parser.format_usage())
    report([Diagnostic(error.message, COMMAND_LINE, 1, col, 1, col + width,
                       _option_help(error.parser, action), source=line)])
    return EXIT_USER_ERROR


def _option_help(parser: argparse.ArgumentParser, action: argparse.Action | None) -> str:
    """The option's own help line, as `--help` shows it (`%(default)s` filled in)."""
    if action is None or not action.help or action.help == argparse.SUPPRESS:
        return f"see `{parser.prog} --help`"
    name = action.option_strings[-1] if action.option_strings else action.metavar
    try:
        text = action.help % {**vars(action), "prog": parser.prog}
    except (KeyError, ValueError, TypeError):  # a help with a bare `%`
        text = action.help
    return f"{name}: {text}"


# Names users reach for that spelling alone would not lead to (`--trace` is closer to
# `--state` than to `--workload`): the option they mean, suggested when the command has it
ALIASES = {
    "--trace": "--workload", "--swf": "--workload", "--input": "--workload",
    "--file": "--workload", "--jobs-file": "--workload", "--log": "--workload",
    "--jobs": "--limit", "--max-jobs": "--limit", "--first": "--limit",
    "--cpus": "--capacity", "--procs": "--capacity", "--nodes": "--capacity",
    "--machine": "--capacity", "--capacities": "--capacity", "--size": "--capacity",
    "--params": "--param", "--set": "--param", "--define": "--param",
    "--seed": "--load-seed", "--html": "--report", "--quiet": "--no-progress",
    "--out": "--output", "--output-dir": "--out", "--outdir": "--out",
    "--properties": "--property", "--prop": "--property", "--check": "--property",
    "--time-limit": "--timeout", "--lf": "--load-factor", "--rf": "--range-factor",
    "--k": "--resources", "--format": "--json",
}


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
        alias = ALIASES.get(flag)
        help = (f"did you mean `{alias}`?" if alias in options else
                did_you_mean(flag, options) or f"see `{name} --help` for its options")
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
    for dest in ("command", "workload_command", "plot_command"):
        chosen = getattr(args, dest, None)
        subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if chosen is None or not subparsers:
            break
        parser = subparsers[0].choices[chosen]
        name += f" {chosen}"
    return parser, name
