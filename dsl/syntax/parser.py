"""Source text -> AST (`schedc.dsl.syntax.ast`), or the first syntax error as a Diagnostic."""

from __future__ import annotations

import re
from fractions import Fraction
from functools import cache, lru_cache

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)

from schedc.dsl.diagnostics import Diagnostic, Span, did_you_mean
from schedc.dsl.number_text import RANGE_HELP, number_problem
from schedc.dsl.syntax import ast
from schedc.grammar import grammar_text


@cache
def _lark() -> Lark:
    # cache=True keeps the built LALR tables in the temp folder, keyed by a hash of the
    # grammar and options: later runs load them in ~10 ms instead of building for ~130 ms.
    return Lark(grammar_text(), parser="lalr", propagate_positions=True, maybe_placeholders=True,
                cache=True)


# Terminal names as a user would say them, for "expected ..." messages.
_WORDS = {
    "NAME": "a name", "INT": "an integer", "REAL": "a real number", "DURATION": "a duration",
    "STRING": "a quoted string", "TYPE": "a type (int, real or bool)", "COMP_OP": "a comparison",
    "ADD_OP": "`+` or `-`", "MUL_OP": "`*`, `/`, `div` or `%`",
    "DIRECTION": "`asc` or `desc`", "RESERVE_ALL": "`all`",
    "BACKFILL_SIMPLE": "`none` or `first_fit`",
    "BACKFILL_WHEN": "`when`", "OR_WHEN": "`or when`", "SIZE_FIXED": "`fixed`",
    "TUNING_WORD": "`metric`, `decider` or `step`", "SLACK_WORD": "`slack`",
    "MECHANISM_WORD": "`mechanism`",
    "MECHANISM_KIND": "`none`, `suspend`, `checkpoint`, `malleable` or `requeue`",
    "PREEMPT_WORD": "`preempt`", "VICTIMS_WORD": "`victims`", "KEEP_WORD": "`keep`",
    "COST_WORD": "`cost`", "COST_KIND": "`dispatch`, `resume` or `checkpoint`",
    "LIMIT_WORD": "`limit`",
    "PREEMPTIONS_WORD": "`preemptions`", "SETTING_WORD": "`quantum`, `resident` or `subset`",
    "LEFTOVER_WORD": "`leftover`", "LEFTOVER_KIND": "`equal` or `efficient`",
    "WAIVE_WORD": "`waive`", "PROMISE_WORD": "`promise`",
    "PROPERTY_NAME": "a property name (e.g. `progress`)",
    "$END": "the end of the file",
    "LPAR": "`(`", "RPAR": "`)`", "LSQB": "`[`", "RSQB": "`]`", "LBRACE": "`{`",
    "RBRACE": "`}`", "COMMA": "`,`", "COLON": "`:`", "DOT": "`.`", "EQUAL": "`=`",
    "MINUS": "`-`",
}


def _word(terminal: str) -> str:
    if terminal in _WORDS:
        return _WORDS[terminal]
    try:
        pattern = _lark().get_terminal(terminal).pattern
    except KeyError:
        return terminal.lower()
    return f"`{pattern.value}`" if pattern.type == "str" else terminal.lower()


_EXPR_START = {"an integer", "a real number", "a duration", "a name", "`(`", "`-`", "`if`",
               "`not`", "`true`", "`false`"}
_OPERATOR = {"`+` or `-`", "`*`, `/`, `div` or `%`", "a comparison", "`and`", "`or`", "`.`",
             "`[`"}


def _expected(names: set[str]) -> str:
    """The expected terminals in plain words, folding expression starts and operators."""
    words = {_word(n) for n in names}
    folded = []
    if {"an integer", "a name", "`(`"} <= words:
        words -= _EXPR_START
        folded.append("an expression")
    if "`+` or `-`" in words:
        words -= _OPERATOR
        folded.append("an operator")
    return ", ".join(folded + sorted(words))


def _span(file: str, meta) -> Span:
    return Span(file, meta.line, meta.column, meta.end_line, meta.end_column)


def _tok_span(file: str, tok: Token) -> Span:
    return Span(file, tok.line, tok.column, tok.end_line, tok.end_column)


class _Refused(Exception):
    """A literal beyond what schedc reads, met while building the AST."""

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


@v_args(meta=True)
class _ToAst(Transformer):
    """Parse tree -> AST. Every node gets the span Lark propagated to it."""

    def __init__(self, file: str, text: str):
        super().__init__()
        self.file = file
        self.text = text

    def _s(self, meta) -> Span:
        return _span(self.file, meta)

    def _number(self, tok: Token) -> str:
        """The literal's text, once its digits and exponent are known to be in range (before
        Python converts it: a huge exponent would never end, a huge integer fails)."""
        problem = number_problem(str(tok))
        if problem is not None:
            lines = self.text.split("\n")
            source = lines[tok.line - 1] if 0 < tok.line <= len(lines) else None
            raise _Refused(Diagnostic.at(_tok_span(self.file, tok), problem, RANGE_HELP, source))
        return str(tok)

    # -- items
    def start(self, meta, items):
        return ast.Module(tuple(items))

    def import_(self, meta, c):
        return ast.Import(c[0][1:-1], span=self._s(meta))

    def param(self, meta, c):
        name, type_, domain, default = c
        lo, hi = domain if domain else (None, None)
        return ast.Param(str(name), str(type_), lo, hi, default, span=self._s(meta))

    def domain(self, meta, c):
        return (c[0], c[1])

    def def_(self, meta, c):
        name, arg, body = c
        return ast.Def(str(name), arg, body, span=self._s(meta))

    def def_arg(self, meta, c):
        return str(c[0])

    def machine(self, meta, c):
        return ast.Machine(str(c[0]), tuple(c[1:]), span=self._s(meta))

    def resource(self, meta, c):
        cap = int(self._number(c[1])) if c[1] is not None else None
        return ast.Resource(str(c[0]), cap, span=self._s(meta))

    def policy(self, meta, c):
        name, extends, clauses = c[0], c[1], tuple(c[2:])
        return ast.Policy(
            str(name), extends, clauses,
            span=self._s(meta), name_span=_tok_span(self.file, name),
        )

    def extends(self, meta, c):
        return str(c[0])

    # -- clauses
    def candidates_clause(self, meta, c):
        return ast.CandidatesClause(tuple(str(t) for t in c), span=self._s(meta),
                                    name_spans=tuple(_tok_span(self.file, t) for t in c))

    def tuning_clause(self, meta, c):
        return ast.TuningClause(str(c[0]), str(c[1]), span=self._s(meta),
                                value_span=_tok_span(self.file, c[1]))

    def machine_clause(self, meta, c):
        return ast.MachineClause(str(c[0]), span=self._s(meta))

    def order_clause(self, meta, c):
        return ast.OrderClause(tuple(c), span=self._s(meta))

    def order_key(self, meta, c):
        desc = c[1] is not None and str(c[1]) == "desc"
        return ast.OrderKey(c[0], desc, span=self._s(meta))

    def reserve_clause(self, meta, c):
        tok, per, when = c
        span = self._s(meta)
        if tok.type == "INT":
            return ast.ReserveClause(int(self._number(tok)), per=per, when=when, span=span)
        if tok.type == "RESERVE_ALL":
            return ast.ReserveClause("all", per=per, when=when, span=span)
        return ast.ReserveClause(str(tok), is_name=True, per=per, when=when, span=span)

    def reserve_per(self, meta, c):
        return c[0]

    def reserve_or_when(self, meta, c):
        return c[1]

    def reserve_when_only(self, meta, c):
        return ast.ReserveClause(0, when=c[1], span=self._s(meta))

    def backfill_clause(self, meta, c):
        if isinstance(c[0], Token) and c[0].type == "BACKFILL_SIMPLE":
            return ast.BackfillClause(str(c[0]), span=self._s(meta))
        if isinstance(c[0], Token) and c[0].type == "BACKFILL_WHEN":
            return ast.BackfillClause("when", condition=c[1], span=self._s(meta))
        desc = c[-1] is not None and str(c[-1]) == "desc"
        return ast.BackfillClause("best", c[0], desc, span=self._s(meta))

    def size_clause(self, meta, c):
        fixed, e = c
        return ast.SizeClause(e, fixed=fixed is not None, span=self._s(meta))

    def size_choose(self, meta, c):
        fixed, n, low, high = c
        return ast.SizeClause(high, choices=int(self._number(n)), low=low, fixed=fixed is not None,
                              span=self._s(meta))

    def slack_clause(self, meta, c):
        return ast.SlackClause(c[1], span=self._s(meta))

    def mechanism_clause(self, meta, c):
        return ast.MechanismClause(str(c[1]), c[3], span=self._s(meta))

    def preempt_clause(self, meta, c):
        return ast.PreemptClause(c[2] if len(c) > 2 else None, span=self._s(meta))

    def victims_clause(self, meta, c):
        return ast.VictimsClause(tuple(c[1:]), span=self._s(meta))

    def keep_clause(self, meta, c):
        return ast.PreemptSetting("keep", c[1], span=self._s(meta))

    def cost_clause(self, meta, c):
        return ast.PreemptSetting(str(c[1]), c[2], span=self._s(meta))

    def limit_clause(self, meta, c):
        return ast.PreemptSetting("limit", c[2], span=self._s(meta))

    def leftover_clause(self, meta, c):
        return ast.LeftoverClause(str(c[1]), c[3], span=self._s(meta))

    def waive_clause(self, meta, c):
        # adjacent strings make one reason: a long one spans lines as the file's width allows
        reason = " ".join(str(t)[1:-1] for t in c[2:])
        return ast.WaiveClause(str(c[1]), reason, span=self._s(meta),
                               property_span=_tok_span(self.file, c[1]))

    def promise_clause(self, meta, c):
        return ast.PromiseClause(str(c[1]), span=self._s(meta),
                                 property_span=_tok_span(self.file, c[1]))

    def setting_clause(self, meta, c):
        return ast.PreemptSetting(str(c[0]), c[1], span=self._s(meta))

    def invariant_clause(self, meta, c):
        e = c[0]
        # The clause's own text, from the expression's first to last character.
        text = " ".join(self.text[meta.start_pos:meta.end_pos].split()[1:])
        return ast.InvariantClause(e, text, span=e.span)

    # -- expressions
    def if_expr(self, meta, c):
        return ast.If(c[0], c[1], c[2], span=self._s(meta))

    def or_op(self, meta, c):
        return ast.Binary("or", c[0], c[1], span=self._s(meta))

    def and_op(self, meta, c):
        return ast.Binary("and", c[0], c[1], span=self._s(meta))

    def not_op(self, meta, c):
        return ast.Unary("not", c[0], span=self._s(meta))

    def compare(self, meta, c):
        return ast.Binary(str(c[1]), c[0], c[2], span=self._s(meta))

    def binary(self, meta, c):
        op = "//" if str(c[1]) == "div" else str(c[1])
        return ast.Binary(op, c[0], c[2], span=self._s(meta))

    def neg(self, meta, c):
        return ast.Unary("-", c[0], span=self._s(meta))

    def int_lit(self, meta, c):
        return ast.Num(int(self._number(c[0])), span=self._s(meta))

    def real_lit(self, meta, c):
        return ast.Num(Fraction(self._number(c[0])), span=self._s(meta))  # exact: 0.9 is 9/10

    def duration_lit(self, meta, c):
        text = self._number(c[0])
        digits = len(text) - len(text.lstrip("0123456789"))
        return ast.Duration(int(text[:digits]), text[digits:], span=self._s(meta))

    def true_lit(self, meta, c):
        return ast.Bool(True, span=self._s(meta))

    def false_lit(self, meta, c):
        return ast.Bool(False, span=self._s(meta))

    def path(self, meta, c):
        root = c[0]
        return ast.Path(
            str(root), tuple(c[1:]), span=self._s(meta), root_span=_tok_span(self.file, root)
        )

    def dot(self, meta, c):
        return ast.Part(str(c[0]), False, span=_tok_span(self.file, c[0]))

    def index(self, meta, c):
        return ast.Part(str(c[0]), True, span=_tok_span(self.file, c[0]))

    def call(self, meta, c):
        args = tuple(a for a in c[1:] if a is not None)
        return ast.Call(str(c[0]), args, span=self._s(meta), fn_span=_tok_span(self.file, c[0]))

    def aggregate(self, meta, c):
        fn, var, domain, where, body, default = c
        return ast.Aggregate(
            str(fn), str(var), str(domain), where, body, default, span=self._s(meta),
            fn_span=_tok_span(self.file, fn), domain_span=_tok_span(self.file, domain),
        )

    def where(self, meta, c):
        return c[0]

    def body(self, meta, c):
        return c[0]

    def default(self, meta, c):
        return c[0]


_KEYWORD = re.compile(r"`([a-z_]+)`")  # a keyword in `_word`'s words


def _syntax_error(file: str, text: str, err: UnexpectedInput) -> Diagnostic:
    lines = text.split("\n")
    line, col = max(err.line, 1), max(err.column, 1)
    source = lines[line - 1] if 0 < line <= len(lines) else ""
    if isinstance(err, UnexpectedCharacters):
        msg = f"unexpected character `{text[err.pos_in_stream]}`"
        width = 1
    elif isinstance(err, UnexpectedEOF) or (
        isinstance(err, UnexpectedToken) and err.token.type == "$END"
    ):
        msg = "unexpected end of file"
        line = len(lines)
        source = lines[-1]
        col, width = len(source) + 1, 1
    else:
        tok = err.token
        msg = f"unexpected `{tok}`"
        width = max(1, len(str(tok)))
    expected = getattr(err, "expected", None) or getattr(err, "allowed", None) or set()
    interactive = getattr(err, "interactive_parser", None)
    if interactive is not None:
        # Exact acceptable tokens (the error's own set is LALR-approximate after reductions).
        expected = interactive.accepts() or expected
    help_ = f"expected {_expected(set(expected))}" if expected else None
    if help_ and isinstance(err, UnexpectedToken) and str(err.token).isidentifier():
        # a misspelled keyword (`reserv`): the closest of the words that may come here
        keywords = {w for n in expected for w in _KEYWORD.findall(_word(n))}
        close = did_you_mean(str(err.token), keywords)
        if close:
            help_ = f"{close} ({help_})"
    span = Span(file, line, col, line, col + width)
    return Diagnostic.at(span, f"syntax error: {msg}", help_, source)


# The grammar's levels above a formula (module, policy, clause, key, ...)
_ENCLOSING_LEVELS = 8


def parse(text: str, file: str = "<string>") -> ast.Module | Diagnostic:
    """The module's AST, or the first syntax error (parsing stops there for this file)."""
    return _parse(text, file)


# The AST and diagnostics are immutable, so a text parses once per process: the prelude of
# every compile, a sweep worker's policy at each of its runs, `compare`'s shared imports.
@lru_cache(maxsize=256)
def _parse(text: str, file: str) -> ast.Module | Diagnostic:
    if text.startswith("\ufeff"):  # a byte-order mark some editors write: no part of the text
        text = text[1:]  # (columns then count as the editor shows them)
    try:
        tree = _lark().parse(text)
    except UnexpectedInput as err:
        return _syntax_error(file, text, err)
    too_deep = _too_deep(tree, ast.MAX_NESTING + _ENCLOSING_LEVELS)
    if too_deep is not None:
        line, col = too_deep
        lines = text.split("\n")
        return Diagnostic.at(
            Span(file, line, col, line, col + 1),
            f"this formula nests more than {ast.MAX_NESTING} levels deep",
            "group a long sum or product in parentheses: (a + b + c) + (d + e + f) nests "
            "apart",
            lines[line - 1] if 0 < line <= len(lines) else "")
    try:
        return _ToAst(file, text).transform(tree)
    except VisitError as err:
        if isinstance(err.orig_exc, _Refused):
            return err.orig_exc.diagnostic
        raise


def _too_deep(tree: Tree, limit: int) -> tuple[int, int] | None:
    """(line, column) of the first node found below ``limit`` levels, or None. Iterative:
    the tree it checks may be deeper than Python's recursion limit."""
    stack: list[tuple[Tree, int, tuple[int, int]]] = [(tree, 1, (1, 1))]
    while stack:
        node, depth, where = stack.pop()
        if not node.meta.empty:
            where = (node.meta.line, node.meta.column)
        if depth > limit:
            return where
        stack.extend((child, depth + 1, where) for child in reversed(node.children)
                     if isinstance(child, Tree))
    return None
