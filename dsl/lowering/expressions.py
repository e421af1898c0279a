"""Name resolution, type checking and lowering of one expression: AST -> typed IR.

Definitions are inlined at their use (the def's job parameter is substituted by the
argument variable), aggregate variables get names unique within the expression (so inlining
never captures), and every mistake becomes a diagnostic; a faulty sub-expression lowers to
None so one mistake does not cascade.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from attrs import evolve, field, frozen

from schedc.dsl import ir
from schedc.dsl.diagnostics import Span, did_you_mean
from schedc.dsl.lowering.names import Symbols
from schedc.dsl.syntax import ast
from schedc.dsl.syntax.ast import MAX_NESTING

NUMERIC = ("int", "real")
BUILTIN_FNS = {"min": None, "max": None, "ceil": 1, "floor": 1, "sqrt": 1, "log": 1, "abs": 1}
AGGREGATES = ("sum", "count", "min", "max", "avg")
DOMAINS = ("queue", "running", "resources")
STATE_ROOTS = ("now", "queue", "running", "machine", "resources")
RUN_TIME_NAMES = {"run_time", "runtime", "run", "actual", "actual_run_time", "duration"}
_OP_NAMES = {"//": "div"}


@frozen
class Var:
    """A bound job or resource variable: its IR name and kind (job | queue | running |
    any | resource | active). `any` is a def's job parameter checked on its own (queue,
    running or active); `active` a job of a preemptive policy, with what it has run so far."""

    ir_name: str
    kind: str


@frozen
class Scope:
    file: str  # whose imports are visible
    machine: ir.Machine | None  # None: resource names are not checked (a def on its own)
    vars: Mapping[str, Var] = field(factory=dict)
    size_ok: bool = False  # `job.size` (invariants only)
    defs: tuple[str, ...] = ()  # definitions being inlined, to catch recursion


def _too_deep(through_defs: bool) -> tuple[str, str]:
    """The message and help for a formula nested deeper than ``MAX_NESTING``."""
    group = "group a long sum or product in parentheses: (a + b + c) + (d + e + f) nests apart"
    if through_defs:
        return (f"this formula, with its defs written out, nests more than {MAX_NESTING} "
                "levels deep", f"defs are written out where they are used; {group}")
    return f"this formula nests more than {MAX_NESTING} levels deep", group


MAX_DEGREE = 64  # of a power's base times its exponent (see `Lowerer.power`)


def _degree(e: ir.Expr) -> int:
    """An upper bound of the polynomial degree of ``e`` in the values it reads (a constant:
    0; a product adds, a power multiplies; other nodes take their children's largest)."""
    match e:
        case ir.Const():
            return 0
        case ir.Binary(op="^", left=a, right=ir.Const(value=n)):
            return n * _degree(a)
        case ir.Binary(op="*" | "/", left=a, right=b):
            return _degree(a) + _degree(b)
    parts = ir.children(e)
    return max(map(_degree, parts)) if parts else 1


# Nodes of one formula with its defs written out. A def is written out at each use, so
# `def d2 = d1 + d1` doubles `d1`: 20 such lines took a minute to compile and 40 never ended.
# The examples' largest formula has a few hundred nodes.
MAX_EXPANDED = 10_000
_EXPANDED_HELP = ("each use of a def writes it out again (`def b = a + a` is twice the size of "
                  "`a`): use a def fewer times, e.g. `2 * a` for `a + a`")


class Expansion:
    """How many nodes each def and formula has once its defs are written out, counted on the
    AST (each def once, whatever its uses) before anything is lowered: linear in the program,
    where writing out is exponential in it."""

    def __init__(self, symbols: Symbols):
        self.symbols = symbols
        self.sizes: dict[str, int] = {}  # def name -> its size written out
        self.parts: dict[str, tuple[int, Counter[str]]] = {}  # its own nodes, defs it uses

    def count(self, e: ast.Expr, file: str, bound: frozenset[str],
              uses: Counter[str]) -> int:
        """The nodes of ``e`` as written; the defs it uses counted into ``uses`` (``bound``:
        names that are variables here, not defs)."""
        match e:
            case ast.Path(root=root, parts=()) if root not in bound:
                if self._def(root, file, with_arg=False):
                    uses[root] += 1
                    return 0  # the def's body takes its place
                return 1
            case ast.Call(fn=fn, args=args):
                if self._def(fn, file, with_arg=True):
                    uses[fn] += 1
                    return 0  # its body takes its place, the argument a variable in it
                return 1 + sum(self.count(a, file, bound, uses) for a in args)
            case ast.Aggregate():
                inner = bound | {e.var}
                return 1 + sum(self.count(x, file, b, uses) for x, b in (
                    (e.where, inner), (e.body, inner), (e.default, bound)) if x is not None)
            case ast.Unary(operand=x):
                return 1 + self.count(x, file, bound, uses)
            case ast.Binary(left=a, right=b):
                return 1 + self.count(a, file, bound, uses) + self.count(b, file, bound, uses)
            case ast.If(cond=c, then=t, otherwise=o):
                return 1 + sum(self.count(x, file, bound, uses) for x in (c, t, o))
        return 1

    def _def(self, name: str, file: str, with_arg: bool) -> bool:
        sym = self.symbols.lookup("value", name, file)
        return (sym is not None and isinstance(sym.item, ast.Def)
                and (sym.item.arg is not None) == with_arg)

    def _parts(self, name: str) -> tuple[int, Counter[str]]:
        if name not in self.parts:
            sym = self.symbols.table["value"][name]
            d: ast.Def = sym.item  # type: ignore[assignment]
            bound = frozenset({"job"} | ({d.arg} if d.arg else set()))
            uses: Counter[str] = Counter()
            self.parts[name] = (self.count(d.body, sym.file, bound, uses), uses)
        return self.parts[name]

    def def_size(self, name: str) -> int:
        """The size of def ``name`` written out. Iterative: a chain of defs may be longer
        than Python's recursion allows; a recursive def (reported elsewhere) counts its
        cycle once."""
        stack, open_ = [name], set()
        while stack:
            top = stack[-1]
            if top in self.sizes:
                stack.pop()
                continue
            own, uses = self._parts(top)
            pending = [u for u in uses if u not in self.sizes and u not in open_]
            if pending and top not in open_:
                open_.add(top)
                stack.extend(pending)
                continue
            self.sizes[top] = own + sum(n * self.sizes.get(u, 0) for u, n in uses.items())
            open_.discard(top)
            stack.pop()
        return self.sizes[name]

    def culprit(self, name: str) -> str:
        """The def to point at for an oversized ``name``: the first one down its uses that
        is over the limit while every def it uses is within."""
        seen = {name}
        while True:
            big = [u for u in self._parts(name)[1] if u not in seen
                   and self.def_size(u) > MAX_EXPANDED]
            if not big:
                return name
            name = big[0]
            seen.add(name)


def promote(a: str, b: str) -> str:
    return "int" if a == b == "int" else "real"


class Lowerer:
    def __init__(self, symbols: Symbols):
        self.symbols = symbols
        self.report = symbols.report
        self.names: set[str] = set()  # IR variable names issued (unique per top expression)
        self.depth = 0  # how deep the formula being lowered nests here, its defs written out
        self.use_site: Span | None = None  # where the outermost def being inlined is used
        self.too_deep = False  # reported once per formula
        self.expansion = Expansion(symbols)

    def error(self, span: Span | None, msg: str, help_: str | None = None) -> None:
        self.report.error(span, msg, help_)

    # -- entry points
    def lower(self, e: ast.Expr, scope: Scope) -> ir.Expr | None:
        self.names = {v.ir_name for v in scope.vars.values()}
        self.depth, self.use_site, self.too_deep = 0, None, False
        if not self.fits(e, scope):
            return None
        return self.expr(e, scope)

    def fits(self, e: ast.Expr, scope: Scope) -> bool:
        """Whether ``e`` written out stays within MAX_EXPANDED nodes; else reported, at the
        def that grows past it if there is one, else at ``e``."""
        uses: Counter[str] = Counter()
        own = self.expansion.count(e, scope.file, frozenset(scope.vars), uses)
        size = own + sum(n * self.expansion.def_size(u) for u, n in uses.items())
        if size <= MAX_EXPANDED:
            return True
        big = [u for u in uses if self.expansion.def_size(u) > MAX_EXPANDED]
        for name in big:
            self.report_def(self.expansion.culprit(name))
        if not big:
            self.error(e.span, f"this formula has {size:,} nodes with its defs written out: "
                       f"more than {MAX_EXPANDED:,}", _EXPANDED_HELP)
        return False

    def def_fits(self, d: ast.Def) -> bool:
        """Whether def ``d`` written out stays within MAX_EXPANDED nodes (else reported)."""
        if self.expansion.def_size(d.name) <= MAX_EXPANDED:
            return True
        self.report_def(self.expansion.culprit(d.name))
        return False

    def report_def(self, name: str) -> None:
        """At each use (repeats are dropped by ``dedupe``): a caller counts its errors."""
        d = self.symbols.table["value"][name].item
        self.error(d.span, f"`{name}` has {self.expansion.def_size(name):,} nodes with its "
                   f"defs written out: more than {MAX_EXPANDED:,}", _EXPANDED_HELP)

    def expect(self, e: ast.Expr, scope: Scope, types: tuple[str, ...], what: str,
               help_: str | None = None) -> ir.Expr | None:
        """Lower ``e`` and require its type to be one of ``types``."""
        out = self.lower(e, scope)
        if out is not None and out.type not in types:
            self.error(e.span, f"{what} must be {' or '.join(types)}, but this is {out.type}",
                       help_)
            return None
        return out

    # -- expressions
    def expr(self, e: ast.Expr, s: Scope) -> ir.Expr | None:
        # Defs are written out where they are used, so a formula of shallow parts can still
        # nest deeper than the compiler, the code generator and Z3's encoder may recurse.
        if self.depth > MAX_NESTING:
            if not self.too_deep:
                self.too_deep = True
                self.error(self.use_site or e.span, *_too_deep(self.use_site is not None))
            return None
        self.depth += 1
        try:
            return self._expr(e, s)
        finally:
            self.depth -= 1

    def _expr(self, e: ast.Expr, s: Scope) -> ir.Expr | None:
        match e:
            case ast.Num(value=v):
                return ir.Const(v, "int" if isinstance(v, int) else "real", span=e.span)
            case ast.Bool(value=v):
                return ir.Const(v, "bool", span=e.span)
            case ast.Duration():
                return ir.Const(e.seconds, "int", span=e.span)
            case ast.Path():
                return self.path(e, s)
            case ast.Unary():
                return self.unary(e, s)
            case ast.Binary():
                return self.binary(e, s)
            case ast.If():
                return self.if_(e, s)
            case ast.Call():
                return self.call(e, s)
            case ast.Aggregate():
                return self.aggregate(e, s)
        raise AssertionError(e)

    def _typed(self, e: ast.Expr, s: Scope, types: tuple[str, ...], what: str,
               help_: str | None = None):
        out = self.expr(e, s)
        if out is not None and out.type not in types:
            want = "a number" if types == NUMERIC else " or ".join(types)
            self.error(e.span, f"{what} must be {want}, but this is {out.type}", help_)
            return None
        return out

    def unary(self, e: ast.Unary, s: Scope):
        if e.op == "not":
            x = self._typed(e.operand, s, ("bool",), "the operand of `not`",
                            "compare a number first, e.g. `not (job.procs > 8)`")
            return None if x is None else ir.Unary("not", x, "bool", span=e.span)
        x = self._typed(e.operand, s, NUMERIC, "the operand of `-`",
                        "`-` negates a number; for a bool use `not`")
        return None if x is None else ir.Unary("-", x, x.type, span=e.span)

    def power(self, e: ast.Binary, s: Scope):
        """`x ^ n`: n a literal in [0, MAX_EXPONENT], so that every interpreter computes a
        product of n factors (Z3's own power is outside what it decides well)."""
        top = ir.MAX_EXPONENT
        base = self._typed(e.left, s, NUMERIC, "the base of `^`",
                           "a bool is not a number: write `if COND then 1 else 0` to count it")
        n = e.right
        literal = isinstance(n, ast.Num) and isinstance(n.value, int)
        if not literal or n.value > top:
            if literal:
                self.error(n.span, f"exponent {n.value} is out of range: `^` takes an integer "
                           f"literal in [0, {top}]",
                           "write a larger power as a power of a power: `(x ^ 4) ^ 3`")
            else:
                self.error(n.span, f"the exponent of `^` must be an integer literal in "
                           f"[0, {top}]",
                           "for a fractional or variable power use `sqrt`, `log` or a product "
                           "(`x ^ 3` is `x * x * x`)")
            return None
        if base is None:
            return None
        # nested powers multiply: ((x ^ 8) ^ 8) ^ 8 has 512 factors, and numbers of hundreds
        # of thousands of digits after a few more levels; bound the degree, not only n
        degree = n.value * _degree(base)
        if degree > MAX_DEGREE:
            self.error(e.span, f"this power has degree {degree}, more than {MAX_DEGREE}",
                       "nested powers multiply their exponents; a priority rarely needs more "
                       "than a cube: `(x ^ 4) ^ 2` is x to the 8th")
            return None
        return ir.Binary("^", base, ir.Const(n.value, "int", span=n.span), base.type,
                         span=e.span)

    def binary(self, e: ast.Binary, s: Scope):
        if e.op == "^":
            return self.power(e, s)
        op, name = e.op, _OP_NAMES.get(e.op, e.op)
        help_ = None
        if op in ("and", "or"):
            types = ("bool",)
            help_ = f"`{name}` joins conditions: compare numbers first, e.g. `job.procs > 8`"
        elif op in ("//", "%"):
            types = ("int",)
            help_ = "`div` and `%` are integer-only; for reals use `floor(a / b)`"
        elif op in ("==", "!="):
            types = ("int", "real", "bool")
        else:
            types = NUMERIC
            help_ = "a bool is not a number: write `if COND then 1 else 0` to count it"
        a = self._typed(e.left, s, types, f"the left operand of `{name}`", help_)
        b = self._typed(e.right, s, types, f"the right operand of `{name}`", help_)
        if a is None or b is None:
            return None
        if op in ("==", "!=") and (a.type == "bool") != (b.type == "bool"):
            self.error(e.span, f"cannot compare {a.type} with {b.type} using `{op}`",
                       "compare a bool with a bool, a number with a number")
            return None
        if op in ("and", "or", "<", "<=", ">", ">=", "==", "!="):
            res = "bool"
        elif op == "/":
            res = "real"
        else:
            res = promote(a.type, b.type)
        return ir.Binary(op, a, b, res, span=e.span)

    def if_(self, e: ast.If, s: Scope):
        c = self._typed(e.cond, s, ("bool",), "the condition of `if`")
        t, o = self.expr(e.then, s), self.expr(e.otherwise, s)
        if c is None or t is None or o is None:
            return None
        if t.type == o.type:
            typ = t.type
        elif "bool" in (t.type, o.type):
            self.error(e.span, f"the branches of `if` have different types: {t.type} and "
                       f"{o.type}", "give both branches numbers, or both bools")
            return None
        else:
            typ = "real"
        return ir.IfThenElse(c, t, o, typ, span=e.span)

    # -- names
    def path(self, p: ast.Path, s: Scope):
        if p.root in s.vars:
            var = s.vars[p.root]
            if var.kind == "resource":
                return self.resource_var(p, var)
            return self.job_path(p, var, s)
        if p.root == "now":
            # (not `no_parts(...) and ...`: a failed check must give None, not False)
            return ir.StateAttr("now", span=p.span) if self.no_parts(p, "`now`") else None
        if p.root in ("queue", "running"):
            return self.state_set(p)
        if p.root == "machine":
            return self.machine_path(p, s)
        if p.root == "resources":
            self.error(p.span, "`resources` is the set of machine resources, not a value",
                       "use it in an aggregate: `max(r in resources: r.util)`")
            return None
        if p.root == "job":
            self.error(p.root_span, "`job` is not available here",
                       "only order keys, size, backfill scores and conditions, reservation "
                       "keys and conditions, and invariants have a job")
            return None
        sym = self.symbols.lookup("value", p.root, s.file)
        if sym is None:
            extra = [*s.vars, "now", "queue", "running", "machine"]
            self.symbols.not_found("value", p.root, s.file, p.root_span, "name", extra)
            return None
        if isinstance(sym.item, ast.Param):
            if not self.no_parts(p, f"param `{p.root}`"):
                return None
            return ir.ParamRef(p.root, sym.item.type, span=p.span)
        d: ast.Def = sym.item
        if d.arg is not None:
            self.error(p.span, f"`{d.name}` is a function of a job",
                       f"call it with a job: `{d.name}(job)`")
            return None
        if not self.no_parts(p, f"`{d.name}`"):
            return None
        return self.inline(d, None, p.span, s)

    def no_parts(self, p: ast.Path, what: str) -> bool:
        if p.parts:
            self.error(p.parts[0].span, f"{what} has no attributes",
                       f"{what} is a value: use it without `.{p.parts[0].name}`")
            return False
        return True

    def state_set(self, p: ast.Path):
        if not p.parts:
            self.error(p.span, f"`{p.root}` is a set of jobs, not a value",
                       f"use `{p.root}.count` or an aggregate like `sum(j in {p.root}: j.procs)`")
            return None
        part = p.parts[0]
        if part.name != "count" or part.index or len(p.parts) > 1:
            bad = p.parts[1] if part.name == "count" else part
            self.error(bad.span, f"`{p.root}` has no attribute `{bad.name}`",
                       did_you_mean(bad.name, ["count"]) or f"`{p.root}` has only `count`")
            return None
        return ir.StateAttr(f"{p.root}.count", span=p.span)

    def resource_index(self, part: ast.Part, s: Scope) -> int | None:
        if s.machine is None:
            return 0  # a def checked on its own: the policy's machine is checked at use
        names = [r.name for r in s.machine.resources]
        if part.name in names:
            return names.index(part.name)
        self.error(part.span, f"machine `{s.machine.name}` has no resource `{part.name}`",
                   did_you_mean(part.name, names) or f"its resources: {', '.join(names)}")
        return None

    def machine_path(self, p: ast.Path, s: Scope):
        parts = p.parts
        if not parts or parts[0].name not in ir.MACHINE_ATTRS or parts[0].index:
            span = parts[0].span if parts else p.span
            name = parts[0].name if parts else ""
            self.error(span, f"`machine` has no attribute `{name}`" if parts
                       else "`machine` is not a value",
                       did_you_mean(name, ir.MACHINE_ATTRS)
                       or "write `machine.ATTR.RESOURCE`, ATTR one of "
                       + ", ".join(ir.MACHINE_ATTRS))
            return None
        if len(parts) != 2 or parts[1].index:
            self.error(p.span, f"`machine.{parts[0].name}` needs a resource name",
                       f"for example `machine.{parts[0].name}.cpus`")
            return None
        k = self.resource_index(parts[1], s)
        if k is None:
            return None
        typ = "real" if parts[0].name in ir.REAL_MACHINE_ATTRS else "int"
        return ir.MachineAttr(parts[0].name, k, typ, span=p.span)

    def resource_var(self, p: ast.Path, var: Var):
        if len(p.parts) != 1 or p.parts[0].name not in ir.MACHINE_ATTRS or p.parts[0].index:
            bad = p.parts[0] if p.parts else None
            self.error(bad.span if bad else p.span,
                       f"resource `{p.root}` has no attribute `{bad.name}`" if bad
                       else f"resource `{p.root}` is not a value",
                       (did_you_mean(bad.name, ir.MACHINE_ATTRS) if bad else None)
                       or "a resource has " + ", ".join(ir.MACHINE_ATTRS))
            return None
        attr = p.parts[0].name
        return ir.ResourceAttr(var.ir_name, attr,
                               "real" if attr in ir.REAL_MACHINE_ATTRS else "int", span=p.span)

    def job_path(self, p: ast.Path, var: Var, s: Scope):
        if not p.parts:
            self.error(p.span, f"`{p.root}` is a job, not a value",
                       f"use an attribute, such as `{p.root}.estimate`")
            return None
        part, rest = p.parts[0], p.parts[1:]
        attrs = list(ir.JOB_ATTRS) + ["request"]
        if var.kind in ("running", "any"):
            attrs += ir.RUNNING_ATTRS
        if var.kind in ("active", "any"):  # a def's parameter: its uses are checked again
            attrs += ir.ACTIVE_ATTRS
        if part.index:
            self.error(part.span, "a job cannot be indexed",
                       f"did you mean `{p.root}.request[{part.name}]`?")
            return None
        if part.name == "request":
            return self.request(p, var, s)
        if rest:
            self.error(rest[0].span, f"`{p.root}.{part.name}` has no attribute `{rest[0].name}`",
                       f"`{p.root}.{part.name}` is a number; only `request` takes a resource")
            return None
        if part.name in RUN_TIME_NAMES:
            self.error(part.span, "the actual run time of a job is not accessible",
                       "a scheduler cannot know how long a job really runs: "
                       "use `estimate` (the requested time)")
            return None
        if part.name == "size" and var.ir_name == "job":
            if not s.size_ok:
                self.error(part.span, "`job.size` is only available in invariants",
                           "`job.size` is what a started job got; its request is `job.procs`")
                return None
            return ir.JobAttr("job", "size", "int", span=p.span)
        if part.name in ir.ACTIVE_ATTRS and part.name not in attrs:
            self.error(part.span, f"`{part.name}` is known only to a preemptive policy's "
                       "formulas", "its order keys, `keep`, costs, `preempt when` and "
                       "`victims order` read what a job has run so far")
            return None
        if part.name in ir.RUNNING_ATTRS and part.name not in attrs:
            self.error(part.span, f"`{part.name}` exists only for running jobs",
                       "a variable over `running` has start, elapsed, remaining, end")
            return None
        if part.name not in attrs:
            known = attrs + (["size"] if s.size_ok else [])
            self.error(part.span, f"a job has no attribute `{part.name}`",
                       did_you_mean(part.name, known)
                       or f"a job has {', '.join(f'`{a}`' for a in known)}")
            return None
        return ir.JobAttr(var.ir_name, part.name, ir.ATTR_TYPES[part.name], span=p.span)

    def request(self, p: ast.Path, var: Var, s: Scope):
        rest = p.parts[1:]
        if len(rest) != 1:
            span = rest[1].span if rest else p.span
            self.error(span, "`request` takes one resource",
                       f"write `{p.root}.request.cpus` or `{p.root}.request[r]`")
            return None
        r = rest[0]
        if r.index:
            rv = s.vars.get(r.name)
            if rv is None or rv.kind != "resource":
                self.error(r.span, f"`{r.name}` is not a resource variable",
                           f"index with a variable of `resources`, or write "
                           f"`{p.root}.request.{r.name}`")
                return None
            return ir.Request(var.ir_name, rv.ir_name, span=p.span)
        k = self.resource_index(r, s)
        return None if k is None else ir.Request(var.ir_name, k, span=p.span)

    # -- definitions
    def inline(self, d: ast.Def, arg: Var | None, span: Span | None, s: Scope):
        if d.name in s.defs:
            chain = " -> ".join([*s.defs[s.defs.index(d.name):], d.name])
            self.error(span, f"`{d.name}` is defined in terms of itself ({chain})",
                       "definitions cannot be recursive: the language is total")
            return None
        sym = self.symbols.table["value"][d.name]
        vars_ = {k: v for k, v in s.vars.items() if k == "job"}
        if arg is not None:
            vars_[d.arg] = arg
        inner = evolve(s, file=sym.file, vars=vars_, defs=(*s.defs, d.name))
        if self.use_site is None:  # the outermost def of the formula: where to point
            self.use_site = span
        return self.expr(d.body, inner)

    def call(self, c: ast.Call, s: Scope):
        if c.fn in BUILTIN_FNS:
            return self.builtin(c, s)
        if c.fn in AGGREGATES:
            self.error(c.span, f"`{c.fn}` is an aggregate over jobs or resources",
                       f"write `{c.fn}(j in queue: ...)`")
            return None
        sym = self.symbols.lookup("value", c.fn, s.file)
        if sym is None or not isinstance(sym.item, ast.Def) or sym.item.arg is None:
            if sym is not None:
                self.error(c.fn_span, f"`{c.fn}` is not a function",
                           f"write `{c.fn}` without arguments")
                return None
            fns = [n for n in self.symbols.visible_names("value", s.file)
                   if isinstance(self.symbols.table["value"][n].item, ast.Def)]
            self.symbols.not_found("value", c.fn, s.file, c.fn_span, "function",
                                   [*fns, *BUILTIN_FNS])
            return None
        arg = c.args[0] if len(c.args) == 1 else None
        var = (s.vars.get(arg.root) if isinstance(arg, ast.Path) and not arg.parts else None)
        if var is None or var.kind == "resource":
            self.error(c.span, f"`{c.fn}` takes one job",
                       f"pass `job` or a variable of an aggregate over jobs: `{c.fn}(job)`")
            return None
        return self.inline(sym.item, var, c.span, s)

    def builtin(self, c: ast.Call, s: Scope):
        arity = BUILTIN_FNS[c.fn]
        if arity is None and len(c.args) < 2:
            self.error(c.span, f"`{c.fn}` needs at least 2 arguments, got {len(c.args)}",
                       f"over jobs, use an aggregate: `{c.fn}(j in queue: j.estimate else 0)`")
            return None
        if arity is not None and len(c.args) != arity:
            self.error(c.span, f"`{c.fn}` takes {arity} argument, got {len(c.args)}")
            return None
        args = [self._typed(a, s, NUMERIC, f"an argument of `{c.fn}`") for a in c.args]
        if None in args:
            return None
        if c.fn in ("ceil", "floor"):
            typ = "int"
        elif c.fn in ("sqrt", "log"):
            typ = "real"
        else:
            typ = "int" if all(a.type == "int" for a in args) else "real"
        return ir.Call(c.fn, tuple(args), typ, span=c.span)

    # -- aggregates
    def fresh(self, name: str) -> str:
        n, i = name, 1
        while n in self.names:
            i += 1
            n = f"{name}_{i}"
        self.names.add(n)
        return n

    def aggregate(self, a: ast.Aggregate, s: Scope):
        ok = True
        if a.fn not in AGGREGATES:
            self.error(a.fn_span, f"unknown aggregate `{a.fn}`",
                       did_you_mean(a.fn, AGGREGATES) or "aggregates: " + ", ".join(AGGREGATES))
            ok = False
        if a.domain not in DOMAINS:
            self.error(a.domain_span, f"cannot aggregate over `{a.domain}`",
                       did_you_mean(a.domain, DOMAINS) or "use queue, running or resources")
            return None
        if a.var in STATE_ROOTS or a.var == "job":
            self.error(a.span, f"`{a.var}` cannot name an aggregate variable",
                       "it is a built-in name; use `j` or `r`")
            return None
        kind = {"queue": "queue", "running": "running", "resources": "resource"}[a.domain]
        var = Var(self.fresh(a.var), kind)
        inner = evolve(s, vars={**s.vars, a.var: var})
        where = None if a.where is None else self._typed(a.where, inner, ("bool",),
                                                         "a `where` condition")
        if a.fn == "count":
            if a.body is not None:
                self.error(a.body.span, "`count` takes no `: expression`",
                           f"write `count({a.var} in {a.domain} where CONDITION)`")
                ok = False
            body = None
        elif a.body is None:
            self.error(a.span, f"`{a.fn}` needs a value to aggregate",
                       f"write `{a.fn}({a.var} in {a.domain}: EXPRESSION)`")
            ok, body = False, None
        else:
            body = self._typed(a.body, inner, NUMERIC, f"the body of `{a.fn}`")
        default = None
        if a.default is not None:
            if a.fn in ("sum", "count"):
                self.error(a.default.span, f"`{a.fn}` is never undefined: it has no `else`",
                           f"`{a.fn}` over an empty set is 0; remove `else ...`")
                ok = False
            else:
                default = self._typed(a.default, s, NUMERIC, f"the `else` value of `{a.fn}`")
        elif a.fn in ("min", "max", "avg") and (a.domain != "resources" or a.where is not None):
            self.error(a.span, f"`{a.fn}` over `{a.domain}` needs an `else` value: "
                       f"the set may be empty",
                       "add `else <value>` before the closing parenthesis")
            ok = False
        failed = (
            (a.where is not None and where is None)
            or (a.fn != "count" and body is None)
            or (a.default is not None and default is None)
        )
        if not ok or failed:
            return None
        if a.fn == "count":
            typ = "int"
        elif a.fn == "avg":
            typ = "real"
        elif default is not None:
            typ = promote(body.type, default.type)
        else:
            typ = body.type
        return ir.Aggregate(a.fn, var.ir_name, a.domain, where, body, default, typ, span=a.span)
