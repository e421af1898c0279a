"""A dynP run's outputs (runtime/results/tuning_report.py): the switches CSV with its provenance
header, the block after the metrics, the step-time summary."""

from __future__ import annotations

from fractions import Fraction

from schedc.runtime.engine.tuning import Switch, TuningRecord
from schedc.runtime.results.provenance import read_csv
from schedc.runtime.results.tuning_report import (
    percentile,
    timing_json,
    tuning_lines,
    write_switches_csv,
)

NAMES = ("fcfs", "sjf")
RECORD = TuningRecord(
    "artww", "advanced", "submit", NAMES, steps=3,
    switches=(Switch(2, "fcfs", "sjf", (("fcfs", Fraction(2207, 2)), ("sjf", Fraction(1, 3)))),),
    share=(("fcfs", Fraction(1, 4)), ("sjf", Fraction(3, 4))), step_queue=(1, 1, 2),
    step_seconds=(0.001, 0.003, 0.002))


def test_switches_csv_with_provenance(tmp_path):
    path = tmp_path / "s.csv"
    write_switches_csv(RECORD, path, ["# policy: {\"name\": \"dynp\"}\n"])
    facts, rows = read_csv(path)
    assert facts == {"policy": {"name": "dynp"}}
    assert rows == [{"time": "2", "from": "fcfs", "to": "sjf", "artww_fcfs": "1103.500000",
                     "artww_sjf": "0.333333"}]


def test_block_and_timing():
    lines = tuning_lines(RECORD)
    assert lines[0] == ("self-tuning dynP: metric artww, decider advanced, step submit: "
                        "3 steps, 1 switches")
    assert lines[1] == "  t=2: fcfs -> sjf (artww: fcfs 1,103.500, sjf 0.333)"
    assert lines[-1] == "share of time active: fcfs 25.0%, sjf 75.0%"
    timed = tuning_lines(RECORD, timing=True)[-1]
    assert timed == "time per step: median 2.000 ms, p99 3.000 ms, max 3.000 ms (3 steps)"
    assert timing_json(RECORD) == {"steps": 3, "median_ms": 2.0, "p99_ms": 3.0, "max_ms": 3.0}


def test_percentile_is_nearest_rank():
    values = list(range(1, 101))
    assert percentile(values, 99) == 99 and percentile(values, 100) == 100
    assert percentile([5.0], 99) == 5.0 and percentile([1, 2], 50) == 1
