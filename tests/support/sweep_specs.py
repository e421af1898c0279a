"""Helpers of the sweep tests: specs written into a temporary folder, the CLI run in
process, the run key of a one-run spec (which another process computes too)."""

from __future__ import annotations

import shutil
from pathlib import Path

from schedc.runtime.cli.main import main
from tests.support.repo import ROOT

EXAMPLES = ROOT / "examples"
DEPTH2 = EXAMPLES / "depth2.pol"
DEPTH_SJF = EXAMPLES / "depth-sjf.pol"
EASY = EXAMPLES / "easy.pol"


def write_spec(folder: Path, text: str, name: str = "spec.toml") -> Path:
    path = folder / name
    path.write_text(text.replace("@EXAMPLES", str(EXAMPLES)), encoding="utf-8")
    return path


def run_cli(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


KEY_SPEC = """\
policies = ["depth-sjf.pol"]
workloads = ["t.swf"]
{extra}
[params]
depth = [{depth}]
"""
KEY_TRACE = ("1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 1 1 -1 -1 -1\n"
             "2 1 -1 10 2 -1 -1 2 10 -1 1 1 1 1 1 -1 -1 -1\n")


def key_folder(parent: Path, name: str = "a") -> Path:
    """A folder of the run-key tests: the two depth examples and a two-job trace."""
    folder = parent / name
    folder.mkdir()
    shutil.copy(DEPTH2, folder)
    shutil.copy(DEPTH_SJF, folder)
    (folder / "t.swf").write_text(KEY_TRACE)
    return folder


def spec_key(folder: Path, depth: int = 2, extra: str = "") -> str:
    """The key of the one run of a spec in ``folder`` (depth-sjf.pol on t.swf at ``depth``,
    ``extra`` lines added)."""
    from schedc.runtime.tools.sweep.runs import plan
    from schedc.runtime.tools.sweep.spec import read_spec

    spec = write_spec(folder, KEY_SPEC.format(depth=depth, extra=extra))
    (run,) = plan(read_spec(str(spec))).runs
    return run.key
