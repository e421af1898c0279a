"""The policy IR: plain, typed data (no closures) read by every interpreter.

The reference interpreter (`semantics/evaluate`), the Python code generator
(`semantics/python_code`) and the Z3 backend (`verify/symbolic`) all walk these same objects.
Definitions are already inlined: there are no user calls.
Every expression has ``type`` in {"int", "real", "bool"} and an optional source ``span``.
"""

from __future__ import annotations

from typing import Literal

from attrs import field, frozen

from schedc.dsl.diagnostics import Diagnostic, Span

Type = Literal["int", "real", "bool"]  # an expression's type

BackfillKind = Literal["none", "first_fit", "best", "when"]

MAX_EXPONENT = 8  # `x ^ n`: n a literal in [0, 8] (a product of n factors, also for Z3)

# Job attributes readable on `job` and on aggregate variables over `queue` (and `running`).
# Who submitted a job and where (SWF fields 12-16, optional job-table columns): plain ints,
# -1 when unknown, so that policies can group jobs (`j.user == job.user`).
LABEL_ATTRS = ("user", "group", "executable", "queue", "partition")
JOB_ATTRS = ("id", "submit", "estimate", "procs", "wait", "area", "xfactor", "min_size",
             "max_size", "work", *LABEL_ATTRS)
# Extra attributes of a variable over `running`.
RUNNING_ATTRS = ("start", "elapsed", "remaining", "end")
# what a job of a preemptive policy has done so far (a variable of kind "active": the `job` of
# its order keys, `keep` and costs, `cand` and `victim` of its rule): processor-seconds run,
# seconds since its last start or resume, preemptions, whether it is suspended now, the
# fraction of its work done (its runs at the speed of their sizes: it reads the speedup)
ACTIVE_ATTRS = ("acquired", "since_start", "preemptions", "suspended", "progress")
# `size` (the processors the job got) exists only for `job` inside invariants.
ATTR_TYPES = ({a: "int" for a in (*JOB_ATTRS, *RUNNING_ATTRS, *ACTIVE_ATTRS, "size")}
              | {"xfactor": "real", "suspended": "bool", "progress": "real"})
# util is real: used / capacity. bpu and power (real) are the processors' speeds in basic
# processor units and their speeds less the background load (papers/002 eq. 6), summed over
# all processors of the resource; both equal the capacity on a dedicated homogeneous machine
MACHINE_ATTRS = ("capacity", "free", "used", "util", "bpu", "power")
REAL_MACHINE_ATTRS = ("util", "bpu", "power")
STATE_ATTRS = ("now", "queue.count", "running.count")


def _span():
    return field(default=None, eq=False, repr=False, kw_only=True)


@frozen
class Const:
    value: int | float | bool
    type: Type
    span: Span | None = _span()


@frozen
class ParamRef:
    name: str
    type: Type
    span: Span | None = _span()


@frozen
class JobAttr:
    var: str  # "job" or an aggregate variable over queue/running
    attr: str
    type: Type
    span: Span | None = _span()


@frozen
class Request:
    var: str
    resource: int | str  # a resource index, or the name of a `resources` aggregate variable
    type: Type = "int"
    span: Span | None = _span()


@frozen
class MachineAttr:
    attr: str  # capacity | free | used | util
    resource_index: int
    type: Type
    span: Span | None = _span()


@frozen
class ResourceAttr:
    var: str  # a `resources` aggregate variable
    attr: str  # capacity | free | used | util
    type: Type
    span: Span | None = _span()


@frozen
class StateAttr:
    attr: str  # now | queue.count | running.count
    type: Type = "int"
    span: Span | None = _span()


@frozen
class Unary:
    op: str  # "-" | "not"
    operand: Expr
    type: Type
    span: Span | None = _span()


@frozen
class Binary:
    # + - * / // % ^ < <= > >= == != and or. `/` is real division; `//` and `%` are on ints
    # with Python's floor semantics (the result of `%` has the divisor's sign). `^`'s right
    # operand is always an int Const in [0, MAX_EXPONENT] (the lowering checks it).
    op: str
    left: Expr
    right: Expr
    type: Type
    span: Span | None = _span()


@frozen
class Call:
    fn: str  # min | max | ceil | floor | sqrt | log | abs
    args: tuple[Expr, ...]
    type: Type
    span: Span | None = _span()


@frozen
class IfThenElse:
    cond: Expr
    then: Expr
    otherwise: Expr
    type: Type
    span: Span | None = _span()


@frozen
class Aggregate:
    fn: str  # sum | count | min | max | avg
    var: str  # unique within the enclosing expression (renamed on inlining)
    domain: str  # queue | running | resources
    where: Expr | None
    body: Expr | None  # None for count
    default: Expr | None  # the value when no element passes `where`
    type: Type
    span: Span | None = _span()


Expr = (
    Const | ParamRef | JobAttr | Request | MachineAttr | ResourceAttr | StateAttr | Unary
    | Binary | Call | IfThenElse | Aggregate
)


@frozen
class Resource:
    name: str
    capacity: int | None  # None: from the trace header or the CLI


@frozen
class Machine:
    name: str
    resources: tuple[Resource, ...]  # resources[0].name == "cpus"


@frozen
class Param:
    name: str
    type: Type
    lo: int | float | None
    hi: int | float | None
    default: int | float | bool
    span: Span | None = _span()  # the declaration: run-time value errors point at it


@frozen
class OrderKey:
    expr: Expr
    descending: bool


@frozen
class Backfill:
    kind: BackfillKind
    score: Expr | None = None
    descending: bool = False  # best: the largest score starts instead of the smallest
    # when: after the D-th reservation a job starts iff it fits the free resources now and
    # this bool holds; the reservations are not consulted (so it may delay them)
    condition: Expr | None = None
    span: Span | None = _span()  # of the `backfill` clause (None: the default)


@frozen
class Invariant:
    expr: Expr
    text: str
    span: Span | None = field(default=None, eq=False)


# how a running job may be preempted (papers/003): never, suspended in place (its memory
# and processes stay), checkpointed (restarts anywhere at its size), malleable (restarts at
# any size in [min, max]), killed and requeued (from scratch)
MECHANISMS = ("none", "suspend", "checkpoint", "malleable", "requeue")


@frozen
class MechanismRule:
    """`mechanism KIND [when COND]`: jobs for which COND holds (all: no COND) have KIND; the
    first rule that holds for a job, at its submission, gives its mechanism (none: `none`)."""

    kind: str  # one of MECHANISMS
    when: Expr | None  # reads the job and params only
    span: Span | None = _span()


@frozen
class Preemption:
    """A preemptive policy's rules (`preempt when` and the clauses around it)."""

    # `preempt when`: may waiting `cand` preempt running `victim` (bool); None: `preempt by
    # order` (each pass selects the jobs that run, in the policy's order over active jobs)
    rule: Expr | None
    mechanisms: tuple[MechanismRule, ...]
    victims: tuple[OrderKey, ...] = ()  # over `victim`; empty: youngest first (since_start)
    keep: Expr | None = None  # over a running `job`: protected now (never a victim)
    dispatch: Expr | None = None  # over `job`: seconds to start it (floored, at least 0)
    resume: Expr | None = None  # over `job`: seconds to resume it
    checkpoint: Expr | None = None  # over `job`: seconds its processors stay busy writing it
    # constants (params allowed): the most preemptions of a job, the most jobs resident on
    # a processor, a pass every quantum seconds while jobs wait
    limit: Expr | None = None
    resident: Expr | None = None
    quantum: Expr | None = None
    # `leftover equal` / `leftover efficient [when COND]` (papers/003's adaptive disciplines,
    # `preempt by order` only): the free processors a selection leaves are given one at a
    # time to the jobs it starts, up to their maximum size: `equal` to the smallest
    # allocation, `efficient` to the job most efficient after the step (it reads the jobs'
    # speedups). ``leftover_when`` (a constant: params only) makes `efficient` conditional:
    # where it is false the processors are given out equally. None: no processor is given out
    leftover: Literal["equal", "efficient"] | None = None
    leftover_when: Expr | None = None
    # `subset DELTA` (papers/003's SUBSET variants, with `leftover`): of the N_ff jobs the
    # first fit selects to start, only the first N' = floor(N_ff max(1 - L / (DELTA N_ff), 0))
    # are kept (L: the jobs in the system), then the jobs whose minimum sizes best fill the
    # free processors (a subset sum) are added. A constant (params allowed), at least 1
    subset: Expr | None = None
    span: Span | None = _span()  # of `preempt when`

    def exprs(self) -> list[Expr]:
        out = [self.rule, *(m.when for m in self.mechanisms), *(k.expr for k in self.victims),
               self.keep, self.dispatch, self.resume, self.checkpoint, self.limit,
               self.resident, self.quantum, self.leftover_when, self.subset]
        return [e for e in out if e is not None]


@frozen
class Waiver:
    """`waive PROPERTY "REASON"`: a property of `schedc verify` the policy does not promise,
    and why. Verify still checks it: a violation is expected, a proof is a warning."""

    property: str  # a property `schedc verify` checks of the policy (lowering/policies.py)
    reason: str
    span: Span | None = _span()


@frozen
class Policy:
    name: str
    file: str
    machine: Machine
    params: tuple[Param, ...]  # the params the policy reads, in declaration order
    order: tuple[OrderKey, ...]  # empty = FCFS
    depth: int | None | ParamRef  # reservations per pass; None = all
    backfill: Backfill
    size: Expr | None  # None = rigid (the cpus request)
    invariants: tuple[Invariant, ...]
    # `reserve D per KEY`: a job that does not fit is reserved while fewer than D jobs with its
    # key (evaluated at its visit) are reserved in the pass; None: D counts all reservations
    reserve_per: Expr | None = None
    # `or when COND`: a job that does not fit and exceeds the depth is reserved if COND holds
    reserve_when: Expr | None = None
    # `size choose N in [LOW, HIGH]`: then ``size`` is HIGH, and the job gets, of N sizes spread
    # evenly over [LOW, max(LOW, HIGH)] (all of them if there are at most N), the one with
    # which it completes first in the pass's plan (ties: the smaller size)
    size_choices: int | None = None
    size_low: Expr | None = None
    # `size fixed ...`: a job's size is chosen at its first visit (in the pass at its
    # submission, unless the walk stops before it) and kept for every later pass
    size_fixed: bool = False
    # likely mistakes the compiler found (severity "warning"): `check` prints them, and so
    # do `run` and `verify`, once each
    warnings: tuple[Diagnostic, ...] = field(default=(), eq=False, repr=False)
    # A self-tuning dynP policy (papers/001): its passes are its candidates' (``Tuning``)
    tuning: Tuning | None = None
    # `slack EXPR` (relaxed backfilling): a number of the reserved job, evaluated when it is
    # reserved; the plan holds the reservation from its earliest fit plus max(0, floor(EXPR))
    # when it fits there (else from its earliest fit), so the pass's later starts may delay
    # it by that much. None: no slack, every reservation is held at its earliest fit
    slack: Expr | None = None
    # preemption (papers/003): None, the policy never preempts (the rigid run-to-completion
    # semantics); else its rules, and its jobs are `active` (``ACTIVE_ATTRS``)
    preemption: Preemption | None = None
    # `waive` clauses, in the order written (the inherited first): what `verify` may find
    # violated without failing
    waivers: tuple[Waiver, ...] = ()

    def waiver(self, prop: str) -> Waiver | None:
        """The policy's `waive` of property ``prop``, if it states one."""
        return next((w for w in self.waivers if w.property == prop), None)


# Plan metrics a self-tuning step may measure (runtime/engine/plan_metrics.py defines each)
TUNING_METRICS = ("artww", "sldwa", "response", "slowdown", "bounded_slowdown", "utilisation",
                  "makespan")
DECIDERS = ("simple", "advanced")
# when a self-tuning step happens: at a pass after a submission, or at every pass
TUNING_STEPS = ("submit", "change")


@frozen
class Tuning:
    """Self-tuning dynP (papers/001, section 2): at each step every candidate's full plan
    (all planning policies: `reserve all`) is measured by ``metric``, and the decider picks
    the candidate whose pass runs. ``simple``: the best value, ties to the earlier candidate;
    ``advanced``: the current candidate stays when it ties with the best."""

    candidates: tuple[Policy, ...]  # in the order written; the first is active at the start
    metric: str  # one of TUNING_METRICS
    decider: str  # one of DECIDERS
    step: str  # one of TUNING_STEPS
    span: Span | None = _span()


# -- structure helpers ----------------------------------------------------------------------


def children(e: Expr) -> tuple[Expr, ...]:
    match e:
        case Unary(operand=x):
            return (x,)
        case Binary(left=a, right=b):
            return (a, b)
        case Call(args=args):
            return args
        case IfThenElse(cond=c, then=t, otherwise=o):
            return (c, t, o)
        case Aggregate(where=w, body=b, default=d):
            return tuple(x for x in (w, b, d) if x is not None)
    return ()


def walk(e: Expr):
    yield e
    for c in children(e):
        yield from walk(c)


DEPENDENCIES = frozenset({"job", "now", "queue", "running", "machine", "param"})
# attributes that change with time (a preemptive job's history too: conservative)
_NOW_ATTRS = {"wait", "xfactor", "elapsed", "remaining", *ACTIVE_ATTRS}


def dependencies(e: Expr) -> frozenset[str]:
    """What an expression reads: a subset of {job, now, queue, running, machine, param}."""
    deps: set[str] = set()
    for n in walk(e):
        match n:
            case JobAttr(var=v, attr=a):
                if v == "job":
                    deps.add("job")
                if a in _NOW_ATTRS:  # conservative for running vars (their wait is fixed)
                    deps.add("now")
            case Request(var="job"):
                deps.add("job")
            case MachineAttr() | ResourceAttr():
                deps.add("machine")
            case StateAttr(attr="now"):
                deps.add("now")
            case StateAttr(attr=a):
                deps.add(a.split(".")[0])
            case ParamRef():
                deps.add("param")
            case Aggregate(domain=d):
                deps.add("machine" if d == "resources" else d)
    return frozenset(deps)


_STATE = frozenset({"now", "queue", "running", "machine"})


def order_static(policy: Policy) -> bool:
    """The order key depends only on the job's static attributes and params."""
    return all(dependencies(k.expr) <= {"job", "param"} for k in policy.order)


def reads_state(expr: Expr) -> bool:
    """The expression reads now, queue, running or machine, not only the job and params."""
    return bool(dependencies(expr) & _STATE)


def decision_exprs(policy: Policy) -> list[Expr]:
    """Every expression a pass decides by: order keys, sizes, backfill score and condition,
    reservation key, condition and slack."""
    exprs = [k.expr for k in policy.order] + [policy.size, policy.size_low,
                                              policy.backfill.score, policy.backfill.condition,
                                              policy.reserve_per, policy.reserve_when,
                                              policy.slack]
    return [e for e in exprs if e is not None]


def labels_read(policy: Policy) -> tuple[str, ...]:
    """The label attributes (``LABEL_ATTRS``) some formula of the policy reads, in their
    order: the verifier makes symbolic labels only for these."""
    exprs = decision_exprs(policy) + [i.expr for i in policy.invariants]
    if policy.preemption is not None:
        exprs += policy.preemption.exprs()
    read = {n.attr for e in exprs for n in walk(e) if isinstance(n, JobAttr)}
    return tuple(a for a in LABEL_ATTRS if a in read)


def state_free(policy: Policy) -> bool:
    """No decision expression reads now, queue, running or machine."""
    return not any(reads_state(e) for e in decision_exprs(policy))
