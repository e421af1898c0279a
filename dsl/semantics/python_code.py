"""IR -> Python source -> callables for the simulator.

The source is generated from the IR only (int constants via ``repr`` of checked values, real
ones as names bound to their exact ``Fraction`` in the namespace,
variables renamed to ``v0, v1, ...``), compiled once, and executed in a namespace that holds
only the helpers of ``schedc.dsl.semantics.numbers``: no user text ever reaches ``compile``.
Generated code must agree with ``evaluate`` (tested with hypothesis).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction

from schedc.dsl import ir
from schedc.dsl.semantics import numbers as nm

_NAMESPACE = {
    "_div": nm.div, "_floordiv": nm.floordiv, "_mod": nm.mod, "_sqrt": nm.sqrt,
    "_log": nm.log, "_ceil": nm.ceil, "_floor": nm.floor, "_real": nm.real,
    "_agg_min": nm.agg_min, "_agg_max": nm.agg_max, "_agg_avg": nm.agg_avg,
    "_job_size": nm.job_size, "_EvaluationError": nm.EvaluationError, "_memo": nm.memo,
    "_RANGE": range, "_len": len, "_min": min, "_max": max, "_abs": abs, "_sum": sum,
    "_exact_sum": nm.exact_sum,
}
_OPS = {"+": "+", "-": "-", "*": "*", "<": "<", "<=": "<=", ">": ">", ">=": ">=",
        "==": "==", "!=": "!=", "and": "and", "or": "or"}
_HELPERS = {"/": "_div", "//": "_floordiv", "%": "_mod"}


_MEMO_KEYS = itertools.count()

# Real constants and params are exact rationals, bound once as names of the namespace (a
# Fraction built at every evaluation would cost a constructor call). Named by value, so
# that alpha-equivalent aggregates still have one canonical text.
_REAL_NAMES: dict[Fraction, str] = {}


def _real_const(v) -> str:
    value = Fraction(v)
    if value not in _REAL_NAMES:
        _REAL_NAMES[value] = f"_q{len(_REAL_NAMES)}"
    return _REAL_NAMES[value]


def _free_vars(e: ir.Aggregate) -> set[str]:
    """The variables the aggregate reads from outside it: `job`, an enclosing aggregate's."""
    bound = {n.var for n in ir.walk(e) if isinstance(n, ir.Aggregate)}
    read: set[str] = set()
    for n in ir.walk(e):
        match n:
            case ir.JobAttr(var=v) | ir.ResourceAttr(var=v):
                read.add(v)
            case ir.Request(var=v, resource=r):
                read.add(v)
                if isinstance(r, str):
                    read.add(r)
    return read - bound


def _closed(e: ir.Aggregate) -> bool:
    """The aggregate reads no variable from outside it: its value depends on the state and
    params only."""
    return not _free_vars(e)


def _shareable(e: ir.Expr) -> bool:
    """An aggregate that reads `job` and no enclosing aggregate's variable: its value is the
    same wherever it occurs in one call (of one job, in one state)."""
    return isinstance(e, ir.Aggregate) and _free_vars(e) == {"job"}


class _Gen:
    """Expression -> Python expression text, for one function of (job, state).

    Defs are inlined in the IR, so a def used twice (the prelude's `load_after` in
    `bb_score`: three times) would be computed twice. An aggregate that reads only `job`
    and the state, and that occurs more than once (the same up to the names of its
    variables), is computed once: its first evaluation binds a local (`(_c0 := ...)`) that
    later occurrences read, where that evaluation is sure to have happened (after it in the
    same operand chain, not inside a branch, a short-circuited operand or a loop body).
    """

    def __init__(self, params: Mapping[str, object], rigid: bool,
                 share: bool = False, args: Sequence[tuple[str, str]] = ()) -> None:
        self.params = params
        self.rigid = rigid
        # IR var -> (python name, kind); the function's own arguments other than a queued
        # `job` (``args``: an `active` job of a preemptive policy, `cand`, `victim`)
        self.args = tuple(args)
        self.vars: dict[str, tuple[str, str]] = {var: (var, kind) for var, kind in args}
        self.counter = 0
        self.share = share
        self.repeated: set[str] = set()  # canonical texts of aggregates occurring twice+
        self.ready: dict[str, str] = {}  # canonical text -> local bound on every path here
        self.locals = 0

    def plan_sharing(self, bodies: Sequence[ir.Expr]) -> None:
        """Which job-reading aggregates occur more than once in ``bodies``."""
        seen: set[str] = set()
        for body in bodies:
            for n in ir.walk(body):
                if _shareable(n):
                    text = self._canonical(n)
                    (self.repeated if text in seen else seen).add(text)

    def _canonical(self, e: ir.Aggregate) -> str:
        # a fresh generator numbers the variables from v0: alpha-equivalent, same text
        return _Gen(self.params, self.rigid, args=self.args).expr(e)

    def expr(self, e: ir.Expr) -> str:
        key = None
        if self.share and self.repeated and _shareable(e):
            key = self._canonical(e)
            if key in self.ready:
                return self.ready[key]
            key = key if key in self.repeated else None
        text = self._expr(e)
        # Only these nodes can yield an int where the IR says real (mixed branches/arguments).
        mixed = isinstance(e, ir.Call | ir.IfThenElse | ir.Aggregate)
        text = f"_real({text})" if e.type == "real" and mixed else text
        if key is not None:
            name = f"_c{self.locals}"
            self.locals += 1
            self.ready[key] = name
            text = f"({name} := {text})"
        return text

    def _branch(self, e: ir.Expr) -> str:
        """``e`` evaluated only on some paths: what it binds is not ready after it."""
        saved = dict(self.ready)
        text = self.expr(e)
        self.ready = saved
        return text

    def _job(self, var: str) -> tuple[str, str | None]:
        """(python expression of the Job, python expression of start or None)."""
        if var == "job" and var not in self.vars:
            return "job", None
        name, kind = self.vars[var]
        if kind == "active":  # a ``JobLife`` (runtime/engine/lifecycle.py)
            return f"{name}.job", None
        return (f"{name}.job", f"{name}.start") if kind == "running" else (name, None)

    def _job_attr(self, e: ir.JobAttr) -> str:
        if e.attr in ir.ACTIVE_ATTRS:
            life = self.vars[e.var][0]
            return {"acquired": f"{life}.acquired_at(state.now)",
                    "since_start": f"{life}.since_start(state.now)",
                    "preemptions": f"{life}.preemptions.total()",
                    "suspended": f"({life}.phase == 'suspended')",
                    # exact (a Fraction), the very number the proof reasons about
                    "progress": f"{life}.progress_at(state.now)"}[e.attr]
        job, start = self._job(e.var)
        since = start if start is not None else "state.now"
        match e.attr:
            case ("id" | "submit" | "estimate" | "procs" | "area" | "work" | "user" | "group"
                  | "executable" | "queue" | "partition"):
                return f"{job}.{e.attr}"
            case "min_size":
                return f"{job}.min_procs"
            case "max_size":
                return f"{job}.max_procs"
            case "wait":
                return f"({since} - {job}.submit)"
            case "xfactor":
                return f"_div({since} - {job}.submit + {job}.estimate, {job}.estimate)"
            case "start":
                return start
            case "elapsed":
                return f"(state.now - {start})"
            case "remaining":
                return f"({start} + {job}.estimate - state.now)"
            case "end":
                return f"({start} + {job}.estimate)"
            case "size":
                return f"{job}.procs" if self.rigid else f"_job_size({job}, state)"
        raise AssertionError(e.attr)

    @staticmethod
    def _resource(attr: str, k: str) -> str:
        cap, used = f"state.capacity[{k}]", f"state.used[{k}]"
        return {"capacity": cap, "used": used, "free": f"({cap} - {used})",
                "util": f"_div({used}, {cap})", "bpu": f"_real(state.bpu[{k}])",
                "power": f"_real(state.power[{k}])"}[attr]

    def _expr(self, e: ir.Expr) -> str:
        match e:
            case ir.Const(value=v):
                return _real_const(v) if e.type == "real" else repr(v)
            case ir.ParamRef(name=n):
                v = self.params[n]
                return _real_const(v) if e.type == "real" else repr(v)
            case ir.JobAttr():
                return self._job_attr(e)
            case ir.Request(var=var, resource=r):
                k = str(r) if isinstance(r, int) else self.vars[r][0]
                return f"{self._job(var)[0]}.request[{k}]"
            case ir.MachineAttr(attr=a, resource_index=k):
                return self._resource(a, str(int(k)))
            case ir.ResourceAttr(var=var, attr=a):
                return self._resource(a, self.vars[var][0])
            case ir.StateAttr(attr="now"):
                return "state.now"
            case ir.StateAttr(attr=a):
                return f"_len(state.{a.split('.')[0]})"
            case ir.Unary(op="-", operand=x):
                return f"(-{self.expr(x)})"
            case ir.Unary(op="not", operand=x):
                return f"(not {self.expr(x)})"
            case ir.Binary(op=op, left=a, right=b) if op in _HELPERS:
                return f"{_HELPERS[op]}({self.expr(a)}, {self.expr(b)})"
            case ir.Binary(op="^", left=a, right=ir.Const(value=n)):
                # parenthesised: a constant base may be negative (`-3 ** 2` is -9 in Python)
                return f"(({self.expr(a)}) ** {int(n)})"
            case ir.Binary(op=("and" | "or") as op, left=a, right=b):
                left = self.expr(a)
                return f"({left} {op} {self._branch(b)})"  # b may be short-circuited
            case ir.Binary(op=op, left=a, right=b):
                return f"({self.expr(a)} {_OPS[op]} {self.expr(b)})"
            case ir.Call(fn=fn, args=args):
                return f"_{fn}({', '.join(self.expr(a) for a in args)})"
            case ir.IfThenElse(cond=c, then=t, otherwise=o):
                cond = self.expr(c)  # evaluated first, whatever the text order
                return f"({self._branch(t)} if {cond} else {self._branch(o)})"
            case ir.Aggregate():
                return self._aggregate(e)
        raise AssertionError(f"unknown IR node {e!r}")

    def _aggregate(self, e: ir.Aggregate) -> str:
        name = f"v{self.counter}"
        self.counter += 1
        kind = {"queue": "queue", "running": "running", "resources": "resource"}[e.domain]
        saved = self.vars.get(e.var)
        self.vars[e.var] = (name, kind)
        domain = "_RANGE(_len(state.capacity))" if kind == "resource" else f"state.{e.domain}"
        cond = "" if e.where is None else f" if {self._branch(e.where)}"
        loop = f"for {name} in {domain}{cond}"
        body = None if e.body is None else self._branch(e.body)
        # The variable's scope ends here: the default is read outside it.
        if saved is None:
            del self.vars[e.var]
        else:
            self.vars[e.var] = saved
        if e.fn == "count":
            text = f"_sum(1 {loop})"
        elif e.fn == "sum":
            text = f"{'_exact_sum' if e.type == 'real' else '_sum'}({body} {loop})"
        else:
            default = "None" if e.default is None else f"lambda: {self._branch(e.default)}"
            text = f"_agg_{e.fn}([{body} {loop}], {default})"
        if _closed(e):  # the same for every job: once per state
            return f"_memo(state, {next(_MEMO_KEYS)}, lambda: {text})"
        return text


def _function(name: str, body: str, args: str = "job") -> str:
    # Arithmetic failures (float overflow...) surface as EvaluationError, like `evaluate`.
    return (
        f"def {name}({args}, state):\n"
        f"    try:\n"
        f"        return {body}\n"
        f"    except (ArithmeticError, ValueError) as err:\n"
        f"        if isinstance(err, _EvaluationError):\n"
        f"            raise\n"
        f"        raise _EvaluationError(str(err)) from err\n"
    )


def compile_functions(
    bodies: Mapping[str, ir.Expr | tuple[ir.Expr, ...]],
    params: Mapping[str, object],
    rigid: bool = True,
    wrap: Mapping[str, str] | None = None,
    args: Mapping[str, Sequence[tuple[str, str]]] | None = None,
) -> tuple[dict[str, Callable], str]:
    """Compile named expressions (a tuple compiles to a Python tuple) into functions of
    ``(job, state)``. ``wrap`` names a helper applied to a function's result. ``args``: a
    function's own arguments before ``state``, as (IR var, kind), where they are not one
    queued `job` (a preemptive policy's `job` is ``("job", "active")``, its rule's
    ``("cand", "active"), ("victim", "active")``). Returns the functions and the generated
    source (for debugging)."""
    chunks = []
    for fname, body in bodies.items():
        mine = (args or {}).get(fname, ())
        gen = _Gen(params, rigid, share=True, args=mine)
        gen.plan_sharing(body if isinstance(body, tuple) else (body,))
        if isinstance(body, tuple):
            text = "(" + "".join(f"{gen.expr(x)}, " for x in body) + ")"
        else:
            text = gen.expr(body)
        if wrap and fname in wrap:
            text = f"{wrap[fname]}({text}, state)"
        chunks.append(_function(fname, text, ", ".join(v for v, _ in mine) or "job"))
    source = "\n".join(chunks)
    namespace = dict(_NAMESPACE)
    namespace["_check_size"] = check_size
    namespace.update({name: value for value, name in _REAL_NAMES.items()})
    exec(compile(source, "<schedc policy>", "exec"), namespace)  # noqa: S102 - IR-generated
    return {name: namespace[name] for name in bodies}, source


def check_size(value, state) -> int:
    """A size must be an integral number of processors in [1, capacity of cpus]."""
    if isinstance(value, bool) or value != int(value):
        raise nm.SizeError(f"size {nm.show(value)} is not a whole number of processors")
    value = int(value)
    if not 1 <= value <= state.capacity[0]:
        raise nm.SizeError(f"size {value} is outside [1, {state.capacity[0]}]")
    return value


def compile_expr(e: ir.Expr, params: Mapping[str, object] | None = None,
                 rigid: bool = False) -> Callable:
    """One expression as a function of (job, state) (used by tests and tools)."""
    fns, _ = compile_functions({"f": e}, params or {}, rigid)
    return fns["f"]
