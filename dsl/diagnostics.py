"""Diagnostics: what a user mistake becomes (never a traceback), and their rendering."""

from __future__ import annotations

import difflib
import gzip
import os
import stat
from collections.abc import Iterable

import attrs
from attrs import field, frozen


@frozen
class Span:
    """A source range; columns are 1-based, ``end_col`` is exclusive (Lark's convention)."""

    file: str
    line: int
    col: int
    end_line: int
    end_col: int

    def location(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@frozen
class Diagnostic:
    message: str
    file: str | None = None
    line: int | None = None
    col: int | None = None
    end_line: int | None = None
    end_col: int | None = None
    help: str | None = None
    severity: str = "error"
    # The source line(s) of the span, kept so rendering needs no file access (and works for
    # ``compile_source`` text that has no file).
    source: str | None = field(default=None, eq=False, repr=False)

    @classmethod
    def at(
        cls, span: Span | None, message: str, help: str | None = None, source: str | None = None
    ) -> Diagnostic:
        if span is None:
            return cls(message, help=help)
        return cls(
            message, span.file, span.line, span.col, span.end_line, span.end_col, help,
            source=source,
        )


class DiagnosticError(Exception):
    """Raised by the compiler API when a policy has errors; carries all of them."""

    def __init__(self, diagnostics: Iterable[Diagnostic]):
        self.diagnostics = tuple(diagnostics)
        super().__init__(render_diagnostics(self.diagnostics))


_WORKLOAD_HELP = ("a policy is a .pol text file; a trace goes after --workload, as in `schedc "
                  "run POLICY.pol --workload TRACE.swf.gz` (in a sweep spec, under "
                  "`workloads`)")


MAX_POLICY_BYTES = 1 << 20  # a policy file or an import (the examples have a few KB)
_KINDS = ((stat.S_ISFIFO, "a FIFO (a named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISDIR, "a directory"))


def byte_size(n: int) -> str:
    """A limit in bytes as people write it: 1 MiB, 1 GiB."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n:,} bytes"


def read_limited(path: str, limit: int, what: str, gunzip: bool = False) -> bytes:
    """The bytes of the regular file at ``path`` (decompressed with ``gunzip``), at most
    ``limit`` of them. Raises OSError as ``open`` does (and gzip's errors), and
    DiagnosticError for what is not a regular file (a FIFO blocks until written to, a device
    such as /dev/zero never ends, and schedc reads an input again to hash it) or holds more
    than ``limit`` bytes (a small gzip may expand to gigabytes)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO would block here
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fd).st_mode
        kind = next((name for test, name in _KINDS if test(mode)), None)
        if kind is not None:
            raise DiagnosticError([Diagnostic(
                f"`{path}` is {kind}, not a file: schedc reads a {what} from a file", path,
                help=f"save the {what} to a file first and give that file's path")])
        os.set_blocking(fd, True)
        stream = gzip.GzipFile(fileobj=fh) if gunzip else fh
        data = stream.read(limit + 1)
    if len(data) > limit:
        grows = "expands to" if gunzip else "holds"
        raise DiagnosticError([Diagnostic(
            f"`{path}` {grows} more than {byte_size(limit)}, the most schedc reads in a {what}",
            path, help=f"a {what} is read whole into memory: give a smaller one "
            "(docs/reference/limits.md lists the limits)")])
    return data


def read_source(path: str) -> str:
    """A policy file's text. Raises OSError as ``open``, and DiagnosticError, located at the
    first byte that is not UTF-8, for a file that is not UTF-8 text (or not a regular file,
    or larger than MAX_POLICY_BYTES)."""
    data = read_limited(path, MAX_POLICY_BYTES, "policy")
    if data[:2] == b"\x1f\x8b":  # a trace given where the policy goes, most likely
        raise DiagnosticError([Diagnostic(
            f"`{path}` is a gzip-compressed file, not a policy", path, help=_WORKLOAD_HELP)])
    suffix = str(path).lower().rpartition(".")[2]
    if suffix in ("swf", "csv"):
        kind = "an SWF trace" if suffix == "swf" else "a job table"
        raise DiagnosticError([Diagnostic(
            f"`{path}` is a workload ({kind}), not a policy", path, help=_WORKLOAD_HELP)])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        before = data[:err.start].decode("utf-8")
        line_start = before.rfind("\n") + 1
        line_end = data.find(b"\n", err.start)
        source = data[len(before[:line_start].encode()):None if line_end < 0 else line_end]
        col = len(before) - line_start + 1
        line = before.count("\n") + 1
        raise DiagnosticError([Diagnostic(
            f"`{path}` is not UTF-8 text: byte 0x{data[err.start]:02x} is not valid here",
            path, line, col, line, col + 1,
            help="save the policy file as UTF-8 (any editor can convert it)",
            source=source.decode("utf-8", errors="replace"))]) from None


def read_line(span: Span | None) -> str | None:
    """The first source line of ``span`` read from its file, for a diagnostic made after
    compiling (None for text that has no file, or a file that cannot be read)."""
    if span is None or span.file.startswith("<"):
        return None
    try:
        with open(span.file, encoding="utf-8-sig") as fh:
            lines = fh.read().split("\n")
    except (OSError, UnicodeDecodeError):
        return None
    return lines[span.line - 1] if 0 < span.line <= len(lines) else None


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    """A help line naming the closest candidate, or None when nothing is close."""
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=1, cutoff=0.6)
    return f"did you mean `{close[0]}`?" if close else None


def sort_key(d: Diagnostic) -> tuple:
    return (d.file or "", d.line or 0, d.col or 0, d.message)


def dedupe(diags: Iterable[Diagnostic]) -> tuple[Diagnostic, ...]:
    """Drop repeats (a faulty def inlined at several sites reports once), sorted by position."""
    seen: dict[Diagnostic, None] = {}
    for d in diags:
        seen.setdefault(d, None)
    return tuple(sorted(seen, key=sort_key))


SHOWN_LINE_WIDTH = 100  # a longer source line is shown as a window around the caret
_INVISIBLE = {c: " " for c in [*range(0x20), 0x7F]}  # tabs, NUL...: one column each, as counted


def _shown_line(text: str, col: int, end: int) -> tuple[str, int, int]:
    """The source line as printed, and the caret's columns in it: control characters become
    spaces (so the caret stays under its column) and a long line is cut to a window."""
    text = text.translate(_INVISIBLE)
    if len(text) <= SHOWN_LINE_WIDTH:
        return text, col, end
    first = max(0, min(col - 1 - SHOWN_LINE_WIDTH // 3, len(text) - SHOWN_LINE_WIDTH))
    last = first + SHOWN_LINE_WIDTH
    window = ("…" if first else "") + text[first:last] + ("…" if last < len(text) else "")
    shift = first - (1 if first else 0)
    return window, col - shift, min(end, last + 1) - shift


def _render_one(d: Diagnostic, color: bool) -> str:
    if color:  # rich only for a terminal: a plain rendering need not load it
        from rich.markup import escape

    def style(text: str, markup: str) -> str:
        return f"[{markup}]{escape(text)}[/{markup}]" if color else text

    out = [style(f"{d.severity}:", "bold red") + " " + style(d.message, "bold")]
    if d.file is not None and d.line is not None:
        out.append(f"  {style('-->', 'blue')} {d.file}:{d.line}" + (f":{d.col}" if d.col else ""))
        if d.source is not None:
            text = d.source.split("\n")[0]
            gutter = str(d.line)
            pad = " " * len(gutter)
            col = d.col or 1
            end = d.end_col if d.end_line == d.line and d.end_col else len(text) + 1
            text, col, end = _shown_line(text, col, end)
            width = max(1, end - col)
            out.append(f"{pad} |")
            out.append(f"{gutter} | {escape(text) if color else text}")
            out.append(f"{pad} | " + " " * (col - 1) + style("^" * width, "bold red"))
    elif d.file is not None:
        out.append(f"  {style('-->', 'blue')} {d.file}")
    if d.help:
        out.append(style("help:", "bold cyan") + " " + (escape(d.help) if color else d.help))
    return "\n".join(out)


def render_diagnostics(diags: Iterable[Diagnostic], color: bool = False) -> str:
    """Elm/Rust style text; with ``color`` the text carries rich markup for a console."""
    diags = tuple(diags)
    blocks = [_render_one(d, color) for d in diags]
    errors = sum(1 for d in diags if d.severity == "error")
    if errors > 1:
        blocks.append(f"{errors} errors")
    return "\n\n".join(blocks) + ("\n" if blocks else "")


class Reporter:
    """Collects diagnostics, attaching the source line of each span from known texts."""

    def __init__(self, sources: dict[str, str] | None = None):
        self.sources: dict[str, str] = sources if sources is not None else {}
        self.diagnostics: list[Diagnostic] = []

    def source_line(self, span: Span | None) -> str | None:
        if span is None or span.file not in self.sources:
            return None
        lines = self.sources[span.file].split("\n")
        return lines[span.line - 1] if 0 < span.line <= len(lines) else None

    def error(self, span: Span | None, message: str, help: str | None = None) -> None:
        self.diagnostics.append(Diagnostic.at(span, message, help, self.source_line(span)))

    def warning(self, span: Span | None, message: str, help: str | None = None) -> Diagnostic:
        """A likely mistake that still compiles: reported, never failing the check."""
        d = attrs.evolve(Diagnostic.at(span, message, help, self.source_line(span)),
                         severity="warning")
        self.diagnostics.append(d)
        return d

    def add(self, diag: Diagnostic) -> None:
        self.diagnostics.append(diag)
