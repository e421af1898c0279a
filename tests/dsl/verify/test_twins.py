"""The simulator's pass (``PassWalk``, runtime/engine/walk.py) and the symbolic pass
(``PassEncoder``, dsl/verify/pass_encoding/) have the same named steps, each docstring naming
its twin and where it is: a rename or a move on one side that the other does not follow
fails here, before a reader follows a name that leads nowhere."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

from schedc.dsl.verify.pass_encoding.encoder import PassEncoder
from schedc.runtime.engine.walk import PassWalk

ROOT = Path(__file__).resolve().parents[3]
ENCODER = ROOT / "dsl" / "verify" / "pass_encoding"
# the steps of one pass, in the order the walk makes them
TWINS = ("walk", "visit", "fits_now", "start", "wait_or_reserve", "reserve", "best_rounds",
         "choose_size")
NAMED_ENCODER = re.compile(r"``PassEncoder\.(\w+)`` in (dsl/verify/pass_encoding/\w+\.py)")
NAMED_WALK = re.compile(r"`+PassWalk\.(\w+)`+")


def _defined_in(path: Path) -> set[str]:
    """The methods the classes of ``path`` define."""
    tree = ast.parse(path.read_text())
    return {item.name for node in tree.body if isinstance(node, ast.ClassDef)
            for item in node.body if isinstance(item, ast.FunctionDef)}


@pytest.mark.parametrize("step", TWINS)
def test_each_step_has_a_twin_of_its_name(step: str) -> None:
    assert inspect.isfunction(getattr(PassWalk, step, None)), f"PassWalk.{step}"
    assert inspect.isfunction(getattr(PassEncoder, step, None)), f"PassEncoder.{step}"


@pytest.mark.parametrize("step", TWINS)
def test_the_walk_names_its_twin_and_its_file(step: str) -> None:
    doc = inspect.getdoc(getattr(PassWalk, step)) or ""
    named = NAMED_ENCODER.findall(doc)
    assert named, f"PassWalk.{step}'s docstring names no ``PassEncoder.X`` in its file"
    for name, path in named:
        assert name == step
        assert name in _defined_in(ROOT / path), f"{path} does not define {name}"


@pytest.mark.parametrize("step", TWINS)
def test_the_encoder_names_its_twin(step: str) -> None:
    doc = inspect.getdoc(getattr(PassEncoder, step)) or ""
    assert NAMED_WALK.findall(doc) == [step], f"PassEncoder.{step}: {doc}"


def test_every_twin_named_exists() -> None:
    """Other docstrings name twins too (the slack's part of a reservation, the size rule's
    call): every name in them is a step of the other side."""
    walk_text = (ROOT / "runtime" / "engine" / "walk.py").read_text()
    for name, path in NAMED_ENCODER.findall(walk_text):
        assert name in _defined_in(ROOT / path), f"walk.py names {name} in {path}"
    for path in sorted(ENCODER.glob("*.py")):
        for name in NAMED_WALK.findall(path.read_text()):
            assert inspect.isfunction(getattr(PassWalk, name, None)), f"{path.name}: {name}"


def test_the_walk_lists_the_twins() -> None:
    """The module's doc lists the twin steps: the list is the one checked here."""
    doc = (ROOT / "runtime" / "engine" / "walk.py").read_text().split('"""')[1]
    listed = re.findall(r"``(\w+)``", doc.split("step for step:")[1].split("(")[0])
    assert tuple(listed) == TWINS
