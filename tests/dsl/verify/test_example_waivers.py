"""Every shipped example says what it does not promise: `schedc verify` exits 0 on it, each
property it waives (`waive`) is violated with a counterexample that replays, and every
other verdict is proved. Minutes in all (each example verified at the default bounds):
slow."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedc.dsl import compile_file
from schedc.runtime.cli.main import main
from tests.support.repo import ROOT

EXAMPLES = sorted([*ROOT.glob("examples/*.pol"), *ROOT.glob("examples/preemption/*.pol")])
# a verdict that changed this session (issue 44), pinned until it is found: depth2's
# reservations-kept was violated at the default rlimit (7 s) and now runs out of it (its
# counterexample search needs about 1.1 billion units; violated with --rlimit 2000000000)



@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT / "examples")))
def test_an_example_waives_exactly_what_it_violates(path: Path, tmp_path: Path) -> None:
    out = tmp_path / "verdicts.json"
    # the resource limit decides every verdict, never a busy machine's clock
    code = main(["verify", str(path), "--format", "json", "-o", str(out), "--timeout", "3600",
                 "--counterexamples", str(tmp_path / "cex")])
    (report,) = json.loads(out.read_text())
    verdicts = {v["property"]: v for v in report["verdicts"]}
    waived = {w.property for w in compile_file(path).waivers}
    violated = {name for name, v in verdicts.items() if v["status"] == "violated"}
    assert violated == waived, {n: v["reason"] for n, v in verdicts.items()
                                if v["status"] != "proved"}
    assert {v["status"] for n, v in verdicts.items() if n not in waived} <= {"proved"}
    assert all(verdicts[n]["expected"] and verdicts[n]["counterexample"] for n in waived)
    assert code == 0
