"""A sweep's `[metrics]` table measures every run as `run --bsld-tau/--warmup/--cooldown`
do, is part of each run's key, and is checked where it is written; `overrun` is a transform."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedc.dsl.diagnostics import DiagnosticError
from schedc.runtime.results.metrics import Cut
from schedc.runtime.run import run_policy
from schedc.runtime.tools.sweep.runs import plan
from schedc.runtime.tools.sweep.spec import read_spec
from tests.support.sweep_specs import EASY, write_spec

BASE = f'policies = ["{EASY}"]\n[transforms]\nlimit = [40]\noverrun = ["kill", "estimate"]\n'


def test_metrics_table_reaches_every_run_and_its_key(tmp_path: Path) -> None:
    plain = plan(read_spec(str(write_spec(tmp_path, BASE, "a.toml")))).runs
    spec = write_spec(tmp_path, BASE + '[metrics]\nbsld_tau = "1min"\nwarmup = 5\n'
                      'cooldown = "1h"\n', "b.toml")
    measured = plan(read_spec(str(spec))).runs
    assert len(measured) == len(plain) == 2
    assert {r.key for r in measured}.isdisjoint({r.key for r in plain})
    for desc in measured:
        options = desc.options()
        assert (options.bsld_tau, options.warmup, options.cooldown) == (
            60, Cut(5), Cut(3600, "seconds"))
        assert options.overrun == desc.transforms.overrun
        metrics = run_policy(desc.policy_file, desc.workload_file, options).metrics()
        assert metrics["warmup_jobs"] == 5
    assert {d.options().overrun for d in measured} == {"kill", "estimate"}


@pytest.mark.parametrize("text, message", [
    ("[metrics]\nbsld_tau = 0\n", "metrics.bsld_tau"),
    ('[metrics]\nwarmup = "two days"\n', "metrics.warmup"),
    ("[metrics]\ncooldown = true\n", "metrics.cooldown"),
    ("[metrics]\nbsld = 10\n", "unknown key `bsld`"),
    ('[transforms]\noverrun = ["kil"]\n', "overrun 'kil'"),
])
def test_bad_values_are_located(tmp_path: Path, text: str, message: str) -> None:
    spec = write_spec(tmp_path, f'policies = ["{EASY}"]\n' + text)
    with pytest.raises(DiagnosticError) as caught:
        read_spec(str(spec))
    shown = str(caught.value.diagnostics[0].message) + str(caught.value.diagnostics[0].help)
    assert message in shown
    assert caught.value.diagnostics[0].line is not None
