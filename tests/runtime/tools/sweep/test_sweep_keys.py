"""Run keys (runtime/tools/sweep/keys.py): the same in every process and folder, and changed by
every input that changes a result: the policy's text, an import's text, a param value, the
workload's bytes, a transform, the capacities, the seed, the schedc version."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from schedc.runtime.tools.sweep import keys
from schedc.runtime.tools.sweep.runs import plan
from schedc.runtime.tools.sweep.spec import read_spec
from schedc.runtime.tools.sweep.store import Store
from tests.support.repo import ROOT
from tests.support.sweep_specs import (
    DEPTH2,
    DEPTH_SJF,
    KEY_TRACE,
    key_folder,
    spec_key,
    write_spec,
)


def test_keys_are_the_same_in_another_process_and_folder(tmp_path: Path) -> None:
    a = key_folder(tmp_path)
    key = spec_key(a)
    code = ("import sys; from pathlib import Path; "
            "from tests.support.sweep_specs import spec_key; print(spec_key(Path(sys.argv[1])))")
    other = subprocess.run([sys.executable, "-c", code, str(a)], cwd=ROOT,
                           capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": "123"})
    assert other.stdout.strip() == key
    assert spec_key(key_folder(tmp_path, "b")) == key  # a copy elsewhere: same key
    assert len(key) == 64 and int(key, 16) >= 0


def test_every_input_changes_the_key(tmp_path: Path) -> None:
    a = key_folder(tmp_path)
    base = spec_key(a)
    seen = {base}

    def changed(key: str) -> None:
        assert key not in seen
        seen.add(key)

    changed(spec_key(a, depth=3))
    assert spec_key(a, depth=2) == base  # back again: the same
    changed(spec_key(a, extra="seeds = [1]"))
    changed(spec_key(a, extra="lenient = true"))
    changed(spec_key(a, extra="[capacity]\ncpus = 4"))
    changed(spec_key(a, extra="[transforms]\nload_factor = [120]"))
    changed(spec_key(a, extra="[transforms]\nlimit = [1]"))
    assert spec_key(a) == base
    (a / "t.swf").write_text(KEY_TRACE + "3 2 -1 10 1 -1 -1 1 10 -1 1 1 1 1 1 -1 -1 -1\n")
    changed(spec_key(a))
    (a / "t.swf").write_text(KEY_TRACE)
    assert spec_key(a) == base
    (a / "depth-sjf.pol").write_text(DEPTH_SJF.read_text() + "// a comment\n")
    changed(spec_key(a))
    shutil.copy(DEPTH_SJF, a)
    assert spec_key(a) == base
    (a / "depth2.pol").write_text(DEPTH2.read_text() + "// an import's comment\n")
    changed(spec_key(a))


def test_a_default_given_explicitly_is_the_same_run(tmp_path: Path) -> None:
    a = key_folder(tmp_path)
    spec = write_spec(a, 'policies = ["depth-sjf.pol"]\nworkloads = ["t.swf"]\n', "d.toml")
    (default,) = plan(read_spec(str(spec))).runs
    assert default.params == ()
    assert default.key == spec_key(a, depth=2)  # depth2.pol's default is 2: the same run


def test_the_version_is_in_the_key(monkeypatch) -> None:
    facts = {"seed": 0, "schedc": "0.1.0"}
    assert keys.run_key(facts) != keys.run_key({**facts, "schedc": "0.2.0"})
    assert keys.run_key(facts) == keys.run_key(dict(reversed(facts.items())))


def test_the_store_is_whole_and_lists_only_results(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.write({"key": "ab" * 32, "status": "ok"})
    (store.root / "ab" / f".{'ab' * 32}.json.x.tmp").write_text("{")  # a write cut off
    assert list(store.stored()) == ["ab" * 32]
    assert store.read("ab" * 32) == {"key": "ab" * 32, "status": "ok"}
    assert store.read("cd" * 32) is None
    assert not list(Store(tmp_path / "none").stored())
