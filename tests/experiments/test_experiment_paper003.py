"""papers/003's Table 3 harness (experiments/paper003): the tagged-jobs metrics on hand-made
cases, the seeds' summaries, the findings' rules, the paper's table as data, the committed
calibration, and the script end to end on a tiny stream with two disciplines (a stand-in
LSF-RTC and LSF-MIG) while the others are missing."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from experiments import common
from experiments.paper003 import findings, paper, plan, run
from experiments.paper003.metrics import (
    covers,
    left_after_stream,
    paired_ratio,
    share_at_most,
    summarise,
    tagged_metrics,
)
from schedc.runtime.results.student_t import t_quantile

ROOT = Path(__file__).resolve().parents[2]

# --- the tagged jobs ---------------------------------------------------------------------

# (submit, end) in submit order; the first three are tagged
TIMES = [(10, 110), (20, 50), (30, 400), (40, 60), (300, 320)]


def test_tagged_metrics_by_hand() -> None:
    t = tagged_metrics(TIMES, 3)
    # responses 100, 30 and 370; the last tagged completion 400, the first submit 10
    assert t.mean_response == pytest.approx(500 / 3)
    assert (t.jobs, t.makespan, t.last_end) == (3, 390, 400)
    # jobs past the tagged ones do not count, however long they take
    assert tagged_metrics([*TIMES[:3], (50, 10_000)], 3) == t


def test_makespan_from_the_first_tagged_submit() -> None:
    # "assuming that the first job arrives at time zero": an early completion is not the end
    t = tagged_metrics([(100, 900), (200, 250)], 2)
    assert (t.makespan, t.mean_response) == (800, (800 + 50) / 2)


def test_a_stream_covers_the_tagged_jobs_when_it_outlasts_them() -> None:
    t = tagged_metrics(TIMES, 3)
    assert not covers(TIMES, t)  # the last arrival (300) comes before the completion at 400
    assert left_after_stream(TIMES, 3) == 1
    longer = [*TIMES, (401, 500)]
    assert covers(longer, t) and left_after_stream(longer, 3) == 0
    assert not covers([*TIMES, (400, 500)], t)  # at the same instant is not after


def test_tagged_count_checked() -> None:
    with pytest.raises(ValueError, match="tagged"):
        tagged_metrics(TIMES, 6)
    with pytest.raises(ValueError, match="tagged"):
        tagged_metrics(TIMES, 0)


# --- the seeds' summaries ----------------------------------------------------------------


def test_summary_by_hand() -> None:
    s = summarise([1.0, 2.0, 6.0])
    half = t_quantile(0.975, 2) * math.sqrt(7.0 / 3)  # sd^2 = (4 + 1 + 9) / 2 = 7
    assert (s.seeds, s.mean, s.median, s.minimum, s.maximum) == (3, 3.0, 2.0, 1.0, 6.0)
    assert s.sd == pytest.approx(math.sqrt(7.0))
    assert (s.low, s.high) == (pytest.approx(3 - half), pytest.approx(3 + half))
    one = summarise([5.0])
    assert (one.mean, one.low, one.high, one.sd) == (5.0, None, None, None)


def test_share_at_most_and_paired_ratio() -> None:
    assert share_at_most([1.0, 2.0, 3.0, 4.0], 2.0) == 0.5
    assert share_at_most([1.0, 2.0], 0.5) == 0.0
    ratio, low, high = paired_ratio([2.0, 4.0, 6.0], [1.0, 2.0, 3.0])
    # differences 1, 2, 3: mean 2 over the base mean 2; interval 2 -+ t s / sqrt 3, s = 1
    half = t_quantile(0.975, 2) / math.sqrt(3)
    assert ratio == 2.0
    assert (low, high) == (pytest.approx(1 + (2 - half) / 2), pytest.approx(1 + (2 + half) / 2))


# --- the paper's table and the findings --------------------------------------------------


def test_paper_table_as_data() -> None:
    assert len(paper.DISCIPLINES) == 10
    assert len({d.file for d in paper.DISCIPLINES}) == 10
    mig = paper.by_name("LSF-MIG").paper
    assert (mig["none"].mrt.value, mig["both"].makespan.value) == (678, 82708)
    bound = paper.by_name("LSF-PREEMPT-AD").paper["none"]
    assert (bound.mrt.value, bound.mrt.bound, bound.makespan.unfinished) == (2293, True, 2)
    assert paper.by_name("LSF-MIG-AD").paper["both"].makespan.unfinished == 1
    assert not paper.by_name("LSF-MALL-AD").paper["both"].mrt.bound


def _values(**by_name: tuple[list[float], list[float]]) -> findings.Values:
    return {(name.replace("_", "-"), case): {"mrt": mrt, "makespan": makespan}
            for name, (mrt, makespan) in by_name.items() for case in paper.CASES}


def test_findings_rules() -> None:
    values = _values(LSF_RTC=([1000.0, 1100.0, 900.0], [100.0, 110.0, 90.0]),
                     LSF_PREEMPT=([500.0, 550.0, 450.0], [100.0, 100.0, 100.0]),
                     LSF_RTC_ADSUBSET=([1200.0, 1300.0, 1100.0], [50.0, 55.0, 45.0]),
                     LSF_MIG=([100.0, 110.0, 90.0], [80.0, 80.0, 80.0]))
    got = {f.id: f for f in findings.check_all(values)}
    assert got["F1"].verdict == "agree"  # 1000 / 100 >= 3 in every case
    assert got["F2"].verdict == "disagree"  # PREEMPT halves RTC's MRT
    assert got["F2b"].verdict.startswith("not checkable yet: needs LSF-PREEMPT-AD")
    assert got["F3"].verdict.startswith("not checkable yet: needs LSF-MALL-AD")
    f4 = got["F4"].checks[0]  # the paper: 1 - 76637 / 147951 = 0.482; ours 1 - 50 / 100
    assert (f4.ours, f4.paper) == (pytest.approx(0.5), pytest.approx(1 - 76637 / 147951))
    assert f4.holds and got["F4"].verdict == "agree"
    assert got["F4c"].verdict == "agree"  # 1200 > 1000
    assert json.dumps([f.to_json() for f in got.values()])  # plain data


# --- the calibration ---------------------------------------------------------------------


def test_committed_calibration_is_the_default() -> None:
    calibration = json.loads((ROOT / "experiments/paper003/calibration.json").read_text())
    chosen = calibration["searches"][0]
    assert [chosen["metric"], chosen["statistic"]] == list(run.SEARCHES[0]) == ["mrt", "median"]
    assert calibration["default"] == {"metric": "mrt", "statistic": "median"}
    assert chosen["mean_interarrival"] == run.DEFAULT_MEAN_INTERARRIVAL
    assert chosen["target"] == 678 and abs(chosen["value"] - 678) <= 0.02 * 678
    assert [s["target"] for s in calibration["searches"]] == [678, 678, 83985]
    assert calibration["seeds"] == list(range(1, run.DEFAULT_SEEDS + 1))
    assert (calibration["jobs"], calibration["max_jobs"], calibration["tagged"]) == (
        run.DEFAULT_JOBS, run.DEFAULT_MAX_JOBS, paper.TAGGED)


@pytest.mark.parametrize("metric", ["mrt", "makespan"])
def test_calibrate_one_on_a_known_curve(metric: str) -> None:
    seen: list[float] = []

    def runs(gap: float) -> dict[str, list[float]]:
        # MRT falls with the gap (678 s at 400 s), the makespan grows (83,985 s at 300 s)
        seen.append(gap)
        return {"mrt": [678.0 * (400.0 / gap) ** 2] * 3, "makespan": [280.0 * gap] * 3}

    target, where = (678.0, 400.0) if metric == "mrt" else (83985.0, 83985.0 / 280)
    result = run.calibrate_one(runs, metric, "median", target)
    assert abs(result["found"] - where) <= 0.01 * where
    assert result["mean_interarrival"] == round(result["found"], 1) == seen[-1]
    assert [s["mean_interarrival"] for s in result["steps"]] == seen[:-1]
    assert abs(result["value"] - target) <= 0.011 * target
    assert result["there"]["mrt"]["mean"] == runs(result["mean_interarrival"])["mrt"][0]
    assert 0 < result["load_minimum"] < result["load_request"]


# --- the script end to end -----------------------------------------------------------------


@pytest.fixture(scope="module")
def policies(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """LSF-MIG as it is, and first fit (papers/003's LSF-RTC, no knowledge params) standing in
    for lsf-rtc.pol; every other file is missing."""
    folder = tmp_path_factory.mktemp("policies") / "examples" / "preemption"
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "examples/preemption/lsf-mig.pol", folder / "lsf-mig.pol")
    shutil.copy(ROOT / "examples/firstfit.pol", folder / "lsf-rtc.pol")
    return folder.parents[1]


def _argv(out: Path, policies: Path, *extra: str) -> list[str]:
    return ["--disciplines", "LSF-RTC", "LSF-PREEMPT", "LSF-MIG", "--seeds", "2", "--tagged",
            "20", "--jobs", "30", "--max-jobs", "240", "--policies-dir", str(policies),
            "--out", str(out), *extra]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory, policies: Path) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("paper003")
    folders = {"first": base / "a", "workers2": base / "b"}
    for name, folder in folders.items():
        extra = ("--workers", "2") if name == "workers2" else ()
        assert run.main(_argv(folder, policies, *extra)) == 0
    return folders


def _results(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "results.json").read_text())


def test_results_structure(outputs: dict[str, Path]) -> None:
    results = _results(outputs["first"])
    disciplines = {d["name"]: d for d in results["disciplines"]}
    assert list(disciplines) == ["LSF-RTC", "LSF-PREEMPT", "LSF-MIG"]
    assert disciplines["LSF-PREEMPT"]["reason"].startswith("not available yet: ")
    assert disciplines["LSF-RTC"]["knowledge_params"] == []
    assert disciplines["LSF-MIG"]["knowledge_params"] == ["demand"]
    cells = {(c["discipline"], c["case"]): c for c in results["cells"]}
    assert len(cells) == 8
    # a policy without the param: one run for every case, the cells say which
    assert [cells["LSF-RTC", c]["same_runs_as"] for c in paper.CASES] == [
        None, "none", "none", "none"]
    assert [cells["LSF-MIG", c]["binding"] for c in paper.CASES] == [
        "demand=false", "demand=true", "demand=false", "demand=true"]
    both = cells["LSF-MIG", "both"]
    assert both["same_runs_as"] == both["knowledge"] == "demand"  # told no speedup
    for c in cells.values():
        assert [s["seed"] for s in c["per_seed"]] == [1, 2] and not c["failed"]
        assert all(s["covered"] and s["jobs"] in (30, 60, 120, 240) for s in c["per_seed"])
        assert c["mrt"]["mean"] == pytest.approx(sum(s["mrt"] for s in c["per_seed"]) / 2)
        assert c["mrt"]["ci_low"] <= c["mrt"]["mean"] <= c["mrt"]["ci_high"]
    assert cells["LSF-RTC", "demand"]["mrt"] == cells["LSF-RTC", "none"]["mrt"]
    assert results["parameters"]["tagged"] == 20 and results["parameters"]["calibrated"]
    # one simulation per distinct binding and seed: 1 x 2 for RTC, 2 x 2 for MIG
    assert len(results[common.WALL_KEY]) == 6 + 1
    table = (outputs["first"] / "results.md").read_text()
    assert "| LSF-PREEMPT | not available |" in table and "(= none)" in table
    assert "- LSF-PREEMPT: not available yet: " in table and "**F1.**" in table


def test_same_bytes_with_two_workers(outputs: dict[str, Path]) -> None:
    texts = {name: (folder / "results.json").read_text() for name, folder in outputs.items()}
    assert common.dumps(json.loads(texts["first"])) == texts["first"]
    assert len({common.without_wall_times(t) for t in texts.values()}) == 1
    assert len({(folder / "results.md").read_bytes() for folder in outputs.values()}) == 1


def test_figure(outputs: dict[str, Path]) -> None:
    pytest.importorskip("matplotlib")
    assert (outputs["first"] / "figure.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(("extra", "message"), [
    (("--disciplines", "LSF-FOO"), "unknown discipline"),
    (("--tagged", "50"), "--tagged <= --jobs"),
    (("--seeds", "0"), "at least 1"),
    (("--disciplines", "LSF-MALL-AD"), "no discipline is available"),
])
def test_user_mistake_is_one_line_and_exit_2(extra: tuple[str, ...], message: str,
                                             tmp_path: Path, policies: Path,
                                             capsys: pytest.CaptureFixture) -> None:
    assert run.main([*_argv(tmp_path / "out", policies), *extra]) == 2
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: ") and message in last
    assert not (tmp_path / "out").exists()


def test_a_file_that_does_not_compile_is_not_available(tmp_path: Path) -> None:
    folder = tmp_path / "examples" / "preemption"
    folder.mkdir(parents=True)
    (folder / "lsf-rtc.pol").write_text("policy broken {\n")
    availables, missing = plan.discover([paper.by_name("LSF-RTC"), paper.by_name("LSF-MIG")],
                                        tmp_path)
    assert availables == []
    assert missing["LSF-RTC"].startswith("not available: lsf-rtc.pol does not compile: ")
    assert missing["LSF-MIG"] == "not available yet: lsf-mig.pol does not exist"


def test_a_policy_reading_what_its_case_withholds_is_marked(tmp_path: Path) -> None:
    """SRPT reads every job's demand and declares no `demand`: its one run per seed stands
    in every case, and the cases without demand knowledge say that it reads more."""
    folder = tmp_path / "policies" / "examples" / "preemption"
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "examples/preemption/srpt.pol", folder / "lsf-preempt.pol")
    argv = ["--disciplines", "LSF-PREEMPT", "--seeds", "1", "--tagged", "10", "--jobs", "20",
            "--policies-dir", str(tmp_path / "policies"), "--out", str(tmp_path / "out")]
    assert run.main(argv) == 0
    cells = _results(tmp_path / "out")["cells"]
    assert [c["knowledge"] for c in cells] == ["none"] * 4
    assert [c["reads_more"] is not None for c in cells] == [True, False, True, False]
    assert "estimate" in cells[0]["reads_more"]
    table = (tmp_path / "out" / "results.md").read_text()
    assert "- LSF-PREEMPT, none: " in table and "] †" in table
