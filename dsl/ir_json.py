"""IR -> plain JSON data (for `schedc compile --emit json`): deterministic, tagged nodes."""

from __future__ import annotations

from fractions import Fraction

import attrs

from schedc.dsl import ir
from schedc.dsl.diagnostics import Span
from schedc.dsl.number_text import json_number

_SKIP = {"span", "warnings"}  # positions depend on formatting, not meaning
# left out when None or empty: a policy without preemption or `waive` reads as before
_ONLY_SET = {"preemption", "waivers"}


def to_data(obj):
    """Every attrs node becomes {"node": ClassName, field: value, ...} in field order."""
    if attrs.has(type(obj)):
        if isinstance(obj, Span):
            return obj.location()
        out = {"node": type(obj).__name__}
        for f in attrs.fields(type(obj)):
            if f.name in _SKIP and not isinstance(obj, ir.Invariant):
                continue
            if f.name in _ONLY_SET and getattr(obj, f.name) in (None, ()):
                continue
            out[f.name] = to_data(getattr(obj, f.name))
        return out
    if isinstance(obj, tuple | list):
        return [to_data(x) for x in obj]
    if isinstance(obj, Fraction):  # an exact real: a JSON number if one reads back as it
        return json_number(obj)
    return obj


def policy_to_json(policy: ir.Policy) -> dict:
    return to_data(policy)
