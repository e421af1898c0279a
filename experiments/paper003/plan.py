"""What the Table 3 harness simulates: the shared setup, the policies found, the tasks.

A discipline is available when its policy file exists and compiles; the knowledge params it
declares (`demand`, `speedup`, both bool) say which runs it needs: one per distinct binding of
the params it declares, each on every seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attrs import frozen

from experiments.common import ROOT, ExperimentError, one_line, sha256, shown
from experiments.paper003 import paper
from schedc.dsl import DiagnosticError, compile_file
from schedc.dsl.binding import bind as bind_params
from schedc.dsl.number_text import json_number
from schedc.runtime.run import check_knowledge


@frozen
class Setup:
    """What every run of one table shares."""

    mean_interarrival: float  # seconds
    jobs: int  # the stream's first length
    max_jobs: int
    tagged: int


@frozen
class Available:
    """A discipline whose policy file exists and compiles."""

    discipline: paper.Discipline
    path: str
    policy_name: str
    declared: tuple[str, ...]  # the knowledge params it declares, in KNOWLEDGE_PARAMS order
    params: dict[str, Any]  # every param's default
    sha256: str
    # per case: what the policy, bound for the case, reads that the case withholds
    # (`schedc run --knowledge`), one line; the runs go on, told everything, and say so
    knowledge_problems: dict[str, str]

    def binding(self, case: str) -> tuple[tuple[str, str], ...]:
        """The params a case binds: only those the policy declares."""
        return tuple((p, str(paper.KNOWLEDGE[case][p]).lower()) for p in self.declared)


@frozen
class Task:
    discipline: str
    path: str
    binding: tuple[tuple[str, str], ...]
    seed: int
    setup: Setup

    @property
    def key(self) -> str:
        return f"{self.discipline} [{binding_text(self.binding)}] seed={self.seed}"


def binding_text(binding: tuple[tuple[str, str], ...]) -> str:
    return " ".join(f"{k}={v}" for k, v in binding) or "no knowledge params"


def runs_of(available: Available) -> dict[str, tuple[tuple[str, str], ...]]:
    """Each case's binding; cases with the same binding share one run."""
    return {case: available.binding(case) for case in paper.CASES}


def knowledge_of(declared: Sequence[str]) -> dict[tuple[tuple[str, str], ...], str]:
    """Each distinct binding of the ``declared`` knowledge params, with the first (least)
    case that binds it: what a policy with that binding should read no more than."""
    known: dict[tuple[tuple[str, str], ...], str] = {}
    for case in paper.CASES:
        binding = tuple((p, str(paper.KNOWLEDGE[case][p]).lower()) for p in declared)
        known.setdefault(binding, case)
    return known


def plan(availables: Sequence[Available], seeds: Sequence[int], setup: Setup) -> list[Task]:
    tasks = []
    for a in availables:
        for binding in knowledge_of(a.declared):  # distinct, in case order
            tasks += [Task(a.discipline.name, a.path, binding, s, setup) for s in seeds]
    return tasks


def discover(disciplines: Sequence[paper.Discipline], folder: Path
             ) -> tuple[list[Available], dict[str, str]]:
    """The disciplines whose files exist and compile, and why each other one is not
    available (its file under ``folder``, default the repository root)."""
    availables, missing = [], {}
    for d in disciplines:
        path = folder / d.file
        if not path.is_file():
            missing[d.name] = f"not available yet: {shown(str(path))} does not exist"
            continue
        try:
            availables.append(_available(d, path))
        except DiagnosticError as exc:
            missing[d.name] = f"not available: {shown(str(path))} does not compile: " \
                              f"{portable(one_line(exc))}"
    return availables, missing


def _available(d: paper.Discipline, path: Path) -> Available:
    ir = compile_file(str(path))
    types = {p.name: p.type for p in ir.params}
    declared = tuple(p for p in paper.KNOWLEDGE_PARAMS if p in types)
    for p in declared:
        if types[p] != "bool":
            raise ExperimentError(f"{shown(str(path))}: param {p} is {types[p]}, the harness "
                                  "binds it true or false: declare it `bool`")
    params = {k: json_number(v) for k, v in bind_params(ir, {}).items()}
    problems = {}
    for case in paper.CASES:
        binding = {p: str(paper.KNOWLEDGE[case][p]).lower() for p in declared}
        try:
            check_knowledge(ir, binding, case)
        except DiagnosticError as exc:
            problems[case] = portable(one_line(exc))
    return Available(d, str(path), ir.name, declared, params, sha256(str(path)), problems)


def portable(message: str) -> str:
    """A message with the repository's own paths relative to it, as results show paths."""
    return message.replace(f"{ROOT}/", "")


def select(names: Sequence[str] | None) -> list[paper.Discipline]:
    if not names:
        return list(paper.DISCIPLINES)
    known = {d.name: d for d in paper.DISCIPLINES}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ExperimentError(f"unknown discipline {unknown[0]!r}: give names of Table 3 "
                              f"({', '.join(known)})")
    return [d for d in paper.DISCIPLINES if d.name in set(names)]  # the table's order


