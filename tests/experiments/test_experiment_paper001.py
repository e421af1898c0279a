"""experiments/paper001/run.py, the one command of paper 001's experiments: both parts in
their quick modes write their results under --out."""

from __future__ import annotations

import json

from experiments.paper001 import run as script


def test_both_parts_quick(tmp_path):
    assert script.main(["--quick", "--out", str(tmp_path)]) == 0
    for part in ("dynp", "optimal"):
        results = json.loads((tmp_path / part / "results.json").read_text())
        assert results  # each part wrote its own results
        assert (tmp_path / part / "results.md").read_text().strip()


def test_one_part(tmp_path):
    assert script.main(["--quick", "--only", "dynp", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "dynp" / "results.json").exists()
    assert not (tmp_path / "optimal").exists()
