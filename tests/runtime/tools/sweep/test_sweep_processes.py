"""`schedc sweep` as its users run it, in processes: on a real cluster (`dask scheduler` and
two `dask worker` processes on 127.0.0.1), a worker killed mid-sweep loses no run; and the
sweep itself killed with SIGKILL mid-sweep loses no finished run, and its rerun redoes none
of them (each stored file is the same bytes, untouched) and makes only the others."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from schedc.runtime.tools.sweep.tables import read_rows
from tests.support.sweep_specs import write_spec

BIN = Path(sys.executable).parent
# 16 runs of EASY-like policies on the first 4,000 jobs of KTH-SP2: long enough to be
# interrupted, short enough for a test
SPEC = """\
policies = ["@EXAMPLES/depth2.pol", "@EXAMPLES/depth-sjf.pol"]
[params]
depth = [0, 1, 2, 3]
[transforms]
limit = [4000]
load_factor = [100, 120]
"""
RUNS = 16


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.kill()
    process.wait(timeout=30)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[tuple[str, list[subprocess.Popen]]]:
    """A scheduler and two single-threaded workers (no nanny: a killed worker stays dead)."""
    folder = tmp_path_factory.mktemp("dask")
    address = f"tcp://127.0.0.1:{_free_port()}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "cwd": folder}
    processes = [subprocess.Popen([BIN / "dask", "scheduler", "--host", "127.0.0.1", "--port",
                                   address.rsplit(":", 1)[1], "--no-dashboard"], **quiet)]
    try:
        for i in range(2):
            processes.append(subprocess.Popen(
                [BIN / "dask", "worker", address, "--nthreads", "1", "--no-nanny",
                 "--no-dashboard", "--name", f"w{i}", "--local-directory", folder], **quiet))
        _wait_for_workers(address, 2)
        yield address, processes[1:]
    finally:
        for process in reversed(processes):
            _stop(process)


def _wait_for_workers(address: str, n: int) -> None:
    from distributed import Client

    with Client(address, timeout="60s") as client:
        client.wait_for_workers(n, timeout=60)


def _sweep(*args: object, **popen: object) -> subprocess.Popen:
    return subprocess.Popen([BIN / "schedc", "sweep", *map(str, args), "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **popen)  # type: ignore[call-overload]


def _stored(out: Path) -> dict[str, tuple[bytes, int]]:
    """Each stored run's file: its bytes and modification time (ns)."""
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns)
            for p in (out / "runs").glob("*/*.json")}


def _wait_until(out: Path, n: int, process: subprocess.Popen, limit: float = 120) -> None:
    deadline = time.monotonic() + limit
    while len(_stored(out)) < n:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no results in time"
        time.sleep(0.05)


def test_a_killed_worker_loses_no_run(cluster, tmp_path: Path) -> None:
    address, workers = cluster
    spec = write_spec(tmp_path, SPEC)
    out = tmp_path / "spec.out"
    sweep = _sweep(spec, "--scheduler", address, "--json")
    try:
        _wait_until(out, 2, sweep)
        workers[0].send_signal(signal.SIGKILL)  # its run in progress is lost with it
        stdout, stderr = sweep.communicate(timeout=180)
    finally:
        _stop(sweep)
    assert sweep.returncode == 0, stderr
    facts = json.loads(stdout)
    assert facts["runs"] == facts["made"] == RUNS and facts["failed"] == 0
    rows = read_rows(str(out / "results.csv"))
    assert len(rows) == RUNS and all(r["status"] == "ok" for r in rows)


def test_kill_9_of_the_sweep_loses_nothing_and_redoes_nothing(cluster, tmp_path: Path
                                                              ) -> None:
    spec = write_spec(tmp_path, SPEC)
    out = tmp_path / "spec.out"
    # the default local cluster: its worker processes are in the sweep's process group
    sweep = _sweep(spec, "--workers", "2", start_new_session=True)
    try:
        _wait_until(out, 3, sweep)
    finally:
        os.killpg(sweep.pid, signal.SIGKILL)
        sweep.wait(timeout=30)
    time.sleep(0.5)  # let the killed group go
    before = _stored(out)
    assert 3 <= len(before) < RUNS, "killed in the middle"
    address, _ = cluster
    rerun = _sweep(spec, "--scheduler", address, "--json")
    stdout, stderr = rerun.communicate(timeout=180)
    assert rerun.returncode == 0, stderr
    facts = json.loads(stdout)
    assert facts["stored_before"] == len(before)
    assert facts["made"] == RUNS - len(before) and facts["failed"] == 0
    after = _stored(out)
    assert len(after) == RUNS
    assert all(after[name] == before[name] for name in before)  # not one rewritten


def test_ctrl_c_prints_one_line_exits_130_and_the_rerun_resumes(tmp_path: Path) -> None:
    """Ctrl-C on a terminal signals the whole process group: the local cluster's workers
    too, which printed tracebacks of their own (30 lines each) before "interrupted"."""
    spec = write_spec(tmp_path, SPEC)
    out = tmp_path / "spec.out"
    sweep = _sweep(spec, "--workers", "2", start_new_session=True)
    try:
        _wait_until(out, 2, sweep)
        os.killpg(sweep.pid, signal.SIGINT)
        _, stderr = sweep.communicate(timeout=60)
    finally:
        _stop(sweep)
    assert sweep.returncode == 130
    assert stderr.strip() == "interrupted", stderr
    before = _stored(out)
    assert 2 <= len(before) < RUNS
    rerun = _sweep(spec, "--workers", "2", "--json")
    stdout, stderr = rerun.communicate(timeout=180)
    assert rerun.returncode == 0, stderr
    facts = json.loads(stdout)
    assert facts["stored_before"] == len(before) and facts["failed"] == 0
    assert facts["made"] == RUNS - len(before)


def _tables(out: Path) -> dict[str, list[dict]]:
    """The result tables, without the wall times (the one column a rerun changes)."""
    return {name: [{k: v for k, v in row.items() if k != "wall_s"}
                   for row in read_rows(str(out / name))]
            for name in ("results.csv", "categories.csv", "classes.csv", "summary.csv")}


def _group_gone(pgid: int, limit: float = 30) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_sigterm_of_the_sweep_closes_its_workers_and_the_rerun_gives_the_same_tables(
        cluster, tmp_path: Path) -> None:
    """SIGTERM to the sweep alone (not its group): it closes its local cluster as Ctrl-C
    does (no worker left running, no temporary file in the store) and dies of the signal;
    resumed, its tables are those of a sweep never interrupted, wall times apart."""
    spec = write_spec(tmp_path, SPEC)
    out = tmp_path / "spec.out"
    sweep = _sweep(spec, "--workers", "2", start_new_session=True)
    try:
        _wait_until(out, 2, sweep)
        sweep.send_signal(signal.SIGTERM)
        sweep.communicate(timeout=60)
    finally:
        _stop(sweep)
    assert sweep.returncode == -signal.SIGTERM
    assert _group_gone(sweep.pid), "a worker outlived the sweep"
    assert not list((out / "runs").glob("*/.*")), "a temporary file left in the store"
    before = _stored(out)
    assert 2 <= len(before) < RUNS
    address, _ = cluster
    rerun = _sweep(spec, "--scheduler", address, "--json", "--no-figures")
    stdout, stderr = rerun.communicate(timeout=180)
    assert rerun.returncode == 0, stderr
    assert json.loads(stdout)["made"] == RUNS - len(before)
    whole = _sweep(spec, "--scheduler", address, "--out", tmp_path / "whole", "--no-figures")
    _, stderr = whole.communicate(timeout=180)
    assert whole.returncode == 0, stderr
    assert _tables(out) == _tables(tmp_path / "whole")
