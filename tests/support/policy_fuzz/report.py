"""Reports: a disagreement described for a person, the commands that show it, its evidence
folder, and a campaign's figures (``tally``)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from schedc.runtime.workloads.state_file import param_text
from tests.support.vacuity import VACUOUS

from .kinds import KINDS
from .records import STATED_BOUNDS, Disagreement, HarnessConfig, PolicyResult


def evidence_name(d: Disagreement) -> str | None:
    """The file the evidence is written to (next to ``policy.pol``)."""
    if d.evidence.state is not None:
        return "state.json"
    return "workload.csv" if d.evidence.workload_csv is not None else None


def commands(d: Disagreement, config: HarnessConfig | None = None,
             policy: str = "policy.pol", name: str | None = None,
             preemptive: bool = False, verify_flags: str = "") -> list[str]:
    """The `schedc` commands that show the disagreement (run from the evidence folder).
    ``name``: the policy to pick when the file defines several (a dynP policy's);
    ``preemptive``: a preemptive policy's (its bounds, ``verify_flags`` or 8 processors, the
    default rlimit)."""
    from .kinds import bounds_for

    cfg = config or HarnessConfig()
    if name is not None:
        policy += f" --policy {name}"
    flags = verify_flags or "--processors 8"
    n, r = bounds_for(int(flags.split()[1]), cfg.preemptive_bounds) if preemptive \
        else cfg.bounds
    verify = f"schedc verify {policy} --queued {n} --running {r} " + (
        flags if preemptive else f"--rlimit {cfg.rlimit}")
    ev = d.evidence
    if d.kind == "counterexample":
        verify += " --counterexamples cex"
    if ev.state is not None:
        run = f"schedc run {policy} --state state.json"
    elif ev.workload_csv is not None:
        run = f"schedc run {policy} --workload workload.csv" + "".join(
            f" --param {k}={param_text(v)}" for k, v in sorted(ev.params.items())) + (
            f" {ev.run_flags}" if ev.run_flags else "")
    else:
        return [verify]
    return [verify, run]


def describe(result: PolicyResult, d: Disagreement, config: HarnessConfig | None = None,
             with_policy: bool = True) -> str:
    """One disagreement, for a person: what disagrees, the evidence, how to see it."""
    ev = d.evidence
    verdict = result.status(d.property) or "-"
    lines = [f"[{d.category}] {d.kind}: {d.property} (verdict: {verdict})",
             f"  seed: {result.seed}  policy: {result.name}",
             f"  run: {ev.source}", f"  params: {ev.params}",
             f"  monitor: {ev.message or '(no stop)'}"]
    if d.note:
        lines.append(f"  triage: {d.note}")
    if ev.queued is not None:
        lines.append(f"  at the failure: {ev.queued} queued, {ev.running} running")
    several = "tuned" in result.features  # the file defines the candidates too
    lines += [f"  $ {c}" for c in commands(d, config, name=result.name if several else None,
                                           preemptive=result.preemptive,
                                           verify_flags=result.verify_flags)]
    if with_policy:
        lines += ["  policy.pol:"] + [f"    {x}" for x in result.text.rstrip().splitlines()]
    if ev.state is not None:
        text = json.dumps(ev.state)
        lines.append("  state.json: " + (text if len(text) <= 2000 else text[:2000] + " ..."))
    elif ev.workload_csv is not None:
        head = ev.workload_csv.splitlines()
        lines += ["  workload.csv (head):"] + [f"    {x}" for x in head[:8]]
        if len(head) > 8:
            lines.append(f"    ... {len(head) - 8} more lines")
    return "\n".join(lines)


def report(result: PolicyResult, config: HarnessConfig | None = None) -> str:
    """Every disagreement of ``result`` (the policy printed once)."""
    if result.compile_error:
        return f"seed {result.seed}: the generator made an invalid policy\n{result.text}\n" \
            f"{result.compile_error}"
    parts = [f"seed {result.seed}: {len(result.disagreements)} disagreement(s)",
             result.text.rstrip()]
    parts += [describe(result, d, config, with_policy=False) for d in result.disagreements]
    return "\n\n".join(parts)


def write_evidence(folder: Path, result: PolicyResult, d: Disagreement,
                   config: HarnessConfig | None = None) -> None:
    """``folder``/policy.pol, the evidence (state.json or workload.csv) and README.txt."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "policy.pol").write_text(result.text)
    name = evidence_name(d)
    if name == "state.json":
        (folder / name).write_text(json.dumps(d.evidence.state, indent=2) + "\n")
    elif name == "workload.csv":
        (folder / name).write_text(d.evidence.workload_csv or "")
    (folder / "README.txt").write_text(describe(result, d, config, with_policy=False) + "\n")


def tally(results: Sequence[PolicyResult]) -> dict[str, Any]:
    """Campaign figures: verdicts by property and status, disagreements by category. The
    verdicts, simulations and stops are the rigid policies'; "preemptive" gives the
    preemptive policies' apart (their verdicts, replayed states, what the replays stopped
    for, disagreements); "policies" and "disagreements" count both kinds."""
    verdicts: dict[str, dict[str, int]] = {}
    categories: dict[str, int] = {}
    rigid = [r for r in results if not r.preemptive]
    for r in rigid:
        _count_verdicts(verdicts, r)
    for r in results:
        for d in r.disagreements:
            categories[d.category] = categories.get(d.category, 0) + 1
    # a stop beyond the bounds a proof states is reported, not counted as a disagreement
    counted = [d for r in results for d in r.disagreements if d.category != STATED_BOUNDS]
    return {
        "policies": len(results),
        "invalid": sum(r.compile_error is not None for r in results),
        "verdicts": verdicts,
        "unknown": sum(r.unknown for r in results),
        "disagreements": len(counted),
        "policies_disagreeing": len({id(r) for r in results for d in r.disagreements
                                     if d.category != STATED_BOUNDS}),
        "beyond_stated_bounds": categories.get(STATED_BOUNDS, 0),
        # the vacuity check ran on every verified policy's verdicts: proofs of no state the
        # prover called proved (failures, also in by_category), and those it called vacuous
        "vacuity": {"policies_checked": sum(bool(r.verdicts) for r in results),
                    "proved_but_vacuous": categories.get(VACUOUS, 0),
                    "vacuous_verdicts": sum(v.status == "vacuous" for r in results
                                            for v in r.verdicts)},
        "by_category": dict(sorted(categories.items())),
        "simulations": sum(r.simulations for r in rigid),
        "out_of_budget": sum(r.out_of_budget for r in rigid),
        "agreed_stops": sum(r.agreed_stops for r in rigid),
        "rigid_policies": len(rigid),
        "preemptive": _preemptive_tally([r for r in results if r.preemptive]),
    }


def _count_verdicts(table: dict[str, dict[str, int]], r: PolicyResult) -> None:
    for v in r.verdicts:
        name = "invariant" if v.property.startswith("invariant") else v.property
        row = table.setdefault(name, {"proved": 0, "violated": 0, "vacuous": 0, "unknown": 0})
        row[v.status] = row.get(v.status, 0) + 1


def _preemptive_tally(results: Sequence[PolicyResult]) -> dict[str, Any]:
    """The preemptive policies' figures (``preemptive.fuzz_preemptive``'s results)."""
    verdicts: dict[str, dict[str, int]] = {}
    for r in results:
        _count_verdicts(verdicts, r)
    return {
        "policies": len(results),
        "invalid": sum(r.compile_error is not None for r in results),
        "skipped": sum(r.skipped == "not encoded" for r in results),
        # refused by `check` as they must be (a setting the params make non-positive)
        "refused_by_check": sum(r.skipped == "refused by check" for r in results),
        # the classes of issue 44 drawn (``kinds.py``), policies of each; P of each machine
        "kinds": {k: sum(k in r.features for r in results) for k in KINDS},
        "processors": dict(sorted(Counter(int(r.verify_flags.split()[1]) for r in results
                                          if r.verify_flags).items())),
        "verdicts": verdicts,
        "unknown": sum(r.unknown for r in results),
        # why: the first words of each unknown verdict's reason
        "unknown_reasons": dict(Counter(" ".join((v.reason or "").split()[:12])
                                        for r in results for v in r.verdicts
                                        if v.status == "unknown").most_common()),
        # states replayed and workloads run (``preemptive.RUNS`` each)
        "replays": sum(r.simulations for r in results),
        "replay_stops_agreeing": sum(r.agreed_stops for r in results),
        "disagreements": sum(len(r.disagreements) for r in results),
        "seeds_disagreeing": [r.seed for r in results if r.disagreements],
    }
