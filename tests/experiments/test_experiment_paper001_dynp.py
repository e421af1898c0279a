"""experiments/paper001/dynp_runs.py in its --quick mode: dynP (simple, advanced) and the
three planning policies on the start of the bundled KTH-SP2; the same bytes on a rerun
(but the wall times), and a missing trace is one line and exit 2."""

from __future__ import annotations

import json

from experiments.common import without_wall_times
from experiments.paper001 import dynp_runs as script


def test_quick_run(tmp_path, capsys):
    assert script.main(["--quick", "--out", str(tmp_path / "a")]) == 0
    assert script.main(["--quick", "--out", str(tmp_path / "b"), "--jobs", "2"]) == 0
    a = (tmp_path / "a" / "results.json").read_text()
    assert without_wall_times(a) == without_wall_times((tmp_path / "b" / "results.json")
                                                       .read_text())
    results = json.loads(a)
    runs = {r["policy"]: r for r in results["runs"]}
    assert set(runs) == set(script.POLICIES)
    for name in ("dynp", "dynp_simple"):
        assert runs[name]["switches"] > 0
        assert abs(sum(runs[name]["share"].values()) - 1) < 1e-5
    assert "steps" not in runs["conservative"]
    assert "| KTH | dynp |" in (tmp_path / "a" / "results.md").read_text()


def test_missing_trace(tmp_path, capsys):
    assert script.main(["--traces", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.startswith("error: trace not found")
