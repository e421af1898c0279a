"""Output files are written whole or not at all, with the mode a plain open() would give."""

from __future__ import annotations

import os
import stat

import pytest

from schedc.runtime.atomicio import open_atomic, write_text_atomic


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_new_file_gets_the_umask_mode_not_a_private_one(tmp_path) -> None:
    old = os.umask(0o022)
    try:
        write_text_atomic(tmp_path / "out.json", "{}\n")
    finally:
        os.umask(old)
    assert mode(tmp_path / "out.json") == 0o644
    assert (tmp_path / "out.json").read_text() == "{}\n"


def test_a_replaced_file_keeps_its_mode(tmp_path) -> None:
    target = tmp_path / "out.csv"
    target.write_text("old\n")
    target.chmod(0o640)
    write_text_atomic(target, "new\n")
    assert mode(target) == 0o640 and target.read_text() == "new\n"


def test_an_error_leaves_the_old_file_and_no_temp_file(tmp_path) -> None:
    target = tmp_path / "out.csv"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), open_atomic(target) as out:
        out.write("half")
        raise RuntimeError("boom")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]
