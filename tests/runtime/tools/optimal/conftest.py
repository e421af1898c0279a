from __future__ import annotations

import pytest

from schedc.runtime.engine.policy import RuntimePolicy
from schedc.runtime.run import RunOptions, prepared_policy
from tests.support.repo import ROOT

PLANNING = ("conservative", "conservative-sjf", "conservative-ljf")


@pytest.fixture
def planning_policies() -> list[RuntimePolicy]:
    return [prepared_policy(ROOT / "examples" / f"{name}.pol", RunOptions())
            for name in PLANNING]
