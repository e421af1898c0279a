"""MkDocs hook: the Python API pages (mkdocstrings) read the package as `schedc`, which the
clone lays out as dsl/, runtime/ and grammar/ (pyproject's package-dir mapping, which
griffe does not follow). Before the build, this makes `build/docs-api/schedc/` of links to
those folders, where mkdocs.yml points mkdocstrings."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LAYOUT = ROOT / "build" / "docs-api"
PARTS = ("dsl", "runtime", "grammar")


def _lay_out() -> None:
    package = LAYOUT / "schedc"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text('"""schedc: policies as code, simulated and proved."""\n')
    for part in PARTS:
        link = package / part
        if not link.is_symlink():
            os.symlink(ROOT / part, link, target_is_directory=True)


# Made when MkDocs loads this hook, while it reads mkdocs.yml: mkdocstrings keeps only the
# `paths` that exist when it starts, before any hook event of a fresh clone's first build
_lay_out()


def on_config(config: Any) -> Any:
    _lay_out()  # `mkdocs serve` rebuilds: the folder may have been cleaned meanwhile
    return config
