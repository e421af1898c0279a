"""The simulator's EASY equals an independent classic EASY on the shared real traces."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedc.dsl import compile_file
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.policy import RuntimePolicy
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.workloads.load import load_workload
from tests.support.classic_easy import classic_easy_starts
from tests.support.repo import ROOT
from tests.support.shared_traces import shared_trace

# The example users run, compiled from its .pol file (not a hand-built policy).
EASY = to_runtime(compile_file(ROOT / "examples" / "easy.pol"))


def trace(name: str) -> Path:
    return shared_trace(name)


@pytest.mark.parametrize("name", [
    "KTH-SP2-1996-2.1-cln.swf.gz",
    "NASA-iPSC-1993-3.1-cln.swf.gz",
    "lublin_256.swf.gz",
    "LANL-CM5-1994-4.1-cln.swf.gz",  # ~3 s: 122k jobs
])
def test_easy_pol_equals_classic_shadow_and_extra(name):
    w = load_workload(trace(name))
    got = [r.start for r in simulate(EASY, w).records]
    want = classic_easy_starts(w)
    diff = [(w.jobs[i].id, g, e) for i, (g, e) in enumerate(zip(got, want, strict=True))
            if g != e]
    assert not diff, f"{len(diff)} jobs differ, first (id, simulator, classic): {diff[:5]}"


def test_general_paths_agree_on_kth():
    """Profile-based (no shadow, no int specialisation, no continuation) = fast paths."""
    w = load_workload(trace("KTH-SP2-1996-2.1-cln.swf.gz"))
    w = type(w)(w.jobs[:6000], w.resources, w.capacities, w.skipped, w.source, w.header)
    for depth in (1, 2, None):
        p = RuntimePolicy("p", ("cpus",), (None,), depth=depth, backfill="first_fit")
        fast = [r.start for r in simulate(p, w).records]
        slow = [r.start for r in simulate(p, w, fast=False, incremental=False).records]
        assert fast == slow, depth


def test_lanl_two_resources_runs_and_is_deterministic():
    path = trace("LANL-CM5-1994-4.1-cln.swf.gz")
    w = load_workload(path, ("cpus", "memory"), {"memory": 1024 * 32 * 1024})
    w = type(w)(w.jobs[:8000], w.resources, w.capacities, w.skipped, w.source, w.header)
    p = RuntimePolicy("easy2", ("cpus", "memory"), (None, None), depth=1,
                      backfill="first_fit")
    a = simulate(p, w)
    b = simulate(p, w, fast=False, incremental=False)
    assert [r.start for r in a.records] == [r.start for r in b.records]
    assert any(r.job.request[1] > 0 for r in a.records)
