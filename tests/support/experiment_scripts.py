"""The experiment scripts (experiments/*/run.py are scripts, not package modules), loaded
for the tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # experiments/common.py and stats.py
    sys.path.insert(0, str(ROOT))


def load_script(paper: str, script: str = "run.py") -> ModuleType:
    """experiments/<paper>/<script>, registered under a name so that forked workers
    (--jobs 2) can unpickle its functions."""
    spec = importlib.util.spec_from_file_location(f"{paper}_{Path(script).stem}",
                                                  ROOT / "experiments" / paper / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
