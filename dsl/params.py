"""The rules a param's value obeys: one set, owned by the language. `check` applies them to
the defaults, `run` to every value it binds (`--param`, a state file's params), and `verify`
proves over exactly the values they let through (docs/reference/language.md, "Params").

1. The value has the param's type, read as the language reads a constant: `30min` is 1800,
   `1/3` is exact, `true` is a bool; an int param takes no real.
2. It lies in the param's domain `in [lo, hi]`, if it has one (the default too).
3. A param named by `reserve` is a reservation depth: every value is at least 0 (a domain's
   lower bound too); without a domain `verify` assumes so, since `run` rejects less.
4. A preemptive policy's constant settings (`limit preemptions`, `resident`, `quantum`,
   `subset`, a `cost` that reads no job, and `leftover efficient when`'s condition, which
   must only have a value: ``SETTINGS``) lie in their ranges for the values
   bound (`run`), and for every value the params' domains allow (`check`: a param without
   a domain, at its default). Each problem is located at the setting's formula.

`dsl/binding.py` reads values given as text and checks them by these rules.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from fractions import Fraction

from attrs import frozen

from schedc.dsl import ir
from schedc.dsl.diagnostics import Diagnostic, read_line
from schedc.dsl.number_text import MAX_TIME, short, show
from schedc.dsl.semantics.evaluate import Env, EvaluationError, evaluate
from schedc.dsl.semantics.pass_state import CONSTANT_STATE

ParamValue = int | Fraction | bool


def depth_param(policy: ir.Policy) -> str | None:
    """The param that is the policy's reservation depth (`reserve NAME`), if any."""
    return policy.depth.name if isinstance(policy.depth, ir.ParamRef) else None


def value_problem(p: ir.Param, value: ParamValue, depth: bool) -> tuple[str, str] | None:
    """What is wrong with ``value`` for ``p`` (a message and a help line), or None.
    ``depth``: ``p`` is the reservation depth of the policy at hand (rule 3)."""
    if p.lo is not None and not p.lo <= value <= p.hi:
        return (f"value {show(value)} for param `{p.name}` is outside its domain "
                f"[{show(p.lo)}, {show(p.hi)}]",
                f"choose a value between {show(p.lo)} and {show(p.hi)}")
    if depth and value < 0:
        return (f"value {show(value)} for param `{p.name}` is negative, but `{p.name}` is a "
                f"reservation depth (`reserve {p.name}`)",
                "a depth is at least 0 (0: no reservation)")
    return None


def located(p: ir.Param, message: str, help: str) -> Diagnostic:
    """A diagnostic at ``p``'s declaration, with its source line when the file is readable."""
    return Diagnostic.at(p.span, message, help, read_line(p.span))


# -- rule 4: a preemptive policy's constant settings ------------------------------------------

@frozen
class Setting:
    """The range of one setting of ``ir.Preemption`` (its field ``name``), as written."""

    name: str
    text: str  # as the policy writes it: `limit preemptions`
    lo: int
    hi: int | None
    meaning: str  # what the range means: the help line of a value outside it


_SECONDS = "seconds from 0 to 10^15, the times schedc holds exactly (docs/reference/limits.md)"
SETTINGS = {s.name: s for s in (
    Setting("limit", "limit preemptions", 0, None,
            "a job is preempted at most this many times: 0 or more (0: no job is ever "
            "preempted)"),
    Setting("resident", "resident", 1, None,
            "the most jobs with processes on one processor, the running one included: 1 or "
            "more (1: a suspended job keeps its processors from every other job)"),
    Setting("quantum", "quantum", 0, MAX_TIME,
            "seconds between timed passes while jobs wait, from 1 to 10^15 (0: no timed "
            "pass, as without `quantum`)"),
    Setting("subset", "subset", 1, None, "the paper's delta: a whole number 1 or more (the "
            "paper's 5)"),
    Setting("dispatch", "cost dispatch", 0, MAX_TIME, _SECONDS),
    Setting("resume", "cost resume", 0, MAX_TIME, _SECONDS),
    Setting("checkpoint", "cost checkpoint", 0, MAX_TIME, _SECONDS),
    # a bool (0 or 1): only a formula that fails is out of its range
    Setting("leftover_when", "leftover efficient when", 0, 1,
            "the condition chooses how each pass gives out leftover processors: it must "
            "have a value, true or false"),
)}


def constant_settings(p: ir.Preemption) -> Iterator[tuple[Setting, ir.Expr]]:
    """The settings of ``p`` that read params at most (a cost that reads the job is
    checked where the run evaluates it: ``runtime/engine/preemptive.py``)."""
    for s in SETTINGS.values():
        e = getattr(p, s.name)
        if e is not None and ir.dependencies(e) <= {"param"}:
            yield s, e


def range_text(s: Setting) -> str:
    hi = "10^15" if s.hi == MAX_TIME else None if s.hi is None else show(s.hi)
    return f"at least {s.lo}" if hi is None else f"from {s.lo} to {hi}"


def setting_problem(s: Setting, e: ir.Expr, values: Mapping[str, ParamValue],
                    whose: str = "") -> str | None:
    """What is wrong with setting ``s`` (formula ``e``) at the params' ``values``: its value
    out of range, or none at all; None if nothing is. ``whose``: where the values come from,
    said after them."""
    try:
        value = evaluate(e, Env(CONSTANT_STATE, params=values))
    except EvaluationError as err:
        return f"`{s.text}` has no value{_with(e, values)}{whose}: {err}"
    if value < s.lo or (s.hi is not None and value > s.hi):
        return (f"`{s.text}` is {_text(value)}{_with(e, values)}{whose}: it must be "
                f"{range_text(s)}")
    return None


def bound_settings(policy: ir.Policy, values: Mapping[str, ParamValue]) -> list[Diagnostic]:
    """Rule 4 at the values a run binds: each setting out of range, at its formula."""
    if policy.preemption is None:
        return []
    out = []
    for s, e in constant_settings(policy.preemption):
        problem = setting_problem(s, e, values)
        if problem is not None:
            out.append(Diagnostic.at(e.span, problem, s.meaning, read_line(e.span)))
    return out


# `check` tries every value of an int param with at most this many, and at most this many
# combinations of the params one setting reads; beyond, the ends, the default and 0 and +-1
_EVERY_VALUE = 256
_COMBINATIONS = 4096


def domain_problem(s: Setting, e: ir.Expr, params: Mapping[str, ir.Param]
                   ) -> tuple[str, str] | None:
    """Rule 4 at `check`: a value of ``e`` out of range for values the params' domains allow
    (a param without a domain: its default), as (message, help); None if none is found.
    Every int param of a small domain is tried whole; other domains at their ends, their
    default and 0, 1, -1 (where formulas turn): `run` checks the values it binds anyway."""
    names = dict.fromkeys(n.name for n in ir.walk(e) if isinstance(n, ir.ParamRef))
    if not all(n in params for n in names):
        return None  # a param with a faulty declaration: already reported
    read = [params[n] for n in names]
    choices = [_tried(p, every=True) for p in read]
    if _count(choices) > _COMBINATIONS:
        choices = [_tried(p, every=False) for p in read]
    for combo in itertools.islice(itertools.product(*choices), _COMBINATIONS):
        values = {p.name: v for p, v in zip(read, combo, strict=True)}
        if setting_problem(s, e, values) is None:
            continue
        chosen = [p for p in read if values[p.name] != p.default]
        if not chosen:  # the defaults
            whose = " (the default" + ("s" if len(read) > 1 else "") + ", " + ", ".join(
                f"`{p.name}` at {_declared(p)}" for p in read) + ")" if read else ""
            return (setting_problem(s, e, values, whose) or "",
                    s.meaning + (": change the formula or the default" if read else ""))
        whose = " (" + "; ".join(_allows(p) for p in chosen) + ")"
        fix = ("narrow the domain, or change the formula"
               if any(p.type != "bool" for p in chosen) else "change the formula")
        return setting_problem(s, e, values, whose) or "", f"{s.meaning}: {fix}"
    return None


def _declared(p: ir.Param) -> str:
    return p.span.location() if p.span is not None else "its declaration"


def _allows(p: ir.Param) -> str:
    """Which declaration lets a param take the value tried: its domain, or its type."""
    if p.type == "bool":
        return f"`{p.name}` at {_declared(p)} is a bool"
    return f"the domain [{show(p.lo)}, {show(p.hi)}] of `{p.name}` at {_declared(p)}"


def _tried(p: ir.Param, every: bool) -> list[ParamValue]:
    if p.type == "bool":
        return [p.default, not p.default]
    if p.lo is None or p.hi is None:
        return [p.default]
    if every and p.type == "int" and p.hi - p.lo < _EVERY_VALUE:
        values = [p.default, *range(int(p.lo), int(p.hi) + 1)]
    else:
        values = [p.default, p.lo, p.hi, *(v for v in (0, 1, -1) if p.lo <= v <= p.hi)]
        if p.type == "int":
            values += [v for v in (p.lo + 1, p.hi - 1) if p.lo <= v <= p.hi]
    return list(dict.fromkeys(Fraction(v) if p.type == "real" else v for v in values))


def _count(choices: list[list[ParamValue]]) -> int:
    n = 1
    for c in choices:
        n *= len(c)
    return n


def _with(e: ir.Expr, values: Mapping[str, ParamValue]) -> str:
    """` with lim = 3, c = 1/2`: the params ``e`` reads, at ``values``."""
    names = dict.fromkeys(n.name for n in ir.walk(e) if isinstance(n, ir.ParamRef))
    shown = [f"`{n}` = {_text(values[n])}" for n in names if n in values]
    return f" with {', '.join(shown)}" if shown else ""


def _text(v: ParamValue) -> str:
    """A value for a message: 1e+300, not three hundred digits."""
    if isinstance(v, bool):
        return str(v).lower()
    if abs(v) <= MAX_TIME:
        return short(show(v))
    try:
        return f"{float(v):.6g}"
    except OverflowError:
        return short(show(v))
