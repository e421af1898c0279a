"""Generated Python agrees with the reference interpreter on random well-typed IR."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedc.dsl import ir
from schedc.dsl.semantics.evaluate import Env, EvaluationError, evaluate
from schedc.dsl.semantics.python_code import compile_expr
from schedc.runtime.engine.policy import PassState
from schedc.runtime.jobs import Job
from tests.support.ir_strategies import PARAMS, expr, jobs, states


def outcome(fn):
    try:
        v = fn()
    except EvaluationError:
        return "error"
    return ("nan",) if isinstance(v, float) and math.isnan(v) else (type(v), v)


def assert_agrees(e: ir.Expr, job: Job, state: PassState) -> None:
    """The generated function gives what the reference interpreter gives (or fails too)."""
    expected = outcome(lambda: evaluate(e, Env(state, job, PARAMS)))
    assert outcome(lambda: compile_expr(e, PARAMS)(job, state)) == expected


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(["int", "real", "bool"]).flatmap(expr), jobs, states())
def test_codegen_agrees_with_evaluate(e, job, state):
    assert_agrees(e, job, state)


def test_partial_operations_raise():
    state = PassState(0, (), (), (0, 0), [0, 0])
    job = Job(1, 0, 0, 1, 1, (1, 0))
    for e in (
        ir.Binary("/", ir.Const(1, "int"), ir.Const(0, "int"), "real"),
        ir.Binary("//", ir.Const(1, "int"), ir.Const(0, "int"), "int"),
        ir.Call("sqrt", (ir.Const(-1, "int"),), "real"),
        ir.Call("log", (ir.Const(0, "int"),), "real"),
        ir.MachineAttr("util", 0, "real"),
    ):
        with pytest.raises(EvaluationError):
            evaluate(e, Env(state, job))
        with pytest.raises(EvaluationError):
            compile_expr(e)(job, state)


def test_floor_division_and_modulo_follow_python():
    state = PassState(0, (), (), (1,), [0])
    for op, want in (("//", -4), ("%", 1)):
        e = ir.Binary(op, ir.Const(-7, "int"), ir.Const(2, "int"), "int")
        assert evaluate(e, Env(state)) == want == compile_expr(e)(None, state)


# --- shared subexpressions ----------------------------------------------------------------


def load_after(var: str) -> ir.Aggregate:
    """avg(r in resources: r.util + job.request[r] / r.capacity), with any variable name:
    a job-reading aggregate, as the prelude's `load_after(job)` inlines."""
    body = ir.Binary("+", ir.ResourceAttr(var, "util", "real"),
                     ir.Binary("/", ir.Request("job", var, "int"),
                               ir.ResourceAttr(var, "capacity", "int"), "real"), "real")
    return ir.Aggregate("avg", var, "resources", None, body, None, "real")


def _positive(e: ir.Expr) -> ir.Expr:
    return ir.Binary(">", e, ir.Const(0.5, "real"), "bool")


@st.composite
def sharing(draw, depth: int = 3) -> ir.Expr:
    """Real expressions where one aggregate occurs again and again (under other variable
    names), in branches, short-circuited operands, loop bodies and defaults."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.one_of(st.sampled_from([load_after("r"), load_after("s")]),
                              expr("real")))
    sub = sharing(depth - 1)
    kind = draw(st.sampled_from(["if", "and", "or", "add", "queue", "default"]))
    a, b = draw(sub), draw(sub)
    if kind == "if":
        return ir.IfThenElse(_positive(draw(sub)), a, b, "real")
    if kind in ("and", "or"):
        return ir.IfThenElse(ir.Binary(kind, _positive(a), _positive(b), "bool"),
                             draw(sub), ir.Const(0.0, "real"), "real")
    if kind == "add":
        return ir.Binary("+", a, b, "real")
    if kind == "queue":  # the shared aggregate inside a loop body and its filter
        return ir.Aggregate("sum", "q", "queue", _positive(a), b, None, "real")
    return ir.Aggregate("max", "q", "queue", None, a, b, "real")  # b: the default


@settings(max_examples=400, deadline=None)
@given(sharing(), jobs, states())
def test_shared_subexpressions_agree_with_evaluate(e, job, state):
    assert_agrees(e, job, state)


def test_a_def_used_three_times_is_computed_once():
    from schedc.dsl import compile_file
    from schedc.dsl.machines import with_resources
    from schedc.dsl.semantics.python_code import compile_functions

    policy = with_resources(compile_file("examples/bb-easy.pol"), 2)
    _, source = compile_functions({"score": policy.backfill.score}, {}, True)
    assert source.count("_agg_avg(") == 1 and source.count("_c0") == 3
