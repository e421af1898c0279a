"""`schedc verify` on a policy that waives properties (`waive PROPERTY "REASON"`): a waived
property is still checked, its counterexample written and replayed, marked expected with
the reason in every format, and it leaves the exit status alone (violated or unknown); a
waived property that is proved is a warning in every format, and the status stays 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedc.runtime.cli.main import main
from tests.support.repo import ROOT

BOUNDS = ["--queued", "2", "--running", "2"]  # the violation is found at N = R = 1
# examples/broken/divide-by-free.pol: its order key divides by the free cpus (well-defined)
KEY = "order    job.procs / machine.free.cpus asc\n  reserve  1\n  backfill first_fit\n"
REASON = "the key divides by the free cpus, which are 0 on a full machine"


def _policy(tmp_path: Path, *waive: str) -> Path:
    path = tmp_path / "share.pol"
    path.write_text("policy share_of_free {\n  " + KEY + "".join(f"  {w}\n" for w in waive)
                    + "}\n")
    return path


def _verdicts(path: Path) -> dict[str, dict]:
    (report,) = json.loads(path.read_text())
    return {v["property"]: v for v in report["verdicts"]}


def _sarif(path: Path) -> dict[str, dict]:
    return {r["ruleId"]: r for r in json.loads(path.read_text())["runs"][0]["results"]}


@pytest.fixture
def waived(tmp_path: Path) -> Path:
    # the reason in two strings, joined by a space
    return _policy(tmp_path, 'waive well-defined "the key divides by the free cpus,"',
                   '  "which are 0 on a full machine"')


def test_a_waived_violation_is_expected_and_exits_0(waived: Path, tmp_path: Path,
                                                   capsys) -> None:
    out, cex = tmp_path / "v.json", tmp_path / "cex"
    assert main(["verify", str(waived), *BOUNDS, "--format", "json", "-o", str(out),
                 "--counterexamples", str(cex)]) == 0
    v = _verdicts(out)["well-defined"]
    assert v["status"] == "violated" and v["reason"].startswith("division by zero")
    assert v["expected"] == REASON and v["expected_at"] == f"{waived}:5:3"
    assert "warning" not in v and "expected" not in _verdicts(out)["capacity"]
    # the counterexample is written all the same, and the simulator stops on it
    state = cex / "share.well-defined.json"
    assert v["counterexample"] is not None and state.exists()
    capsys.readouterr()
    assert main(["run", str(waived), "--state", str(state)]) == 1
    assert "division by zero" in capsys.readouterr().err


def test_the_same_violation_not_waived_exits_1(tmp_path: Path) -> None:
    assert main(["verify", str(_policy(tmp_path)), *BOUNDS, "--format", "json", "-o",
                 str(tmp_path / "v.json")]) == 1


def test_every_format_marks_a_waived_violation_expected(waived: Path, tmp_path: Path,
                                                       capsys) -> None:
    md, sarif, html = tmp_path / "v.md", tmp_path / "v.sarif", tmp_path / "v.html"
    assert main(["verify", str(waived), *BOUNDS, "--report", str(html)]) == 0
    text = capsys.readouterr().out
    assert "violated (expected)" in text
    assert (f"  expected: the policy does not promise it (`waive well-defined` at "
            f"{waived}:5:3): {REASON}") in text
    assert "counterexample for well-defined (expected: the policy waives it)" in text
    page = html.read_text()
    assert "violated (expected)" in page and REASON in page
    assert "1 violated (expected)" in page  # the summary counts it apart
    assert main(["verify", str(waived), *BOUNDS, "--format", "markdown", "-o", str(md)]) == 0
    assert "| well-defined | **violated** (expected) |" in md.read_text()
    assert REASON in md.read_text()
    assert main(["verify", str(waived), *BOUNDS, "--format", "sarif", "-o", str(sarif)]) == 0
    result = _sarif(sarif)["well-defined"]
    assert result["level"] == "note" and REASON in result["message"]["text"]
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 2


def test_a_waived_property_that_is_proved_is_a_warning(tmp_path: Path, capsys) -> None:
    path = _policy(tmp_path, 'waive capacity "stale"', f'waive well-defined "{REASON}"')
    out, sarif = tmp_path / "v.json", tmp_path / "v.sarif"
    assert main(["verify", str(path), *BOUNDS, "--format", "json", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    # on stderr, located at the clause, as `check`'s warnings are
    assert f"warning: `waive capacity` says the policy does not promise capacity, but it is " \
           "proved: drop the clause, or state `promise capacity` in a policy that inherits " \
           f"it (its reason: stale)\n  --> {path}:5:3" in err
    v = _verdicts(out)["capacity"]
    assert v["status"] == "proved" and v["expected"] == "stale"
    assert v["warning"].startswith("`waive capacity` says")
    assert main(["verify", str(path), *BOUNDS, "--format", "sarif", "-o", str(sarif)]) == 0
    result = _sarif(sarif)["capacity"]
    assert result["level"] == "warning"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 5
    md, html = tmp_path / "v.md", tmp_path / "v.html"
    assert main(["verify", str(path), *BOUNDS, "--format", "markdown", "-o", str(md),
                 "--report", str(html)]) == 0
    assert f"Warning: {path}:5:3: `waive capacity` says" in md.read_text()
    assert md.read_text().count("`waive capacity` says") == 1  # the table points to it
    assert "waived, yet proved: see the warning below" in md.read_text()
    assert f"warning: {path}:5:3: <code>waive capacity</code> says" in html.read_text()
    capsys.readouterr()
    assert main(["verify", str(path), *BOUNDS]) == 0
    assert f"{path}:5:3: warning: `waive capacity` says" in capsys.readouterr().out


def test_a_waived_property_left_unknown_exits_0(waived: Path, tmp_path: Path) -> None:
    # one resource unit: no verdict. The policy promises nothing there: no failure
    args = [*BOUNDS, "--property", "well-defined", "--rlimit", "1", "--format", "json"]
    out = tmp_path / "v.json"
    assert main(["verify", str(waived), *args, "-o", str(out)]) == 0
    v = _verdicts(out)["well-defined"]
    assert v["status"] == "unknown" and v["expected"] == REASON
    assert main(["verify", str(_policy(tmp_path)), *args, "-o", str(out)]) == 3


def test_a_waiver_excuses_its_property_only(tmp_path: Path) -> None:
    # a waived violation beside one not waived: the run fails
    path = ROOT / "examples" / "broken" / "oversize.pol"
    text = path.read_text()
    assert text.rstrip().endswith("}")
    mine = tmp_path / "oversize.pol"
    mine.write_text(text.rstrip()[:-1] + '  waive progress "not the planted bug"\n}\n')
    out = tmp_path / "v.json"
    assert main(["verify", str(mine), *BOUNDS, "--format", "json", "-o", str(out)]) == 1
    assert _verdicts(out)["size-bounds"]["status"] == "violated"


def test_a_child_that_promises_what_its_parent_waives_fails_on_its_violation(
        tmp_path: Path, capsys) -> None:
    """The parent's violation is expected (exit 0); the child's `promise` makes it a
    failure again (exit 1), with no expected mark."""
    path = tmp_path / "family.pol"
    path.write_text("policy parent {\n  " + KEY + f'  waive well-defined "{REASON}"\n}}\n'
                    "policy child extends parent {\n  promise well-defined\n}\n")
    out = tmp_path / "v.json"
    assert main(["verify", str(path), "--policy", "parent", *BOUNDS, "--property",
                 "well-defined", "--format", "json", "-o", str(out)]) == 0
    assert _verdicts(out)["well-defined"]["expected"] == REASON
    assert main(["verify", str(path), "--policy", "child", *BOUNDS, "--property",
                 "well-defined", "--format", "json", "-o", str(out)]) == 1
    v = _verdicts(out)["well-defined"]
    assert v["status"] == "violated" and v.get("expected") is None
    capsys.readouterr()
