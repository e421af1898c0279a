"""Reading a file with its imports (and the implicit prelude) into parsed modules."""

from __future__ import annotations

import os
from importlib.resources import files

from attrs import frozen

from schedc.dsl.diagnostics import DiagnosticError, Reporter, read_source
from schedc.dsl.syntax import ast
from schedc.dsl.syntax.parser import parse

PRELUDE = "<prelude>/std.pol"
# How deep imports may chain (a file importing one that imports one...): loading recurses
# once per level, and a chain of 2,000 went past Python's recursion limit.
MAX_IMPORT_DEPTH = 64


@frozen
class Loaded:
    file: str  # as displayed in diagnostics
    text: str
    module: ast.Module
    imports: tuple[str, ...]  # files it imports directly (displayed names), prelude included


@frozen
class Program:
    root: str
    modules: dict[str, Loaded]  # in load order: imports before importers
    ok: bool  # every file was found and parsed

    def visible(self, file: str) -> frozenset[str]:
        """The file itself, everything it imports transitively, and the prelude."""
        seen: set[str] = set()
        todo = [file]
        while todo:
            f = todo.pop()
            if f in seen or f not in self.modules:
                continue
            seen.add(f)
            todo.extend(self.modules[f].imports)
        return frozenset(seen)


def prelude_text() -> str:
    return files("schedc.dsl").joinpath("prelude/std.pol").read_text(encoding="utf-8")


class _Loader:
    def __init__(self, report: Reporter):
        self.report = report
        self.modules: dict[str, Loaded] = {}
        self.keys: dict[str, str] = {}  # real path -> displayed name (one module per file)
        self.ok = True

    def load(self, file: str, text: str, stack: tuple[str, ...]) -> None:
        self.report.sources[file] = text
        tree = parse(text, file)
        if not isinstance(tree, ast.Module):
            self.report.add(tree)
            self.ok = False
            return
        imports: list[str] = [] if file == PRELUDE else [PRELUDE]
        for item in tree.items:
            if isinstance(item, ast.Import):
                target = self.resolve(file, item, stack)
                if target is not None:
                    imports.append(target)
        self.modules[file] = Loaded(file, text, tree, tuple(imports))

    def resolve(self, importer: str, item: ast.Import, stack: tuple[str, ...]) -> str | None:
        if "\0" in item.path:  # the OS refuses such a path: say so before asking it
            self.report.error(item.span, "an import path cannot contain a NUL character",
                              'write the file\'s path, e.g. `import "common.pol"`')
            self.ok = False
            return None
        base = os.path.dirname(importer) if importer != PRELUDE else "."
        shown = os.path.normpath(os.path.join(base, item.path))
        key = os.path.realpath(shown)
        if key in stack:
            cycle = " -> ".join([*(self.keys[k] for k in stack[stack.index(key):]), shown])
            self.report.error(
                item.span, f"import cycle: {cycle}",
                "imports must form a tree: move the shared definitions into a third file",
            )
            self.ok = False
            return None
        if key in self.keys:
            return self.keys[key]
        if len(stack) >= MAX_IMPORT_DEPTH:
            self.report.error(
                item.span, f"imports chain more than {MAX_IMPORT_DEPTH} files deep",
                "import the shared definitions from fewer levels: a file may import several")
            self.ok = False
            return None
        try:
            text = read_source(shown)
        except DiagnosticError as err:
            for diagnostic in err.diagnostics:
                self.report.add(diagnostic)
            self.ok = False
            return None
        except OSError as err:
            why = "no such file" if isinstance(err, FileNotFoundError) else err.strerror
            self.report.error(
                item.span, f"cannot import `{item.path}`: {why}",
                f"the path is relative to the importing file; looked for `{shown}`",
            )
            self.ok = False
            return None
        self.keys[key] = shown
        self.load(shown, text, (*stack, key))
        return shown


def load_program(file: str, text: str, report: Reporter) -> Program:
    """Parse ``file`` (whose contents are ``text``), the prelude and every import."""
    loader = _Loader(report)
    loader.load(PRELUDE, prelude_text(), ())
    key = os.path.realpath(file) if not file.startswith("<") else file
    loader.keys[key] = file
    loader.load(file, text, (key,))
    return Program(file, loader.modules, loader.ok)
