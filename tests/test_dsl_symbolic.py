"""The symbolic interpreter (Z3 terms) agrees with the reference interpreter `evaluate`."""

from __future__ import annotations

import contextlib
import math
from fractions import Fraction

import z3
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from ir_strategies import PARAMS, expr, jobs, states

from schedc.dsl import ir
from schedc.dsl.evaluate import Env, EvaluationError, evaluate
from schedc.dsl.symbolic import (
    DIV_ZERO,
    EMPTY_AGGREGATE,
    LOG,
    SQRT_NEGATIVE,
    FreshNames,
    SymJob,
    SymResult,
    SymState,
    sym_eval,
)
from schedc.runtime.jobs import Job
from schedc.runtime.policy import PassState

IV, BV = z3.IntVal, z3.BoolVal


def RV(v: float) -> z3.ArithRef:
    return z3.RealVal(Fraction(v))  # the exact value of the float


def sym_job(j: Job, start: int | None = None) -> SymJob:
    return SymJob(BV(True), IV(j.id), IV(j.submit), IV(j.estimate), tuple(map(IV, j.request)),
                  None if start is None else IV(start))


def sym_state(s: PassState) -> SymState:
    return SymState(IV(s.now), tuple(map(IV, s.capacity)), tuple(map(IV, s.used)),
                    tuple(sym_job(j) for j in s.queue),
                    tuple(sym_job(r.job, r.start) for r in s.running),
                    bpu=tuple(map(RV, s.bpu)), power=tuple(map(RV, s.power)))


SYM_PARAMS = {"k": IV(PARAMS["k"]), "f": RV(PARAMS["f"]), "flag": BV(PARAMS["flag"])}


# -- replaying a result on a concrete state -------------------------------------------------


def _log_apps(terms) -> list[z3.ExprRef]:
    seen, apps, todo = set(), [], list(terms)
    while todo:
        t = todo.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_app(t) and t.decl().eq(LOG):
            apps.append(t)
        todo.extend(t.children())
    return apps


def _fraction(v: z3.ExprRef) -> Fraction:
    if z3.is_algebraic_value(v):  # sqrt results may be irrational
        v = v.approx(30)
    return v.as_fraction()


def _pinned_int(s: z3.Solver, out: z3.ArithRef) -> int:
    """The integer ``out`` must take, found by bisection when the model leaves it as ToInt of
    an irrational number (e.g. ceil(sqrt(3)))."""
    lo, hi = -(10**12), 10**12
    while lo < hi:
        mid = (lo + hi) // 2
        if s.check(out <= mid) == z3.sat:
            hi = mid
        else:
            lo = mid + 1
    assert s.check(out == lo) == z3.sat and s.check(out != lo) == z3.unsat
    return lo


def replay(res: SymResult):
    """("error",) or ("ok", value) of a result whose inputs are all constants.

    `log` is uninterpreted: pin each application to math.log of its (now known) argument,
    innermost first, so that the model is the concrete run.
    """
    s = z3.Solver()
    s.add(*res.definitions)
    # The value through a variable: a model may leave a term such as ceil(sqrt(3)) (ToInt of
    # an irrational) unevaluated, but it always assigns a variable a number.
    out = z3.Const("replay_out", res.value.sort())
    s.add(out == res.value)
    terms = [res.value, res.error()]
    apps = _log_apps(terms)
    pinned: set[int] = set()
    while True:  # pin the logs whose argument holds no unpinned log, until none is left
        assert s.check() == z3.sat  # definitions are conservative
        m = s.model()
        ready = [a for a in apps if a.get_id() not in pinned
                 and all(b.get_id() in pinned for b in _log_apps([a.arg(0)]))]
        if not ready:
            break
        for a in ready:
            x = float(_fraction(m.eval(a.arg(0), model_completion=True)))
            if x > 0:  # else the log's obligation fails wherever it is evaluated
                s.add(a == z3.RealVal(Fraction(math.log(x))))
            pinned.add(a.get_id())
    if z3.is_true(m.eval(res.error(), model_completion=True)):
        return ("error",)
    v = m.eval(out, model_completion=True)
    if z3.is_bool(v):
        return ("ok", z3.is_true(v))
    if z3.is_int(v):
        return ("ok", v.as_long() if z3.is_int_value(v) else _pinned_int(s, out))
    return ("ok", _fraction(v))


# -- where floats and exact rationals may legitimately disagree ----------------------------

EPS = 1e-7


def _near(a: float, b: float) -> bool:
    return abs(a - b) <= EPS * max(1.0, abs(a), abs(b))


def fragile(e: ir.Expr, env: Env) -> bool:
    """Some float rounding in `evaluate` may flip a decision or lose all relative precision:
    a real comparison at its boundary, floor/ceil at an integer, a denominator or a sqrt/log
    argument near 0, a cancellation, a tiny constant. Over-approximate: every node is
    checked in every environment it could be evaluated in."""

    def val(x: ir.Expr):
        try:
            return evaluate(x, env)
        except EvaluationError:
            return None

    match e:
        case ir.Const(value=v, type="real") if 0 < abs(v) < 1e-6:
            return True
        case ir.Binary(op="<" | "<=" | ">" | ">=" | "==" | "!=", left=a, right=b) \
                if "real" in (a.type, b.type):
            va, vb = val(a), val(b)
            if va is not None and vb is not None and _near(va, vb):
                return True
        case ir.Binary(op="+" | "-", left=a, right=b, type="real"):
            va, vb, v = val(a), val(b), val(e)
            if None not in (va, vb, v) and abs(v) < 1e-6 * max(abs(va), abs(vb)):
                return True
        case ir.Binary(op="/", right=b) if b.type == "real":
            vb = val(b)
            if vb is not None and abs(vb) < EPS:
                return True
        case ir.Call(fn="floor" | "ceil" | "sqrt" | "log", args=(x,)) if x.type == "real":
            vx = val(x)
            if vx is not None and (abs(vx - round(vx)) < EPS or abs(vx) < EPS):
                return True
    if isinstance(e, ir.Aggregate):
        domain = (env.state.queue if e.domain == "queue" else env.state.running
                  if e.domain == "running" else range(len(env.state.capacity)))
        for x in domain:
            inner = env.bind(e.var, x)
            if any(fragile(c, inner) for c in (e.where, e.body) if c is not None):
                return True
        if e.fn in ("sum", "avg") and e.body is not None and e.body.type == "real":
            v = val(ir.Aggregate("sum", e.var, e.domain, e.where, e.body, None, "real"))
            parts = []
            for x in domain:
                with contextlib.suppress(EvaluationError):
                    parts.append(abs(evaluate(e.body, env.bind(e.var, x))))
            if v is not None and parts and abs(v) < 1e-6 * max(parts):
                return True
        return e.default is not None and fragile(e.default, env)
    return any(fragile(c, env) for c in ir.children(e))


def concrete(e: ir.Expr, env: Env):
    try:
        v = evaluate(e, env)
    except EvaluationError:
        return ("error",)
    return ("ok", v)


def same(got, want) -> bool:
    if got[0] != want[0] or got[0] == "error":
        return got[0] == want[0]
    g, w = got[1], want[1]
    if isinstance(w, float):
        return math.isclose(float(g), w, rel_tol=1e-9, abs_tol=1e-9)
    return type(g) is type(w) and g == w


def check_agreement(e: ir.Expr, job: Job, state: PassState) -> None:
    env = Env(state, job, PARAMS)
    want = concrete(e, env)
    assume(not (want[0] == "ok" and isinstance(want[1], float) and not math.isfinite(want[1])))
    assume(not fragile(e, env))
    res = sym_eval(e, job=sym_job(job), state=sym_state(state), params=SYM_PARAMS,
                   fresh=FreshNames())
    assert {"int": z3.is_int, "real": z3.is_real, "bool": z3.is_bool}[e.type](res.value)
    # (a log inside an aggregate over an empty domain is never encoded)
    assert res.uses_log <= any(isinstance(n, ir.Call) and n.fn == "log" for n in ir.walk(e))
    got = replay(res)
    assert same(got, want), (got, want)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["int", "real", "bool"]).flatmap(expr), jobs, states())
# found in CI: ceil of an irrational, which a Z3 model leaves unevaluated
@example(e=ir.Call("ceil", (ir.IfThenElse(ir.Const(False, "bool"), ir.Const(0.0, "real"),
                                          ir.Call("sqrt", (ir.ParamRef("k", "int"),), "real"),
                                          "real"),), "int"),
         job=Job(1, 0, 0, 0, 1, (1, 0)), state=PassState(0, (), (), (0, 0), [0, 0]))
def test_symbolic_agrees_with_evaluate(e, job, state):
    check_agreement(e, job, state)


# Random IR seldom puts a negative operand under `div`/`%`: draw such nodes at the top.
floor_ops = st.builds(lambda op, a, b: ir.Binary(op, a, b, "int"), st.sampled_from(["//", "%"]),
                      expr("int", 2), expr("int", 2))


@settings(max_examples=150, deadline=None)
@given(floor_ops, jobs, states())
def test_floor_operations_agree_with_evaluate(e, job, state):
    check_agreement(e, job, state)


# -- floor division and modulo --------------------------------------------------------------

_STATE0 = SymState(IV(0), (IV(1),), (IV(0),), (), ())


def _int_binary(op: str, a: ir.Expr, b: ir.Expr) -> SymResult:
    return sym_eval(ir.Binary(op, a, b, "int"), job=None, state=_STATE0, params={})


def test_floor_division_and_modulo_match_python_on_negative_operands():
    for a in range(-9, 10):
        for b in (-4, -3, -2, -1, 1, 2, 3, 4):
            for op, want in (("//", a // b), ("%", a % b)):
                res = _int_binary(op, ir.Const(a, "int"), ir.Const(b, "int"))
                assert z3.simplify(res.value).as_long() == want, (a, op, b)
                assert z3.is_false(z3.simplify(res.error()))


def test_floor_division_and_modulo_are_floor_for_all_ints():
    a, b = z3.Ints("a b")
    params = {"a": a, "b": b}
    pa, pb = ir.ParamRef("a", "int"), ir.ParamRef("b", "int")
    q = sym_eval(ir.Binary("//", pa, pb, "int"), job=None, state=_STATE0, params=params).value
    r = sym_eval(ir.Binary("%", pa, pb, "int"), job=None, state=_STATE0, params=params).value
    floor_spec = z3.And(a == b * q + r, z3.If(b > 0, z3.And(r >= 0, r < b),
                                               z3.And(b < r, r <= 0)))
    s = z3.Solver()
    s.add(b != 0, z3.Not(floor_spec))
    assert s.check() == z3.unsat
    res = sym_eval(ir.Binary("//", pa, ir.Const(0, "int"), "int"), job=None, state=_STATE0,
                   params=params)
    assert [o.kind for o in res.obligations] == [DIV_ZERO]


# -- obligations ---------------------------------------------------------------------------


def _violable(res: SymResult, *assumptions: z3.BoolRef) -> bool:
    s = z3.Solver()
    s.add(*res.definitions, *assumptions, res.error())
    return s.check() == z3.sat


def _machine() -> tuple[SymState, z3.ArithRef, z3.ArithRef]:
    cap, used = z3.Int("cap"), z3.Int("used")
    return SymState(z3.Int("now"), (cap,), (used,), (), ()), cap, used


def test_division_by_free_cpus_needs_a_free_cpu():
    state, cap, used = _machine()
    e = ir.Binary("/", ir.Const(1, "int"), ir.MachineAttr("free", 0, "int"), "real")
    res = sym_eval(e, job=None, state=state, params={})
    assert [(o.kind, o.text) for o in res.obligations] == [
        (DIV_ZERO, "`machine.free.cpus` in a division")]
    domain = z3.And(cap >= 1, used >= 0, used <= cap)
    assert _violable(res, domain)
    assert not _violable(res, domain, cap - used >= 1)


def test_guarded_division_is_safe():
    for typ in ("int", "real"):
        x = ir.ParamRef("x", typ)
        zero = ir.Const(0, typ)
        e = ir.IfThenElse(ir.Binary(">", x, zero, "bool"),
                          ir.Binary("/", ir.Const(1, "int"), x, "real"), zero, "real")
        res = sym_eval(e, job=None, state=_machine()[0],
                       params={"x": z3.Int("x") if typ == "int" else z3.Real("x")})
        assert len(res.obligations) == 1 and not z3.is_true(res.obligations[0].guard)
        assert not _violable(res)


def test_short_circuit_guards_the_right_operand():
    x = ir.ParamRef("x", "int")
    div = ir.Binary(">", ir.Binary("//", ir.Const(10, "int"), x, "int"), ir.Const(1, "int"),
                    "bool")
    safe_and = ir.Binary("and", ir.Binary("!=", x, ir.Const(0, "int"), "bool"), div, "bool")
    safe_or = ir.Binary("or", ir.Binary("==", x, ir.Const(0, "int"), "bool"), div, "bool")
    unsafe = ir.Binary("and", div, ir.Binary("!=", x, ir.Const(0, "int"), "bool"), "bool")
    params = {"x": z3.Int("x")}
    state = _machine()[0]
    assert not _violable(sym_eval(safe_and, job=None, state=state, params=params))
    assert not _violable(sym_eval(safe_or, job=None, state=state, params=params))
    assert _violable(sym_eval(unsafe, job=None, state=state, params=params))


def test_sqrt_of_a_negative_is_reported():
    k = z3.Int("k")
    e = ir.Call("sqrt", (ir.Binary("-", ir.ParamRef("k", "int"), ir.Const(5, "int"), "int"),),
                "real")
    res = sym_eval(e, job=None, state=_machine()[0], params={"k": k})
    assert [o.kind for o in res.obligations] == [SQRT_NEGATIVE]
    assert _violable(res, k >= 0, k <= 3)
    assert not _violable(res, k >= 5)
    # The definition pins the value: sqrt(k - 5) == 2 when k == 9.
    s = z3.Solver()
    s.add(*res.definitions, k == 9, res.value != 2)
    assert s.check() == z3.unsat


def test_fresh_sqrt_variables_never_collide():
    x = ir.Call("sqrt", (ir.ParamRef("a", "int"),), "real")
    a = sym_eval(x, job=None, state=_STATE0, params={"a": IV(4)})
    b = sym_eval(x, job=None, state=_STATE0, params={"a": IV(9)})
    assert not a.value.eq(b.value)
    s = z3.Solver()
    s.add(*a.definitions, *b.definitions)
    assert s.check() == z3.sat


def test_log_is_flagged_and_guarded():
    e = ir.Call("log", (ir.MachineAttr("free", 0, "int"),), "real")
    state, cap, used = _machine()
    res = sym_eval(e, job=None, state=state, params={})
    assert res.uses_log
    assert _violable(res, cap == used)
    assert not _violable(res, cap > used)


# -- aggregates ----------------------------------------------------------------------------


def _slot(present: z3.BoolRef, procs: z3.ArithRef) -> SymJob:
    return SymJob(present, IV(1), IV(0), IV(10), (procs,))


def test_min_over_an_empty_queue_uses_the_default():
    procs = z3.Int("p")
    state = SymState(IV(0), (IV(8),), (IV(0),), (_slot(BV(False), procs),), ())
    body = ir.Binary("//", ir.Const(10, "int"), ir.JobAttr("j", "procs", "int"), "int")
    e = ir.Aggregate("min", "j", "queue", None, body, ir.Const(7, "int"), "int")
    res = sym_eval(e, job=None, state=state, params={})
    assert z3.simplify(res.value).as_long() == 7
    assert not _violable(res)  # the body is not evaluated: procs == 0 does not matter
    present = SymState(IV(0), (IV(8),), (IV(0),), (_slot(BV(True), procs),), ())
    res = sym_eval(e, job=None, state=present, params={})
    assert _violable(res, procs == 0)
    s = z3.Solver()
    s.add(procs == 3, res.value != 3)
    assert s.check() == z3.unsat


def test_min_without_default_over_a_filtered_set_is_an_obligation():
    e = ir.Aggregate("max", "r", "resources",
                     ir.Binary(">", ir.ResourceAttr("r", "free", "int"), ir.Const(0, "int"),
                               "bool"),
                     ir.ResourceAttr("r", "free", "int"), None, "int")
    state, cap, used = _machine()
    res = sym_eval(e, job=None, state=state, params={})
    assert [o.kind for o in res.obligations] == [EMPTY_AGGREGATE]
    assert _violable(res, cap == used)
    assert not _violable(res, cap > used)


def test_queue_member_overrides_presence():
    slots = (_slot(BV(True), IV(2)), _slot(BV(True), IV(5)), _slot(BV(False), IV(9)))
    member = (BV(False), BV(True), BV(True))
    count = ir.StateAttr("queue.count")
    total = ir.Aggregate("sum", "j", "queue", None, ir.JobAttr("j", "procs", "int"), None, "int")
    for members, want_count, want_sum in ((None, 2, 7), (member, 2, 14)):
        state = SymState(IV(0), (IV(8),), (IV(0),), slots, (), members)
        assert z3.simplify(sym_eval(count, job=None, state=state, params={}).value) \
            .as_long() == want_count
        assert z3.simplify(sym_eval(total, job=None, state=state, params={}).value) \
            .as_long() == want_sum
