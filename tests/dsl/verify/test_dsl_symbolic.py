"""The symbolic interpreter (Z3 terms) agrees with the reference interpreter `evaluate`."""

from __future__ import annotations

from fractions import Fraction

import z3
from hypothesis import example, given, settings
from hypothesis import strategies as st

from schedc.dsl import ir
from schedc.dsl.semantics import numbers as nm
from schedc.dsl.semantics.evaluate import Env, EvaluationError, evaluate
from schedc.dsl.verify.symbolic import (
    DIV_ZERO,
    EMPTY_AGGREGATE,
    SQRT_NEGATIVE,
    FreshNames,
    SymJob,
    SymResult,
    SymState,
    log_function,
    sym_eval,
)
from schedc.runtime.engine.policy import PassState
from schedc.runtime.jobs import Job
from tests.support.ir_strategies import PARAMS, expr, jobs, states

IV, BV = z3.IntVal, z3.BoolVal


def RV(v) -> z3.ArithRef:
    return z3.RealVal(Fraction(v))  # exact (a float: its exact binary value)


def sym_job(j: Job, start: int | None = None) -> SymJob:
    return SymJob(BV(True), IV(j.id), IV(j.submit), IV(j.estimate), tuple(map(IV, j.request)),
                  None if start is None else IV(start),
                  labels={a: IV(getattr(j, a)) for a in ir.LABEL_ATTRS})


def sym_state(s: PassState) -> SymState:
    return SymState(IV(s.now), tuple(map(IV, s.capacity)), tuple(map(IV, s.used)),
                    tuple(sym_job(j) for j in s.queue),
                    tuple(sym_job(r.job, r.start) for r in s.running),
                    bpu=tuple(map(RV, s.bpu)), power=tuple(map(RV, s.power)))


SYM_PARAMS = {"k": IV(PARAMS["k"]), "f": RV(PARAMS["f"]), "flag": BV(PARAMS["flag"])}


# -- replaying a result on a concrete state -------------------------------------------------


def _fraction(v: z3.ExprRef) -> Fraction:
    if z3.is_algebraic_value(v):  # an exact root may be irrational
        v = v.approx(30)
    return v.as_fraction()


def _pinned_int(s: z3.Solver, out: z3.ArithRef) -> int:
    """The integer ``out`` must take, found by bisection when the model leaves it as ToInt of
    an irrational number."""
    lo, hi = -(10**12), 10**12
    while lo < hi:
        mid = (lo + hi) // 2
        if s.check(out <= mid) == z3.sat:
            hi = mid
        else:
            lo = mid + 1
    assert s.check(out == lo) == z3.sat and s.check(out != lo) == z3.unsat
    return lo


def _mentions(term: z3.ExprRef, ids: set[int]) -> bool:
    seen, todo = set(), [term]
    while todo:
        t = todo.pop()
        if t.get_id() in ids:
            return True
        if t.get_id() not in seen:
            seen.add(t.get_id())
            todo.extend(t.children())
    return False


def _log_apps(terms) -> list[z3.ExprRef]:
    seen, apps, todo = set(), [], list(terms)
    while todo:
        t = todo.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_app(t) and t.decl().eq(log_function()):
            apps.append(t)
        todo.extend(t.children())
    return apps


def replay(res: SymResult, fresh: FreshNames):
    """("error",) or ("ok", value) of a result whose inputs are all constants.

    `log` is uninterpreted and `sqrt` rounds within a band: pin each log application and each
    sqrt result to what ``semantics/numbers`` computes from its (now known) argument,
    innermost first, so that the model is the concrete run, exactly.
    """
    s = z3.Solver()
    s.add(*res.definitions)
    out = z3.Const("replay_out", res.value.sort())
    s.add(out == res.value)
    # the definitions too: a product of a log is a fresh constant defined there
    terms = [res.value, res.error(), *res.definitions, *(x for _, _, x in fresh.roots)]
    pins = [(a, a.arg(0), nm.log) for a in _log_apps(terms)]
    pins += [(y, x, nm.sqrt) for y, _, x in fresh.roots]
    pinned: set[int] = set()
    while True:  # pin what reads no unpinned result, until nothing is left
        assert s.check() == z3.sat  # definitions are conservative
        m = s.model()
        unpinned = {t.get_id() for t, _, _ in pins if t.get_id() not in pinned}
        ready = [(t, x, fn) for t, x, fn in pins
                 if t.get_id() in unpinned and not _mentions(x, unpinned)]
        if not ready:
            break
        for t, x, fn in ready:
            v = _fraction(m.eval(x, model_completion=True))
            if fn is nm.sqrt and v >= 0 or fn is nm.log and v > 0:
                s.add(t == z3.RealVal(fn(v)))  # else its obligation fails where evaluated
            pinned.add(t.get_id())
    if z3.is_true(m.eval(res.error(), model_completion=True)):
        return ("error",)
    v = m.eval(out, model_completion=True)
    if z3.is_bool(v):
        return ("ok", z3.is_true(v))
    if z3.is_int(v):
        return ("ok", v.as_long() if z3.is_int_value(v) else _pinned_int(s, out))
    return ("ok", _fraction(v))


def concrete(e: ir.Expr, env: Env):
    try:
        v = evaluate(e, env)
    except EvaluationError:
        return ("error",)
    return ("ok", v)


def check_agreement(e: ir.Expr, job: Job, state: PassState) -> None:
    """Exactly the same result: reals are exact rationals on both sides."""
    env = Env(state, job, PARAMS)
    want = concrete(e, env)
    if want[0] == "ok" and e.type == "real":
        assert type(want[1]) is Fraction, want  # never a float
    fresh = FreshNames()
    res = sym_eval(e, job=sym_job(job), state=sym_state(state), params=SYM_PARAMS, fresh=fresh)
    assert {"int": z3.is_int, "real": z3.is_real, "bool": z3.is_bool}[e.type](res.value)
    # (a log inside an aggregate over an empty domain is never encoded)
    assert res.uses_log <= any(isinstance(n, ir.Call) and n.fn == "log" for n in ir.walk(e))
    got = replay(res, fresh)
    assert got == want and type(got[-1]) is type(want[-1]), (got, want)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["int", "real", "bool"]).flatmap(expr), jobs, states())
# found in CI: ceil of an irrational, which a Z3 model leaves unevaluated
@example(e=ir.Call("ceil", (ir.IfThenElse(ir.Const(False, "bool"), ir.Const(Fraction(0), "real"),
                                          ir.Call("sqrt", (ir.ParamRef("k", "int"),), "real"),
                                          "real"),), "int"),
         job=Job(1, 0, 0, 0, 1, (1, 0)), state=PassState(0, (), (), (0, 0), [0, 0]))
# the class 2: 1 - 7/100 - 93/100 is 0 exactly (floats: -2.8e-17)
@example(e=ir.Call("sqrt", (ir.Binary("-", ir.Binary("-", ir.Const(Fraction(1), "real"), ir.Binary(
    "/", ir.Const(7, "int"), ir.Const(100, "int"), "real"), "real"), ir.Binary(
    "/", ir.Const(93, "int"), ir.Const(100, "int"), "real"), "real"),), "real"),
         job=Job(1, 0, 0, 0, 1, (1, 0)), state=PassState(0, (), (), (0, 0), [0, 0]))
# a product of a log: the product is a fresh constant, its log application in the
# definitions only (the replay once left it unpinned: 0 instead of 3 log 3)
@example(e=ir.Binary("*", ir.ParamRef("k", "int"), ir.Call(
    "log", (ir.ParamRef("k", "int"),), "real"), "real"),
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
    # The definitions keep the value within a relative 2**-53 of the root: sqrt(2) is 2**0.5
    # rounded to 53 bits, sqrt(4) near 2 (the simulator's is 2; a proof must not need it)
    bound = z3.RealVal(Fraction(1, 2**53))
    s = z3.Solver()
    s.add(*res.definitions, k == 9)
    assert s.check(z3.Or(res.value > 2 * (1 + bound), res.value < 2 * (1 - bound))) == z3.unsat
    s = z3.Solver()
    s.add(*res.definitions, k == 7)
    assert s.check(res.value * res.value > 2 * (1 + bound) ** 2) == z3.unsat
    assert s.check(res.value * res.value < 2 * (1 - bound) ** 2) == z3.unsat


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
