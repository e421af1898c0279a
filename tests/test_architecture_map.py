"""ARCHITECTURE.md matches the code: every module of the package is on the map, and every
file and package the map names exists."""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.support.repo import ROOT

MAP = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
SOURCE = [p for top in ("dsl", "runtime", "grammar") for p in (ROOT / top).rglob("*.py")
          if p.name not in ("__init__.py", "__main__.py")]


def test_every_module_is_on_the_map() -> None:
    missing = sorted(str(p.relative_to(ROOT)) for p in SOURCE
                     if not re.search(rf"(?<![\w.]){re.escape(p.name)}\b", MAP))
    assert not missing, f"modules ARCHITECTURE.md does not mention: {missing}"


def test_every_file_on_the_map_exists() -> None:
    names = {p.name for top in ("dsl", "runtime", "grammar", "tests", "benchmarks",
                                "experiments") for p in (ROOT / top).rglob("*.py")}
    stale = sorted(n for n in set(re.findall(r"\b(\w+\.py)\b", MAP)) if n not in names)
    assert not stale, f"ARCHITECTURE.md names files that do not exist: {stale}"
    folders = set(re.findall(r"`((?:dsl|runtime|tests)/[\w/]*?)/?`", MAP))
    gone = sorted(f for f in folders if not (ROOT / f).exists())
    assert not gone, f"ARCHITECTURE.md names folders that do not exist: {gone}"


def test_the_top_level_holds_only_the_project() -> None:
    """Stray outputs (a fuzz run's `-o 0`, `--jobs-out cpus=x`) once landed at the top level."""
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if tracked.returncode != 0:
        pytest.skip("not a git checkout")
    top = {line.split("/")[0] for line in tracked.stdout.splitlines()}
    assert top <= {".ci", ".gitignore", "ARCHITECTURE.md", "README.md", "pyproject.toml",
                   "CHANGELOG.md", "CITATION.cff", "CONTRIBUTING.md", "LICENSE", "mkdocs.yml",
                   "benchmarks", "docs", "dsl", "examples", "experiments", "grammar", "runtime",
                   "tests"}
