"""The docs site holds what it shows: it builds strictly (no broken link, anchor or page
left out of the nav), the command-line reference is the parser's, each `console`
transcript prints what the page says, each `python` block runs, each `pol` policy compiles
and each `toml` block is valid TOML."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.support.docs_text import DOCS, Block, blocks
from tests.support.repo import ROOT

CLI = [sys.executable, "-m", "schedc.runtime.cli.main"]


def _env() -> dict[str, str]:
    """As a reader's shell that pipes the output: no terminal width, no colour."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "FORCE_COLOR")}
    return {**env, "NO_COLOR": "1", "TERM": "dumb"}


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    assert mkdocs, "mkdocs is one of the test extras: pip install -e '.[test]'"
    done = subprocess.run([mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True,
                          env={**_env(), "NO_MKDOCS_2_WARNING": "1"}, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "index.html").exists()


def test_the_cli_reference_is_the_parser_s() -> None:
    from schedc.runtime.cli.reference import cli_reference

    page = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    assert page == cli_reference(), ("docs/reference/cli.md is stale: python -m "
                                     "schedc.runtime.cli.reference > docs/reference/cli.md")


def test_the_cli_reference_has_every_command_and_option() -> None:
    from schedc.runtime.cli.main import COMMANDS, build_parser

    page = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    for name in COMMANDS:
        assert f"## `{name}`" in page, name
    run = next(a for a in build_parser()._actions if a.dest == "command").choices["run"]
    for action in run._actions:
        for flag in action.option_strings:
            if flag not in ("-h", "--help"):
                assert f"`{flag}" in page, flag


def _transcripts() -> list[Block]:
    return blocks("console")


@pytest.mark.parametrize("block", _transcripts(), ids=lambda b: b.where)
def test_a_console_transcript_prints_what_the_page_shows(block: Block) -> None:
    lines = block.text.splitlines()
    assert lines and lines[0].startswith("$ schedc "), f"{block.where}: one `$ schedc` first"
    assert not any(line.startswith("$ ") for line in lines[1:]), \
        f"{block.where}: one command per transcript"
    words = shlex.split(lines[0].removeprefix("$ "), comments=True)
    done = subprocess.run([*CLI, *words[1:]], cwd=ROOT, capture_output=True, text=True,
                          env=_env(), timeout=120)
    shown = [line.rstrip() for line in lines[1:]]
    printed = [line.rstrip() for line in done.stdout.splitlines()]
    assert printed == shown, f"{block.where}: {lines[0]}\n{done.stderr}"


@pytest.mark.parametrize("block", blocks("python"), ids=lambda b: b.where)
def test_a_python_block_runs(block: Block, tmp_path: Path) -> None:
    script = tmp_path / "block.py"
    script.write_text(block.text)
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True,
                          text=True, env=_env(), timeout=300)
    assert done.returncode == 0, f"{block.where}\n{done.stderr}"
    assert done.stdout.strip(), f"{block.where}: prints nothing"


def _policies() -> list[Block]:
    return [b for b in blocks("pol") if re.search(r"^\s*policy\s+\w+\s*\{", b.text, re.M)]


@pytest.mark.parametrize("block", _policies(), ids=lambda b: b.where)
def test_a_policy_block_compiles(block: Block) -> None:
    """Every policy of the block (a parent and the child that extends it too)."""
    from schedc.dsl import check_source

    errors = [d for d in check_source(block.text, block.where).diagnostics
              if d.severity == "error"]
    assert not errors, f"{block.where}: {errors[0].message}"


@pytest.mark.parametrize("block", blocks("toml"), ids=lambda b: b.where)
def test_a_toml_block_is_toml(block: Block) -> None:
    tomllib.loads(block.text)


def test_every_page_has_one_title() -> None:
    for page in sorted(DOCS.rglob("*.md")):
        if "hooks" in page.parts:
            continue
        titles = [line for line in _outside_fences(page.read_text(encoding="utf-8"))
                  if line.startswith("# ")]
        assert len(titles) == 1, f"{page.relative_to(ROOT)}: {titles}"


def _outside_fences(text: str) -> list[str]:
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            out.append(line)
    return out


def test_python_and_the_cli_give_one_run() -> None:
    """The from-Python tutorial's run is the CLI's: the same metrics for the same options."""
    import json

    from schedc.runtime import RunOptions, run_policy

    metrics = run_policy(str(ROOT / "examples" / "depth2.pol"), options=RunOptions(
        params={"depth": "4"}, limit=2000)).metrics()
    cli = subprocess.run([*CLI, "run", "examples/depth2.pol", "--param", "depth=4", "--limit",
                          "2000", "--json"], cwd=ROOT, capture_output=True, text=True,
                         check=True, env=_env()).stdout
    shown = json.loads(cli)["metrics"]
    assert metrics["mean_wait"] == shown["mean_wait"] and metrics["jobs"] == shown["jobs"]
