"""What a policy knows of its jobs (papers/003 sections 5 and 6.2): the four knowledge cases
of a run (`schedc run --knowledge none|demand|speedup|both`) and what a compiled policy,
its params bound, **reads** of each kind, every read located.

- **demand**, the jobs' service demand as their estimates give it (at the request, or on
  one processor: `work`, as papers/003 gives it): the attributes `estimate`, `work`,
  `area`, `xfactor`, `remaining`, `end` and `progress` of any job, and every plan made with
  estimates: reservations, `slack`, `size choose` (completion times at each size) and a
  dynP policy's measured plans.
- **speedup**, what relates a job's sizes: `progress` (the work done at each size's speed,
  of the whole), `size choose` (the run time at other sizes) and `leftover efficient`.

A read counts only where a pass may evaluate it under the bound params: of `if C then A
else B` with C constant, only the branch taken, and of `C and X` (`C or X`) X only when C
does not decide alone. Defs are inlined in the IR, so a prelude function's reads are its
body's, located there. Invariants and `cost` formulas are left out: they check the run and
model the machine, and never change what the scheduler decides.

A run that withholds a kind refuses a policy that reads it (`check`): one diagnostic per
read, never a silent zero.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Literal

from attrs import field, frozen

from schedc.dsl import ir
from schedc.dsl.diagnostics import Diagnostic, DiagnosticError, Span, read_line
from schedc.dsl.params import ParamValue
from schedc.dsl.semantics.evaluate import Env, EvaluationError, evaluate
from schedc.dsl.semantics.pass_state import CONSTANT_STATE
from schedc.dsl.tuning import candidate_policies

Knowledge = Literal["none", "demand", "speedup", "both"]
Kind = Literal["demand", "speedup"]

KNOWLEDGE: tuple[Knowledge, ...] = ("none", "demand", "speedup", "both")
DEFAULT: Knowledge = "both"  # a run gives the scheduler everything, as before the option
DEMAND: frozenset[Kind] = frozenset({"demand"})
SPEEDUP: frozenset[Kind] = frozenset({"speedup"})
BOTH: frozenset[Kind] = DEMAND | SPEEDUP
_GIVES: dict[str, frozenset[Kind]] = {"none": frozenset(), "demand": DEMAND,
                                      "speedup": SPEEDUP, "both": BOTH}
_NAMES = {DEMAND: "service demand", SPEEDUP: "speedup", BOTH: "service demand and speedup"}

# Job attributes by what they need. The estimate (the time at the request) and `work` (on
# one processor: papers/003's "amount of computation required on a single processor") are
# the demand as given; area, xfactor, remaining and end are made of it. `progress`, the
# fraction of the work done, is the time run at each size's speed over the whole
ATTR_KINDS: dict[str, frozenset[Kind]] = {
    "estimate": DEMAND, "area": DEMAND, "xfactor": DEMAND, "remaining": DEMAND,
    "end": DEMAND, "work": DEMAND, "progress": BOTH}
# The nodes of an expression that reads nothing but params (it folds to one value)
_CONSTANT_NODES = (ir.Const, ir.ParamRef, ir.Unary, ir.Binary, ir.Call, ir.IfThenElse)


@frozen
class Read:
    """One thing a policy reads of its jobs' demand or speedup."""

    kinds: frozenset[Kind]  # what the read needs
    what: str  # as a message names it: "`job.estimate`", "the jobs' estimates to plan ..."
    clause: str | None  # the clause whose formula reads it (None: the clause is the read)
    # the policy that reads it, as messages name it (a dynP policy's candidate is named
    # with it); not compared: candidates that share a parent's clause share its reads
    policy: str = field(eq=False)
    span: Span | None
    fix: str | None = None  # how to do without it, besides more knowledge


def gives(knowledge: str) -> frozenset[Kind]:
    """What a run under ``knowledge`` tells the scheduler."""
    return _GIVES[knowledge]


def withheld(knowledge: str) -> frozenset[Kind]:
    return BOTH - _GIVES[knowledge]


def reads(policy: ir.Policy, values: Mapping[str, ParamValue]) -> tuple[Read, ...]:
    """Every read of ``policy`` under the param ``values`` (a param not given has its
    default), in clause order, each once (dynP candidates sharing a parent's clause share
    its reads)."""
    values = {**{p.name: p.default for p in policy.params}, **values}
    found: list[Read] = []
    if policy.tuning is not None:
        t = policy.tuning
        found.append(Read(DEMAND, f"the jobs' estimates to measure its candidates' plans "
                          f"(`metric {t.metric}`)", None, policy.name, t.span,
                          "or run one of its candidates alone"))
        for candidate in candidate_policies(policy):
            found += _policy_reads(candidate, values,
                                   f"{policy.name} (its candidate {candidate.name})")
    else:
        found += _policy_reads(policy, values)
    return tuple(dict.fromkeys(found))


def problems(policy: ir.Policy, values: Mapping[str, ParamValue], knowledge: str
             ) -> tuple[Diagnostic, ...]:
    """A diagnostic for each read of what a run under ``knowledge`` withholds."""
    hidden = withheld(knowledge)
    found = [r for r in reads(policy, values) if r.kinds & hidden]
    flips = _flips(policy, values) if found else {}
    return tuple(_diagnostic(r, knowledge, r.kinds & hidden,
                             [flag for flag, left in flips.items() if r not in left])
                 for r in found)


def check(policy: ir.Policy, params: Mapping[str, str] | None, knowledge: str) -> None:
    """Raise DiagnosticError, one diagnostic per read, when ``policy`` with ``params``
    bound (text, as `--param` gives them) reads what ``knowledge`` withholds."""
    from schedc.dsl.binding import bind

    if knowledge == DEFAULT:  # nothing withheld: no need to bind again
        return
    found = problems(policy, bind(policy, params), knowledge)
    if found:
        raise DiagnosticError(found)


# -- the reads of one (planning or preemptive) policy ---------------------------------------


def _policy_reads(p: ir.Policy, values: Mapping[str, ParamValue], name: str | None = None
                  ) -> Iterator[Read]:
    name = name or p.name
    for clause, e in _formulas(p):
        for node in live(e, values):
            if isinstance(node, ir.JobAttr) and node.attr in ATTR_KINDS:
                yield _attr_read(node, clause, name)
    yield from _plan_reads(p, values, name)


def _attr_read(node: ir.JobAttr, clause: str, policy: str) -> Read:
    from schedc.dsl.syntax.loader import PRELUDE

    if node.span is not None and node.span.file == PRELUDE:  # the user's own clause calls it
        return Read(ATTR_KINDS[node.attr], f"`{_text(node)}` (in a prelude definition)",
                    clause, policy, node.span, "or call a definition of your own in its "
                    "place, written without it (the prelude's is shown above)")
    return Read(ATTR_KINDS[node.attr], f"`{_text(node)}`", clause, policy, node.span)


def _formulas(p: ir.Policy) -> Iterator[tuple[str, ir.Expr]]:
    """Each formula the scheduler decides by, with its clause's name."""
    for k in p.order:
        yield "order", k.expr
    for clause, e in (("size", p.size_low), ("size", p.size),
                      ("backfill score", p.backfill.score),
                      ("backfill condition", p.backfill.condition),
                      ("reservation key", p.reserve_per),
                      ("reservation condition", p.reserve_when), ("slack", p.slack)):
        if e is not None:
            yield clause, e
    pre = p.preemption
    if pre is None:
        return
    if pre.rule is not None:
        yield "preemption rule", pre.rule
    for m in pre.mechanisms:
        if m.when is not None:
            yield "mechanism condition", m.when
    for k in pre.victims:
        yield "victims order", k.expr
    # not the costs: they are what the machine takes, not a decision
    for clause, e in (("keep", pre.keep), ("limit", pre.limit), ("resident", pre.resident),
                      ("quantum", pre.quantum), ("leftover condition", pre.leftover_when),
                      ("subset", pre.subset)):
        if e is not None:
            yield clause, e


def _plan_reads(p: ir.Policy, values: Mapping[str, ParamValue], name: str) -> Iterator[Read]:
    """The plans made with the jobs' estimates, and the choices made by their speedups."""
    if _reserves(p, values):
        yield Read(DEMAND, f"the jobs' estimates to plan its reservations "
                   f"(`{_reserve_text(p)}`)", None, name, _reserve_span(p),
                   "or make no reservations (`reserve 0`)")
        if p.slack is not None:
            yield Read(DEMAND, "the jobs' estimates to hold its reservations' slack "
                       "(`slack`)", None, name, p.slack.span, "or drop `slack`")
    if p.size_choices is not None:
        yield Read(BOTH, f"the jobs' run times at each size to choose one (`size choose "
                   f"{p.size_choices}`)", None, name, _size_span(p),
                   "or give the size by a formula (`size EXPR`)")
    pre = p.preemption
    if (pre is not None and pre.leftover == "efficient"
            and (pre.leftover_when is None or constant_value(pre.leftover_when, values)
                 is not False)):
        yield Read(SPEEDUP, "the jobs' speedups to give leftover processors to the most "
                   "efficient (`leftover efficient`)", None, name,
                   (pre.leftover_when or pre).span,
                   "or give them out equally (`leftover equal`)")


def _reserves(p: ir.Policy, values: Mapping[str, ParamValue]) -> bool:
    """Whether a pass may reserve: with `backfill none` it stops at the first job that does
    not fit, and without reservations a fit now is a fit for the whole estimate."""
    if p.backfill.kind == "none":
        return False
    depth = values[p.depth.name] if isinstance(p.depth, ir.ParamRef) else p.depth
    if depth is None or depth > 0:
        return True
    return p.reserve_when is not None and constant_value(p.reserve_when, values) is not False


def _reserve_text(p: ir.Policy) -> str:
    depth = p.depth.name if isinstance(p.depth, ir.ParamRef) else (
        "all" if p.depth is None else str(p.depth))
    extra = (" per ..." if p.reserve_per is not None else "") + (
        " or when ..." if p.reserve_when is not None else "")
    return f"reserve {depth}{extra}"


def _reserve_span(p: ir.Policy) -> Span | None:
    """The `reserve` clause if the IR kept it (a param depth), else its key or condition,
    else the `backfill` clause that makes the pass plan; in the prelude (an inlined def)
    only if nothing else is."""
    from schedc.dsl.syntax.loader import PRELUDE

    # a depth written as a number is a plain int, without a span
    spans = [getattr(n, "span", None) for n in (p.depth, p.reserve_per, p.reserve_when)]
    spans = [s for s in (*spans, p.backfill.span) if s is not None]
    return next((s for s in spans if s.file != PRELUDE), spans[0] if spans else None)


def _size_span(p: ir.Policy) -> Span | None:
    """`size choose`'s range, LOW to HIGH when both are written on one line of one file."""
    low = p.size_low.span if p.size_low is not None else None
    high = p.size.span if p.size is not None else None
    if low is None or high is None:
        return low or high
    if low.file == high.file and low.line == high.line == high.end_line and high.col > low.col:
        return Span(low.file, low.line, low.col, high.end_line, high.end_col)
    return low


# -- the walk, with branches decided by constant conditions folded -------------------------


def live(e: ir.Expr, values: Mapping[str, ParamValue]) -> Iterator[ir.Expr]:
    """The nodes of ``e`` a pass may evaluate under the param ``values``."""
    yield e
    match e:
        case ir.IfThenElse(cond=c, then=t, otherwise=o):
            taken = constant_value(c, values)
            branches: tuple[ir.Expr, ...] = (t, o) if taken is None else (t if taken else o,)
            for x in (c, *branches):
                yield from live(x, values)
        case ir.Binary(op="and" | "or", left=a, right=b):
            yield from live(a, values)
            decided = constant_value(a, values)
            # `false and X`, `true or X`: X is never evaluated (the language short-circuits)
            if decided is None or bool(decided) != (e.op == "or"):
                yield from live(b, values)
        case _:
            for x in ir.children(e):
                yield from live(x, values)


def constant_value(e: ir.Expr, values: Mapping[str, ParamValue]) -> object | None:
    """The value of ``e`` if it reads params only (None: not a constant, or no value)."""
    if not all(isinstance(n, _CONSTANT_NODES) for n in ir.walk(e)):
        return None
    try:
        return evaluate(e, Env(CONSTANT_STATE, params=values))
    except EvaluationError:  # a division by zero is the run's to report; count both ways
        return None


# -- diagnostics -----------------------------------------------------------------------------


def _flips(policy: ir.Policy, values: Mapping[str, ParamValue]) -> dict[str, set[Read]]:
    """For each bool param, as `--param NAME=VALUE` with its other value, the reads left
    with that value: a read not among them is one that value guards against."""
    out = {}
    for p in policy.params:
        if p.type == "bool" and p.name in values:
            other = not values[p.name]
            out[f"--param {p.name}={str(other).lower()}"] = set(
                reads(policy, {**values, p.name: other}))
    return out


def _diagnostic(read: Read, knowledge: str, hidden: frozenset[Kind], guards: list[str]
                ) -> Diagnostic:
    where = f" in its {read.clause}" if read.clause else ""
    names = _NAMES[hidden]
    tail = (f", the jobs' {names}, which this run withholds" if read.kinds == hidden
            else f", which depends on the jobs' {names}, withheld by this run")
    message = f"policy {read.policy} reads {read.what}{where}{tail} (--knowledge {knowledge})"
    return Diagnostic.at(read.span, message, _help(read, knowledge, hidden, guards),
                         _source_line(read.span))


def _help(read: Read, knowledge: str, hidden: frozenset[Kind], guards: list[str]) -> str:
    enough = next(k for k in KNOWLEDGE if _GIVES[k] == gives(knowledge) | read.kinds)
    run = f"run with --knowledge {enough}" + (" (or both)" if enough != "both" else "")
    if guards:
        return f"{run}, or with {' or '.join(guards)}"
    if read.fix is not None:
        return f"{run}, {read.fix}"
    flag = "demand" if "demand" in hidden else "speedup"
    return (f"{run}, or guard the read with a param: `if {flag} then ... else ...` and "
            f"--param {flag}=false")


def _text(node: ir.JobAttr) -> str:
    """The read as written (`j.estimate` in a def's body), else as the IR names it."""
    line = _source_line(node.span)
    s = node.span
    if line is not None and s is not None and s.line == s.end_line:
        return line[s.col - 1:s.end_col - 1]
    return f"{node.var}.{node.attr}"


def _source_line(span: Span | None) -> str | None:
    # the loader brings the parser: imported here, so that the CLI's options stay light
    from schedc.dsl.syntax.loader import PRELUDE, prelude_text

    if span is None or span.file != PRELUDE:
        return read_line(span)
    lines = prelude_text().split("\n")
    return lines[span.line - 1] if 0 < span.line <= len(lines) else None
