"""Verification reports: a rich terminal table, JSON, Markdown and SARIF 2.1.0."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from attrs import frozen

from schedc.dsl.diagnostics import Span
from schedc.dsl.ir import LABEL_ATTRS
from schedc.dsl.verify.verdict import Verdict

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
RULES = {
    "capacity": "No resource is overcommitted after a pass.",
    "size-bounds": "Every computed size is an integer in [1, capacity of cpus].",
    "well-defined": "No division by zero, sqrt of a negative or log of a non-positive number.",
    "reservation-safety": "No job started in a pass delays a reservation made in that pass "
                          "more than the policy allows (its `slack`; none without one).",
    "progress": "On an idle machine with a non-empty queue, a pass starts a job; a "
                "preemptive pass places the head of its order unless the jobs it may not "
                "preempt, or what suspended jobs hold, keep it out.",
    "protected": "No job is preempted inside its protected time (`keep`), at the "
                 "preemption limit, or of mechanism `none`.",
    "mechanism": "Each job moves as its mechanism says: a suspended job resumes on its own "
                 "processors, a migratable one restarts at its size, sizes lie in range.",
    "no-superfluous-preemption": "Every job preempted in a pass makes room that a job placed "
                                 "in it needs.",
    "invariant": "A user invariant holds for every job started.",
    "reservations-kept": "A job reserved by a pass that still waits at the next pass is "
                         "started or reserved there no later (jobs ending by their "
                         "estimates).",
}


@frozen
class PolicyReport:
    file: str
    policy: str
    verdicts: tuple[Verdict, ...]


def verdict_json(v: Verdict) -> dict[str, Any]:
    return {
        "property": v.property,
        "status": v.status,
        # CPU seconds of the property's whole verification (the pass every property reads
        # counted in each one's): what --timeout limits
        "seconds": round(v.seconds, 3),
        "z3_work": v.work,  # Z3's resource units: the same on any machine (cf. --rlimit)
        "bound": v.bound,
        "location": v.location.location() if v.location else None,
        "reason": v.reason,
        "assumptions_used": list(v.core),
        "counterexample": v.counterexample,
        # proved for at most R running jobs: where the policy reads every running job
        "bounded_by": list(v.bounded_by),
        "caveats": list(v.caveats),  # proved within limits the bounds set
        # a dynP policy's: the candidate a verdict that is not proved comes from, and the
        # verdict of each candidate
        **({"candidate": v.candidate, "candidates": dict(v.candidates)} if v.candidates
           else {}),
        # vacuous: the assumptions that admit no state together, where the policy states them
        **({"clash": [{"assumption": a.text,
                       "location": a.location.location() if a.location else None}
                      for a in v.clash]} if v.clash else {}),
        # a property the policy waives (`waive PROPERTY "REASON"`): the reason and the clause;
        # not violated or unknown but proved, the warning that the clause is stale
        **({"expected": v.expected,
            "expected_at": v.expected_at.location() if v.expected_at else None}
           if v.expected is not None else {}),
        **({"warning": stale_warning(v)} if v.stale_waiver else {}),
    }


def expected_note(v: Verdict) -> str:
    """Why a waived property's verdict fails nothing: the policy says so, and why."""
    at = f" at {v.expected_at.location()}" if v.expected_at else ""
    return f"expected: the policy does not promise it (`waive {v.property}`{at}): {v.expected}"


def stale_warning(v: Verdict, located: bool = False) -> str:
    """A waived property that is proved: the `waive` clause says less than the policy does
    (``located``: the clause's place first)."""
    at = f"{v.expected_at.location()}: " if located and v.expected_at else ""
    return (f"{at}`waive {v.property}` says the policy does not promise {v.property}, but it "
            f"is proved: drop the clause, or state `promise {v.property}` in a policy that "
            f"inherits it (its reason: {v.expected})")


def to_json(reports: Sequence[PolicyReport]) -> str:
    return json.dumps([{"file": r.file, "policy": r.policy,
                        "verdicts": [verdict_json(v) for v in r.verdicts]} for r in reports],
                      indent=2) + "\n"


def to_markdown(reports: Sequence[PolicyReport]) -> str:
    lines = []
    for r in reports:
        lines += [f"### `{r.policy}` ({r.file})", "",
                  "| property | verdict | CPU time | bound | detail |", "|---|---|---|---|---|"]
        for v in r.verdicts:
            detail = (v.reason or "").replace("|", "\\|")
            if v.location:
                detail = f"{v.location.location()}: {detail}".rstrip(": ")
            if v.expected is not None:
                # a stale waiver's warning is printed whole once, below the table
                note = ("waived, yet proved: see the warning below" if v.stale_waiver
                        else expected_note(v)).replace("|", "\\|")
                detail = f"{detail}; {note}" if detail else note
            name = v.property.replace("|", "\\|")
            status = f"**{v.status}**" + (" (expected)" if v.excused else "")
            lines.append(f"| {name} | {status} | {v.seconds:.2f} s | {v.bound} | "
                         f"{detail} |")
        notes = _caveats(r)
        lines += ["", *(f"Bounded: {note}." for note in notes)] if notes else []
        lines += ["", *(f"Warning: {stale_warning(v, True)}." for v in r.verdicts
                        if v.stale_waiver)] if any(v.stale_waiver for v in r.verdicts) else []
        for v in r.verdicts:
            if v.counterexample:
                of = f" (candidate `{v.candidate}`)" if v.candidate else ""
                of += " (expected: the policy waives it)" if v.excused else ""
                lines += ["", f"Counterexample for {v.property}{of}:", "", "```json",
                          json.dumps(v.counterexample, indent=2), "```"]
        lines.append("")
    return "\n".join(lines)


def _caveats(r: PolicyReport) -> list[str]:
    """The limits of a policy's proofs, each once, in the order first met."""
    return list(dict.fromkeys(c for v in r.verdicts for c in v.caveats))


def _rule_id(v: Verdict) -> str:
    return "invariant" if v.property.startswith("invariant") else v.property


SRCROOT = "%SRCROOT%"


def source_root(start: Path | None = None) -> Path:
    """The repository root around ``start`` (the current directory): the nearest folder
    with a `.git`, else ``start`` itself."""
    here = (start or Path.cwd()).resolve()
    return next((d for d in (here, *here.parents) if (d / ".git").exists()), here)


def artifact(path: str, root: Path) -> dict[str, str]:
    """A SARIF artifactLocation: relative to ``root`` with uriBaseId %SRCROOT%, as code
    scanning expects; a file outside ``root`` by its absolute file URI; a name that is no
    file (the prelude) as it is."""
    if path.startswith("<"):
        return {"uri": path}
    full = Path(path).resolve()
    try:
        return {"uri": quote(full.relative_to(root).as_posix()), "uriBaseId": SRCROOT}
    except ValueError:
        return {"uri": full.as_uri()}


def to_sarif(reports: Sequence[PolicyReport], version: str, root: Path | None = None) -> str:
    """SARIF 2.1.0: one result per property that is not proved, located in the .pol file
    (the invariant or the failing operation; else the policy file itself). Paths are
    relative to ``root`` (default: the repository around the current directory)."""
    root = source_root() if root is None else root.resolve()
    results = []
    for r in reports:
        for v in r.verdicts:
            if v.status == "proved" and not v.caveats and not v.stale_waiver:
                continue
            # a vacuous verdict's: where the policy states each clashing assumption; a stale
            # `waive`'s: the clause (an excused verdict's failing operation, else the clause)
            spans = [a.location for a in v.clash if a.location] or [
                v.expected_at if v.stale_waiver else v.location or v.expected_at]
            locations = [{"physicalLocation": _physical(span, r.file, root)} for span in spans]
            results.append({
                "ruleId": _rule_id(v),
                # a waived property's failure a note, a stale `waive` a warning
                "level": "note" if v.excused else "warning" if v.stale_waiver else {
                    "violated": "error", "vacuous": "error",
                    "unknown": "warning"}.get(v.status, "note"),
                "message": {"text": f"policy {r.policy}: {v.property} {v.status}"
                                    + (f": {v.reason}" if v.reason and v.status != "proved"
                                       else f": {'; '.join(v.caveats)}" if v.caveats
                                       else "")
                                    + (f"; {expected_note(v)}" if v.excused else
                                       f"; {stale_warning(v)}" if v.stale_waiver else "")},
                "locations": locations,
                "properties": {"bound": v.bound, "counterexample": v.counterexample,
                               **({"candidate": v.candidate} if v.candidate else {})},
            })
    sarif = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "schedc", "version": version,
                "informationUri": "https://github.com/schedc/schedc",
                "rules": [{"id": rule, "shortDescription": {"text": text}}
                          for rule, text in RULES.items()],
            }},
            "originalUriBaseIds": {SRCROOT: {"uri": root.as_uri().rstrip("/") + "/"}},
            "results": results,
        }],
    }
    return json.dumps(sarif, indent=2) + "\n"


def _physical(span: Span | None, file: str, root: Path) -> dict[str, Any]:
    """A SARIF physicalLocation: the span's region, else the policy file itself."""
    if span is None:
        return {"artifactLocation": artifact(file, root)}
    return {"artifactLocation": artifact(span.file, root),
            "region": {"startLine": span.line, "startColumn": span.col,
                       "endLine": span.end_line, "endColumn": span.end_col}}


STYLE = {"proved": "green", "violated": "bold red", "unknown": "yellow",
         "vacuous": "bold magenta"}


def print_terminal(reports: Sequence[PolicyReport], console) -> None:
    """A table a policy, then each verdict not proved on a line of its own, whole (its
    location ``file:line:col`` and reason: a table cell would wrap or cut them), then each
    counterexample. Cells wrap, never cut ("..."), on a narrow terminal."""
    from rich.table import Table
    from rich.text import Text

    for r in reports:
        bounds = {v.bound for v in r.verdicts}
        shared = bounds.pop() if len(bounds) == 1 else None  # then said once, above
        console.print(Text(f"{r.policy} ({r.file})" + (f", {shared}" if shared else "")),
                      soft_wrap=True)
        table = Table()
        # the verdict and the time stay whole; the other cells wrap, and fold a long word
        table.add_column("property", overflow="fold")
        table.add_column("verdict", no_wrap=True)
        # CPU seconds (what --timeout limits), not wall time
        table.add_column("CPU time", justify="right", no_wrap=True)
        if not shared:
            table.add_column("bound", overflow="fold")
        table.add_column("detail", overflow="fold")
        for v in r.verdicts:
            detail = v.reason or "" if v.status == "proved" else "see below"
            if v.caveats:
                detail = (f"{detail}; " if detail else "") + "within limits (below)"
            if v.stale_waiver:
                detail = (f"{detail}; " if detail else "") + "but waived: warning below"
            verdict = Text(v.status, style=STYLE[v.status])
            if v.excused:  # the policy says it may fail: no failure of the run
                verdict.append(" (expected)")
            table.add_row(Text(v.property), verdict, f"{v.seconds:.2f} s",
                          *([] if shared else [v.bound]), Text(detail))
        console.print(table)
        for note in _caveats(r):
            console.print(Text(f"{r.file}: {note}"), soft_wrap=True)
        for v in r.verdicts:
            if v.status != "proved":
                where = v.location.location() if v.location else r.file
                line = Text(f"{where}: {v.property} ")
                line.append(v.status, style=STYLE[v.status])
                line.append(f": {v.reason}" if v.reason else "")
                console.print(line, soft_wrap=True)
                if v.expected is not None:
                    console.print(Text(f"  {expected_note(v)}"), soft_wrap=True)
        for v in r.verdicts:
            if v.stale_waiver:
                where = v.expected_at.location() if v.expected_at else r.file
                line = Text(f"{where}: ")
                line.append("warning", style="yellow")
                line.append(f": {stale_warning(v)}")
                console.print(line, soft_wrap=True)
        for v in r.verdicts:
            if v.counterexample:
                console.print(_counterexample_table(v))


def _counterexample_table(v: Verdict):
    from rich.table import Table

    title, columns, rows = counterexample_rows(v)
    table = Table(title=title, title_justify="left")
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table


COUNTEREXAMPLE_COLUMNS = ("job", "state", "submit", "start", "estimate", "request",
                          "in the pass")


def counterexample_rows(v: Verdict) -> tuple[str, tuple[str, ...], list[tuple[str, ...]]]:
    """A counterexample as a table: its title (the instant, the machine, the params), the
    columns and a row per job, running then queued, with what the pass did to each (the
    terminal's table and the HTML page's, alike)."""
    cex = v.counterexample
    assert cex is not None
    machine = ", ".join(f"{k}={c}" for k, c in cex["capacity"].items())
    params = ", ".join(f"{k}={p}" for k, p in cex["params"].items())
    of = f" (candidate {v.candidate})" if v.candidate else ""
    of += " (expected: the policy waives it)" if v.excused else ""
    title = f"counterexample for {v.property}{of}: now={cex['now']}, {machine}"
    decided = cex["pass"]
    if "actions" in decided:  # a preemptive pass's: jobs in every phase
        return f"{title}, {params}" if params else title, COUNTEREXAMPLE_COLUMNS, \
            _preemptive_rows(cex)
    rows = [(str(job["id"]), "running", str(job["submit"]), str(job["start"]),
             str(job["estimate"]), _request(job), _ends(job, job["start"]).lstrip("; "))
            for job in cex["running"]]
    for job in cex["queue"]:
        outcome = ("starts" if job["id"] in decided["started"] else
                   f"reserved at {decided['reservations'][str(job['id'])]}"
                   if str(job["id"]) in decided["reservations"] else "waits")
        if job["id"] in decided["started"]:
            outcome += _ends(job, cex["now"])
        rows.append((str(job["id"]), "queued", str(job["submit"]), "", str(job["estimate"]),
                     _request(job), outcome))
    title += f", {params}" if params else ""
    after = cex.get("next_pass")
    if after is None:
        return title, COUNTEREXAMPLE_COLUMNS, rows
    # a property across passes: the arrivals, and what the next pass decided
    rows += [(str(job["id"]), f"arrives at {job['submit']}", str(job["submit"]), "",
              str(job["estimate"]), _request(job), "") for job in cex.get("arrivals", [])]
    rows = [(*row, _next(row[0], after)) for row in rows]
    return (f"{title}; next pass at {after['now']}", (*COUNTEREXAMPLE_COLUMNS,
                                                      f"at {after['now']}"), rows)


def _preemptive_rows(cex: dict[str, Any]) -> list[tuple[str, ...]]:
    """A preemptive counterexample's jobs, by phase, with their processors or size, their
    last start and what the pass did to each (its action and processors)."""
    did = {a["job"]: f"{a['action']} on {_cpus(a['processors'])}"
           for a in cex["pass"]["actions"]}
    rows = []
    for key, phase in (("running", "running"), ("suspended", "suspended"),
                       ("stopped", "stopped"), ("queue", "pending")):
        for job in cex.get(key, []):
            where = (f" on {_cpus(job['processors'])}" if "processors" in job
                     else f", size {job['size']}" if "size" in job else "")
            last = job.get("start", job.get("last_start", ""))
            rows.append((str(job["id"]), f"{phase}{where}", str(job["submit"]), str(last),
                         str(job["estimate"]), _request(job), did.get(job["id"], "waits"
                                                                      if phase != "running"
                                                                      else "runs")))
    return rows


def _cpus(processors: list[int]) -> str:
    return "cpus " + ",".join(str(p) for p in processors)


def _ends(job: dict[str, Any], start: int) -> str:
    """A job that ends before its estimate (a two-pass counterexample's event)."""
    run = job.get("run_time", job["estimate"])
    if run < job["estimate"]:
        return f"; ends at {start + run}"
    return ""


def _next(job: str, after: dict[str, Any]) -> str:
    """What the next pass of a two-pass counterexample did to ``job``."""
    if int(job) in after["started"]:
        return "starts"
    if job in after["reservations"]:
        return f"reserved at {after['reservations'][job]}"
    return ""


def _request(job: dict[str, Any]) -> str:
    text = ", ".join(f"{k}={n}" for k, n in job["request"].items())
    if "min_size" in job:  # a moldable job: its range of sizes and speedup
        text += f" (moldable {job['min_size']}-{job['max_size']}, {job['speedup']})"
    labels = [f"{a}={job[a]}" for a in LABEL_ATTRS if a in job]  # those the policy reads
    return text + ("; " + ", ".join(labels) if labels else "")
