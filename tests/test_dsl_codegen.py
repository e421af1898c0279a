"""Generated Python agrees with the reference interpreter on random well-typed IR."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ir_strategies import PARAMS, expr, jobs, states

from schedc.dsl import ir
from schedc.dsl.codegen import compile_expr
from schedc.dsl.evaluate import Env, EvaluationError, evaluate
from schedc.runtime.jobs import Job
from schedc.runtime.policy import PassState


def outcome(fn):
    try:
        v = fn()
    except EvaluationError:
        return "error"
    return ("nan",) if isinstance(v, float) and math.isnan(v) else (type(v), v)


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(["int", "real", "bool"]).flatmap(expr), jobs, states())
def test_codegen_agrees_with_evaluate(e, job, state):
    env = Env(state, job, PARAMS)
    expected = outcome(lambda: evaluate(e, env))
    got = outcome(lambda: compile_expr(e, PARAMS)(job, state))
    assert got == expected


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
