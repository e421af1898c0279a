"""The results of papers/003's Table 3 as JSON, Markdown and a figure.

Cells are (discipline, knowledge case). A cell's runs are its binding's (a policy that does
not declare a knowledge param has the same runs in the cases that differ only in it: the
cell says which case it shares them with).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from experiments.common import WALL_KEY, row, save_figure
from experiments.paper003 import findings, paper
from experiments.paper003.metrics import share_at_most, summarise
from experiments.paper003.plan import Available, Task, binding_text, knowledge_of, runs_of

METRICS = ("mrt", "makespan")
TITLES = {"mrt": "mean response time (s)", "makespan": "makespan (s)"}


# --- results.json ------------------------------------------------------------------------


def _paper_entry(cell: paper.PaperCell) -> dict[str, Any]:
    return {m: {"value": v.value, "lower_bound": v.bound, "unfinished": v.unfinished}
            for m, v in (("mrt", cell.mrt), ("makespan", cell.makespan))}


def _discipline_entry(d: paper.Discipline, available: Available | None,
                      why: str | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": d.name, "file": d.file, "family": d.family,
                             "adaptive": d.adaptive, "available": available is not None}
    if available is None:
        return {**entry, "reason": why}
    return {**entry, "policy": available.policy_name, "sha256": available.sha256,
            "knowledge_params": list(available.declared), "params": available.params,
            "runs": {case: binding_text(b) for case, b in runs_of(available).items()},
            "knowledge": {binding_text(b): k for b, k in knowledge_of(available.declared).items()},
            "knowledge_problems": available.knowledge_problems}


def _per_seed(tasks: Sequence[Task], outcomes: Mapping[str, dict[str, Any]]
              ) -> list[dict[str, Any]]:
    rows = []
    for t in sorted(tasks, key=lambda t: t.seed):
        o = outcomes[t.key]
        rows.append({"seed": t.seed, **{k: v for k, v in o.items() if k not in ("key", "wall")}})
    return rows


def _cell(a: Available, case: str, tasks: Sequence[Task],
          outcomes: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    runs = runs_of(a)
    shared = next(c for c in paper.CASES if runs[c] == runs[case])
    mine = [t for t in tasks if t.discipline == a.discipline.name and t.binding == runs[case]]
    seeds = _per_seed(mine, outcomes)
    ok = [s for s in seeds if "error" not in s]
    theirs = a.discipline.paper[case]
    cell: dict[str, Any] = {
        "discipline": a.discipline.name, "case": case, "binding": binding_text(runs[case]),
        "same_runs_as": None if shared == case else shared, "knowledge": shared,
        "reads_more": a.knowledge_problems.get(case),
        "paper": _paper_entry(theirs),
        "per_seed": seeds, "failed": [s["error"] for s in seeds if "error" in s],
        "streams_not_covering": sum(1 for s in ok if not s["covered"])}
    for metric, value in (("mrt", theirs.mrt.value), ("makespan", theirs.makespan.value)):
        values = [s[metric] for s in ok]
        cell[metric] = summarise(values).to_json() if values and not cell["failed"] else None
        cell[f"{metric}_share_at_most_paper"] = (
            share_at_most(values, value) if values and not cell["failed"] else None)
    return cell


def build_results(parameters: dict[str, Any], availables: Sequence[Available],
                  missing: Mapping[str, str], tasks: Sequence[Task],
                  outcomes: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """Everything in a fixed order; only the WALL_KEY part differs between reruns."""
    by_name = {a.discipline.name: a for a in availables}
    shown_disciplines = [d for d in paper.DISCIPLINES if d.name in by_name or d.name in missing]
    cells = [_cell(a, case, tasks, outcomes) for a in availables for case in paper.CASES]
    results = {
        "experiment": "papers/003 Table 3: mean response time and makespan of the first "
                      f"{parameters['tagged']} jobs of a Poisson stream, per discipline and "
                      "knowledge case",
        "metrics": {"mrt": "mean of end - submit over the tagged jobs (s)",
                    "makespan": "last tagged completion - first tagged submit (s): the "
                                "paper's 'maximum completion time ... assuming that the first "
                                "job arrives at time zero'",
                    "share_at_most_paper": "the fraction of our seeds whose value is at most "
                                           "the paper's: where its one experiment falls "
                                           "among ours"},
        "parameters": parameters,
        "disciplines": [_discipline_entry(d, by_name.get(d.name), missing.get(d.name))
                        for d in shown_disciplines],
        "cells": cells,
        "findings": [f.to_json() for f in findings.check_all(finding_values(cells))],
        WALL_KEY: {t.key: round(outcomes[t.key]["wall"], 3) for t in tasks},
    }
    return results


def finding_values(cells: Sequence[dict[str, Any]]) -> findings.Values:
    """Per (discipline, case) the per-seed MRT and makespan (in seed order), or None."""
    values: dict[tuple[str, str], dict[str, list[float]] | None] = {}
    for c in cells:
        if c["failed"]:
            values[c["discipline"], c["case"]] = None
            continue
        values[c["discipline"], c["case"]] = {m: [s[m] for s in c["per_seed"]] for m in METRICS}
    return values


def failures(results: dict[str, Any]) -> tuple[int, list[str]]:
    """How many runs failed (each once, though cells may share runs), and the distinct
    messages."""
    runs, messages = set(), {}
    for c in results["cells"]:
        for s in c["per_seed"]:
            if "error" in s:
                runs.add((c["discipline"], c["binding"], s["seed"]))
                messages[s["error"]] = None
    return len(runs), list(messages)


# --- results.md --------------------------------------------------------------------------


def _n(x: float | None) -> str:
    return "–" if x is None else f"{x:,.0f}"


def _paper_text(entry: dict[str, Any]) -> str:
    if not entry["lower_bound"]:
        return f"{entry['value']:,}"
    more = f" ({entry['unfinished']})" if entry["unfinished"] else ""
    return f"> {entry['value']:,}{more}"


def _ours(cell: dict[str, Any], metric: str) -> str:
    s = cell[metric]
    if s is None:
        return "failed"
    text = f"{s['mean']:,.0f} [{_n(s['ci_low'])}, {_n(s['ci_high'])}]"
    if cell["same_runs_as"]:
        text += f" (= {cell['same_runs_as']})"
    return text + " †" if cell["reads_more"] else text


def _compact(results: dict[str, Any], metric: str) -> list[str]:
    cells = {(c["discipline"], c["case"]): c for c in results["cells"]}
    head = ["discipline"] + [f"{paper.CASE_TITLES[c]}: {w}" for c in paper.CASES
                             for w in ("ours", "paper")]
    lines = [row(head), row(["---"] * len(head))]
    for d in results["disciplines"]:
        if not d["available"]:
            lines.append(row([d["name"], "not available", *(["–"] * (len(head) - 2))]))
            continue
        out = [d["name"]]
        for case in paper.CASES:
            c = cells[d["name"], case]
            out += [_ours(c, metric), _paper_text(c["paper"][metric])]
        lines.append(row(out))
    return lines


def _detail(results: dict[str, Any]) -> list[str]:
    head = ["discipline", "case", "run", "MRT paper", "MRT median", "MRT mean [95% CI]",
            "seeds <= paper", "makespan paper", "makespan median", "makespan mean [95% CI]",
            "seeds <= paper", "stream lengths"]
    lines = [row(head), row(["---"] * len(head))]
    for c in results["cells"]:
        out = [c["discipline"], c["case"], c["binding"]]
        for m in METRICS:
            s, share = c[m], c[f"{m}_share_at_most_paper"]
            out += [_paper_text(c["paper"][m]), "failed" if s is None else _n(s["median"]),
                    "failed" if s is None else _ours({**c, "same_runs_as": None}, m),
                    "–" if share is None else f"{share:.0%}"]
        jobs = sorted({s["jobs"] for s in c["per_seed"] if "jobs" in s})
        out.append(", ".join(map(str, jobs)) or "–")
        lines.append(row(out))
    return lines


def _findings(results: dict[str, Any]) -> list[str]:
    lines = []
    for f in results["findings"]:
        lines += [f"**{f['id']}.** \"{f['claim']}\"", "",
                  f"Rule: {f['rule']}. **Verdict: {f['verdict']}.**", ""]
        checkable = [c for c in f["checks"] if c["holds"] is not None]
        if not checkable:
            continue
        lines += [row(["case", "statistic", "paper", "ours", "ours 95% CI", "holds"]),
                  row(["---"] * 6)]
        for c in checkable:
            ci = "–" if c["low"] is None else f"[{c['low']:.2f}, {c['high']:.2f}]"
            lines.append(row([c["case"], c["what"], _ratio(c["paper"]), _ratio(c["ours"]), ci,
                              "yes" if c["holds"] else "no"]))
        lines.append("")
    return lines


def _knowledge(results: dict[str, Any]) -> list[str]:
    """The cells whose policy reads what their case withholds."""
    lines = [f"- {c['discipline']}, {c['case']}: {c['reads_more']}" for c in results["cells"]
             if c["reads_more"]]
    if not lines:
        return ["Every policy, bound for each case, reads nothing the case withholds "
                "(`schedc run --knowledge CASE` accepts it).", ""]
    return ["†: the policy, bound for this case, reads what the case withholds (`schedc run "
            "--knowledge CASE` refuses it); its runs went on, told everything, so the cell "
            "measures more knowledge than its column says:", "", *lines, ""]


def _ratio(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


def _params(results: dict[str, Any]) -> list[str]:
    lines = [row(["discipline", "file", "knowledge params", "params (defaults)"]),
             row(["---"] * 4)]
    for d in results["disciplines"]:
        if d["available"]:
            params = ", ".join(f"{k}={_value(v)}" for k, v in d["params"].items())
            lines.append(row([d["name"], f"`{d['file']}`",
                              ", ".join(d["knowledge_params"]) or "none", params]))
    return lines


def _value(v: object) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def markdown(results: dict[str, Any]) -> str:
    p = results["parameters"]
    missing = [f"- {d['name']}: {d['reason']}" for d in results["disciplines"]
               if not d["available"]]
    lines = [
        "# Paper 003, Table 3: LSF disciplines under four knowledge cases", "",
        f"{len(p['seeds'])} seeds ({p['seeds'][0]}..{p['seeds'][-1]}), one workload each "
        f"(`{p['workload']['command']}`, the seed varied); the first {p['tagged']} jobs "
        f"measured; streams of {p['jobs']} jobs, doubled (up to {p['max_jobs']}) while the "
        f"last arrival comes before the last tagged completion. Mean inter-arrival "
        f"{p['mean_interarrival']:g} s"
        + (" (calibrated on LSF-MIG, no knowledge: see calibration.json)" if p["calibrated"]
           else " (not the calibrated default)")
        + f": offered load {p['load_request']:.3f} at the requested sizes, "
        f"{p['load_minimum']:.3f} at the minimum sizes. The tagged jobs arrive over "
        f"{p['tagged_arrival_span']['mean']:,.0f} s on average (last minus first submit; "
        f"{p['tagged_arrival_span']['min']:,.0f} to {p['tagged_arrival_span']['max']:,.0f} s): "
        "no makespan is shorter. The paper's least makespan, "
        f"{paper.PAPER_MINIMUM_MAKESPAN:,} s, bounds its own.", "",
        "Ours: the mean over the seeds [its 95% Student t interval]; `(= none)`: the policy "
        "does not declare this case's knowledge param, so the cell is the same runs as that "
        "case. The paper's values are one experiment each; `>`: a lower bound, "
        "(n) tagged jobs unfinished.", ""]
    if missing:
        lines += ["Not available:", "", *missing, ""]
    for metric in METRICS:
        lines += [f"## {TITLES[metric].capitalize()}", "", *_compact(results, metric), ""]
    lines += ["## Every cell", "",
              "`seeds <= paper`: the share of our seeds at or below the paper's value (its "
              "one experiment's rank among ours: near 0% or 100% is unusual under our model).",
              "", *_detail(results), "", "## Knowledge check", "", *_knowledge(results),
              "## The paper's findings", "", *_findings(results),
              "## Policies and their settings", "", *_params(results)]
    return "\n".join(lines) + "\n"


# --- figure.png --------------------------------------------------------------------------


def write_figure(results: dict[str, Any], path: Path) -> bool:
    """Per metric a panel: per discipline, per case, our mean with its interval (and the
    median, a dash) beside the paper's value (a cross; a triangle for a lower bound)."""
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [d["name"] for d in results["disciplines"] if d["available"]]
    if not names:
        return False
    fig, axes = plt.subplots(2, 1, figsize=(max(6.0, 1.3 * len(names) + 2), 8.0))
    for ax, metric in zip(axes, METRICS, strict=True):
        _panel(ax, results, names, metric)
    fig.legend(*axes[0].get_legend_handles_labels(), fontsize=7, ncol=4, loc="lower center")
    p = results["parameters"]
    fig.suptitle(f"papers/003 Table 3: ours ({len(p['seeds'])} seeds, mean inter-arrival "
                 f"{p['mean_interarrival']:g} s) vs the paper's", fontsize=9)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    save_figure(fig, path)
    plt.close(fig)
    return True


def _panel(ax: Any, results: dict[str, Any], names: list[str], metric: str) -> None:
    cells = {(c["discipline"], c["case"]): c for c in results["cells"]}
    colours = ("tab:blue", "tab:orange", "tab:green", "tab:red")
    for k, (case, colour) in enumerate(zip(paper.CASES, colours, strict=True)):
        xs = [i + (k - 1.5) * 0.18 for i in range(len(names))]
        for x, name in zip(xs, names, strict=True):
            c = cells[name, case]
            s, theirs = c[metric], c["paper"][metric]
            if s is not None:
                low = s["mean"] - (s["ci_low"] if s["ci_low"] is not None else s["mean"])
                high = (s["ci_high"] if s["ci_high"] is not None else s["mean"]) - s["mean"]
                ax.errorbar([x], [s["mean"]], yerr=[[low], [high]], fmt="o", color=colour,
                            markersize=4, capsize=2)
                ax.plot([x], [s["median"]], "_", color=colour, markersize=8)
            ax.plot([x + 0.07], [theirs["value"]], "^" if theirs["lower_bound"] else "x",
                    color=colour, markersize=5)
        ax.plot([], [], "o", color=colour, label=f"ours, {paper.CASE_TITLES[case]}")
        ax.plot([], [], "x", color=colour, label=f"paper, {paper.CASE_TITLES[case]}")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=20, fontsize=7, ha="right")
    ax.set_yscale("log")
    ax.set_ylabel(TITLES[metric])
    ax.grid(linewidth=0.3, which="both", axis="y")
    ax.set_title("o mean with 95% CI, - median; x paper, ^ paper lower bound", fontsize=7)


