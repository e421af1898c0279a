"""The reference interpreter of IR expressions: the semantics the generated Python code
(`python_code`) is tested against."""

from __future__ import annotations

from collections.abc import Mapping

from attrs import evolve, field, frozen

from schedc.dsl import ir
from schedc.dsl.semantics import numbers as nm
from schedc.dsl.semantics.numbers import EvaluationError
from schedc.dsl.semantics.pass_state import (
    ActiveView,
    JobView,
    PassState,
    RunningView,
    is_active,
    is_running,
)

__all__ = ["Env", "EvaluationError", "evaluate"]


@frozen
class Env:
    """What an expression can read: `job`, the pass state, param values, aggregate vars (and
    a preemptive policy's active jobs: `job`, `cand`, `victim` bound to an ``ActiveView``)."""

    state: PassState
    job: JobView | ActiveView | None = None
    params: Mapping[str, object] = field(factory=dict)
    vars: Mapping[str, JobView | RunningView | ActiveView | int] = field(factory=dict)
    rigid: bool = False  # `job.size` is `job.procs` without a state lookup

    def bind(self, var: str, value) -> Env:
        return evolve(self, vars={**self.vars, var: value})


def evaluate(expr: ir.Expr, env: Env):
    """The value of ``expr``: int, an exact ``Fraction`` (for "real") or bool; raises
    EvaluationError."""
    try:
        return _eval(expr, env)
    except (ArithmeticError, ValueError) as err:  # e.g. float overflow
        raise EvaluationError(str(err)) from err


def _eval(e: ir.Expr, env: Env):
    v = _value(e, env)
    return nm.real(v) if e.type == "real" else v


def _job(env: Env, var: str):
    return env.job if var == "job" else env.vars[var]


def _job_of(obj) -> tuple[JobView, bool]:
    """The job a variable is bound to, and whether it is a running one (with a start)."""
    if is_active(obj):  # a preemptive policy's: `wait` and `xfactor` taken at now
        return obj.job, False
    if is_running(obj):
        return obj.job, True
    return obj, False


def _active_attr(life: ActiveView, attr: str, now: int):
    match attr:
        case "acquired":
            return life.acquired_at(now)
        case "since_start":
            return life.since_start(now)
        case "preemptions":
            return life.preemptions.total()
        case "suspended":
            return life.phase == "suspended"
        case "progress":
            return life.progress_at(now)
    raise AssertionError(attr)


def _job_attr(e: ir.JobAttr, env: Env):
    obj = _job(env, e.var)
    now = env.state.now
    if e.attr in ir.ACTIVE_ATTRS:
        return _active_attr(obj, e.attr, now)
    job, running = _job_of(obj)
    match e.attr:
        case ("id" | "submit" | "estimate" | "procs" | "area" | "work" | "user" | "group"
              | "executable" | "queue" | "partition"):
            return getattr(job, e.attr)
        case "min_size":
            return job.min_procs
        case "max_size":
            return job.max_procs
        case "wait":
            return (obj.start if running else now) - job.submit
        case "xfactor":
            wait = (obj.start if running else now) - job.submit
            return nm.div(wait + job.estimate, job.estimate)
        case "start":
            return obj.start
        case "elapsed":
            return now - obj.start
        case "remaining":
            return obj.start + job.estimate - now
        case "end":
            return obj.start + job.estimate
        case "size":
            return job.procs if env.rigid else nm.job_size(job, env.state)
    raise AssertionError(e.attr)


def _resource(attr: str, k: int, state: PassState):
    cap, used = state.capacity[k], state.used[k]
    match attr:
        case "capacity":
            return cap
        case "used":
            return used
        case "free":
            return cap - used
        case "util":
            return nm.div(used, cap)
        case "bpu":
            return state.bpu[k]
        case "power":
            return state.power[k]
    raise AssertionError(attr)


_CALLS = {"ceil": nm.ceil, "floor": nm.floor, "sqrt": nm.sqrt, "log": nm.log, "abs": abs}
_ARITH = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "^": lambda a, n: a ** n,  # n a small int literal: exact for ints and Fractions
    "/": nm.div, "//": nm.floordiv, "%": nm.mod,
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
}


def _value(e: ir.Expr, env: Env):
    match e:
        case ir.Const(value=v):
            return v
        case ir.ParamRef(name=n):
            return env.params[n]
        case ir.JobAttr():
            return _job_attr(e, env)
        case ir.Request(var=var, resource=r):
            job = _job_of(_job(env, var))[0]
            return job.request[r if isinstance(r, int) else env.vars[r]]
        case ir.MachineAttr(attr=a, resource_index=k):
            return _resource(a, k, env.state)
        case ir.ResourceAttr(var=var, attr=a):
            return _resource(a, env.vars[var], env.state)
        case ir.StateAttr(attr="now"):
            return env.state.now
        case ir.StateAttr(attr="queue.count"):
            return len(env.state.queue)
        case ir.StateAttr(attr="running.count"):
            return len(env.state.running)
        case ir.Unary(op="-", operand=x):
            return -_eval(x, env)
        case ir.Unary(op="not", operand=x):
            return not _eval(x, env)
        case ir.Binary(op="and", left=a, right=b):
            return _eval(a, env) and _eval(b, env)
        case ir.Binary(op="or", left=a, right=b):
            return _eval(a, env) or _eval(b, env)
        case ir.Binary(op=op, left=a, right=b):
            return _ARITH[op](_eval(a, env), _eval(b, env))
        case ir.Call(fn="min", args=args):
            return min(_eval(a, env) for a in args)
        case ir.Call(fn="max", args=args):
            return max(_eval(a, env) for a in args)
        case ir.Call(fn=fn, args=(x,)):
            return _CALLS[fn](_eval(x, env))
        case ir.IfThenElse(cond=c, then=t, otherwise=o):
            return _eval(t, env) if _eval(c, env) else _eval(o, env)
        case ir.Aggregate():
            return _aggregate(e, env)
    raise AssertionError(f"unknown IR node {e!r}")


def _domain(domain: str, state: PassState):
    if domain == "queue":
        return state.queue
    if domain == "running":
        return state.running
    return range(len(state.capacity))


def _aggregate(e: ir.Aggregate, env: Env):
    envs = [env.bind(e.var, x) for x in _domain(e.domain, env.state)]
    if e.where is not None:
        envs = [en for en in envs if _eval(e.where, en)]
    if e.fn == "count":
        return len(envs)
    values = (_eval(e.body, en) for en in envs)
    if e.fn == "sum":
        return nm.exact_sum(values)
    default = None if e.default is None else (lambda: _eval(e.default, env))
    return {"min": nm.agg_min, "max": nm.agg_max, "avg": nm.agg_avg}[e.fn](values, default)
