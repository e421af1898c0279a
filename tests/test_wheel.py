"""A wheel built from the repository carries the grammar, the prelude and the bundled trace, and
its `schedc run` works in a fresh virtual environment, away from the checkout."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    # From a copy of the sources: a build in the checkout shares its `build/` folder with
    # earlier builds and with whatever else runs there at the same time.
    source = tmp_path_factory.mktemp("source") / "schedc"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "*.egg-info", ".hypothesis", ".pytest_cache", ".ruff_cache",
        "__pycache__"))
    done = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out),
                           str(source)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"building the wheel failed:\n{done.stdout}\n{done.stderr}")
    (path,) = out.glob("schedc-*.whl")
    return path


def test_wheel_contents(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "schedc/grammar/policy.lark" in names
    assert "schedc/dsl/prelude/std.pol" in names
    assert "schedc/runtime/data/KTH-SP2-1996-2.1-cln.swf.gz" in names
    # Every package of the sources is in it (pyproject.toml lists them one by one)
    for room in ("dsl", "runtime", "grammar"):
        for init in (ROOT / room).rglob("__init__.py"):
            inside = init.relative_to(ROOT).as_posix()
            assert f"schedc/{inside}" in names, f"{inside}: add its package to pyproject.toml"
    # Only the schedc namespace lands in site-packages: no generic top-level modules.
    top_level = {name.split("/")[0] for name in names if not name.startswith("schedc-")}
    assert top_level == {"schedc"}


def test_wheel_runs_in_fresh_venv(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(wheel)],
                             capture_output=True, text=True)
    assert install.returncode == 0, install.stderr
    done = subprocess.run([str(env_dir / "bin" / "schedc"), "run",
                           str(ROOT / "examples" / "easy.pol"), "--json"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["workload"].endswith("KTH-SP2-1996-2.1-cln.swf.gz")
    assert result["metrics"]["jobs"] > 28_000
    # Verification works from the wheel too (z3 comes with the install).
    proved = subprocess.run([str(env_dir / "bin" / "schedc"), "verify",
                             str(ROOT / "examples" / "easy.pol"), "--queued", "2",
                             "--running", "2", "--format", "json"],
                            capture_output=True, text=True, cwd=tmp_path)
    assert proved.returncode == 0, proved.stderr
    (report,) = json.loads(proved.stdout)
    assert {v["status"] for v in report["verdicts"]} == {"proved"}
