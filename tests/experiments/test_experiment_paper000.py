"""The paper 000 experiment script (experiments/paper000/run.py) on a small slice of KTH-SP2:
its results.json has the promised structure, and apart from the wall times it is the same
bytes on a rerun and with two worker processes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from experiments import common
from experiments.paper000 import run
from tests.support.repo import ROOT
from tests.support.shared_traces import shared_trace

KTH = "KTH-SP2-1996-2.1-cln.swf.gz"
RFS = (1, 2)



def _argv(out: Path, traces_dir: Path, *extra: str) -> list[str]:
    return ["--traces", "KTH-SP2", "--traces-dir", str(traces_dir), "--limit", "300",
            "--policy", str(ROOT / "examples" / "fairshare.pol"), "--lf", "125",
            "--sigma", "1", "--rf", *map(str, RFS), "--out", str(out), *extra]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    traces_dir = shared_trace(KTH).parent
    base = tmp_path_factory.mktemp("paper000")
    folders = {"first": base / "a", "rerun": base / "b", "jobs2": base / "c"}
    for name, folder in folders.items():
        extra = ("--jobs", "2") if name == "jobs2" else ()
        assert run.main(_argv(folder, traces_dir, *extra)) == 0
    return folders


def _results(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "results.json").read_text())


def test_results_structure(outputs: dict[str, Path]) -> None:
    results = _results(outputs["first"])
    assert results["parameters"] == {"traces": ["KTH-SP2"], "load_factors": [125],
                                     "sigmas": [1], "range_factors": list(RFS), "limit": 300}
    assert results["policies"]["moldable"]["file"] == "examples/fairshare.pol"
    assert results["policies"]["rigid"]["file"] == "examples/conservative.pol"
    assert len(results["policies"]["rigid"]["sha256"]) == 64
    assert results["traces"]["KTH-SP2"]["file"] == KTH
    rigid, *moldable = results["runs"]
    assert rigid["role"] == "rigid" and rigid["range_factor"] is None
    assert [r["range_factor"] for r in moldable] == list(RFS)
    # the rigid baseline has the load factor applied, and only that
    assert rigid["transform"] == "load 125%"
    counts = rigid["metrics"]["category_jobs"]
    assert len(counts) == 10 and sum(counts) == rigid["metrics"]["jobs"] == 300
    for change, run_ in zip(results["changes"], moldable, strict=True):
        assert run_["metrics"]["category_jobs"] == counts  # categories come from the trace
        m, r = run_["metrics"]["category_mean_response"], rigid["metrics"][
            "category_mean_response"]
        for c in range(10):
            expected = None if counts[c] == 0 else 100 * (m[c] - r[c]) / r[c]
            assert change["category_pct"][c] == pytest.approx(expected)
        overall = 100 * (run_["metrics"]["mean_response"] - rigid["metrics"]["mean_response"]) \
            / rigid["metrics"]["mean_response"]
        assert change["overall_pct"] == pytest.approx(overall)
    walls = results[run.WALL_KEY]
    assert set(walls) == {r["key"] for r in results["runs"]} | {"total"}
    assert "KTH-SP2, LF 125" in (outputs["first"] / "results.md").read_text()


def test_results_identical_on_rerun_and_with_two_workers(outputs: dict[str, Path]) -> None:
    texts = {name: (folder / "results.json").read_text() for name, folder in outputs.items()}
    # written canonically, so that only the wall-time values can differ between the files
    assert common.dumps(json.loads(texts["first"])) == texts["first"]
    stable = {name: common.without_wall_times(text) for name, text in texts.items()}
    assert stable["first"] == stable["rerun"] == stable["jobs2"]
    md = {(folder / "results.md").read_bytes() for folder in outputs.values()}
    assert len(md) == 1


def test_figure(outputs: dict[str, Path]) -> None:
    pytest.importorskip("matplotlib")
    assert (outputs["first"] / "figure.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_without_matplotlib_json_and_markdown_still_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    traces_dir = shared_trace(KTH).parent
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # any import of it fails
    out = tmp_path / "out"
    argv = _argv(out, traces_dir)
    argv[argv.index("--rf") + 1:argv.index("--out")] = ["2"]
    assert run.main(argv) == 0
    assert "figure skipped" in capsys.readouterr().err
    assert (out / "results.json").exists() and (out / "results.md").exists()
    assert not (out / "figure.png").exists()


@pytest.mark.parametrize("mistake", ["trace", "policy"])
def test_user_mistake_is_one_line_and_exit_2(mistake: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture) -> None:
    traces_dir = shared_trace(KTH).parent
    if mistake == "trace":
        argv = _argv(tmp_path / "out", tmp_path / "no-traces")
    else:
        bad = tmp_path / "bad.pol"
        bad.write_text("policy bad {\n  order job.sumbit asc\n}\n")
        argv = [*_argv(tmp_path / "out", traces_dir), "--policy", str(bad)]
    assert run.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert not (tmp_path / "out").exists()
