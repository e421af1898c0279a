"""Helpers of the sweep tests: specs written into a temporary folder, the CLI run in
process."""

from __future__ import annotations

from pathlib import Path

from repo import ROOT

from schedc.runtime.cli.main import main

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
