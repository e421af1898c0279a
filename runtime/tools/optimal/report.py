"""`schedc optimal`'s output: one rich table per instance, or JSON (exact values as
decimals rounded to 6 places; ``seconds`` is wall time, the only field that varies between
runs of a proven optimum)."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from schedc.runtime.tools.optimal.outcome import Outcome


def _num(value: Fraction | None) -> float | None:
    return None if value is None else round(float(value), 6)


def gap(outcome: Outcome) -> Fraction | None:
    """(objective - bound) / objective on ARTwW; 0 when proven optimal."""
    best = outcome.value("artww", outcome.solution.weighted)
    low = outcome.value("artww", outcome.solution.bound)
    if best is None or low is None:
        return None
    return (best - low) / best if best else Fraction(0)


def instance_json(outcome: Outcome, metric: str) -> dict[str, Any]:
    sol, inst = outcome.solution, outcome.instance
    ids = {j.index: j.id for j in inst.jobs}
    return {
        "now": inst.now,
        "jobs": len(inst.jobs),
        "running": len(inst.running),
        "status": sol.status,
        "objective": _num(outcome.value("artww", sol.weighted)),
        "bound": _num(outcome.value("artww", sol.bound)),
        "gap": _num(gap(outcome)),
        "sldwa": _num(outcome.value("sldwa", sol.weighted)),
        "seconds": round(sol.seconds, 3),
        "solver": sol.solver if sol.status != "unknown" else None,
        "starts": {str(ids[i]): s for i, s in sorted(sol.starts.items(), key=lambda p: ids[p[0]])},
        "policies": {p.name: {"artww": _num(outcome.value("artww", p.weighted)),
                              "sldwa": _num(outcome.value("sldwa", p.weighted)),
                              "quality": _num(outcome.quality(metric, p))}
                     for p in outcome.plans},
    }


def print_instances(outcomes: Sequence[Outcome], metric: str, plan: bool,
                    title: str) -> None:
    from rich.table import Table

    from schedc.runtime.results.report import stdout_console

    console = stdout_console()
    for outcome in outcomes:
        data = instance_json(outcome, metric)
        head = Table(title=f"{title}: t={data['now']}, {data['jobs']} waiting jobs, "
                     f"{data['running']} running", show_header=False)
        head.add_column("field")
        head.add_column("value", justify="right")
        for key, label in (("status", "status"), ("objective", "objective (ARTwW)"),
                           ("bound", "proven lower bound"), ("gap", "gap"),
                           ("sldwa", "SLDwA"), ("seconds", "solve seconds"),
                           ("solver", "verdict by")):
            value = data[key]
            head.add_row(label, "-" if value is None else
                         f"{value:.2%}" if key == "gap" else str(value))
        console.print(head)
        table = Table(title=f"policies (quality = {metric}(optimal) / {metric}(policy))")
        for name in ("policy", "ARTwW", "SLDwA", "quality"):
            table.add_column(name, justify="left" if name == "policy" else "right")
        for name, row in data["policies"].items():
            table.add_row(name, *("-" if row[k] is None else f"{row[k]:.4f}"
                                  for k in ("artww", "sldwa", "quality")))
        console.print(table)
        if plan:
            starts = Table(title="optimal plan")
            starts.add_column("job", justify="right")
            starts.add_column("start", justify="right")
            for job, s in data["starts"].items():
                starts.add_row(job, str(s))
            console.print(starts)
