"""The paper 001 optimal-steps script (experiments/paper001/optimal_steps.py) in --quick
mode: its results hold a row per instance with the Table 1 columns, quality <= 1 where the
optimum is proven, and a mistake in its options is one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

from experiments.paper001 import optimal_steps as script


def test_quick_run(tmp_path: Path) -> None:
    assert script.main(["--quick", "--workers", "1", "--out", str(tmp_path)]) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    rows = results["instances"]
    assert len(rows) == 2
    for r in rows:
        assert 3 <= r["jobs"] <= 8 and r["run_time"] > 0 and r["makespan_ub"] > 0
        assert r["status"] in ("optimal", "feasible")
        if r["status"] == "optimal":
            assert r["quality"] <= 1 and r["loss"] >= 0 and r["gap"] == 0
    assert "averages" in (tmp_path / "results.md").read_text()


def test_bad_options(capsys, tmp_path: Path) -> None:
    assert script.main(["--min-jobs", "9", "--max-jobs", "3", "--out", str(tmp_path)]) == 2
    assert "--min-jobs" in capsys.readouterr().err
