"""The paper 004 experiment script (experiments/paper004/run.py) on a tiny grid: its
results.json has the promised structure and calibrated loads, the gains are the paper's
(baseline - policy) / baseline, and apart from the wall times it is the same bytes on a
rerun and with two worker processes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from experiments import common
from experiments.paper004 import run
from tests.support.shared_traces import shared_trace


def _argv(out: Path, source: Path, *extra: str) -> list[str]:
    return ["--source", str(source), "--source-jobs", "150", "--ks", "2", "3",
            "--distributions", "uniform", "--queue-lengths", "4", "8", "--tolerance", "0.1",
            "--lanl", "", "--out", str(out), *extra]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    source = shared_trace("lublin_256.swf.gz")
    base = tmp_path_factory.mktemp("paper004")
    folders = {"first": base / "a", "rerun": base / "b", "jobs2": base / "c"}
    for name, folder in folders.items():
        extra = ("--jobs", "2") if name == "jobs2" else ()
        assert run.main(_argv(folder, source, *extra)) == 0
    return folders


def _results(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "results.json").read_text())


def test_results_structure(outputs: dict[str, Path]) -> None:
    results = _results(outputs["first"])
    p = results["parameters"]
    assert (p["source"], p["source_jobs"], p["capacity_per_resource"]) == (
        "lublin_256.swf.gz", 150, 256)
    names = [q["name"] for q in results["policies"]]
    assert names == ["ff_easy", "bl_easy", "bb_easy", "ff_cons"]
    assert [(c["k"], c["target_queue_length"]) for c in results["cells"]] == [
        (2, 4), (2, 8), (3, 4), (3, 8)]
    for cell in results["cells"]:
        # the baseline's queue length is within the tolerance of the target
        calibration = cell["calibration"]
        assert abs(calibration["queue_length"] - cell["target_queue_length"]) <= \
            0.1 * cell["target_queue_length"]
        assert cell["runs"]["ff_easy"]["mean_queue"] == calibration["queue_length"]
        for name in names[1:]:
            base, other = cell["runs"]["ff_easy"], cell["runs"][name]
            for metric in ("mean_response", "weighted_response"):
                assert cell["gain_percent"][name][metric] == pytest.approx(
                    100 * (base[metric] - other[metric]) / base[metric])
    assert results["lanl"] is None
    assert (outputs["first"] / "results.md").read_text().startswith("# Paper 004")


def test_same_bytes_on_a_rerun_and_with_two_workers(outputs: dict[str, Path]) -> None:
    texts = [(outputs[k] / "results.json").read_text() for k in ("first", "rerun", "jobs2")]
    assert len({common.without_wall_times(t) for t in texts}) == 1


def test_gain_is_positive_when_better() -> None:
    assert run.gain(100.0, 80.0) == pytest.approx(20.0)
    assert run.gain(100.0, 150.0) == pytest.approx(-50.0)
    assert run.gain(0.0, 5.0) is None


def test_lanl_workload_has_memory_as_its_second_resource() -> None:
    """The real 2-resource case, as `schedc run --resources cpus,memory --capacity
    memory=33554432` reads it (the full runs take minutes: results.json has them)."""
    lanl = shared_trace("LANL-CM5-1994-4.1-cln.swf.gz")
    workload = run.lanl_workload(str(lanl))
    assert workload.resources == ("cpus", "memory")
    assert workload.capacities == (1024, 32 * 1024 * 1024)
    assert sum(1 for j in workload.jobs if j.request[1] > 0) > 100_000  # memory is real


@pytest.mark.parametrize(("extra", "message"), [
    (["--policies", "examples/ff-easy.pol"], "the baseline and at least one policy"),
    (["--policies", "examples/ff-easy.pol", "nope.pol"], "policy file not found: nope.pol"),
    (["--tolerance", "2"], "--tolerance 2.0 is not in (0, 1)"),
    (["--source", "missing.swf"], "trace not found: missing.swf"),
])
def test_mistakes_are_one_line(tmp_path: Path, capsys, extra: list[str], message: str) -> None:
    argv = ["--ks", "2", "--lanl", "", "--out", str(tmp_path), *extra]
    assert run.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
