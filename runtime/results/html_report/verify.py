"""The page of a verification (`schedc verify --report`): per policy, every property's
verdict (proved with the assumptions used, violated with its counterexample, vacuous with
the assumptions that clash, unknown with the reason), a dynP policy's per candidate, each
counterexample's state inline with the file it was written to, the command that replays it
and what the simulator's monitor said."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from attrs import frozen

from schedc.dsl.verify.reports import (
    PolicyReport,
    counterexample_rows,
    expected_note,
    stale_warning,
)
from schedc.dsl.verify.verdict import Verdict
from schedc.runtime.results.html_report.page import Page, VerdictEntry
from schedc.runtime.results.provenance import sha256_file

# A verdict's place: (index of its report, index of the verdict in that report)
Key = tuple[int, int]


@frozen
class VerifyRun:
    """What the command ran besides the verdicts: the page's provenance."""

    schedc: str
    command: tuple[str, ...] | None
    bounds: str  # e.g. "N=8 queued, R=8 running"
    limits: Mapping[str, Any]  # rlimit, timeout, properties, resources


def verify_page(reports: Sequence[PolicyReport], run: VerifyRun,
                state_files: Mapping[Key, str] | None = None,
                monitor: Mapping[Key, str] | None = None,
                policy_option: str | None = None) -> Page:
    """``state_files``: where each counterexample was written (`--counterexamples`);
    ``monitor``: what the monitor said when the simulator replayed it."""
    state_files, monitor = state_files or {}, monitor or {}
    # a waived property's failure counted apart: it fails nothing
    statuses = [f"{v.status} (expected)" if v.excused else v.status
                for r in reports for v in r.verdicts]
    counts = ", ".join(f"{statuses.count(s)} {s}"
                       for s in ("proved", "violated", "vacuous", "unknown",
                                 "violated (expected)", "unknown (expected)")
                       if s in statuses)
    names = ", ".join(r.policy for r in reports)
    page = Page(f"Verification of {names}")
    page.text(f"{len(statuses)} verdicts: {counts or 'none'}.", title="Summary")
    page.table("Verdicts", ["policy", "file", "property", "verdict", "CPU time (s)",
                             "Z3 work"],
               [[r.policy, r.file, v.property,
                 f"{v.status} (expected)" if v.excused else v.status, round(v.seconds, 2),
                 v.work] for r in reports for v in r.verdicts],
               note="CPU time is the process's on this machine, all of the property's "
               "verification (what --timeout limits); Z3 work (resource units, what --rlimit "
               "limits) is the same on any machine.")
    for i, r in enumerate(reports):
        entries = [_entry(r, v, state_files.get((i, j)), monitor.get((i, j)), policy_option)
                   for j, v in enumerate(r.verdicts)]
        bounds = sorted({v.bound for v in r.verdicts})
        page.verdicts(f"{r.policy} ({r.file})", entries,
                      note="bound: " + "; ".join(bounds) if bounds else "")
    page.provenance(_facts(reports, run))
    return page


def _entry(r: PolicyReport, v: Verdict, state_file: str | None, monitor: str | None,
           policy_option: str | None) -> VerdictEntry:
    detail = v.reason or ""
    if v.location and v.status != "proved":
        detail = f"{v.location.location()}: {detail}".rstrip(": ")
    replay = None
    if v.counterexample is not None:
        words = ["schedc", "run", r.file, *(["--policy", policy_option] if policy_option
                                           else []), "--state"]
        replay = " ".join(shlex.quote(w) for w in words) + " " + (
            shlex.quote(state_file) if state_file else
            "STATE.json  (the state above saved as STATE.json, without its \"pass\")")
    return VerdictEntry(
        property=v.property, status=v.status, detail=detail,
        # proved: the assumptions the proof used; vacuous: those that clash, located
        assumptions=tuple(v.core) if v.status == "proved" else tuple(
            a.shown() for a in v.clash),
        caveats=tuple(v.caveats), candidates=tuple(v.candidates), candidate=v.candidate,
        counterexample=v.counterexample, state_file=state_file, replay=replay,
        monitor=monitor, excused=v.excused,
        expected=(stale_warning(v, True) if v.stale_waiver else expected_note(v)
                  if v.expected is not None else ""),
        counterexample_table=counterexample_rows(v) if v.counterexample is not None else None)


def _facts(reports: Sequence[PolicyReport], run: VerifyRun) -> dict[str, Any]:
    out: dict[str, Any] = {"schedc": run.schedc}
    if run.command is not None:
        out["command"] = list(run.command)
    out["policies"] = {r.file: {"policy": r.policy, "sha256": sha256_file(r.file)}
                       for r in reports}
    out["bounds"] = run.bounds
    out["options"] = dict(run.limits)
    return out
