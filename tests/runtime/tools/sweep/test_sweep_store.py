"""The sweep's store under bad records and faults (issue 32): a record that is not one is
named and made again (not exit 70); an unwritable store is refused before any run; one sweep
at a time per folder (a lock, a dead holder's taken over); a run past the per-run timeout is
recorded failed while the sweep goes on; SIGTERM leaves no temporary file in the store."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from schedc.runtime.tools.sweep import execute as ex
from schedc.runtime.tools.sweep.runs import RunDesc
from schedc.runtime.tools.sweep.spec import Transforms
from schedc.runtime.tools.sweep.store import LOCK, Store, record_problem
from schedc.runtime.tools.sweep.tables import WALL, read_rows
from tests.support.sweep_specs import EASY, run_cli, write_spec

SPEC = 'policies = ["@EXAMPLES/easy.pol", "@EXAMPLES/fcfs.pol"]\n[transforms]\nlimit = [30]\n'


@pytest.fixture(scope="module")
def scheduler():
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=":0", scheduler_kwargs={"dashboard": False},
                      silence_logs=logging.ERROR) as cluster:
        yield cluster.scheduler_address


def _rows(out: Path) -> list[dict]:
    return [{k: v for k, v in r.items() if k != WALL} for r in read_rows(str(out / "results.csv"))]


def _records(out: Path) -> list[Path]:
    return sorted((out / "runs").glob("*/*.json"))


BAD = {
    "wrong types": lambda r: {**r, "metrics": {"mean_wait": "soon"}},
    "no status": lambda r: {k: v for k, v in r.items() if k != "status"},
    "a list": lambda r: [r],
    "categories of text": lambda r: {**r, "categories": ["x"]},
    "deep nesting": lambda r: {**r, "provenance": json.loads("[" * 100 + "]" * 100)},
}
TEXT = {
    "NaN": lambda text: text.replace('"mean_wait": ', '"mean_wait": NaN, "x": ', 1),
    "beyond floats": lambda text: text.replace('"mean_wait": ', '"mean_wait": 1e999, "x": ', 1),
    "nested past recursion": lambda text: '{"key": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "not JSON": lambda text: text[: len(text) // 2],
}


def test_records_that_are_not_records_are_named_and_made_again(tmp_path: Path, scheduler,
                                                               capsys) -> None:
    spec = write_spec(tmp_path, SPEC)
    out = tmp_path / "spec.out"
    code, _, _ = run_cli(capsys, "sweep", spec, "--scheduler", scheduler, "--no-figures")
    assert code == 0
    before = _rows(out)
    for damage in [*BAD.values(), *TEXT.values()]:
        victim = _records(out)[0]
        if damage in TEXT.values():
            victim.write_text(damage(victim.read_text()))
        else:
            victim.write_text(json.dumps(damage(json.loads(victim.read_text()))))
        code, stdout, err = run_cli(capsys, "sweep", spec, "--scheduler", scheduler,
                                    "--json", "--no-figures")
        assert code == 0 and "Traceback" not in err, err
        assert f"warning: {victim} is not a run's record" in err
        assert json.loads(stdout)["made"] == 1
        assert record_problem(json.loads(victim.read_text()), victim.stem) is None
        assert _rows(out) == before


def test_an_unwritable_store_is_refused_before_any_run(tmp_path: Path, capsys,
                                                       monkeypatch) -> None:
    spec = write_spec(tmp_path, SPEC)
    out = tmp_path / "spec.out"
    out.mkdir()
    (out / "runs").write_text("a file where the store goes")  # root may write any folder

    def no_cluster(*args: object) -> None:
        raise AssertionError("a cluster started")

    monkeypatch.setattr(ex, "client_for", no_cluster)
    code, _, err = run_cli(capsys, "sweep", spec, "--no-progress")
    assert code == 2 and "Traceback" not in err
    assert err.startswith(f"error: cannot write the sweep's store in {out / 'runs'}")
    assert "help: " in err and len(err.splitlines()) == 2


def test_a_second_sweep_on_the_folder_is_refused_at_once(tmp_path: Path, capsys) -> None:
    spec = write_spec(tmp_path, SPEC)
    out = tmp_path / "spec.out"
    out.mkdir()
    holder = Store(out)
    holder.lock()  # as a sweep running in this folder holds it
    began = time.monotonic()
    code, _, err = run_cli(capsys, "sweep", spec, "--no-progress")
    assert code == 2 and time.monotonic() - began < 5
    assert err.splitlines()[0] == (f"error: the folder {out} is in use by another sweep "
                                   f"(pid {os.getpid()})")
    assert err.splitlines()[1].startswith("help: wait for it to end")
    holder.close()
    assert not list((out / "runs").glob("*/*.json"))


def test_the_lock_of_a_dead_sweep_is_taken_over(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (tmp_path / LOCK).write_text(f"{dead}\n")  # its holder gone: the kernel dropped the lock
    store = Store(tmp_path)
    store.records(set())
    assert (tmp_path / LOCK).read_text() == f"{os.getpid()}\n"
    store.close()


def test_a_forked_child_does_not_keep_the_folder_locked(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.lock()
    ready, told = os.pipe()
    child = os.fork()
    if child == 0:  # a local worker forked from the sweep: it outlives its parent's lock
        os.write(told, b".")  # the fork's hooks have run by now
        time.sleep(3)
        os._exit(0)
    try:
        assert os.read(ready, 1) == b"."
        store.close()
        Store(tmp_path).lock()  # would be refused if the child held the lock's file
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        os.close(ready)
        os.close(told)


def _desc(workload: str, key: str) -> RunDesc:
    return RunDesc(key, "easy", Path(workload).name, str(EASY), None, workload, (),
                   Transforms(limit=5), 0)


_HANG: set[str] = set()  # keys whose run never ends, in the workers forked from here
_real_run = ex._run


def _hanging_run(desc: RunDesc) -> object:
    if desc.key in _HANG:
        time.sleep(3600)
    return _real_run(desc)


def test_a_run_past_the_timeout_is_failed_and_the_sweep_goes_on(tmp_path: Path,
                                                                monkeypatch) -> None:
    from schedc.runtime.run import bundled_trace

    frozen, fine = "ab" * 32, "cd" * 32
    monkeypatch.setattr(ex, "_run", _hanging_run)
    monkeypatch.setattr(sys.modules[__name__], "_HANG", {frozen})
    runs = [_desc(str(bundled_trace()), frozen), _desc(str(bundled_trace()), fine)]
    began = time.monotonic()
    statuses = ex.execute(runs, str(tmp_path), workers=2, timeout=1.0)
    assert statuses == {frozen: "failed", fine: "ok"}
    assert time.monotonic() - began < 30
    record = Store(tmp_path).read(frozen)
    assert record["error"].startswith("timed out: still running after the per-run timeout "
                                      "of 1 s") and "--retry-failed" in record["error"]
    # a later sweep (another session) makes it again: here, without the hang
    monkeypatch.setattr(ex, "_run", _real_run)
    key, status = ex.run_one(runs[0], str(tmp_path), timeout=60.0, session="later")
    assert (key, status) == (frozen, "ok") and Store(tmp_path).read(frozen)["status"] == "ok"


def test_a_timeout_must_be_positive(tmp_path: Path) -> None:
    from schedc.runtime.run import OptionError

    with pytest.raises(OptionError, match="per-run timeout of 0 s"):
        ex.execute([_desc("t.swf", "ab" * 32)], str(tmp_path), timeout=0)


WORKER = textwrap.dedent("""\
    import os, sys, threading, time
    from schedc.runtime.tools.sweep import execute, store

    execute._arm_worker()  # as a worker forked or spawned for a sweep does
    def slow_fsync(fd):
        print("writing", flush=True)
        time.sleep(60)
    store.os.fsync = slow_fsync  # the record's temporary file stays while it is written
    threading.Thread(target=store.Store(sys.argv[1]).write,
                     args=({"key": "ab" * 32, "status": "ok"},), daemon=True).start()
    time.sleep(60)
""")


def test_sigterm_to_a_worker_leaves_no_temporary_file(tmp_path: Path) -> None:
    worker = subprocess.Popen([sys.executable, "-c", WORKER, str(tmp_path)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert worker.stdout.readline() == "writing\n"  # a run's thread is mid-write
        assert list((tmp_path / "runs").glob("*/.*.tmp"))
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=30) == -signal.SIGTERM
    finally:
        worker.kill()
        worker.wait()
    assert not list((tmp_path / "runs").glob("*/.*"))


@pytest.mark.parametrize("given, expected", [(None, ex.RUN_TIMEOUT), ("2.5", 2.5)])
def test_the_run_timeout_flag_reaches_the_runs(given, expected, tmp_path: Path, capsys,
                                               monkeypatch) -> None:
    spec = write_spec(tmp_path, SPEC)
    seen: list[float | None] = []

    def no_runs(runs, out, *args, timeout=None, **kwargs) -> dict[str, str]:
        seen.append(timeout)
        return {}

    monkeypatch.setattr(ex, "execute", no_runs)
    flags = [] if given is None else ["--run-timeout", given]
    run_cli(capsys, "sweep", spec, "--no-progress", *flags)
    assert seen == [expected]


def test_a_run_timeout_flag_must_be_positive(tmp_path: Path, capsys) -> None:
    spec = write_spec(tmp_path, SPEC)
    code, _, err = run_cli(capsys, "sweep", spec, "--run-timeout", "0")
    assert code == 2 and err.startswith("error: --run-timeout 0: give a positive number")
