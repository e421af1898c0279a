"""What a self-tuning dynP run reports (papers/001): its steps, switches and the share of
time each candidate was active, as a block after the metrics, a ``"tuning"`` JSON object and
the `--switches-out` CSV; the wall time per step only on request (`--timing`), so that the
same inputs give the same bytes."""

from __future__ import annotations

import os
import statistics
from collections.abc import Sequence
from typing import Any

from schedc.runtime.atomicio import write_atomic
from schedc.runtime.engine.tuning import TuningRecord


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q`` percentile (0 < q <= 100) of ``values`` (not empty)."""
    ranked = sorted(values)
    k = max(1, -(-len(ranked) * q // 100))
    return ranked[int(k) - 1]


def timing_json(record: TuningRecord) -> dict[str, Any]:
    """Wall time per self-tuning step: the count, median, 99th percentile and maximum (ms)."""
    ms = [s * 1000 for s in record.step_seconds]
    if not ms:
        return {"steps": 0, "median_ms": None, "p99_ms": None, "max_ms": None}
    return {"steps": len(ms), "median_ms": round(statistics.median(ms), 3),
            "p99_ms": round(percentile(ms, 99), 3), "max_ms": round(max(ms), 3)}


def tuning_json(record: TuningRecord, timing: bool = False) -> dict[str, Any]:
    """The ``"tuning"`` object of `schedc run --json`."""
    out: dict[str, Any] = {
        "metric": record.metric, "decider": record.decider, "step": record.step,
        "candidates": list(record.candidates), "steps": record.steps,
        "switches": [{"time": s.time, "from": s.old, "to": s.new,
                      "values": {name: float(v) for name, v in s.values}}
                     for s in record.switches],
        "share": {name: float(v) for name, v in record.share},
    }
    if timing:
        out["timing"] = timing_json(record)
    return out


def tuning_lines(record: TuningRecord, timing: bool = False, shown: int = 10) -> list[str]:
    """The dynP block printed after a run's metrics: steps, the first ``shown`` switches,
    the share per candidate and, with ``timing``, the step times."""
    lines = [f"self-tuning dynP: metric {record.metric}, decider {record.decider}, "
             f"step {record.step}: {record.steps:,} steps, {len(record.switches):,} switches"]
    for s in record.switches[:shown]:
        values = ", ".join(f"{name} {float(v):,.3f}" for name, v in s.values)
        lines.append(f"  t={s.time}: {s.old} -> {s.new} ({record.metric}: {values})")
    if len(record.switches) > shown:
        lines.append(f"  ... {len(record.switches) - shown:,} more (--switches-out FILE.csv)")
    share = ", ".join(f"{name} {float(v):.1%}" for name, v in record.share)
    lines.append(f"share of time active: {share}")
    if timing:
        t = timing_json(record)
        if t["steps"]:
            lines.append(f"time per step: median {t['median_ms']:.3f} ms, p99 "
                         f"{t['p99_ms']:.3f} ms, max {t['max_ms']:.3f} ms "
                         f"({t['steps']:,} steps)")
    return lines


def write_switches_csv(record: TuningRecord, path: str | os.PathLike[str],
                       header: Sequence[str] = ()) -> None:
    """One row per switch: time, from, to, then every candidate's metric value at that step
    (exact values as decimals, 6 places); ``header``: the run's provenance lines first."""
    columns = ["time", "from", "to", *(f"{record.metric}_{n}" for n in record.candidates)]

    def fill(out) -> None:  # type: ignore[no-untyped-def]
        out.writelines(header)
        out.write(",".join(columns) + "\n")
        for s in record.switches:
            values = (f"{float(v):.6f}" for _, v in s.values)
            out.write(",".join((str(s.time), s.old, s.new, *values)) + "\n")

    write_atomic(path, fill)
