"""The core install runs the core commands, and a command whose optional part is missing
says in one line which extra to install (runtime/cli/extras.py): `pip install schedc`
holds lark, attrs, rich and z3-solver; ortools, Dask, pyarrow and matplotlib are extras."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from schedc.runtime.cli import extras
from schedc.runtime.cli.main import main
from tests.support.repo import ROOT

OPTIONAL = sorted({m for modules in extras.EXTRAS.values() for m in modules} | {"pandas"})
# A finder first on sys.meta_path that refuses every optional package, as if not installed
BLOCK = f"""
import sys
class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {OPTIONAL!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, Blocked())
from schedc.runtime.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("argv", [
    ["check", "examples/easy.pol"],
    ["compile", "examples/easy.pol"],
    ["run", "examples/easy.pol", "--limit", "500", "--json"],
    ["compare", "examples/fcfs.pol", "examples/easy.pol", "--limit", "500", "--json"],
    ["verify", "examples/fcfs.pol", "--format", "json"],
    ["workload", "info", "--json"],
], ids=lambda argv: argv[0])
def test_the_core_commands_need_no_optional_package(argv: list[str]) -> None:
    done = subprocess.run([sys.executable, "-c", BLOCK, *argv], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(("argv", "extra"), [
    (["optimal", "examples/conservative.pol", "--state", "STATE.json"], "optimal"),
    (["sweep", "examples/sweeps/easy-depth.toml"], "sweep"),
    (["plot", "run", "examples/easy.pol", "-o", "g.png"], "plot"),
    (["run", "examples/easy.pol", "--report", "r.html"], "plot"),
    (["compare", "examples/fcfs.pol", "examples/easy.pol", "--report", "r.html"], "plot"),
], ids=lambda v: v[0] if isinstance(v, list) else v)
def test_a_missing_extra_is_named_before_any_work(argv: list[str], extra: str, monkeypatch,
                                                   capsys, tmp_path) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: object) -> object:
        return None if name in extras.EXTRAS[extra] else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    monkeypatch.chdir(ROOT)
    assert main([*argv[:-1], str(tmp_path / argv[-1])] if "-o" in argv or "--report" in argv
                else argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and err.startswith("error: ") and "which this installation" \
        in err, err
    assert f"pip install 'schedc[{extra}]'" in err
    assert not list(tmp_path.iterdir())  # nothing written


def test_the_extras_are_pyproject_s() -> None:
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    optional = declared["optional-dependencies"]
    for extra, modules in extras.EXTRAS.items():
        names = " ".join(optional[extra]).replace("-", "_").lower()
        assert all(m in names for m in modules if m != "distributed"), (extra, names)
    core = " ".join(declared["dependencies"])
    assert not any(m in core for m in OPTIONAL)
    assert set(optional["all"][0].split("[")[1].rstrip("]").split(",")) == set(extras.EXTRAS)
