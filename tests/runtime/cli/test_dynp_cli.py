"""`schedc run` on the dynP examples (papers/001): the dynP block after the metrics,
`--json`'s "tuning", `--switches-out` with its provenance header, `--timing`, and that
`schedc verify` proves the tuned policy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedc.runtime.cli.main import main
from schedc.runtime.results.provenance import read_csv
from tests.support.repo import EXAMPLES

DYNP = EXAMPLES / "dynp.pol"

GOLDEN = """\
; MaxProcs: 10
1 0 -1 100 10 -1 -1 10 100 -1 1 1 1 1 1 -1 -1 -1
2 1 -1 1000 10 -1 -1 10 1000 -1 1 1 1 1 1 -1 -1 -1
3 2 -1 10 10 -1 -1 10 10 -1 1 1 1 1 1 -1 -1 -1
"""  # tests/runtime/engine/test_dynp.py: dynP switches to SJF at t=2


@pytest.fixture
def golden(tmp_path: Path) -> str:
    path = tmp_path / "golden.swf"
    path.write_text(GOLDEN)
    return str(path)


def test_run_prints_the_switches(golden, capsys):
    assert main(["run", str(DYNP), "--workload", golden, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "self-tuning dynP: metric artww, decider advanced, step submit: 3 steps, 1 switches" \
        in out
    assert "t=2: conservative -> conservative_sjf" in out
    assert "share of time active" in out and "time per step" not in out


def test_json_tuning_is_byte_identical(golden, capsys):
    texts = []
    for _ in range(2):
        assert main(["run", str(DYNP), "--workload", golden, "--json"]) == 0
        texts.append(capsys.readouterr().out)
    assert texts[0] == texts[1]
    t = json.loads(texts[0])["tuning"]
    assert (t["metric"], t["decider"], t["step"], t["steps"]) == ("artww", "advanced",
                                                                   "submit", 3)
    assert t["switches"] == [{"time": 2, "from": "conservative", "to": "conservative_sjf",
                              "values": {"conservative": 1103.5, "conservative_sjf": 608.5,
                                         "conservative_ljf": 1103.5}}]
    assert "timing" not in t


def test_timing(golden, capsys):
    assert main(["run", str(DYNP), "--workload", golden, "--json", "--timing"]) == 0
    timing = json.loads(capsys.readouterr().out)["tuning"]["timing"]
    assert timing["steps"] == 3 and timing["median_ms"] <= timing["p99_ms"] <= timing["max_ms"]
    assert main(["run", str(DYNP), "--workload", golden, "--timing", "--no-progress"]) == 0
    assert "time per step: median" in capsys.readouterr().out


def test_switches_out(golden, tmp_path, capsys):
    out = tmp_path / "switches.csv"
    assert main(["run", str(DYNP), "--workload", golden, "--switches-out", str(out),
                 "--no-progress"]) == 0
    facts, rows = read_csv(out)
    assert facts["policy"]["name"] == "dynp"
    assert rows == [{"time": "2", "from": "conservative", "to": "conservative_sjf",
                     "artww_conservative": "1103.500000",
                     "artww_conservative_sjf": "608.500000",
                     "artww_conservative_ljf": "1103.500000"}]


def test_the_simple_example(golden, capsys):
    simple = EXAMPLES / "dynp-simple.pol"
    assert main(["run", str(simple), "--workload", golden, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tuning"]["decider"] == "simple"


def test_verify_proves_dynp(capsys):
    assert main(["verify", str(DYNP)]) == 0
