"""The rules a param's value obeys: one set, owned by the language. `check` applies them to
the defaults, `run` to every value it binds (`--param`, a state file's params), and `verify`
proves over exactly the values they let through (docs/reference/language.md, "Params").

1. The value has the param's type, read as the language reads a constant: `30min` is 1800,
   `1/3` is exact, `true` is a bool; an int param takes no real.
2. It lies in the param's domain `in [lo, hi]`, if it has one (the default too).
3. A param named by `reserve` is a reservation depth: every value is at least 0 (a domain's
   lower bound too); without a domain `verify` assumes so, since `run` rejects less.

`dsl/binding.py` reads values given as text and checks them by these rules.
"""

from __future__ import annotations

from fractions import Fraction

from schedc.dsl import ir
from schedc.dsl.diagnostics import Diagnostic, read_line
from schedc.dsl.number_text import show

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
