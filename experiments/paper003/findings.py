"""The paper's qualitative findings (papers/003 section 6.2), each checked from the results.

Each finding is a statistic computed the same way from the paper's Table 3 and from our
cells (our means over the seeds; ratios with a paired 95% interval, the seeds being the same
workloads), per knowledge case, and a rule stated with it that says whether our value bears
the finding out. A case whose disciplines are not all available is not checked. Verdict:
"agree" when every checked case holds, "disagree" when none does, else "partly".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from attrs import asdict, frozen

from experiments.paper003 import paper
from experiments.paper003.metrics import paired_ratio

# (discipline, case) -> the cell's per-seed values by metric, None where not available
Values = Mapping[tuple[str, str], Mapping[str, Sequence[float]] | None]


@frozen
class Check:
    case: str
    what: str  # the statistic, e.g. "LSF-PREEMPT / LSF-RTC, MRT"
    paper: float | None = None
    ours: float | None = None
    low: float | None = None  # our paired interval, where the statistic has one
    high: float | None = None
    holds: bool | None = None  # None: not checkable (a discipline not available)
    missing: tuple[str, ...] = ()


@frozen
class Finding:
    id: str
    claim: str  # the paper's words
    rule: str  # when our results bear it out
    checks: tuple[Check, ...]

    @property
    def verdict(self) -> str:
        held = [c.holds for c in self.checks if c.holds is not None]
        if not held:
            missing = sorted({m for c in self.checks for m in c.missing})
            return "not checkable yet: needs " + ", ".join(missing)
        if all(held):
            return "agree" if len(held) == len(self.checks) else \
                f"agree in the {len(held)} cases checked"
        if not any(held):
            return "disagree"
        return f"partly: {sum(held)} of {len(held)} cases"

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "claim": self.claim, "rule": self.rule,
                "verdict": self.verdict, "checks": [asdict(c) for c in self.checks]}


def _paper(name: str, case: str, metric: str) -> float:
    cell = paper.by_name(name).paper[case]
    return float((cell.mrt if metric == "mrt" else cell.makespan).value)


def _missing(values: Values, case: str, names: Sequence[str]) -> tuple[str, ...]:
    return tuple(n for n in names if values.get((n, case)) is None)


def _mean(xs: Sequence[float]) -> float:
    return math.fsum(xs) / len(xs)


def ratio_check(values: Values, case: str, a: str, b: str, metric: str,
                holds: Callable[[float, float | None, float | None], bool]) -> Check:
    """a / b of one metric: the paper's, ours with its paired interval, and the rule."""
    what = f"{a} / {b}, {'MRT' if metric == 'mrt' else 'makespan'}"
    missing = _missing(values, case, (a, b))
    if missing:
        return Check(case, what, missing=missing)
    va, vb = values[a, case], values[b, case]
    assert va is not None and vb is not None
    ours, low, high = paired_ratio(va[metric], vb[metric])
    return Check(case, what, _paper(a, case, metric) / _paper(b, case, metric), ours, low,
                 high, holds(ours, low, high))


def rtc_order_of_magnitude(values: Values) -> Finding:
    slow = [d.name for d in paper.DISCIPLINES if d.family == paper.RTC]
    fast = [d.name for d in paper.DISCIPLINES
            if d.family in (paper.MIGRATABLE, paper.MALLEABLE)]
    checks = []
    for case in paper.CASES:
        s = [n for n in slow if values.get((n, case)) is not None]
        f = [n for n in fast if values.get((n, case)) is not None]
        what = "least RTC-family MRT / largest migratable-or-malleable MRT"
        if not s or not f:
            checks.append(Check(case, what, missing=tuple(
                n for n in (slow if not s else fast) if n not in s + f)))
            continue
        ours = (min(_mean(values[n, case]["mrt"]) for n in s)  # type: ignore[index]
                / max(_mean(values[n, case]["mrt"]) for n in f))  # type: ignore[index]
        theirs = (min(_paper(n, case, "mrt") for n in s)
                  / max(_paper(n, case, "mrt") for n in f))
        checks.append(Check(case, f"{what} (over {', '.join(s + f)})", theirs, ours,
                            holds=ours >= 3))
    return Finding(
        "F1", "the response times for the run-to-completion disciplines are much higher (by "
        "up to an order of magnitude) than the migratable or malleable preemptive disciplines",
        "every available run-to-completion discipline's mean MRT is at least 3 times every "
        "available migratable or malleable one's, in the case", tuple(checks))


def rigid_preemption_no_better(values: Values) -> Finding:
    checks = tuple(ratio_check(values, case, "LSF-PREEMPT", "LSF-RTC", "mrt",
                               lambda r, low, high: not (high is not None and high < 0.9))
                   for case in paper.CASES)
    return Finding(
        "F2", "The simple preemptive, rigid discipline does not offer any advantages over the "
        "corresponding run-to-completion version",
        "LSF-PREEMPT is not more than 10% faster than LSF-RTC with 95% confidence: the paired "
        "interval of the MRT ratio does not lie wholly below 0.9", checks)


def adaptive_preemption_better(values: Values) -> Finding:
    checks = tuple(ratio_check(values, case, "LSF-PREEMPT-AD", "LSF-PREEMPT", "mrt",
                               lambda r, low, high: high is not None and high < 0.8)
                   for case in paper.CASES)
    return Finding(
        "F2b", "The adaptive preemptive discipline is considerably better in this regard",
        "LSF-PREEMPT-AD's MRT is more than 20% below LSF-PREEMPT's with 95% confidence (the "
        "paired interval of the ratio lies wholly below 0.8)", checks)


def malleable_best(values: Values) -> Finding:
    checks = []
    for case in paper.CASES:
        names = [d.name for d in paper.DISCIPLINES if values.get((d.name, case)) is not None]
        mall = [d.name for d in paper.DISCIPLINES if d.family == paper.MALLEABLE]
        what = "the discipline of least mean MRT"
        if not any(n in names for n in mall) or len(names) < 2:
            checks.append(Check(case, what, missing=tuple(
                n for n in mall if n not in names) or ("another discipline",)))
            continue
        ours = min(names, key=lambda n: _mean(values[n, case]["mrt"]))  # type: ignore[index]
        theirs = min(names, key=lambda n: _paper(n, case, "mrt"))
        checks.append(Check(case, f"{what}: ours {ours}, the paper's {theirs} (over "
                            f"{len(names)} available)", holds=ours in mall))
    return Finding(
        "F3", "adaptive malleable disciplines consistently performed best",
        "a malleable discipline has the least mean MRT of the available disciplines",
        tuple(checks))


def _reduction(r: float | None) -> float | None:
    return None if r is None else 1 - r


def subset_makespan(values: Values, rigid: str, fid: str) -> Finding:
    """1 - makespan(RTC-ADSUBSET) / makespan(``rigid``): the paper's reduction and ours."""
    checks = []
    for case in paper.CASES:
        c = ratio_check(values, case, "LSF-RTC-ADSUBSET", rigid, "makespan",
                        lambda r, low, high: True)
        if c.ours is None:
            checks.append(c)
            continue
        theirs, ours = _reduction(c.paper), _reduction(c.ours)
        assert theirs is not None and ours is not None
        checks.append(Check(case, f"makespan reduction from {rigid} to LSF-RTC-ADSUBSET",
                            theirs, ours, _reduction(c.high), _reduction(c.low),
                            abs(ours - theirs) <= 0.15))
    claim = ("In the former case [run-to-completion], makespans decreased by nearly 50% from "
             "the rigid to the adaptive variant using the subset-sum algorithm")
    if rigid != "LSF-RTC":
        claim = "(the same, read as from LSF-RTC-AD to LSF-RTC-ADSUBSET)"
    return Finding(fid, claim, "our reduction (1 - ratio of mean makespans) is within 15 "
                   "percentage points of the paper's in the case", tuple(checks))


def subset_response_higher(values: Values) -> Finding:
    checks = tuple(ratio_check(values, case, "LSF-RTC-ADSUBSET", "LSF-RTC", "mrt",
                               lambda r, low, high: r > 1) for case in paper.CASES)
    return Finding(
        "F4c", "To achieve this improvement, however, the mean response times generally "
        "increased", "LSF-RTC-ADSUBSET's mean MRT is above LSF-RTC's", checks)


def check_all(values: Values) -> list[Finding]:
    return [rtc_order_of_magnitude(values), rigid_preemption_no_better(values),
            adaptive_preemption_better(values), malleable_best(values),
            subset_makespan(values, "LSF-RTC", "F4"),
            subset_makespan(values, "LSF-RTC-AD", "F4b"), subset_response_higher(values)]
