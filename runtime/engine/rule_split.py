"""A preemption rule taken apart by side, so that a pass evaluates each job's part once.

A rule `preempt when COND` is asked for every (candidate, victim) pair of a pass: with W
waiting and R running jobs, W x R evaluations, each recomputing both jobs' attributes (an
expansion factor is an exact division). Most rules are conjunctions of comparisons between
something of the candidate and something of the victim (`cand.xfactor >= sf *
victim.xfactor`, `cand.procs == victim.procs and cand.acquired <= 0.5 * victim.acquired`).
``split_rule`` finds that form: each conjunct is a test of one job (a filter) or a
comparison of a candidate-only side with a victim-only side. The loop then computes each
job's sides once per pass (its attributes do not change within a pass while it waits or
runs) and a pair costs a few comparisons of numbers.

The same answer, pair for pair: a conjunct reading the queue, the running jobs or the
machine (which change within a pass) or both jobs at once makes the rule unsplittable and
it is asked whole, as before; conditions on params are folded first with the run's values.
A side that cannot be evaluated (a division by zero the policy wrote) sends that job's
pairs back to the whole rule, which decides (or fails) exactly as it would have.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedc.dsl import ir
from schedc.dsl.knowledge import constant_value

COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")
_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_SIDES = ("cand", "victim")


def split_rule(rule: ir.Expr, values: Mapping[str, object]) -> dict[str, Any] | None:
    """``{"cand": exprs, "victim": exprs, "checks": ((ci, op, vi), ...)}``: the pair holds
    when every check does: ``(ci, None, None)`` the candidate's value ci is true,
    ``(None, None, vi)`` the victim's value vi is, ``(ci, op, vi)`` cand[ci] op victim[vi].
    None: the rule does not split."""
    sides: dict[str, list[ir.Expr]] = {"cand": [], "victim": []}
    checks: list[tuple[int | None, str | None, int | None]] = []

    def index(side: str, e: ir.Expr) -> int:
        sides[side].append(e)
        return len(sides[side]) - 1

    for part in _conjuncts(_folded(rule, values)):
        if not _local(part):
            return None
        jobs = _jobs(part)
        if jobs <= {"cand"}:
            checks.append((index("cand", part), None, None))
        elif jobs == {"victim"}:
            checks.append((None, None, index("victim", part)))
        elif isinstance(part, ir.Binary) and part.op in COMPARISONS:
            left, right, op = part.left, part.right, part.op
            if _jobs(left) <= {"cand"} and _jobs(right) <= {"victim"}:
                checks.append((index("cand", left), op, index("victim", right)))
            elif _jobs(left) <= {"victim"} and _jobs(right) <= {"cand"}:
                checks.append((index("cand", right), _MIRROR[op], index("victim", left)))
            else:
                return None
        else:
            return None
    return {"cand": tuple(sides["cand"]), "victim": tuple(sides["victim"]),
            "checks": tuple(checks)}


def _folded(e: ir.Expr, values: Mapping[str, object]) -> ir.Expr:
    """``if C then A else B`` with C of params only, replaced by the branch taken (in and
    under conjunctions, where the split looks)."""
    match e:
        case ir.IfThenElse(cond=c, then=t, otherwise=o) if (
                taken := constant_value(c, values)) is not None:
            return _folded(t if taken else o, values)
        case ir.Binary(op="and", left=a, right=b):
            return ir.Binary("and", _folded(a, values), _folded(b, values), "bool",
                             span=e.span)
    return e


def _conjuncts(e: ir.Expr) -> list[ir.Expr]:
    if isinstance(e, ir.Binary) and e.op == "and":
        return [*_conjuncts(e.left), *_conjuncts(e.right)]
    return [e]


def _local(e: ir.Expr) -> bool:
    """Reads the two jobs, `now` and params only: nothing a pass changes as it goes."""
    return not (ir.dependencies(e) & {"queue", "running", "machine"})


def _jobs(e: ir.Expr) -> set[str]:
    """Which of `cand` and `victim` an expression reads."""
    out = set()
    for n in ir.walk(e):
        if isinstance(n, ir.JobAttr | ir.Request) and n.var in _SIDES:
            out.add(n.var)
    return out
