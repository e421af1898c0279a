"""Where a key or a value is in a TOML file's text: `tomllib` gives values, not positions,
so a sweep spec's mistakes are located by scanning the text for the table headers and the
`key = value` lines (bare, quoted and dotted keys; inline tables and arrays are searched for
the element's literal). Good enough for a diagnostic's caret; when a position cannot be
found, the nearest enclosing key (or the file) is given instead."""

from __future__ import annotations

import json
import re

from attrs import frozen

from schedc.dsl.diagnostics import Diagnostic

Path_ = tuple[str | int, ...]  # keys, and indices of [[array]] tables and array elements

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_PART = r"""(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')"""
_KEY = re.compile(rf"^\s*({_PART}(?:\s*\.\s*{_PART})*)\s*=")


@frozen
class Where:
    line: int  # 1-based
    col: int  # 1-based
    end_col: int  # exclusive


def _split_key(text: str) -> tuple[str, ...]:
    parts = re.findall(r"""[A-Za-z0-9_-]+|"[^"]*"|'[^']*'""", text)
    return tuple(p[1:-1] if p[0] in "\"'" else p for p in parts)


class Locator:
    """Positions of the keys of one TOML text, by path (`("run", 2, "policy")`)."""

    def __init__(self, file: str, text: str) -> None:
        self.file = file
        self.lines = text.splitlines()
        self._keys: dict[Path_, Where] = {}
        self._scan()

    def _scan(self) -> None:
        table: Path_ = ()
        counts: dict[tuple[str, ...], int] = {}
        for number, line in enumerate(self.lines, 1):
            header = _HEADER.match(line)
            if header and not _KEY.match(line):
                names = _split_key(header.group(2))
                start = line.index(header.group(2)) + 1
                where = Where(number, start, start + len(header.group(2)))
                if header.group(1) == "[[":
                    index = counts.get(names, 0)
                    counts[names] = index + 1
                    table = (*names, index)
                    self._keys.setdefault(names, where)  # the array itself: its first table
                else:
                    table = names
                self._keys.setdefault(table, where)
                continue
            key = _KEY.match(line)
            if key:
                text = key.group(1)
                start = line.index(text) + 1
                self._keys.setdefault((*table, *_split_key(text)),
                                      Where(number, start, start + len(text)))

    def key(self, path: Path_) -> Where | None:
        """The key at ``path``, else the nearest enclosing one found (None: not even that)."""
        for n in range(len(path), 0, -1):
            found = self._keys.get(path[:n])
            if found is not None:
                if n < len(path) and isinstance(path[n], str):  # in an inline table
                    return self._search(found, path[n], quoted=False) or found
                return found
        return None

    def value(self, path: Path_, literal: object = None) -> Where | None:
        """The value at ``path`` (its literal searched after the key's `=`), else the key."""
        where = self.key(path)
        if where is None or literal is None:
            return where
        return self._search(where, literal, quoted=True) or where

    def _search(self, start: Where, literal: object, quoted: bool) -> Where | None:
        """``literal`` (a TOML value, or a key name) on the key's line or the next ones."""
        if quoted:
            texts = ([json.dumps(literal), f"'{literal}'"] if isinstance(literal, str)
                     else ["true" if literal else "false"] if isinstance(literal, bool)
                     else [str(literal), repr(literal)])
        else:
            texts = [str(literal)]
        for number in range(start.line, min(start.line + 20, len(self.lines)) + 1):
            line = self.lines[number - 1]
            offset = start.end_col - 1 if number == start.line else 0
            for text in texts:
                pattern = (re.escape(text) if quoted and text[0] in "\"'"
                           else rf"(?<![\w.\"'-]){re.escape(text)}(?![\w.\"'])")
                found = re.compile(pattern).search(line, offset)
                if found:
                    return Where(number, found.start() + 1, found.end() + 1)
        return None

    def diagnostic(self, path: Path_, message: str, help: str | None = None,
                   literal: object = None) -> Diagnostic:
        """A diagnostic at the value (``literal`` given) or key at ``path``."""
        where = self.value(path, literal) if literal is not None else self.key(path)
        if where is None:
            return Diagnostic(message, self.file, help=help)
        return Diagnostic(message, self.file, where.line, where.col, where.line,
                          where.end_col, help=help, source=self.lines[where.line - 1])
