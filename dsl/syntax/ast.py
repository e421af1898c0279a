"""The surface syntax tree of a `.pol` file, with source spans (ignored by equality)."""

from __future__ import annotations

from fractions import Fraction

from attrs import field, frozen

from schedc.dsl.diagnostics import Span


def _span():
    # Spans never take part in equality: parse(print(ast)) == ast holds modulo positions.
    return field(default=None, eq=False, repr=False, kw_only=True)


# -- expressions ---------------------------------------------------------------------------


# How deeply a formula may nest, its defs written out (a sum of n terms nests n - 1 levels).
# The compiler, the code generator and the Z3 encoder walk formulas recursively; at this
# depth they stay well inside Python's limits (recursion depth, 200 nested parentheses).
MAX_NESTING = 100


@frozen
class Num:
    value: int | Fraction  # int for INT literals, the exact value of REAL ones
    span: Span | None = _span()


@frozen
class Bool:
    value: bool
    span: Span | None = _span()


@frozen
class Duration:
    amount: int
    unit: str  # s | min | h | d
    span: Span | None = _span()

    @property
    def seconds(self) -> int:
        return self.amount * {"s": 1, "min": 60, "h": 3600, "d": 86400}[self.unit]


@frozen
class Part:
    """One step of a path: `.name` or `[name]` (an index by a resource variable)."""

    name: str
    index: bool = False
    span: Span | None = _span()


@frozen
class Path:
    """A name with attribute steps: `job.request.memory`, `machine.free.cpus`, `depth`."""

    root: str
    parts: tuple[Part, ...] = ()
    span: Span | None = _span()
    root_span: Span | None = _span()


@frozen
class Unary:
    op: str  # "-" | "not"
    operand: Expr
    span: Span | None = _span()


@frozen
class Binary:
    op: str  # + - * / // % ^ < <= > >= == != and or   (floor division is written `div`)
    left: Expr
    right: Expr
    span: Span | None = _span()


@frozen
class If:
    cond: Expr
    then: Expr
    otherwise: Expr
    span: Span | None = _span()


@frozen
class Call:
    fn: str
    args: tuple[Expr, ...]
    span: Span | None = _span()
    fn_span: Span | None = _span()


@frozen
class Aggregate:
    fn: str  # sum | count | min | max | avg (checked later, so typos get a did-you-mean)
    var: str
    domain: str  # queue | running | resources (checked later)
    where: Expr | None
    body: Expr | None
    default: Expr | None
    span: Span | None = _span()
    fn_span: Span | None = _span()
    domain_span: Span | None = _span()


Expr = Num | Bool | Duration | Path | Unary | Binary | If | Call | Aggregate

# -- top-level items -----------------------------------------------------------------------


@frozen
class Import:
    path: str
    span: Span | None = _span()


@frozen
class Param:
    name: str
    type: str  # int | real | bool
    lo: Expr | None
    hi: Expr | None
    default: Expr
    span: Span | None = _span()


@frozen
class Def:
    name: str
    arg: str | None  # the job parameter of a job function, None for a plain definition
    body: Expr
    span: Span | None = _span()


@frozen
class Resource:
    name: str
    capacity: int | None
    span: Span | None = _span()


@frozen
class Machine:
    name: str
    resources: tuple[Resource, ...]
    span: Span | None = _span()


@frozen
class MachineClause:
    name: str
    span: Span | None = _span()


@frozen
class OrderKey:
    expr: Expr
    descending: bool
    span: Span | None = _span()


@frozen
class OrderClause:
    keys: tuple[OrderKey, ...]
    span: Span | None = _span()


@frozen
class ReserveClause:
    value: int | str  # an INT, "all", or a param name (as Path)
    is_name: bool = False
    per: Expr | None = None  # `per KEY`: the depth counts reservations of jobs with one key
    when: Expr | None = None  # `or when COND`: a job for which COND holds is reserved anyway
    span: Span | None = _span()


@frozen
class BackfillClause:
    kind: str  # none | first_fit | best | when
    score: Expr | None = None
    descending: bool = False
    condition: Expr | None = None  # when: the user's test for a start after the D-th reservation
    span: Span | None = _span()


@frozen
class SizeClause:
    expr: Expr  # the size, or with `choose` the largest size
    # `size choose N in [LOW, HIGH]`: N sizes spread over [LOW, HIGH], the one that ends first
    choices: int | None = None
    low: Expr | None = None
    fixed: bool = False  # `size fixed ...`: chosen at the job's first visit, then kept
    span: Span | None = _span()


@frozen
class SlackClause:
    """`slack EXPR`: a reservation may be held up to EXPR seconds (of the reserved job) after
    its earliest fit (relaxed backfilling)."""

    expr: Expr
    span: Span | None = _span()


@frozen
class InvariantClause:
    expr: Expr
    text: str = field(default="", eq=False)  # the source text, for reports
    span: Span | None = _span()


@frozen
class CandidatesClause:
    """`candidates P, Q, ...`: the planning policies a self-tuning dynP policy picks among."""

    names: tuple[str, ...]
    span: Span | None = _span()
    name_spans: tuple[Span, ...] = field(default=(), eq=False, repr=False, kw_only=True)


@frozen
class TuningClause:
    """`metric NAME`, `decider NAME` or `step NAME` (checked later, for a did-you-mean)."""

    kind: str  # metric | decider | step
    value: str
    span: Span | None = _span()
    value_span: Span | None = _span()


@frozen
class MechanismClause:
    """`mechanism KIND [when COND]`: how the jobs for which COND holds may be preempted."""

    kind: str  # ir.MECHANISMS
    when: Expr | None = None
    span: Span | None = _span()


@frozen
class PreemptClause:
    """`preempt when COND`: a waiting `cand` may preempt a running `victim` when COND holds;
    `preempt by order` (``condition`` None): each pass selects the jobs that run, in the
    policy's order over every active job."""

    condition: Expr | None
    span: Span | None = _span()


@frozen
class VictimsClause:
    """`victims order KEY [asc|desc], ...`: the order victims are taken in."""

    keys: tuple[OrderKey, ...]
    span: Span | None = _span()


@frozen
class LeftoverClause:
    """`leftover equal|efficient [when COND]`: how a selection's free processors are given
    to the jobs it starts (papers/003's adaptive disciplines)."""

    kind: str  # equal | efficient
    when: Expr | None = None
    span: Span | None = _span()


@frozen
class PreemptSetting:
    """`keep COND`, `cost dispatch|resume EXPR`, `limit preemptions EXPR`, `quantum EXPR`,
    `resident EXPR`, `subset EXPR`."""

    name: str  # keep | dispatch | resume | limit | quantum | resident | subset
    expr: Expr
    span: Span | None = _span()


@frozen
class WaiveClause:
    """`waive PROPERTY "REASON"`: the policy does not promise PROPERTY (checked later, for a
    did-you-mean), for REASON (its strings joined with a space)."""

    property: str
    reason: str
    span: Span | None = _span()
    property_span: Span | None = _span()


@frozen
class PromiseClause:
    """`promise PROPERTY`: the policy promises PROPERTY, which a policy it extends waives
    (that `waive` does not reach it)."""

    property: str
    span: Span | None = _span()
    property_span: Span | None = _span()


Clause = (MachineClause | OrderClause | ReserveClause | BackfillClause | SizeClause
          | InvariantClause | CandidatesClause | TuningClause | SlackClause | MechanismClause
          | PreemptClause | VictimsClause | PreemptSetting | LeftoverClause | WaiveClause
          | PromiseClause)


@frozen
class Policy:
    name: str
    extends: str | None
    clauses: tuple[Clause, ...]
    span: Span | None = _span()
    name_span: Span | None = _span()


Item = Import | Param | Def | Machine | Policy


@frozen
class Module:
    items: tuple[Item, ...]
