"""Hypothesis strategies of random well-typed IR and concrete states (shared by the tests
that check an interpreter of the IR against the reference `evaluate`)."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st

from schedc.dsl import ir
from schedc.runtime.engine.policy import PassState
from schedc.runtime.jobs import Job, RunningJob

PARAMS = {"k": 3, "f": Fraction(1, 2), "flag": True}
# Real literals are exact decimals (0.9 is 9/10); a few values make exact ties and zeros
REAL_CONSTS = st.sampled_from([Fraction(0), Fraction(1, 2), Fraction(3, 10), Fraction(1)]) | \
    st.integers(-10_000, 10_000).map(lambda n: Fraction(n, 100))
INT_ATTRS = ["id", "submit", "estimate", "procs", "wait", "area", *ir.LABEL_ATTRS]
RUN_ATTRS = ["start", "elapsed", "remaining", "end"]
# what an active job of a preemptive policy has run so far, by type (``ir.ACTIVE_ATTRS``)
ACTIVE_INT = ["acquired", "since_start", "preemptions"]


@st.composite
def expr(draw, typ: str, depth: int = 3, vars: tuple = ()):
    if depth <= 0 or draw(st.integers(0, 3)) == 0:
        return draw(leaf(typ, vars))
    d = depth - 1
    num = st.sampled_from(["int", "real"])
    if typ == "bool":
        choice = draw(st.integers(0, 3))
        if choice == 0:
            op = draw(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
            return ir.Binary(op, draw(expr(draw(num), d, vars)), draw(expr(draw(num), d, vars)),
                             "bool")
        if choice == 1:
            op = draw(st.sampled_from(["and", "or"]))
            return ir.Binary(op, draw(expr("bool", d, vars)), draw(expr("bool", d, vars)), "bool")
        if choice == 2:
            return ir.Unary("not", draw(expr("bool", d, vars)), "bool")
        return ir.IfThenElse(draw(expr("bool", d, vars)), draw(expr("bool", d, vars)),
                             draw(expr("bool", d, vars)), "bool")
    choice = draw(st.integers(0, 7))
    if choice == 7:  # a power: the base's type, a literal exponent
        exponent = ir.Const(draw(st.integers(0, ir.MAX_EXPONENT)), "int")
        return ir.Binary("^", draw(expr(typ, d, vars)), exponent, typ)
    if choice == 0:  # arithmetic
        ops = ["+", "-", "*", "//", "%"] if typ == "int" else ["+", "-", "*", "/"]
        op = draw(st.sampled_from(ops))
        if typ == "int":
            a, b = draw(expr("int", d, vars)), draw(expr("int", d, vars))
        else:
            a, b = draw(expr(draw(num), d, vars)), draw(expr("real", d, vars))
            if draw(st.booleans()):
                a, b = b, a
        return ir.Binary(op, a, b, typ)
    if choice == 1:
        return ir.Unary("-", draw(expr(typ, d, vars)), typ)
    if choice == 2:  # calls
        if typ == "int":
            fn = draw(st.sampled_from(["ceil", "floor", "abs", "min", "max"]))
            if fn in ("ceil", "floor"):
                return ir.Call(fn, (draw(expr(draw(num), d, vars)),), "int")
            n = 1 if fn == "abs" else draw(st.integers(2, 3))
            return ir.Call(fn, tuple(draw(expr("int", d, vars)) for _ in range(n)), "int")
        fn = draw(st.sampled_from(["sqrt", "log", "abs", "min", "max"]))
        if fn in ("sqrt", "log"):
            return ir.Call(fn, (draw(expr(draw(num), d, vars)),), "real")
        if fn == "abs":
            return ir.Call(fn, (draw(expr("real", d, vars)),), "real")
        args = [draw(expr("real", d, vars))] + [draw(expr(draw(num), d, vars))]
        return ir.Call(fn, tuple(args), "real")
    if choice == 3:
        return ir.IfThenElse(draw(expr("bool", d, vars)), draw(expr(typ, d, vars)),
                             draw(expr(draw(num) if typ == "real" else "int", d, vars)), typ)
    # aggregates
    domain = draw(st.sampled_from(["queue", "running", "resources"]))
    name = f"x{len(vars)}"
    inner = (*vars, (name, domain))
    where = draw(st.none() | expr("bool", d, inner))
    fns = ["sum", "count", "min", "max"] if typ == "int" else ["sum", "min", "max", "avg"]
    fn = draw(st.sampled_from(fns))
    body_t = "int" if typ == "int" else draw(num) if fn == "avg" else "real"
    body = None if fn == "count" else draw(expr(body_t, d, inner))
    default = None
    if fn in ("min", "max", "avg") and (draw(st.booleans()) or domain != "resources"):
        default = draw(expr(typ if fn != "avg" else draw(num), d, vars))
    return ir.Aggregate(fn, name, domain, where, body, default, typ)


def leaf(typ: str, vars: tuple):
    # the jobs a formula is of: `job`, or the active ones in ``vars`` (a preemptive policy's
    # `job`, or `cand` and `victim`), which have what they have run so far too
    active = [v for v, d in vars if d == "active"]
    owners = active or ["job"]
    if typ == "bool":
        return st.one_of(st.booleans().map(lambda b: ir.Const(b, "bool")),
                         st.just(ir.ParamRef("flag", "bool")),
                         *(st.just(ir.JobAttr(v, "suspended", "bool")) for v in active))
    if typ == "real":
        opts = [
            REAL_CONSTS.map(lambda v: ir.Const(v, "real")),
            st.just(ir.ParamRef("f", "real")),
            *(st.just(ir.JobAttr(v, a, "real")) for v in owners
              for a in ("xfactor", *(["progress"] if active else []))),
            st.builds(lambda a, k: ir.MachineAttr(a, k, "real"),
                      st.sampled_from(ir.REAL_MACHINE_ATTRS), st.integers(0, 1)),
        ]
        opts += [st.just(ir.JobAttr(v, "xfactor", "real")) for v, d in vars
                 if d not in ("resources", "active")]
        opts += [st.sampled_from(ir.REAL_MACHINE_ATTRS).map(
            lambda a, v=v: ir.ResourceAttr(v, a, "real")) for v, d in vars if d == "resources"]
        return st.one_of(opts)
    opts = [
        st.integers(-50, 50).map(lambda v: ir.Const(v, "int")),
        st.just(ir.ParamRef("k", "int")),
        *(st.sampled_from(INT_ATTRS + (ACTIVE_INT if active else [])).map(
            lambda a, v=v: ir.JobAttr(v, a, "int")) for v in owners),
        *(st.integers(0, 1).map(lambda k, v=v: ir.Request(v, k)) for v in owners),
        st.builds(lambda a, k: ir.MachineAttr(a, k, "int"),
                  st.sampled_from(["capacity", "free", "used"]), st.integers(0, 1)),
        st.sampled_from(["now", "queue.count", "running.count"]).map(ir.StateAttr),
    ]
    for v, d in vars:
        if d == "resources":
            opts.append(st.sampled_from(["capacity", "free", "used"]).map(
                lambda a, v=v: ir.ResourceAttr(v, a, "int")))
            opts.extend(st.just(ir.Request(o, v)) for o in owners)
        elif d != "active":
            attrs = INT_ATTRS + (RUN_ATTRS if d == "running" else [])
            opts.append(st.sampled_from(attrs).map(lambda a, v=v: ir.JobAttr(v, a, "int")))
            opts.append(st.integers(0, 1).map(lambda k, v=v: ir.Request(v, k)))
    return st.one_of(opts)


jobs = st.builds(
    Job, id=st.integers(1, 99), index=st.integers(0, 99), submit=st.integers(0, 500),
    run_time=st.integers(0, 100), estimate=st.integers(1, 100),
    request=st.tuples(st.integers(1, 8), st.integers(0, 8)),
    # few distinct labels, so that `j.user == job.user` often holds
    user=st.integers(-1, 2), group=st.integers(-1, 2), executable=st.integers(-1, 2),
    queue=st.integers(-1, 2), partition=st.integers(-1, 2),
)


@st.composite
def states(draw):
    running = tuple(RunningJob(j, draw(st.integers(0, 600)), j.request)
                    for j in draw(st.lists(jobs, max_size=3)))
    cap = draw(st.tuples(st.integers(0, 16), st.integers(0, 16)))
    # processors' speeds and the power left by a background load (papers/002)
    bpu = [draw(st.sampled_from([0.5, 1.0, 2.0, 3.25])) * c for c in cap]
    power = [b * (1 - draw(st.sampled_from([0.0, 0.125, 0.3]))) for b in bpu]
    return PassState(draw(st.integers(0, 1000)), tuple(draw(st.lists(jobs, max_size=3))),
                     running, cap, [draw(st.integers(0, 16)), draw(st.integers(0, 16))],
                     bpu=bpu, power=power)
