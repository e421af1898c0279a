"""No vacuous "proved": a verdict whose assumptions admit no state in which a job waits is
`vacuous`, names the clashing assumptions where the policy states them, shows in every report
format and fails `schedc verify` (exit 1). Rigid and preemptive policies, clashes the
lowering refuses (built here as IR around it) and one it cannot see (a formula that fails in
every pass)."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest
import z3
from rich.console import Console

from schedc.dsl import compile_file, compile_source, ir
from schedc.dsl.verify import reports as vr
from schedc.dsl.verify.across import KEPT, verify_across
from schedc.dsl.verify.checker import WAITING, least_clash
from schedc.dsl.verify.preemption.prover import RUNS_THROUGH
from schedc.dsl.verify.prover import verify_policy
from schedc.dsl.verify.tuning import verify_tuned
from schedc.dsl.verify.verdict import Assumed, Bounds, Limits, Verdict, vacuous
from schedc.runtime.cli.main import main
from schedc.runtime.replay import replayer
from schedc.runtime.results.html_report.verify import VerifyRun, verify_page
from tests.support.repo import EXAMPLES
from tests.support.tuned import tuned

SMALL = Bounds(2, 2, 4, preemptive=(2, 2))

RIGID = """param w: real in [1, 2] = 1
policy p {
  order     job.submit * w asc
  reserve   1
  backfill  first_fit
}
"""

PREEMPTIVE = """param lim: int in [1, 10] = 3
policy p {
  order     job.acquired asc
  reserve   0
  backfill  first_fit
  mechanism suspend
  preempt   by order
  limit preemptions lim
}
"""

# every pass with a waiting job divides by zero: no check of the text can see it (the key
# reads the job), and every property that assumes the pass runs through has no state
ALWAYS_FAILS = """policy p {
  order     1 / (job.submit - job.submit) asc
  reserve   0
  backfill  first_fit
  mechanism suspend
  preempt   by order
}
"""


def _with_domain(policy: ir.Policy, name: str, lo: int, hi: int) -> ir.Policy:
    """``policy`` with param ``name``'s domain [lo, hi], around the lowering's checks."""
    return attrs.evolve(policy, params=tuple(
        attrs.evolve(p, lo=lo, hi=hi) if p.name == name else p for p in policy.params))


def _clashing(v: Verdict) -> dict[str, str | None]:
    return {a.text: a.location.location() if a.location else None for a in v.clash}


def test_a_rigid_policy_whose_param_domain_is_empty_proves_nothing() -> None:
    policy = _with_domain(compile_source(RIGID, "rigid.pol"), "w", 3, 2)
    got = verify_policy(policy, Bounds(2, 2))
    assert [v.status for v in got] == ["vacuous"] * 5
    for v in got:
        assert _clashing(v) == {"param `w` lies in [3, 2]": "rigid.pol:1:1"}
        assert v.location is not None and v.location.location() == "rigid.pol:1:1"
        assert not v.caveats and not v.core
    (kept,) = verify_across(policy, Bounds(2, 2))
    assert kept.property == KEPT and kept.status == "vacuous"
    assert "param `w` lies in [3, 2]" in _clashing(kept)


def test_a_preemptive_limit_below_zero_proves_nothing_and_names_the_clause() -> None:
    # `limit preemptions lim` with lim in [-10, -1]: `run` refuses a limit below 0, so the
    # encoding assumes none, and no state is left
    policy = _with_domain(compile_source(PREEMPTIVE, "pre.pol"), "lim", -10, -1)
    got = verify_policy(policy, SMALL, replay=replayer(policy))
    assert {v.status for v in got} == {"vacuous"}
    for v in got:
        clash = _clashing(v)
        assert clash["param `lim` lies in [-10, -1]"] == "pre.pol:1:1"
        assert clash["`limit` (preemptions) is at least 0 (`run` refuses less)"] == (
            "pre.pol:8:21")
        # the clause, not the param: the value to change is written there
        assert v.location is not None and v.location.location() == "pre.pol:8:21"


def test_a_pass_that_always_fails_proves_nothing_else(tmp_path: Path) -> None:
    path = tmp_path / "fails.pol"
    path.write_text(ALWAYS_FAILS)
    policy = compile_file(path)
    got = {v.property: v for v in verify_policy(policy, SMALL, replay=replayer(policy))}
    assert got["well-defined"].status == "violated"
    for name in ("capacity", "protected", "mechanism", "no-superfluous-preemption",
                 "progress"):
        assert got[name].status == "vacuous", name
        assert set(_clashing(got[name])) == {WAITING, RUNS_THROUGH}
        assert "see well-defined and size-bounds" in (got[name].reason or "")


@pytest.mark.parametrize("name", ["easy.pol", "preemption/srpt.pol"])
def test_an_ordinary_proof_is_never_vacuous(name: str) -> None:
    policy = compile_file(EXAMPLES / name)
    got = verify_policy(policy, SMALL, only=["capacity", "progress"],
                        replay=replayer(policy))
    assert [v.status for v in got] == ["proved", "proved"]


def test_a_clash_names_only_what_clashes() -> None:
    x = z3.Int("x")
    named = [("x is at least 2", x >= 2), ("x is below 10", x < 10), ("x is odd", x % 2 == 1),
             ("x is below 1", x < 1), ("x is below 1", x < 0)]
    assert least_clash(named, Limits()).clash == ("x is at least 2", "x is below 1")
    assert least_clash(named[:3], Limits()).clash == ()


def test_a_dynp_policy_is_vacuous_where_a_candidate_is() -> None:
    policy = tuned()
    first = policy.tuning.candidates[0].name  # type: ignore[union-attr]

    def one(candidate: ir.Policy) -> list[Verdict]:
        v = Verdict("capacity", "proved", 0.0, "N=1")
        return [vacuous(v, (Assumed("x"),)) if candidate.name == first else v]

    (v,) = verify_tuned(policy, one)
    assert v.status == "vacuous" and v.candidate == first and v.clash == (Assumed("x"),)


# --- every format, and the exit status --------------------------------------------------


@pytest.fixture(scope="module")
def fails_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("vacuous") / "fails.pol"
    path.write_text(ALWAYS_FAILS)
    return path


def _report(fails_file: Path) -> vr.PolicyReport:
    policy = compile_file(fails_file)
    got = verify_policy(policy, SMALL, only=["capacity"], replay=replayer(policy))
    return vr.PolicyReport(str(fails_file), policy.name, tuple(got))


def test_every_format_shows_a_vacuous_verdict(fails_file: Path) -> None:
    report = _report(fails_file)
    (v,) = json.loads(vr.to_json([report]))[0]["verdicts"]
    assert v["status"] == "vacuous"
    assert {c["assumption"] for c in v["clash"]} == {WAITING, RUNS_THROUGH}
    assert "| capacity | **vacuous** |" in vr.to_markdown([report])
    (result,) = json.loads(vr.to_sarif([report], "0"))["runs"][0]["results"]
    assert result["level"] == "error" and "capacity vacuous" in result["message"]["text"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    console = Console(record=True, width=200)
    vr.print_terminal([report], console)
    text = console.export_text()
    assert "vacuous" in text and RUNS_THROUGH in text
    html = verify_page([report], VerifyRun("0", None, "N=2", {})).html()
    assert 'class="s-vacuous"' in html and "assumptions that clash" in html
    assert "1 vacuous" in html


def test_sarif_locates_a_vacuous_verdict_at_each_clause_it_names() -> None:
    policy = _with_domain(compile_source(PREEMPTIVE, "pre.pol"), "lim", -10, -1)
    got = verify_policy(policy, SMALL, only=["capacity"])
    sarif = json.loads(vr.to_sarif([vr.PolicyReport("pre.pol", "p", tuple(got))], "0"))
    (result,) = sarif["runs"][0]["results"]
    lines = sorted(loc["physicalLocation"]["region"]["startLine"]
                   for loc in result["locations"])
    assert lines == [1, 8]  # the param's declaration, the `limit` clause


def test_verify_exits_1_on_a_vacuous_proof(fails_file: Path, capsys) -> None:
    code = main(["verify", str(fails_file), "--property", "capacity", "--queued", "2",
                 "--running", "2", "--format", "json"])
    assert code == 1
    (v,) = json.loads(capsys.readouterr().out)[0]["verdicts"]
    assert v["status"] == "vacuous"


# --- the campaigns' own vacuity check -----------------------------------------------------


def _without_the_guard(monkeypatch) -> None:
    """The prover as it was: a proof of no state says proved (what the campaigns must catch)."""
    from schedc.dsl.verify import checker
    from schedc.dsl.verify.preemption import prover

    monkeypatch.setattr(checker.Checker, "unless_vacuous", lambda self, v, sym: v)
    monkeypatch.setattr(prover, "_unless_vacuous", lambda sym, v, limits, *moved: v)


def test_the_campaign_check_catches_a_proof_of_no_state(monkeypatch, fails_file: Path) -> None:
    from tests.support.vacuity import vacuous_proofs

    _without_the_guard(monkeypatch)
    rigid = _with_domain(compile_source(RIGID, "rigid.pol"), "w", 3, 2)
    got = verify_policy(rigid, Bounds(2, 2))
    assert {v.status for v in got} == {"proved"}
    assert vacuous_proofs(rigid, got, Bounds(2, 2)) == [v.property for v in got]
    fails = compile_file(fails_file)
    got = verify_policy(fails, SMALL, replay=replayer(fails))
    assert set(vacuous_proofs(fails, got, SMALL)) == {
        "capacity", "protected", "mechanism", "no-superfluous-preemption", "progress"}


def test_the_campaign_check_passes_ordinary_proofs() -> None:
    from tests.support.vacuity import vacuous_proofs

    for name in ("easy.pol", "dynp.pol", "preemption/srpt.pol"):
        policy = compile_file(EXAMPLES / name)
        proved = [Verdict(p, "proved", 0.0, "") for p in ("capacity", "progress")]
        assert vacuous_proofs(policy, proved, SMALL) == [], name


def test_a_campaign_counts_and_prints_proofs_of_no_state(capsys) -> None:
    from benchmarks.fuzz_verify import _print
    from tests.support.policy_fuzz import PolicyResult, tally
    from tests.support.policy_fuzz.records import Disagreement, Evidence, VerdictRecord
    from tests.support.vacuity import VACUOUS

    ev = Evidence("the vacuity check", {}, "capacity is proved, but ...")
    results = [
        PolicyResult(1, "a", "", (), (VerdictRecord("capacity", "proved", 0.0),),
                     (Disagreement("vacuous", VACUOUS, "capacity", ev),), 0, 0, 0, 0.0),
        PolicyResult(2, "b", "", (), (VerdictRecord("capacity", "vacuous", 0.0),), (),
                     0, 0, 0, 0.0)]
    figures = tally(results)
    assert figures["vacuity"] == {"policies_checked": 2, "proved_but_vacuous": 1,
                                  "vacuous_verdicts": 1}
    assert figures["disagreements"] == 1
    _print(figures | {"seconds": 0.0, "first_seed": 1, "count": 2, "jobs": 1,
                      "bounds": [3, 3], "rlimit": 1, "preemptive_bounds": [2, 2]}, results)
    out = capsys.readouterr().out
    assert "vacuity check: 2 policies' verdicts, 1 proved of no state (failures)" in out
    assert VACUOUS in out
