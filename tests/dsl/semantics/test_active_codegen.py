"""A preemptive policy's formulas (``ir.ACTIVE_ATTRS``: what a job has run so far): the
generated code gives the exact value the reference interpreter gives, the one the verifier
reasons about, on random jobs in every phase of their lives (``JobLife``)."""

from __future__ import annotations

import math
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from schedc.dsl import ir
from schedc.dsl.semantics.evaluate import Env, EvaluationError, evaluate
from schedc.dsl.semantics.python_code import compile_functions
from schedc.runtime.engine.lifecycle import JobLife
from schedc.runtime.engine.policy import PassState
from schedc.runtime.jobs import Job
from tests.support.ir_strategies import PARAMS, REAL_CONSTS, expr, states

JOB = (("job", "active"),)  # the `job` of order keys, `keep`, costs and `size`
RULE = (("cand", "active"), ("victim", "active"))  # `preempt when`'s


def outcome(fn):
    try:
        v = fn()
    except EvaluationError:
        return "error"
    return ("nan",) if isinstance(v, float) and math.isnan(v) else (type(v), v)


@st.composite
def lives(draw, now: int) -> JobLife:
    """A job met at ``now`` in any phase, with a history; its run time is often its
    estimate (then a job at its request has `progress * estimate == since_start`)."""
    estimate = draw(st.integers(1, 100))
    run_time = estimate if draw(st.booleans()) else draw(st.integers(0, 100))
    procs = draw(st.integers(1, 4))
    job = Job(draw(st.integers(1, 99)), draw(st.integers(0, 99)), draw(st.integers(0, now)),
              run_time, estimate, (procs, draw(st.integers(0, 8))))
    phase = draw(st.sampled_from(["pending", "running", "suspended", "stopped"]))
    mechanism = {"suspended": st.just("suspend"),
                 "stopped": st.sampled_from(["checkpoint", "malleable"]),
                 }.get(phase, st.sampled_from(["none", "suspend", "requeue"]))
    mechanism = draw(mechanism)
    preemptions = 0 if mechanism == "none" else draw(st.integers(phase in ("suspended",
                                                                           "stopped"), 3))
    progress = draw(st.just(Fraction(0)) | st.fractions(0, 1, max_denominator=50).filter(
        lambda f: f < 1))
    ran = phase != "pending" or preemptions > 0
    last_start = draw(st.integers(job.submit, now)) if ran else None
    return JobLife.restore(job, mechanism, phase, now,
                           processors=tuple(range(procs)) if phase in ("running",
                                                                       "suspended") else (),
                           size=procs if phase == "stopped" else 0,
                           acquired=draw(st.integers(0, 10_000)), preemptions=preemptions,
                           progress=progress, last_start=last_start)


def _progress_terms(owners: tuple[str, ...]) -> st.SearchStrategy[ir.Expr]:
    """The issue's formulas: `progress` under `sqrt`, a division and comparisons, around
    random operands."""
    var = st.sampled_from(owners)

    def attr(v: str, a: str) -> ir.Expr:
        return ir.JobAttr(v, a, ir.ATTR_TYPES[a])

    def done_less_run(v: str) -> ir.Expr:  # progress * estimate - since_start: 0 at t = T
        return ir.Binary("-", ir.Binary("*", attr(v, "progress"), attr(v, "estimate"), "real"),
                         attr(v, "since_start"), "real")

    real = expr("real", 2, tuple((o, "active") for o in owners))
    return st.one_of(
        var.map(lambda v: ir.Call("sqrt", (done_less_run(v),), "real")),
        st.tuples(var, real).map(lambda a: ir.Binary("/", a[1], ir.Binary(
            "-", attr(a[0], "progress"), ir.Const(Fraction(1, 2), "real"), "real"), "real")),
        st.tuples(var, var, st.sampled_from(["<", "<=", "==", ">="])).map(
            lambda a: ir.Binary(a[2], attr(a[0], "progress"), attr(a[1], "progress"), "bool")),
        st.tuples(var, REAL_CONSTS).map(lambda a: ir.Binary(
            ">=", done_less_run(a[0]), ir.Const(a[1], "real"), "bool")),
    )


def formulas(args: tuple[tuple[str, str], ...]) -> st.SearchStrategy[ir.Expr]:
    owners = tuple(v for v, _ in args)
    return st.one_of(_progress_terms(owners),
                     st.sampled_from(["int", "real", "bool"]).flatmap(
                         lambda t: expr(t, 3, args)))


def agree(e: ir.Expr, args: tuple[tuple[str, str], ...], bound: dict[str, JobLife],
          state: PassState) -> None:
    fn = compile_functions({"f": e}, PARAMS, rigid=False, args={"f": args})[0]["f"]
    env = Env(state, bound.get("job"), PARAMS,
              vars={v: life for v, life in bound.items() if v != "job"})
    expected = outcome(lambda: evaluate(e, env))
    assert outcome(lambda: fn(*(bound[v] for v, _ in args), state)) == expected
    assert expected == "error" or expected[0] is not float  # exact, never a float


@settings(max_examples=400, deadline=None)
@given(st.data(), states(), formulas(JOB))
def test_a_jobs_formulas_agree_with_evaluate(data, state, e) -> None:
    agree(e, JOB, {"job": data.draw(lives(state.now))}, state)


@settings(max_examples=400, deadline=None)
@given(st.data(), states(), formulas(RULE))
def test_the_rules_formulas_agree_with_evaluate(data, state, e) -> None:
    agree(e, RULE, {"cand": data.draw(lives(state.now)),
                    "victim": data.draw(lives(state.now))}, state)


def test_progress_at_a_jobs_request_is_exact() -> None:
    """The issue's case: a job running at its request for 13 s of its 23 has done exactly
    13/23 of its work, so `progress * estimate - since_start` is 0 (as a float, -1.8e-15)
    and its `sqrt` is defined."""
    life = JobLife(Job(1, 0, 0, 23, 23, (1,)), "suspend")
    life.start(0, (0,))
    state = PassState(13, (), (), (1,), [1])
    e = ir.Call("sqrt", (ir.Binary("-", ir.Binary(
        "*", ir.JobAttr("job", "progress", "real"), ir.JobAttr("job", "estimate", "int"),
        "real"), ir.JobAttr("job", "since_start", "int"), "real"),), "real")
    fn = compile_functions({"f": e}, {}, rigid=False, args={"f": JOB})[0]["f"]
    assert fn(life, state) == evaluate(e, Env(state, life)) == 0
    assert float(Fraction(13, 23)) * 23 - 13 < 0  # what the float gave
