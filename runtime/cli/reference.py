"""The command-line reference page (docs/reference/cli.md), written from the argparse parser
itself: every command, its usage, description, arguments and options with their defaults,
and the exit statuses. A test compares the committed page with this output, so the page
cannot drift from the parser; regenerate it with

    python -m schedc.runtime.cli.reference > docs/reference/cli.md
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from schedc.runtime.cli import errors

HEADER = """# Command line

Every `schedc` command with its arguments and options, generated from the parser
(`python -m schedc.runtime.cli.reference > docs/reference/cli.md`; a test checks the page is
current). `schedc COMMAND --help` prints the same text.
"""

# What each exit status means, for every command (the codes are `runtime/cli/errors.py`'s)
EXIT_STATUSES = (
    (errors.EXIT_OK, "success: every run, check or proof went through"),
    (errors.EXIT_VIOLATION, "a finding: a property violated or a proof vacuous (`verify`: "
     "its assumptions admit no state in which a job waits), the runtime monitor stopped a "
     "run, or a sweep with failed runs"),
    (errors.EXIT_USER_ERROR, "a mistake in the input or the options: a diagnostic at its "
     "place (file:line:col), nothing written"),
    (errors.EXIT_UNKNOWN, "`verify`: no violation, but some verdict unknown (a limit hit); "
     "`run`, `compare`, `plot`: a preemptive run stopped at `--max-passes`, nothing written"),
    (errors.EXIT_INTERNAL, "a bug in schedc (`SCHEDC_DEBUG=1` shows the traceback): please "
     "report it"),
    (130, "interrupted (Ctrl-C); a sweep keeps every run that ended"),
    (errors.EXIT_BROKEN_PIPE, "standard output closed by its reader (`schedc ... | head`)"),
    (143, "ended by SIGTERM (a sweep closes its cluster first)"),
)


def cli_reference() -> str:
    """The whole page, as markdown."""
    from schedc.runtime.cli.main import build_parser

    parser = build_parser()
    parts = [HEADER, "## Exit statuses\n", "| status | meaning |", "|---:|---|"]
    parts += [f"| {code} | {meaning} |" for code, meaning in EXIT_STATUSES]
    parts.append("")
    parts.append(_command(("schedc",), parser, subcommands=False))
    for path, sub in _commands(parser, ("schedc",)):
        parts.append(_command(path, sub))
    return "\n".join(parts).rstrip() + "\n"


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...]
              ) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Each command and sub-command (`workload generate`), depth first, in parser order."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name), sub
                yield from _commands(sub, (*path, name))


def _command(path: tuple[str, ...], parser: argparse.ArgumentParser,
             subcommands: bool = True) -> str:
    level = "#" * max(2, min(len(path), 4))
    lines = [f"{level} `{' '.join(path[1:]) or path[0]}`", ""]
    usage = " ".join(parser.format_usage().removeprefix("usage: ").split())
    lines += ["```text", _wrap(usage), "```", ""]
    if parser.description:
        lines += [parser.description.strip(), ""]
    positionals = [a for a in parser._actions if not a.option_strings
                   and not isinstance(a, argparse._SubParsersAction)]
    options = [a for a in parser._actions if a.option_strings
               and not isinstance(a, argparse._HelpAction)]
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)
            and subcommands]
    if positionals:
        lines += ["| argument | meaning |", "|---|---|"]
        lines += [f"| `{a.metavar or a.dest}` | {_help(a)} |" for a in positionals]
        lines.append("")
    for action in subs:
        lines += ["| command | what it does |", "|---|---|"]
        helps = {c.dest: c.help for c in action._choices_actions}
        lines += [f"| `{' '.join((*path[1:], name))}` | {_cell(helps.get(name) or '')} |"
                  for name in action.choices if name in helps]
        lines.append("")
    if options:
        lines += ["| option | meaning | default |", "|---|---|---|"]
        lines += [f"| {_flags(a)} | {_help(a)} | {_default(a)} |" for a in options]
        lines.append("")
    return "\n".join(lines)


def _flags(action: argparse.Action) -> str:
    takes = action.nargs != 0
    metavar = action.metavar or (
        "{" + ",".join(map(str, action.choices)) + "}" if action.choices else
        action.dest.upper())
    return ", ".join(f"`{flag} {metavar}`" if takes else f"`{flag}`"
                     for flag in action.option_strings)


def _help(action: argparse.Action) -> str:
    text = (action.help or "").replace("%%", "%")
    if action.required and action.option_strings:
        text = f"required; {text}" if text else "required"
    if action.choices and action.metavar:
        text += f" (one of {', '.join(f'`{c}`' for c in action.choices)})"
    return _cell(text)


def _default(action: argparse.Action) -> str:
    value = action.default
    if value is None or value is False or value == argparse.SUPPRESS or value == []:
        return ""
    return f"`{value}`"


def _cell(text: str) -> str:
    """Text for a table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _wrap(usage: str, width: int = 92) -> str:
    """The usage line, broken before options so that it reads without scrolling."""
    lines, line = [], ""
    for word in usage.split(" "):
        if line and len(line) + 1 + len(word) > width and word.startswith(("[", "-")):
            lines.append(line)
            line = "    " + word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return "\n".join(lines)


if __name__ == "__main__":
    print(cli_reference(), end="")
