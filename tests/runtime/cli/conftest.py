"""Fixtures of the CLI and run_policy tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.tiny_traces import THREE_JOBS_SWF


@pytest.fixture
def three_jobs(tmp_path: Path) -> Path:
    path = tmp_path / "three.swf"
    path.write_text(THREE_JOBS_SWF)
    return path
