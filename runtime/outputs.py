"""A command's outputs compared with its inputs and with each other, before any work: no
output ever replaces an input, and two outputs never share a file.

Files are compared by identity (device and inode, through links: a symbolic or hard link to
the trace is the trace); a path that does not exist yet by its resolved path. Standard
output is one output however it is named (`-`, `/dev/stdout`, `/dev/fd/1`, the file it is
redirected to): two flags writing it, or one and `--json`, are refused; a regular file that
standard output is redirected to is an output too, compared with the inputs. Terminals and
`/dev/null` are never in conflict: writing one twice loses nothing.

Every command calls `check_outputs` once, before its work;
`docs/reference/outputs-and-inputs.md` says what it refuses and why.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator

from attrs import frozen

from schedc.runtime.atomicio import STDOUT, check_output, standard_stream
from schedc.runtime.run import OptionError

# A file's identity: ("file", device, inode) if it exists, else ("path", its resolved path)
Key = tuple


@frozen
class Output:
    """A path a command writes, under the flag that gave it."""

    flag: str  # as the user wrote it: "--jobs-out", "-o"
    path: str | None  # None or "": not given
    example: str = "out.csv"  # a path for the help line
    file_only: str | None = None  # what `-` cannot be ("the page"): None, `-` is stdout
    # False: a folder the command makes, or a file in it (`sweep --out`): compared with the
    # inputs and the other outputs, its writability left to the command
    checked: bool = True


@frozen
class Input:
    """A file a command reads, under the flag (or argument) that named it."""

    flag: str  # "--workload", "POLICY", "easy.pol's import"
    path: str


def check_outputs(outputs: Iterable[Output], inputs: Iterable[Input] = (),
                  stdout: str | None = None) -> bool:
    """Raise a user error (exit 2) if an output cannot be written, is an input, shares a
    file with another output, or two of them (or one and ``stdout``, what else the command
    prints there, e.g. "--json") write to standard output. ``inputs`` is read lazily: a
    policy's imports are parsed only when there is a file to compare them with. Returns
    whether an output goes to standard output (the command's table then goes to standard
    error)."""
    given = [o for o in outputs if o.path]
    for out in given:
        _check_one(out)
    on_stdout = [o for o in given if o.checked and standard_stream(o.path) == 1]
    if len(on_stdout) > 1:
        a, b = on_stdout[:2]
        raise OptionError(f"{a.flag} and {b.flag} both write to standard output "
                          f"({a.path} and {b.path})",
                          help="give at most one of them standard output, the others a file")
    if on_stdout and stdout:
        out = on_stdout[0]
        raise OptionError(f"{out.flag} {out.path} and {stdout} both write to standard output",
                          help=f"write one of them to a file, e.g. {out.flag} {out.example}")
    written = _distinct(o for o in given if o not in on_stdout)
    redirected = _stdout_key()
    if written or redirected is not None:
        _compare_inputs(written, redirected, inputs)
    return bool(on_stdout)


def _check_one(out: Output) -> None:
    assert out.path
    if out.path == STDOUT and out.file_only:
        raise OptionError(f"{out.flag} -: {out.file_only} is written to a file, not to "
                          "standard output",
                          help=f"give a file name, e.g. {out.flag} {out.example}")
    if out.checked:
        check_output(out.path)  # a missing folder, a directory, no permission: OutputError


def _distinct(outputs: Iterable[Output]) -> dict[Key, Output]:
    """The outputs by identity; two on one file are an error."""
    seen: dict[Key, Output] = {}
    for out in outputs:
        assert out.path
        key = file_key(out.path)
        if key is None:
            continue
        if key in seen:
            first = seen[key]
            raise OptionError(f"{first.flag} {first.path} and {out.flag} {out.path} are the "
                              "same file: one would replace the other",
                              help="give each output its own file")
        seen[key] = out
    return seen


def _compare_inputs(written: dict[Key, Output], redirected: Key | None,
                    inputs: Iterable[Input]) -> None:
    for source in inputs:
        key = file_key(source.path)
        if key is None:
            continue
        if key in written:
            out = written[key]
            raise OptionError(f"{out.flag} {out.path} is the same file as {source.flag} "
                              f"{source.path}: an output never replaces an input",
                              help=f"give {out.flag} another path, e.g. {out.flag} "
                              f"{out.example}")
        if key == redirected:
            raise OptionError(f"standard output is redirected to {source.flag} "
                              f"{source.path}: an output never replaces an input",
                              help="redirect standard output to another file")


def file_key(path: str) -> Key | None:
    """``path``'s identity: its device and inode (through links), or its resolved path if
    it does not exist yet; None for a character device (a terminal, /dev/null), where
    writes do not replace anything."""
    try:
        stats = os.stat(path)
    except (OSError, ValueError):
        return ("path", os.path.realpath(path))
    if stat.S_ISCHR(stats.st_mode):
        return None
    return ("file", stats.st_dev, stats.st_ino)


def _stdout_key() -> Key | None:
    """The identity of the regular file standard output is redirected to (`>> trace.swf`
    would write into an input), else None."""
    try:
        stats = os.fstat(1)
    except OSError:
        return None
    return ("file", stats.st_dev, stats.st_ino) if stat.S_ISREG(stats.st_mode) else None


# --- the inputs of a command ---------------------------------------------------------------


def policy_inputs(file: str | None, flag: str = "POLICY", shown: str | None = None
                  ) -> Iterator[Input]:
    """A policy file and every file it imports, transitively (``shown``: the policy's name
    in the diagnostic of an import, if not ``file``)."""
    if not file:
        return
    yield Input(flag, file)
    for imported in imported_files(file):
        yield Input(f"{shown or file}'s import", imported)


def imported_files(file: str) -> list[str]:
    """The files ``file`` imports, transitively, named as the loader names them
    (`dsl/syntax/loader.py`: relative to the importing file). Parsed only, never compiled;
    only regular files are read (a FIFO is read once, by the compiler), and a file that
    does not parse ends the walk there: the compiler reports it."""
    from schedc.dsl.diagnostics import DiagnosticError, read_source
    from schedc.dsl.syntax import ast
    from schedc.dsl.syntax.parser import parse

    seen = {os.path.realpath(file)}
    found: list[str] = []
    todo = [file]
    while todo:
        current = todo.pop()
        try:
            if not stat.S_ISREG(os.stat(current).st_mode):
                continue
            tree = parse(read_source(current), current)
        except (OSError, ValueError, RecursionError, DiagnosticError):
            continue
        if not isinstance(tree, ast.Module):
            continue
        for item in tree.items:
            if not isinstance(item, ast.Import) or "\0" in item.path:
                continue
            shown = os.path.normpath(os.path.join(os.path.dirname(current), item.path))
            key = os.path.realpath(shown)
            if key not in seen:
                seen.add(key)
                found.append(shown)
                todo.append(shown)
    return found


def workload_inputs(workload: str | None, state: str | None = None) -> Iterator[Input]:
    """A run's workload (the bundled trace when none is given) or its state file."""
    if state:
        yield Input("--state", state)
    if workload:
        yield Input("--workload", workload)
    if not state and not workload:
        from schedc.runtime.run import bundled_trace

        yield Input("the bundled trace", str(bundled_trace()))
