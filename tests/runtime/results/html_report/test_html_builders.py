"""The page builders: a run's warnings, dynP block and preemption totals, a dynP policy's
verdicts per candidate, an unknown verdict's reason."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from schedc.dsl.verify.reports import PolicyReport
from schedc.dsl.verify.verdict import Verdict
from schedc.runtime.results.html_report.page import cell_text
from schedc.runtime.results.html_report.run import PREEMPTION_TOTALS, run_page
from schedc.runtime.results.html_report.verify import VerifyRun, verify_page
from schedc.runtime.results.report import preemption_json
from schedc.runtime.run import run_policy
from tests.support.preempted_runs import preempted_run
from tests.support.repo import EXAMPLES
from tests.support.tiny_traces import THREE_JOBS_SWF

BOUND = "N=8 queued, R=8 running, K=1"


def _trace(tmp_path: Path) -> Path:
    trace = tmp_path / "three.swf"
    trace.write_text(THREE_JOBS_SWF)
    return trace


def test_a_dynp_run_shows_its_self_tuning_block(tmp_path: Path) -> None:
    result = run_policy(EXAMPLES / "dynp-simple.pol", _trace(tmp_path))
    page = run_page(result, figures=False).html()
    assert "<h2>Self-tuning dynP</h2>" in page
    assert "self-tuning dynP: metric artww, decider simple" in page
    assert "share of time active:" in page


def test_a_run_shows_its_warnings(tmp_path: Path) -> None:
    policy = tmp_path / "noback.pol"
    policy.write_text("policy noback {\n  order job.submit asc\n  reserve 1\n}\n")
    result = run_policy(policy, _trace(tmp_path))
    assert result.warnings
    page = run_page(result, figures=False).html()
    assert "<h2>Warnings</h2>" in page
    assert "warning" in page and "noback.pol:3" in page


def test_a_plain_run_has_no_warnings_or_dynp_sections(tmp_path: Path) -> None:
    page = run_page(run_policy(EXAMPLES / "easy.pol", _trace(tmp_path)), figures=False).html()
    assert "<h2>Warnings</h2>" not in page and "Self-tuning" not in page
    assert "Preemption" not in page


def test_a_preemptive_run_shows_the_totals_of_its_preemptions_line(tmp_path: Path) -> None:
    result = preempted_run(tmp_path, "requeue")
    page = run_page(result, figures=False).html()
    # after the metrics, the totals `schedc run` prints on its `preemptions:` line
    assert page.index("<h2>Metrics</h2>") < page.index("<h2>Preemption</h2>") < page.index(
        "<h2>Mean response per area category</h2>")
    totals = preemption_json(result.schedule)
    assert {key for key, _ in PREEMPTION_TOTALS} == set(totals)  # every one, none twice
    assert len(PREEMPTION_TOTALS) == len(totals)
    for key, label in PREEMPTION_TOTALS:
        assert f"<tr><td>{label}</td><td class=num>{cell_text(totals[key])}</td></tr>" in page
    assert "<td>requeues</td><td class=num>1</td>" in page
    assert "<td>work lost to requeues (cpu-s)</td><td class=num>400</td>" in page


def test_a_preemptive_run_s_figures_refer_to_their_own_hatch_patterns(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    page = run_page(preempted_run(tmp_path, "checkpoint")).html()
    assert "checkpointing: held, saving its work" in page  # the Gantt chart's legend
    ids = set(re.findall(r'\bid="([^"]+)"', page))
    refs = set(re.findall(r"url\(#([^)]+)\)", page))
    hatches = {r for r in refs if "<pattern id=\"" + r + "\"" in page}
    assert len(hatches) >= 2 and refs <= ids  # dispatching's and checkpointing's hatching


def test_dynp_verdicts_name_the_candidate_and_every_candidates_status() -> None:
    cex = {"now": 0, "capacity": {"cpus": 2}, "params": {}, "running": [], "queue": [],
           "pass": {"started": [], "reservations": {}}}
    verdicts = (
        Verdict("capacity", "proved", 0.1, BOUND, core=("the machine is not overcommitted",),
                candidates=(("fcfs", "proved"), ("sjf", "proved")),
                reason="proved for every candidate (fcfs, sjf)"),
        Verdict("progress", "violated", 0.2, BOUND, counterexample=cex, candidate="sjf",
                candidates=(("fcfs", "proved"), ("sjf", "violated")),
                reason="candidate `sjf`: an idle machine starts no job (proved for fcfs)"),
        Verdict("reservation-safety", "unknown", 60.0, BOUND,
                reason="Z3 gave up: timeout"),
    )
    report = PolicyReport("tuned.pol", "tuned", verdicts)
    page = verify_page([report], VerifyRun("0.1.0", ("verify", "tuned.pol"), "N=8, R=8", {}),
                       state_files={(0, 1): "cex/tuned.sjf.progress.json"},
                       monitor={(0, 1): "t=0: no job started"}).html()
    assert "progress: <span class=\"s-violated\">violated</span> (candidate <code>sjf</code>)" \
        in page
    assert "per candidate: <code>fcfs</code> <span class=\"s-proved\">proved</span>, " \
           "<code>sjf</code> <span class=\"s-violated\">violated</span>" in page
    assert "replay: <code>schedc run tuned.pol --state cex/tuned.sjf.progress.json</code>" \
        in page
    assert "<code>t=0: no job started</code>" in page
    assert "Z3 gave up: timeout" in page  # an unknown verdict's reason
    assert "3 verdicts: 1 proved, 1 violated, 1 unknown." in page


def test_a_counterexample_is_the_terminal_s_table_with_its_json_folded() -> None:
    cex = {"now": 5, "capacity": {"cpus": 4}, "params": {"depth": 1},
           "running": [{"id": 1, "submit": 0, "start": 0, "estimate": 100,
                        "request": {"cpus": 3}}],
           "queue": [{"id": 2, "submit": 1, "estimate": 50, "request": {"cpus": 2}},
                     {"id": 3, "submit": 2, "estimate": 10, "request": {"cpus": 1}}],
           "pass": {"started": [3], "reservations": {"2": 100}}}
    verdict = Verdict("reservation-safety", "violated", 0.2, BOUND, counterexample=cex,
                      reason="a job started in the pass delays a reservation")
    page = verify_page([PolicyReport("p.pol", "p", (verdict,))],
                       VerifyRun("0.1.0", None, "N=8, R=8", {})).html()
    assert ("<caption>counterexample for reservation-safety: now=5, cpus=4, depth=1"
            "</caption>") in page
    assert "<th scope=\"col\">in the pass</th>" in page
    assert "<tr><td>2</td><td>queued</td><td>1</td><td></td><td>50</td><td>cpus=2</td>" \
        "<td>reserved at 100</td></tr>" in page
    assert "<td>starts</td>" in page and "<td>running</td>" in page
    # the JSON is there to be saved as a state file, but folded
    assert page.index("<details>") < page.index("&quot;reservations&quot;")
