"""The global names of a program (params, defs, machines, policies) and their visibility."""

from __future__ import annotations

from attrs import frozen

from schedc.dsl.diagnostics import Reporter, did_you_mean
from schedc.dsl.syntax import ast
from schedc.dsl.syntax.loader import PRELUDE, Program

# Names the language gives a meaning to: a param or def may not take them.
BUILTIN_NAMES = frozenset({
    "job", "now", "queue", "running", "machine", "resources", "true", "false",
    "min", "max", "ceil", "floor", "sqrt", "log", "abs", "sum", "count", "avg",
})
KEYWORDS = frozenset({
    "import", "param", "def", "machine", "resource", "policy", "extends", "order", "reserve",
    "backfill", "size", "invariant", "asc", "desc", "all", "none", "first_fit", "best", "by",
    "when",
    "if", "then", "else", "and", "or", "not", "in", "where", "div", "int", "real", "bool",
})

# Namespaces: params and defs share one (both are expression names).
_NAMESPACE = {ast.Param: "value", ast.Def: "value", ast.Machine: "machine", ast.Policy: "policy"}


@frozen
class Symbol:
    name: str
    item: ast.Param | ast.Def | ast.Machine | ast.Policy
    file: str


class Symbols:
    def __init__(self, program: Program, report: Reporter):
        self.program = program
        self.report = report
        self.table: dict[str, dict[str, Symbol]] = {"value": {}, "machine": {}, "policy": {}}
        self.order: dict[str, int] = {}  # param name -> declaration rank (for stable output)
        for loaded in program.modules.values():
            for item in loaded.module.items:
                if type(item) in _NAMESPACE:
                    self._declare(Symbol(item.name, item, loaded.file))

    def _declare(self, sym: Symbol) -> None:
        span = getattr(sym.item, "name_span", None) or sym.item.span
        # Policy and machine names only follow `extends`/`machine`, so any name works there.
        expression_name = isinstance(sym.item, ast.Param | ast.Def)
        if expression_name and sym.name in KEYWORDS | BUILTIN_NAMES:
            self.report.error(span, f"`{sym.name}` is a reserved name", "choose another name")
            return
        ns = self.table[_NAMESPACE[type(sym.item)]]
        if sym.name in ns:
            first = ns[sym.name]
            where = "the prelude" if first.file == PRELUDE else first.item.span.location()
            self.report.error(
                span, f"`{sym.name}` is already defined (in {where})", "rename one of them"
            )
            return
        ns[sym.name] = sym
        if isinstance(sym.item, ast.Param):
            self.order[sym.name] = len(self.order)

    def visible_names(self, namespace: str, file: str) -> list[str]:
        vis = self.program.visible(file)
        return [n for n, s in self.table[namespace].items() if s.file in vis]

    def lookup(self, namespace: str, name: str, file: str) -> Symbol | None:
        sym = self.table[namespace].get(name)
        return sym if sym is not None and sym.file in self.program.visible(file) else None

    def not_found(self, namespace: str, name: str, file: str, span, what: str,
                  extra: list[str] = ()) -> None:
        """Report an unknown name, with a did-you-mean or the file that would provide it."""
        sym = self.table[namespace].get(name)
        if sym is not None:
            self.report.error(
                span, f"{what} `{name}` is defined in {sym.file}, which this file does not import",
                f'add `import "{sym.file}"`',
            )
            return
        help_ = did_you_mean(name, [*self.visible_names(namespace, file), *extra]) or \
            _DECLARE.get(what, "declare it in this file, or import the file that does").format(
                name=name)
        self.report.error(span, f"unknown {what} `{name}`", help_)


# The help line of an unknown name nothing visible resembles: how to make it exist.
_DECLARE = {
    "param": "a number, `all`, or an int param: declare `param {name}: int = 1`",
    "machine": "declare `machine {name} {{ resource cpus }}`, or import its file",
    "policy": "declare `policy {name} {{ ... }}`, or import its file",
}
