"""The README's Python examples run as written (from the project root) and print what the
CLI prints for the same run."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from repo import ROOT

BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"),
                    re.DOTALL)


def test_the_readme_has_a_python_example() -> None:
    assert BLOCKS


def test_the_python_example_gives_the_cli_s_mean_wait() -> None:
    run = [sys.executable, "-c", BLOCKS[0]]
    printed = subprocess.run(run, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    mean_wait, jobs = printed.split()
    cli = subprocess.run([sys.executable, "-m", "schedc.runtime.cli.main", "run",
                          "examples/depth2.pol", "--param", "depth=4", "--json"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    metrics = json.loads(cli)["metrics"]
    assert float(mean_wait) == metrics["mean_wait"]
    assert int(jobs) == metrics["jobs"]
