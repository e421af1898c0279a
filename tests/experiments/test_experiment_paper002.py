"""Batch means (experiments/stats.py), and the paper 002 experiment
script (experiments/paper002/run.py) on a tiny grid: its results.json has the promised
structure, and apart from the wall times it is the same bytes on a rerun and with two worker
processes, on the heterogeneous cluster (runtime/engine/cluster.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from experiments import common
from experiments.paper002 import run
from experiments.stats import batch_means, lag1_autocorrelation
from schedc.runtime.engine import simulator
from schedc.runtime.results.student_t import t_quantile

UTILISATIONS = (0.3, 0.8)


# --- batch means -------------------------------------------------------------------------


def test_constant_series_has_zero_half_width() -> None:
    ci = batch_means([3.0] * 100, batches=5)
    assert (ci.mean, ci.half_width, ci.lag1) == (3.0, 0.0, None)
    assert (ci.transient, ci.batch_size, ci.dropped) == (10, 18, 0)


def test_hand_computed_case() -> None:
    # 1..12, warm-up 0.2 drops floor(2.4) = 2 values; batches 3..7 and 8..12: means 5 and 10,
    # s^2 = 12.5, half width = t_{0.975,1} * sqrt(12.5 / 2) = 12.706205 * 2.5
    ci = batch_means([float(v) for v in range(1, 13)], batches=2, warmup=0.2)
    assert ci.batch_means == (5.0, 10.0) and ci.mean == 7.5
    assert ci.half_width == pytest.approx(12.706205 * 2.5, abs=1e-5)
    assert (ci.transient, ci.batch_size, ci.dropped) == (2, 5, 0)
    assert ci.lag1 == pytest.approx(-0.5)


def test_warmup_and_remainder() -> None:
    values = [100.0] * 10 + [float(v % 4) for v in range(93)]  # 103 values
    ci = batch_means(values, batches=4, warmup=0.1)
    # floor(10.3) = 10 dropped first (the 100s), 93 left: 4 batches of 23, 1 dropped
    assert (ci.transient, ci.batch_size, ci.dropped) == (10, 23, 1)
    kept = values[10:10 + 92]
    assert ci.mean == pytest.approx(sum(kept) / 92)
    assert ci.batch_means[0] == pytest.approx(sum(kept[:23]) / 23)
    # 0.1 is the decimal it reads as: 0.1 of 600 is 60, not 59
    assert batch_means([1.0] * 600, batches=5, warmup=0.1).transient == 60
    assert batch_means([1.0] * 10, batches=2, warmup=0).transient == 0


def test_half_width_from_the_t_quantile() -> None:
    values = [float((7 * i) % 11) for i in range(200)]
    ci = batch_means(values, batches=10, warmup=0.0, confidence=0.9)
    means = ci.batch_means
    m = sum(means) / 10
    s = math.sqrt(sum((x - m) ** 2 for x in means) / 9)
    assert ci.half_width == pytest.approx(t_quantile(0.95, 9) * s / math.sqrt(10))
    assert ci.confidence == 0.9


def test_lag1_autocorrelation() -> None:
    assert lag1_autocorrelation([1.0, 2.0, 3.0, 4.0]) == pytest.approx(0.25)
    assert lag1_autocorrelation([1.0, -1.0] * 5) == pytest.approx(-0.9)
    assert lag1_autocorrelation([2.0, 2.0]) is None


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"batches": 1}, "batches must be"), ({"batches": 2.0}, "batches must be"),
    ({"warmup": 1.0}, "warmup must be"), ({"warmup": -0.1}, "warmup must be"),
    ({"confidence": 1.0}, "confidence must be"), ({"batches": 20}, "need at least one"),
])
def test_bad_arguments(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        batch_means([1.0] * 20, **{"batches": 2, **kwargs})


def test_too_few_values_and_non_finite() -> None:
    with pytest.raises(ValueError, match="need at least one per batch"):
        batch_means([1.0] * 21, batches=20)  # 19 left after the warm-up of 2
    with pytest.raises(ValueError, match="finite"):
        batch_means([1.0, math.nan, 2.0, 3.0], batches=2, warmup=0)


# --- the script ----------------------------------------------------------------------------


def _argv(out: Path, *extra: str) -> list[str]:
    return ["--utilisations", *map(str, UTILISATIONS),
            "--policies", "examples/map.pol", "examples/ap2.pol",
            "--jobs-per-run", "600", "--batches", "5", "--warmup", "0.1", "--confidence", "0.95",
            "--out", str(out), *extra]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("paper002")
    folders = {"first": base / "a", "rerun": base / "b", "jobs2": base / "c"}
    for name, folder in folders.items():
        extra = ("--jobs", "2") if name == "jobs2" else ()
        assert run.main(_argv(folder, *extra)) == 0
    return folders


def _results(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "results.json").read_text())


def test_results_structure(outputs: dict[str, Path]) -> None:
    results = _results(outputs["first"])
    params = results["parameters"]
    assert params["utilisations"] == list(UTILISATIONS)
    assert (params["jobs_per_run"], params["batches"], params["warmup"]) == (600, 5, 0.1)
    assert (params["processors"], params["bpu_total"], params["time_scale"]) == (64, 96, 100)
    assert [p["file"] for p in results["policies"]] == ["examples/map.pol", "examples/ap2.pol"]
    assert [p["name"] for p in results["policies"]] == ["map", "ap2"]
    assert results["policies"][0]["params"] == {"adaptive_f": 0.5}
    assert all(len(p["sha256"]) == 64 for p in results["policies"])
    assert results["machine"].startswith("heterogeneous: 32 x 1 + 32 x 2 BPU")
    seeds = [w["seed"] for w in results["workloads"]]
    assert len(set(seeds)) == len(UTILISATIONS)  # a seed per utilisation
    assert [(r["utilisation"], r["policy"]) for r in results["runs"]] == [
        (u, p) for u in UTILISATIONS for p in ("map", "ap2")]
    for r in results["runs"]:
        ci = r["batch_means"]
        assert r["jobs"] == 600 and r["skipped"] == 0
        assert (ci["transient"], ci["batch_size"], ci["dropped"], ci["batches"]) == (60, 108,
                                                                                    0, 5)
        assert ci["mean"] == pytest.approx(sum(ci["batch_means"]) / 5)
        assert ci["half_width"] > 0 and 1 <= r["mean_size"] <= 32
        assert -1 <= ci["lag1_autocorrelation"] <= 1
    assert set(results[run.WALL_KEY]) == {r["key"] for r in results["runs"]} | {"total"}
    table = (outputs["first"] / "results.md").read_text()
    assert "| utilisation | map | ap2 |" in table and " ± " in table


def test_results_identical_on_rerun_and_with_two_workers(outputs: dict[str, Path]) -> None:
    texts = {name: (folder / "results.json").read_text() for name, folder in outputs.items()}
    # written canonically, so that only the wall-time values can differ between the files
    assert common.dumps(json.loads(texts["first"])) == texts["first"]
    stable = {name: common.without_wall_times(text) for name, text in texts.items()}
    assert stable["first"] == stable["rerun"] == stable["jobs2"]
    assert len({(folder / "results.md").read_bytes() for folder in outputs.values()}) == 1


def test_figure(outputs: dict[str, Path]) -> None:
    pytest.importorskip("matplotlib")
    assert (outputs["first"] / "figure.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cluster_given_to_every_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each run gets a fresh cluster of --speeds and --background-load, its seed the same for
    every policy at one utilisation and another at the next."""
    given: list[tuple[float, Any]] = []
    real = simulator.simulate

    def simulate(policy: Any, workload: Any, *, cluster: Any, **options: Any) -> Any:
        given.append((policy.name, cluster))
        return real(policy, workload, cluster=cluster, **options)

    # every run goes through run_policy, which imports the simulator's simulate when it runs
    monkeypatch.setattr(simulator, "simulate", simulate)
    argv = _argv(tmp_path, "--jobs-per-run", "100", "--speeds", "16x1,48x2",
                 "--background-load", "0.2")
    assert run.main(argv) == 0
    assert [name for name, _ in given] == ["map", "ap2"] * 2
    clusters = [c for _, c in given]
    assert all(c.speeds == (1.0,) * 16 + (2.0,) * 48 and c.max_load == 0.2 for c in clusters)
    assert clusters[0].seed == clusters[1].seed != clusters[2].seed == clusters[3].seed
    results = _results(tmp_path)
    assert results["machine"].startswith("heterogeneous: 16 x 1 + 48 x 2 BPU")
    assert [w["cluster_seed"] for w in results["workloads"]] == [clusters[0].seed,
                                                                 clusters[2].seed]


@pytest.mark.parametrize(("extra", "message"), [
    (("--speeds", "32x1,32xtwo"), "bad processor group"),
    (("--speeds", "16x1"), "fewer than the largest Pmax"),
    (("--batches", "1"), "batches must be"),
    (("--jobs-per-run", "4"), "need at least one per batch"),
    (("--background-load", "1"), "--background-load"),
    (("--policies", "examples/no-such.pol"), "policy file not found"),
])
def test_user_mistake_is_one_line_and_exit_2(extra: tuple[str, ...], message: str,
                                             tmp_path: Path,
                                             capsys: pytest.CaptureFixture) -> None:
    assert run.main(_argv(tmp_path / "out", *extra)) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err
    assert not (tmp_path / "out").exists()


def test_policy_with_reservations_on_the_cluster(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture) -> None:
    argv = _argv(tmp_path / "out", "--jobs-per-run", "100", "--policies", "examples/easy.pol")
    assert run.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: U=0.3 easy: ") and err.count("\n") == 1
