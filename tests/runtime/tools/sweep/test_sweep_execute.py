"""What the sweep's Dask side records when a task does not end normally
(runtime/tools/sweep/execute.py): a run whose workers kept dying (`KilledWorker`), any other
error of the task, and a run's own error as the CLI prints it; and the local cluster's
workers made without Dask's samplers."""

from __future__ import annotations

from pathlib import Path

from distributed import KilledWorker

from schedc.runtime.tools.sweep.execute import _outcome, error_text, run_one
from schedc.runtime.tools.sweep.runs import RunDesc
from schedc.runtime.tools.sweep.spec import Transforms
from schedc.runtime.tools.sweep.store import Store
from tests.support.sweep_specs import EASY


class _Lost:
    status = "error"

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def result(self) -> None:
        raise self.error


class _Finished:
    """A task that ended normally; its result is fetched from the worker only when this
    process does not see the run's record in the store."""
    status = "finished"

    def __init__(self, status: str) -> None:
        self.fetched, self._status = 0, status

    def result(self) -> tuple[str, str]:
        self.fetched += 1
        return "key", self._status


def _desc(workload: str, key: str = "ab" * 32) -> RunDesc:
    return RunDesc(key, "easy", Path(workload).name, str(EASY), None, workload, (),
                   Transforms(limit=5), 0)


def test_a_killed_worker_is_a_failed_run_with_its_reason(tmp_path: Path) -> None:
    desc = _desc("t.swf")
    status = _outcome(_Lost(KilledWorker("schedc-run-x", None, 3)), desc,
                      str(tmp_path))
    record = Store(tmp_path).read(desc.key)
    assert status == "failed" and record["status"] == "failed"
    assert "KilledWorker" in record["error"] and "--retry-failed" in record["error"]
    _outcome(_Lost(RuntimeError("cancelled")), _desc("t.swf", "cd" * 32), str(tmp_path))
    assert Store(tmp_path).read("cd" * 32)["error"] == "RuntimeError: cancelled"


def test_an_ended_run_s_status_is_read_from_the_store_not_fetched(tmp_path: Path) -> None:
    desc = _desc("t.swf")
    Store(tmp_path).write({"key": desc.key, "status": "failed"})
    finished = _Finished("ok")
    assert _outcome(finished, desc, str(tmp_path)) == "failed" and finished.fetched == 0
    elsewhere = _Finished("ok")  # workers writing to a store this process does not see
    assert _outcome(elsewhere, _desc("t.swf", "cd" * 32), str(tmp_path)) == "ok"
    assert elsewhere.fetched == 1 and Store(tmp_path).read("cd" * 32) is None


def test_a_run_s_own_error_is_stored_as_a_diagnostic(tmp_path: Path) -> None:
    bad = tmp_path / "bad.swf"
    bad.write_text("not a trace\n")
    key, status = run_one(_desc(str(bad)), str(tmp_path))
    record = Store(tmp_path).read(key)
    assert status == "failed" and record["metrics"] == {} and record["run_s"] >= 0
    assert record["error"].startswith("error: ") and str(bad) in record["error"]
    assert error_text(ValueError("x")) == "ValueError: x"


_MARK: int | None = None  # set in this process before a local cluster starts


def _worker_settings() -> tuple[object, ...]:
    import dask

    return tuple(dask.config.get(k) for k in (
        "distributed.worker.profile.enabled", "distributed.admin.system-monitor.gil.enabled",
        "distributed.admin.tick.interval", "distributed.worker.memory.target",
        "distributed.worker.memory.spill"))


def _mark() -> int | None:
    import test_sweep_execute

    return test_sweep_execute._MARK


def test_the_local_cluster_does_not_sample_the_runs() -> None:
    # Dask's profiler, GIL monitor and 20 ms watchdog take the GIL from a run: off or slowed
    # in our local cluster only
    from schedc.runtime.tools.sweep.execute import client_for

    with client_for(None, 1) as client:
        assert set(client.run(_worker_settings).values()) == {(False, False, "1s", False,
                                                               False)}
    import dask

    assert dask.config.get("distributed.admin.tick.interval") == "20ms"  # restored


def test_the_first_workers_are_forked_and_a_restarted_one_spawned(monkeypatch) -> None:
    # forked: they inherit this process's modules (0.1 s to start, not 0.5 s); a worker
    # restarted while other threads run here is spawned, a fresh interpreter
    import os

    import test_sweep_execute

    from schedc.runtime.tools.sweep.execute import FIRST_START, client_for

    assert FIRST_START == "fork"  # on Linux
    monkeypatch.setattr(test_sweep_execute, "_MARK", os.getpid())
    with client_for(None, 2) as client:
        assert set(client.run(_mark).values()) == {os.getpid()}
        client.restart()
        assert set(client.run(_mark).values()) == {None}


def test_the_progress_bar_starts_once_the_cluster_is_up(monkeypatch) -> None:
    import argparse
    import sys

    from schedc.runtime.cli.sweep import _progress

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    args = argparse.Namespace(no_progress=False, json=False)
    with _progress(args, total=3, stored=1) as bar:
        assert bar.on and bar._bar is None
        bar.update(None, "ok")  # before the cluster: nothing to draw yet
        bar.start()
        bar.update(None, "failed")
        task = bar._bar.tasks[0]
        assert (task.completed, task.total, bar.failed) == (2, 3, 1)
    quiet = _progress(argparse.Namespace(no_progress=True, json=False), 3, 0)
    with quiet as bar:
        bar.start()
        assert bar._bar is None


def test_another_cluster_on_port_8787_is_no_warning() -> None:
    # Dask's default HTTP port may be a user's notebook cluster: Dask warned on stderr
    import socket
    import warnings

    from schedc.runtime.tools.sweep.execute import client_for

    holder = socket.socket()
    try:
        holder.bind(("", 8787))  # else another test's scheduler holds it: the same case
        holder.listen()
    except OSError:
        pass
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with client_for(None, 1) as client:
                assert client.submit(sum, [1, 2]).result() == 3
    finally:
        holder.close()
    assert not [w for w in caught if "8787" in str(w.message)]


class _Client:
    """Takes tasks as Dask's client does; each ends at once with its record stored."""

    def __init__(self, out: str) -> None:
        self.out, self.batches, self.taken = out, [], 0

    def map(self, fn, runs, **kwargs) -> list[_Finished]:
        self.batches.append(len(runs))
        futures = []
        for desc in runs:
            Store(self.out).write({"key": desc.key, "status": "ok"})
            futures.append(_Ended())
        return futures


class _Ended(_Finished):
    def __init__(self) -> None:
        super().__init__("ok")

    def add_done_callback(self, callback) -> None:
        callback(self)

    def release(self) -> None:
        pass


def test_the_cluster_holds_at_most_a_window_of_tasks(tmp_path: Path, monkeypatch) -> None:
    """A sweep of many runs gives them in batches, never more than WINDOW at a time on the
    cluster (the scheduler holds a few kB per task: 100,000 at once took gigabytes)."""
    from schedc.runtime.tools.sweep import execute

    monkeypatch.setattr(execute, "WINDOW", 5)
    monkeypatch.setattr(execute, "RELEASE_EVERY", 2)
    runs = [_desc("t.swf", f"{i:064x}") for i in range(13)]
    client, statuses, ended = _Client(str(tmp_path)), {}, []
    on_cluster = []

    def done(desc: RunDesc, status: str) -> None:
        ended.append(desc.key)
        on_cluster.append(sum(client.batches) - len(ended))

    execute._submit_and_wait(client, runs, str(tmp_path), statuses, done, None, None)
    assert client.batches == [5, 2, 2, 2, 2] and sum(client.batches) == len(runs)
    assert max(on_cluster) <= 5 and ended == [d.key for d in runs]
    assert set(statuses.values()) == {"ok"} and len(statuses) == len(runs)


def _heartbeat_failure_printed() -> bool:
    """In a worker: does a heartbeat that meets a closed scheduler still print?"""
    import logging
    import sys

    from distributed.comm.core import CommClosedError

    logger = logging.getLogger("distributed.worker")
    try:
        try:
            raise OSError("Stream is closed")
        except OSError as cause:
            raise CommClosedError("in <TCP (closed) heartbeat_worker>") from cause
    except CommClosedError:
        record = logger.makeRecord(logger.name, logging.ERROR, __file__, 1,
                                   "Failed to communicate with scheduler during heartbeat.",
                                   (), sys.exc_info())
    other = logger.makeRecord(logger.name, logging.ERROR, __file__, 1, "a real error", (), None)
    assert logger.filter(other)
    return bool(logger.filter(record))


def test_a_heartbeat_in_flight_at_shutdown_prints_no_traceback() -> None:
    # under load, a worker's heartbeat met the closing scheduler and printed two tracebacks
    # on the sweep's stderr (a CI failure): a local worker drops closed-connection records,
    # the restarted (spawned) worker too
    from schedc.runtime.tools.sweep.execute import client_for

    with client_for(None, 1) as client:
        assert list(client.run(_heartbeat_failure_printed).values()) == [False]
        client.restart()
        assert list(client.run(_heartbeat_failure_printed).values()) == [False]
