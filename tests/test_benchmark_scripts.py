"""Every script of benchmarks/ starts: its imports (tests/support helpers, the package) still
resolve after a move, which nothing else would notice until someone runs a campaign."""

from __future__ import annotations

import subprocess
import sys

import pytest
from repo import ROOT

SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))


def test_there_are_scripts() -> None:
    assert len(SCRIPTS) >= 5


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_script_prints_its_help(script) -> None:
    done = subprocess.run([sys.executable, str(script), "--help"], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "usage:" in done.stdout
