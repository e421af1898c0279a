"""Self-tuning dynP policies built by hand from the compiled planning examples (until the
language's `candidates ... metric ...` syntax is merged, this is how the engine is tested)."""

from __future__ import annotations

from functools import cache

import attrs

from schedc.dsl import compile_file, ir
from tests.support.repo import ROOT

EXAMPLES = ROOT / "examples"
PLANNING = {"conservative": "conservative.pol", "conservative_sjf": "conservative-sjf.pol",
            "conservative_ljf": "conservative-ljf.pol"}


@cache
def planning(name: str) -> ir.Policy:
    """One of the three planning examples (FCFS, SJF, LJF order) by policy name."""
    return compile_file(EXAMPLES / PLANNING[name], name)


def tuned(candidates: tuple[str, ...] = ("conservative", "conservative_sjf",
                                         "conservative_ljf"),
          metric: str = "artww", decider: str = "advanced", step: str = "submit",
          name: str = "dynp") -> ir.Policy:
    """A dynP policy as the language lowers it: its first candidate's fields, its own name,
    and the tuning."""
    cands = tuple(planning(c) for c in candidates)
    return attrs.evolve(cands[0], name=name, tuning=ir.Tuning(
        candidates=cands, metric=metric, decider=decider, step=step))
