"""AST -> canonical source text (parse(print(m)) == m, modulo spans)."""

from __future__ import annotations

from fractions import Fraction

from schedc.dsl.number_text import decimal_text
from schedc.dsl.syntax import ast

# Binding strength: higher binds tighter (matches grammar/policy.lark).
_PREC = {"or": 1, "and": 2, "<": 4, "<=": 4, ">": 4, ">=": 4, "==": 4, "!=": 4,
         "+": 5, "-": 5, "*": 6, "/": 6, "//": 6, "%": 6, "^": 8}
_SURFACE = {"//": "div"}


def _prec(e: ast.Expr) -> int:
    match e:
        case ast.If():
            return 0
        case ast.Binary(op=op):
            return _PREC[op]
        case ast.Unary(op="not"):
            return 3
        case ast.Unary(op="-"):
            return 7
    return 9


def _wrap(e: ast.Expr, min_prec: int) -> str:
    text = expr(e)
    return f"({text})" if _prec(e) < min_prec else text


def expr(e: ast.Expr) -> str:
    match e:
        case ast.Num(value=v):
            return real_literal(v) if isinstance(v, Fraction) else repr(v)
        case ast.Bool(value=v):
            return "true" if v else "false"
        case ast.Duration(amount=a, unit=u):
            return f"{a}{u}"
        case ast.Path(root=r, parts=parts):
            return r + "".join(f"[{p.name}]" if p.index else f".{p.name}" for p in parts)
        case ast.Unary(op="-", operand=x):
            return f"-{_wrap(x, 7)}"
        case ast.Unary(op="not", operand=x):
            return f"not {_wrap(x, 3)}"
        case ast.Binary(op="^", left=a, right=b):
            # `atom ^ unary`: right-associative, the base an atom, the exponent may be negated
            return f"{_wrap(a, 9)} ^ {_wrap(b, 7)}"
        case ast.Binary(op=op, left=a, right=b):
            p = _PREC[op]
            # Left-associative; comparisons are non-associative (both sides tighter).
            left_min = p + 1 if p == 4 else p
            return f"{_wrap(a, left_min)} {_SURFACE.get(op, op)} {_wrap(b, p + 1)}"
        case ast.If(cond=c, then=t, otherwise=o):
            return f"if {expr(c)} then {expr(t)} else {expr(o)}"
        case ast.Call(fn=fn, args=args):
            return f"{fn}({', '.join(expr(a) for a in args)})"
        case ast.Aggregate():
            text = f"{e.fn}({e.var} in {e.domain}"
            if e.where is not None:
                text += f" where {expr(e.where)}"
            if e.body is not None:
                text += f": {expr(e.body)}"
            if e.default is not None:
                text += f" else {expr(e.default)}"
            return text + ")"
    raise AssertionError(e)


def _clause(c: ast.Clause) -> str:
    match c:
        case ast.MachineClause(name=n):
            return f"machine {n}"
        case ast.OrderClause(keys=keys):
            return "order " + _keys(keys)
        case ast.ReserveClause(value=v, per=per, when=when):
            text = f"reserve {v}"
            if per is not None:
                text += f" per {expr(per)}"
            if when is not None:
                text += f" or when {expr(when)}"
            return text
        case ast.BackfillClause(kind="best", score=s, descending=d):
            return f"backfill best by {expr(s)} {'desc' if d else 'asc'}"
        case ast.BackfillClause(kind="when", condition=c):
            return f"backfill when {expr(c)}"
        case ast.BackfillClause(kind=k):
            return f"backfill {k}"
        case ast.SizeClause(expr=x, choices=None, fixed=fixed):
            return f"size {'fixed ' if fixed else ''}{expr(x)}"
        case ast.SizeClause(expr=x, choices=n, low=low, fixed=fixed):
            return f"size {'fixed ' if fixed else ''}choose {n} in [{expr(low)}, {expr(x)}]"
        case ast.InvariantClause(expr=x):
            return f"invariant {expr(x)}"
        case ast.SlackClause(expr=x):
            return f"slack {expr(x)}"
        case ast.CandidatesClause(names=names):
            return "candidates " + ", ".join(names)
        case ast.TuningClause(kind=k, value=v):
            return f"{k} {v}"
        case ast.MechanismClause(kind=k, when=None):
            return f"mechanism {k}"
        case ast.MechanismClause(kind=k, when=w):
            return f"mechanism {k} when {expr(w)}"
        case ast.PreemptClause(condition=None):
            return "preempt by order"
        case ast.PreemptClause(condition=x):
            return f"preempt when {expr(x)}"
        case ast.VictimsClause(keys=keys):
            return "victims order " + _keys(keys)
        case ast.LeftoverClause(kind=k, when=None):
            return f"leftover {k}"
        case ast.LeftoverClause(kind=k, when=w):
            return f"leftover {k} when {expr(w)}"
        case ast.PreemptSetting(name=name, expr=x):
            return f"{_SETTING_WORDS.get(name, name)} {expr(x)}"
        case ast.WaiveClause(property=name, reason=reason):
            return f'waive {name} "{reason}"'
        case ast.PromiseClause(property=name):
            return f"promise {name}"
    raise AssertionError(c)


_SETTING_WORDS = {"dispatch": "cost dispatch", "resume": "cost resume",
                  "checkpoint": "cost checkpoint",
                  "limit": "limit preemptions"}


def _keys(keys: tuple[ast.OrderKey, ...]) -> str:
    return ", ".join(f"{expr(k.expr)} {'desc' if k.descending else 'asc'}" for k in keys)


def item(it: ast.Item) -> str:
    match it:
        case ast.Import(path=p):
            return f'import "{p}"'
        case ast.Param():
            dom = "" if it.lo is None else f" in [{expr(it.lo)}, {expr(it.hi)}]"
            return f"param {it.name}: {it.type}{dom} = {expr(it.default)}"
        case ast.Def():
            arg = "" if it.arg is None else f"({it.arg})"
            return f"def {it.name}{arg} = {expr(it.body)}"
        case ast.Machine():
            body = "".join(
                f"  resource {r.name}" + ("" if r.capacity is None else f" = {r.capacity}") + "\n"
                for r in it.resources
            )
            return f"machine {it.name} {{\n{body}}}"
        case ast.Policy():
            ext = "" if it.extends is None else f" extends {it.extends}"
            body = "".join(f"  {_clause(c)}\n" for c in it.clauses)
            return f"policy {it.name}{ext} {{\n{body}}}"
    raise AssertionError(it)


def module(m: ast.Module) -> str:
    return "".join(item(it) + "\n" for it in m.items)


def real_literal(v: Fraction) -> str:
    """A real literal's text: its exact decimal (`1.0`, not `1`, which would read as int)."""
    text = decimal_text(v)
    if text is None:
        raise ValueError(f"{v} has no decimal literal")
    return text
