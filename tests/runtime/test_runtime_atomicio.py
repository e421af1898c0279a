"""Output files are written whole or not at all, with the mode a plain open() would give."""

from __future__ import annotations

import os
import stat

import pytest

from schedc.runtime.atomicio import OutputError, check_output, open_atomic, write_text_atomic


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


# -- what the user pointed at is written to, never replaced -----------------------------------


def test_a_symlink_is_written_through_and_stays_a_link(tmp_path) -> None:
    real, link = tmp_path / "real.csv", tmp_path / "link.csv"
    real.write_text("old\n")
    link.symlink_to(real)
    write_text_atomic(link, "new\n")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new\n"


def test_a_dangling_symlink_creates_its_target(tmp_path) -> None:
    real, link = tmp_path / "real.csv", tmp_path / "link.csv"
    link.symlink_to(real)
    write_text_atomic(link, "new\n")
    assert link.is_symlink() and real.read_text() == "new\n"


def test_dash_is_standard_output(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    write_text_atomic("-", "to stdout\n")
    assert capsys.readouterr().out == "to stdout\n"
    assert not (tmp_path / "-").exists()


def test_a_fifo_is_streamed_to_not_replaced(tmp_path) -> None:
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_text_atomic(fifo, "through the pipe\n")
    reader.join(5)
    assert got == [b"through the pipe\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_device_is_a_named_error_and_stays_a_device() -> None:
    with pytest.raises(OutputError) as caught:
        write_text_atomic("/dev/full", "x" * 100_000)
    assert str(caught.value) == "cannot write /dev/full: no space left on device"
    assert caught.value.help
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_write_error_names_the_users_path_not_the_temporary_file(tmp_path) -> None:
    target = tmp_path / "gone" / "out.csv"
    with pytest.raises(OutputError) as caught:
        write_text_atomic(target, "x\n")
    assert str(target) in str(caught.value) and ".tmp" not in str(caught.value)


@pytest.mark.parametrize("case, reason", [
    ("missing folder", "does not exist"), ("directory", "it is a directory"),
    ("read-only file", "read-only")])
def test_check_output_finds_the_mistake_before_any_work(tmp_path, case, reason) -> None:
    path = {"missing folder": tmp_path / "no" / "out.csv", "directory": tmp_path,
            "read-only file": tmp_path / "ro.csv"}[case]
    if case == "read-only file":
        path.write_text("")
        path.chmod(0o444)
        if os.access(path, os.W_OK):
            pytest.skip("running as root: every file is writable")
    with pytest.raises(OutputError, match=reason):
        check_output(path)


def test_check_output_accepts_dash_devices_and_new_files(tmp_path) -> None:
    check_output("-")
    check_output(tmp_path / "new.csv")
    if os.path.exists("/dev/null"):
        check_output("/dev/null")
