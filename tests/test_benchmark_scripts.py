"""Every script of benchmarks/ starts as the module it is run as (`python -m benchmarks.NAME`
from the repository root): its imports (tests.support helpers, the package) still resolve
after a move, which nothing else would notice until someone runs a campaign."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.repo import ROOT

SCRIPTS = sorted(p for p in (ROOT / "benchmarks").glob("*.py") if p.name != "__init__.py")


def test_there_are_scripts() -> None:
    assert len(SCRIPTS) >= 5


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_script_prints_its_help(script) -> None:
    module = f"benchmarks.{script.stem}"
    done = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert f"usage: python -m {module}" in done.stdout
