"""Every `schedc` command the docs show runs (README.md and docs/**/*.md): each page's
commands in order, in a scratch folder holding a copy of `examples/` and the traces the docs
download, so that a command may read what an earlier one of its page wrote. A command ends
with 0, or with 1 or 3 where its verdict says a property is violated or unknown; never with a
user error (2), an internal error (70) or a hang. Commands that name a placeholder
(POLICY.pol, STATE.json) or another machine (`--scheduler tcp://HOST`) are left out; a page
whose archive traces are not here is skipped, saying where they are looked for."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.docs_text import commands
from tests.support.repo import ROOT
from tests.support.shared_traces import TRACES

CLI = [sys.executable, "-m", "schedc.runtime.cli.main"]
PLACEHOLDER = re.compile(r"(^|[/=])[A-Z][A-Z_]*(\.[a-z]+)?$")
ENDS = {0, 1, 3}  # success, a violated or an unknown verdict (runs stopped by the monitor)
TIMEOUT = 900


def _pages() -> dict[Path, list[list[str]]]:
    out: dict[Path, list[list[str]]] = {}
    for block, words in commands():
        if words[0] != "schedc":
            continue
        if any(PLACEHOLDER.search(w) for w in words[2:]) or "--scheduler" in words:
            continue
        out.setdefault(block.page, []).append(words)
    return out


PAGES = _pages()


@pytest.mark.slow
@pytest.mark.parametrize("page", sorted(PAGES), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_page_s_commands_run(page: Path, tmp_path: Path) -> None:
    listed = PAGES[page]
    needed = {w.split("/", 1)[1] for words in listed for w in words if w.startswith("traces/")}
    for words in listed:  # a sweep's spec names its archive traces as ${SCHEDC_TRACES:-..}/NAME
        if words[1] == "sweep" and (ROOT / words[2]).is_file():
            spec = (ROOT / words[2]).read_text(encoding="utf-8")
            needed |= set(re.findall(r"\$\{SCHEDC_TRACES[^}]*\}/([\w.-]+)", spec))
    missing = sorted(n for n in needed if not (TRACES / n).exists())
    if missing:
        pytest.skip(f"{', '.join(missing)} not in {TRACES} (set SCHEDC_TRACES)")
    shutil.copytree(ROOT / "examples", tmp_path / "examples",
                    ignore=shutil.ignore_patterns("*.out"))
    (tmp_path / "docs" / "figures").mkdir(parents=True)  # where the plot commands write
    (tmp_path / "traces").symlink_to(TRACES, target_is_directory=True)
    (tmp_path / "runtime").mkdir()  # the bundled trace, which some commands name
    (tmp_path / "runtime" / "data").symlink_to(ROOT / "runtime" / "data")
    env = {**os.environ, "SCHEDC_TRACES": str(TRACES), "NO_COLOR": "1"}
    for words in listed:
        argv = [m for w in words[1:] for m in _expanded(w, tmp_path)]
        done = subprocess.run([*CLI, *argv], cwd=tmp_path, capture_output=True,
                              text=True, env=env, timeout=TIMEOUT)
        assert done.returncode in ENDS, (f"{page.relative_to(ROOT)}: {' '.join(words)}\n"
                                         f"exit {done.returncode}\n{done.stderr[-3000:]}")
        assert "internal error" not in done.stderr and "Traceback" not in done.stderr


def _expanded(word: str, cwd: Path) -> list[str]:
    """A word as the shell gives it: a glob's matches, sorted (the word if none)."""
    if "*" not in word:
        return [word]
    return sorted(str(p.relative_to(cwd)) for p in cwd.glob(word)) or [word]
