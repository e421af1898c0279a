"""The range analysis (``dsl/verify/ranges.py``) and the facts it gives Z3.

Every fact of `sqrt` and `log` must be true of what the simulator computes
(``dsl/semantics/numbers.py``), checked here on random rationals, huge, tiny and next to 1
included; every interval must hold the value the reference interpreter computes, on random
states that meet the analysis's hypotheses (``ranges.HYPOTHESES``). And the invariants of
issue 31 that need them are proved, fast.
"""

from __future__ import annotations

import time
from fractions import Fraction

import pytest
import z3
from hypothesis import example, given, settings
from hypothesis import strategies as st

from schedc.dsl import compile_source, ir
from schedc.dsl.semantics import numbers as nm
from schedc.dsl.semantics.evaluate import Env, EvaluationError, evaluate
from schedc.dsl.verify import ranges
from schedc.dsl.verify.prover import verify_policy
from schedc.dsl.verify.ranges import Bound, Context, Interval
from schedc.dsl.verify.symbolic import LOG, ParamTerms, SymState, _sqrt_facts, sym_eval
from schedc.dsl.verify.verdict import Bounds, Limits
from schedc.dsl.verify.z3context import fresh_context
from schedc.runtime.engine.policy import PassState
from schedc.runtime.jobs import Job, RunningJob
from tests.support.ir_strategies import expr, jobs

# -- rationals the simulator may see ------------------------------------------------------

_HUGE = st.integers(0, 2 ** 4000)
_INTS = st.integers(0, 10 ** 6) | st.integers(2 ** 53 - 8, 2 ** 53 + 8) \
    | st.integers(2 ** 1024 - 2 ** 972, 2 ** 1024 + 2 ** 972) | _HUGE
_NEAR_ONE = st.builds(lambda e, sign, k: 1 + sign * Fraction(k, 2 ** e), st.integers(2, 400),
                      st.sampled_from([-1, 1]), st.integers(1, 3))  # (positive)
RATIONALS = (_INTS.map(Fraction)
             | st.builds(Fraction, _INTS, _INTS.map(lambda d: d + 1))
             | _NEAR_ONE
             | st.builds(lambda n, e: Fraction(n, 2 ** e), st.integers(1, 2 ** 60),
                         st.integers(0, 3000)))


@settings(max_examples=400, deadline=None)
@given(RATIONALS, RATIONALS)
@example(Fraction(2 ** 53 - 1), Fraction(2 ** 53 + 1))
@example(Fraction(1), 1 + Fraction(1, 2 ** 60))
def test_the_simulators_sqrt_is_monotone(a: Fraction, b: Fraction) -> None:
    lo, hi = sorted((a, b))
    assert nm.sqrt(lo) <= nm.sqrt(hi)


@settings(max_examples=400, deadline=None)
@given(RATIONALS.filter(lambda x: x >= 1) | _NEAR_ONE.filter(lambda x: x >= 1))
@example((1 + Fraction(1, 2 ** 53)) ** 2)
@example((1 + Fraction(1, 2 ** 53) + Fraction(1, 2 ** 106)) ** 2)
def test_the_simulators_sqrt_is_at_most_its_argument_from_1(x: Fraction) -> None:
    assert nm.sqrt(x) <= x


def _holds(fact: z3.BoolRef) -> bool:
    return z3.is_true(z3.simplify(fact))


@settings(max_examples=300, deadline=None)
@given(RATIONALS, RATIONALS, RATIONALS)
def test_the_sqrt_facts_hold_of_the_simulators_sqrt(x: Fraction, a: Fraction,
                                                    b: Fraction) -> None:
    lo, hi = sorted((a, b))
    y = nm.sqrt(x)
    with fresh_context():
        facts = _sqrt_facts(z3.RealVal(x), z3.RealVal(y), Interval(Bound(lo), Bound(hi)))
        assert all(_holds(f) for f in facts), (x, lo, hi)


# (at most 4300 digits: Python's limit on printing an int, which Z3 and Hypothesis do)
INT_LOGS = _INTS.filter(lambda n: n >= 1) | st.integers(1, 2 ** 14000)


@settings(max_examples=400, deadline=None)
@given(INT_LOGS)
@example(2 ** 1024)
@example(2 ** 1024 - 1)
@example(1)
def test_the_simulators_log_of_an_int_from_1_is_not_negative(n: int) -> None:
    assert nm.log(n) >= 0
    assert nm.log(Fraction(n)) >= 0  # a real that is an int: its denominator is 1


def test_the_simulators_log_above_1_may_be_0() -> None:
    # why no fact says log(x) > 0 for x > 1
    assert nm.log(1 + Fraction(1, 2 ** 60)) == 0


def _log_of(param_type: str) -> tuple[z3.ExprRef, ParamTerms, list[z3.BoolRef], z3.ExprRef]:
    """`log(x) >= 0` of a param x, with its definitions and x's term."""
    x = {"int": z3.Int, "real": z3.Real}[param_type]("x")
    params = ParamTerms({"x": x}, {"x": (None, None)})
    e = ir.Binary(">=", ir.Call("log", (ir.ParamRef("x", param_type),), "real"),
                  ir.Const(Fraction(0), "real"), "bool")
    state = SymState(z3.IntVal(0), (z3.IntVal(1),), (z3.IntVal(0),), (), ())
    result = sym_eval(e, job=None, state=state, params=params)
    return result.value, params, list(result.definitions), x


@settings(max_examples=100, deadline=None)
@given(INT_LOGS)
def test_the_log_facts_hold_of_the_simulators_log(n: int) -> None:
    with fresh_context():
        value, _, definitions, x = _log_of("int")
        solver = z3.Solver()
        solver.add(*definitions, x == n, LOG(z3.ToReal(x)) == z3.RealVal(nm.log(n)))
        assert solver.check() == z3.sat


def test_the_verifier_proves_log_of_an_int_from_1_but_not_of_a_real_above_1() -> None:
    with fresh_context():
        for typ, proved in (("int", True), ("real", False)):
            value, _, definitions, x = _log_of(typ)
            solver = z3.Solver()
            solver.add(*definitions, x >= 1, z3.Not(value))
            assert (solver.check() == z3.unsat) == proved, typ


# -- the analysis against the reference interpreter ------------------------------------------

DOMAINS = {"k": (Fraction(-5), Fraction(10)), "f": (Fraction(0), Fraction(1))}


@st.composite
def fitting_states(draw) -> PassState:
    """A state the hypotheses hold of: capacities at least 1, running jobs that fit them and
    end after now, queued jobs submitted by now asking at most the capacities."""
    cap = draw(st.tuples(st.integers(1, 16), st.integers(1, 16)))
    now = draw(st.integers(0, 1000))
    used = [0, 0]
    running = []
    for job in draw(st.lists(jobs, max_size=4)):
        request = (min(job.request[0], cap[0] - used[0]), min(job.request[1], cap[1] - used[1]))
        if request[0] < 1:
            break
        start = draw(st.integers(max(0, now - job.estimate + 1), now))
        job = Job(job.id, job.index, min(job.submit, start), job.run_time, job.estimate,
                  request, user=job.user, group=job.group)
        running.append(RunningJob(job, start, request))
        used = [used[0] + request[0], used[1] + request[1]]
    queue = [Job(j.id, j.index, min(j.submit, now), j.run_time, j.estimate,
                 (min(j.request[0], cap[0]), min(j.request[1], cap[1])), user=j.user,
                 group=j.group)
             for j in draw(st.lists(jobs, max_size=4))]
    bpu = [draw(st.sampled_from([0.5, 1.0, 3.25])) * c for c in cap]
    return PassState(now, tuple(queue), tuple(running), cap, used, bpu=bpu, power=list(bpu))


def _value_of(b: Bound, capacity: tuple[int, ...]) -> Fraction:
    return b.value if b.resource is None else b.value * capacity[b.resource]


def _contains(i: Interval, v, capacity: tuple[int, ...]) -> bool:
    return (i.lo is None or _value_of(i.lo, capacity) <= v) and \
        (i.hi is None or v <= _value_of(i.hi, capacity))


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(["int", "real"]).flatmap(expr), fitting_states(),
       jobs, st.integers(-5, 10), st.sampled_from([Fraction(0), Fraction(1, 3), Fraction(1)]),
       st.booleans())
def test_every_value_lies_in_its_interval(e: ir.Expr, state: PassState, job: Job, k: int,
                                          f: Fraction, symbolic: bool) -> None:
    job = Job(job.id, job.index, min(job.submit, state.now), job.run_time, job.estimate,
              (min(job.request[0], state.capacity[0]), min(job.request[1], state.capacity[1])),
              user=job.user)
    try:
        value = evaluate(e, Env(state, job, {"k": k, "f": f, "flag": True}))
    except EvaluationError:
        return
    capacities = (None, None) if symbolic else state.capacity
    i = ranges.interval(e, {}, Context(DOMAINS, capacities))
    assert _contains(i, value, state.capacity), (value, i)


@settings(max_examples=200, deadline=None)
@given(fitting_states(), jobs)
def test_a_sum_of_the_running_jobs_cpus_lies_within_the_cpus(state: PassState,
                                                              job: Job) -> None:
    mine = ir.Binary("==", ir.JobAttr("r", "user", "int"), ir.JobAttr("job", "user", "int"),
                     "bool")
    total = ir.Aggregate("sum", "r", "running", mine, ir.JobAttr("r", "procs", "int"), None,
                         "int")
    share = ir.Binary("-", ir.Const(Fraction(1), "real"), ir.Binary(
        "/", total, ir.MachineAttr("capacity", 0, "int"), "real"), "real")
    i = ranges.interval(share, {}, Context({}, (None, None)))
    assert i == Interval(Bound(Fraction(0)), Bound(Fraction(1)))
    value = evaluate(share, Env(state, job))
    assert _contains(i, value, state.capacity)


# -- the invariants of issue 31 -------------------------------------------------------------

MULTIFACTOR = """\
// Slurm-like multifactor priority: age, size and fair share, weighted by params.
param w_age: real in [0, 100000] = 1000
param w_size: real in [0, 100000] = 100
param w_fs: real in [0, 100000] = 10000

def user_cpus(j) = sum(r in running where r.user == j.user: r.procs)
def fs_factor(j) = 1 - user_cpus(j) / machine.capacity.cpus
def age_factor(j) = min(j.wait / 7d, 1)
def size_factor(j) = j.procs / machine.capacity.cpus
def prio(j) = w_age * age_factor(j) + w_size * size_factor(j) + w_fs * fs_factor(j)

policy multifactor {
  order    prio(job) desc, job.submit asc
  reserve  1
  backfill first_fit
  invariant prio(job) >= 0
  invariant fs_factor(job) >= 0
}
"""

LOGSQRT = """\
policy logsqrt {
  order    job.submit asc
  reserve  1
  backfill first_fit
  invariant log(job.estimate) >= 0
  invariant sqrt(job.estimate) <= job.estimate
}
"""


@pytest.mark.parametrize("name,text", [("multifactor", MULTIFACTOR), ("logsqrt", LOGSQRT)])
def test_the_invariants_of_bounded_formulas_are_proved_fast(name: str, text: str) -> None:
    policy = compile_source(text, f"{name}.pol")
    started = time.perf_counter()
    verdicts = verify_policy(policy, Bounds(), Limits(), only=["invariant"])
    assert [(v.property, v.status) for v in verdicts] == [
        (f"invariant `{i.text}`", "proved") for i in policy.invariants], verdicts
    assert time.perf_counter() - started < 10  # a few tenths of a second each, measured
