"""Running a sweep's runs on Dask distributed, one code path for one machine and many: a
`LocalCluster` of one single-threaded worker process per core by default, or an existing
cluster's scheduler (`dask scheduler` / `dask worker`, dask-jobqueue).

Each run is one task, `run_one`, which makes the run with `run_policy` and writes its record
into the store itself: a finished run is on disk before its task ends, whatever happens to
the client later. Any exception of a run is that run's failed record, not the sweep's end;
a run whose workers keep dying (Dask's `KilledWorker`) is recorded failed by the client with
that reason. A run that outlives the per-run timeout is recorded failed by its worker, which
then ends (a thread cannot be stopped; a nanny starts another worker), and the sweep goes
on; `--retry-failed` makes it again. dask is imported inside the functions, so the CLI
starts fast.

Nothing is left half-written by SIGTERM: a worker's records are written through
`atomicio.held_temporary`, whose temporary files the worker removes when SIGTERM ends it
(`remove_temporaries_at_termination`), and SIGTERM of the sweep itself closes the cluster
as Ctrl-C does, then ends the sweep by the signal."""

from __future__ import annotations

import itertools
import logging
import multiprocessing
import multiprocessing.util
import os
import queue
import secrets
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any

from schedc.runtime.atomicio import remove_temporaries, remove_temporaries_at_termination
from schedc.runtime.run import OptionError, WorkloadCache
from schedc.runtime.tools.sweep.runs import RunDesc
from schedc.runtime.tools.sweep.store import FAILED, OK, Store

# Workloads loaded by this worker process, reused by its next runs on the same file
_CACHE: WorkloadCache = {}
_CACHE_SIZE = 6  # workloads kept per process (a whole LANL-CM5 is about 100 MB)
SCHEDULER_TIMEOUT = "10s"  # to connect to --scheduler
RELEASE_EVERY = 1000  # ended tasks the cluster keeps (a few kB each) before they are released
WINDOW = 10_000  # tasks given to the cluster at a time (refilled RELEASE_EVERY at once)
RETRIES = 2  # Dask's retries of a task that raised (a run's own errors are caught)
# How the local cluster's first workers start ("spawn" where fork is not available)
FIRST_START = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
# Seconds a run may take before it is recorded failed and its worker ended: far above any
# run we know (a whole LANL-CM5 trace runs in minutes), yet a frozen run ends the same day
RUN_TIMEOUT = 3 * 3600.0
TIMED_OUT = "timed_out"  # a record's field: the session (one sweep's execute) that gave up
EXIT_TIMED_OUT = 75  # a worker ended by the timeout (EX_TEMPFAIL of sysexits.h)


def run_one(desc: RunDesc, out: str, timeout: float | None = None,
            session: str = "") -> tuple[str, str]:
    """Make one run and store its record; return (key, status). With ``timeout``, a run
    still going after that many seconds is stored failed and the worker ends; the same
    task met again in the same ``session`` (Dask gives it to another worker) is not made."""
    _arm_worker()
    store = Store(out)
    if timeout is not None and _gave_up(store, desc.key, session):
        return desc.key, FAILED
    watch = _Watchdog(desc, out, timeout, session) if timeout is not None else None
    started = time.perf_counter()
    try:
        record = ok_record(desc, _run(desc))
    except Exception as error:  # noqa: BLE001 - any failure is this run's result
        record = failed_record(desc, error_text(error))
    record["run_s"] = round(time.perf_counter() - started, 6)
    if watch is not None and not watch.finish():
        return desc.key, FAILED  # given up on: the watchdog wrote its record
    store.write(record)
    return desc.key, record["status"]


def _gave_up(store: Store, key: str, session: str) -> bool:
    record = store.read(key)
    return record is not None and record.get(TIMED_OUT) == session


class _Watchdog:
    """Gives up on a run that outlives ``timeout``: its failed record stored, then the
    worker process ended (a run's thread cannot be stopped, and a frozen one holds the
    worker forever)."""

    def __init__(self, desc: RunDesc, out: str, timeout: float, session: str) -> None:
        self.desc, self.out, self.timeout, self.session = desc, out, timeout, session
        self._lock = threading.Lock()
        self._state = "running"
        self._timer = threading.Timer(timeout, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def finish(self) -> bool:
        """The run ended: True if in time (its record is the run's to store)."""
        self._timer.cancel()
        with self._lock:
            if self._state == "fired":
                return False
            self._state = "ended"
            return True

    def _fire(self) -> None:
        with self._lock:
            if self._state != "running":
                return
            self._state = "fired"
        record = failed_record(self.desc, timed_out_text(self.timeout))
        Store(self.out).write({**record, "run_s": None, TIMED_OUT: self.session})
        end_worker()


def timed_out_text(timeout: float) -> str:
    return (f"timed out: still running after the per-run timeout of {timeout:g} s, its "
            "worker was ended; raise the timeout (--run-timeout) and rerun with "
            "--retry-failed")


def end_worker() -> None:
    """End this worker process now, from any thread, leaving no temporary file."""
    remove_temporaries()
    os._exit(EXIT_TIMED_OUT)


_armed: list[bool] = []  # this process's SIGTERM handler is set (or asked for)


def _arm_worker() -> None:
    """SIGTERM to this worker removes the temporary files of its writes: set once per
    process, in its main thread (where Python runs handlers), through the worker's event
    loop when a run's thread asks (workers spawned after the first, or another cluster's)."""
    if _armed:
        return
    _armed.append(True)
    if threading.current_thread() is threading.main_thread():
        remove_temporaries_at_termination()
        return
    try:
        from distributed import get_worker

        get_worker().loop.add_callback(remove_temporaries_at_termination)
    except (ImportError, ValueError):  # not in a Dask worker: nothing to arm
        pass


def _run(desc: RunDesc) -> Any:
    from schedc.runtime.run import run_policy

    if len(_CACHE) >= _CACHE_SIZE:  # the oldest first: runs come grouped by workload
        del _CACHE[next(iter(_CACHE))]
    return run_policy(desc.policy_file, desc.workload_file, desc.options(), cache=_CACHE)


def ok_record(desc: RunDesc, result: Any) -> dict[str, Any]:
    metrics = dict(result.metrics())
    jobs = metrics.pop("category_jobs")
    responses = metrics.pop("category_mean_response")
    categories = [{"category": c, "jobs": n, "mean_response": r}
                  for c, (n, r) in enumerate(zip(jobs, responses, strict=True)) if n]
    provenance = result.provenance.to_json() if result.provenance else None
    return {**_described(desc), "status": OK, "error": None, "metrics": metrics,
            "categories": categories, "provenance": provenance,
            "wall_s": round(result.wall, 6)}


def failed_record(desc: RunDesc, error: str) -> dict[str, Any]:
    return {**_described(desc), "status": FAILED, "error": error, "metrics": {},
            "categories": [], "provenance": None, "wall_s": None}


def _described(desc: RunDesc) -> dict[str, Any]:
    """What the run was, for a person reading the store (the tables use the plan's)."""
    return {"key": desc.key, "policy": desc.policy, "workload": desc.workload,
            "params": dict(desc.params), "transforms": dict(desc.transforms.items()),
            "seed": desc.seed}


def error_text(error: BaseException) -> str:
    """A run's error in one or a few lines: a diagnostic as the CLI prints it."""
    from schedc.dsl.diagnostics import DiagnosticError

    if isinstance(error, DiagnosticError):
        from schedc.dsl import render_diagnostics

        return render_diagnostics(error.diagnostics).strip()
    return f"{type(error).__name__}: {error}".strip()


# The local cluster's settings, for as long as it lives: Dask's samplers and monitors wake
# every few ms in each worker (and every nanny polls its worker from this process), taking
# CPU and the GIL from the runs when the workers fill the cores (runs measurably slower than
# alone: benchmarks/bench_sweep.py). A run's memory is its workload's.
QUIET = {
    "distributed.worker.profile.enabled": False,  # a stack sample every 10 ms
    "distributed.admin.system-monitor.gil.enabled": False,
    "distributed.admin.system-monitor.interval": "5s",  # Dask: 500 ms
    "distributed.admin.tick.interval": "1s",  # the event loop's watchdog (Dask: 20 ms)
    "distributed.worker.memory.monitor-interval": "1s",  # Dask: 100 ms
    "distributed.worker.memory.target": False,  # nothing to spill: results are small
    "distributed.worker.memory.spill": False,
    "distributed.worker.memory.pause": False,
    # Without Dask's MALLOC_TRIM_THRESHOLD_=65536: giving memory back to the OS at every
    # free slows the runs; a worker's memory is its workloads, kept anyway
    "distributed.nanny.pre-spawn-environ": {"OMP_NUM_THREADS": 1, "MKL_NUM_THREADS": 1,
                                            "OPENBLAS_NUM_THREADS": 1},
}


@contextmanager
def client_for(scheduler: str | None, workers: int | None) -> Iterator[Any]:
    """A Dask client of the cluster at ``scheduler``, else of a local cluster of
    ``workers`` single-threaded processes (default: one per core), quiet, no dashboard."""
    from distributed import Client

    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=SCHEDULER_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as error:
            raise OptionError(f"cannot reach the Dask scheduler at {scheduler}: {error}",
                              help="start one with `dask scheduler` (and workers with `dask "
                              "worker ADDRESS`), or drop --scheduler for a local cluster"
                              ) from None
        with client:
            yield client
        return
    import dask

    with dask.config.set(QUIET), _local_cluster(workers) as cluster, Client(cluster) as client:
        yield client


@contextmanager
def _local_cluster(workers: int | None) -> Iterator[Any]:
    """One single-threaded worker process per core (or ``workers``). The first workers are
    forked from this process, which has schedc imported: ready in 0.1 s, not the 0.5 s of a
    fresh interpreter importing Dask and schedc; this process runs no other thread of ours
    yet (the progress bar starts once they are up). A worker restarted later (after it died)
    is spawned, Dask's default: by then other threads run here."""
    import os

    import dask
    from distributed import LocalCluster

    n = workers or os.cpu_count() or 1
    _workers_ignore_ctrl_c()
    with dask.config.set({"distributed.worker.multiprocessing-method": FIRST_START}):
        # no dashboard, and the scheduler's HTTP server (health, metrics) on a free port:
        # its default, 8787, may be another cluster's (Dask then warns on stderr)
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                               dashboard_address=":0", scheduler_kwargs={"dashboard": False},
                               silence_logs=logging.ERROR, preload=[__name__])
    with cluster:
        yield cluster


class _ClosedConnections(logging.Filter):
    """Drops a log record whose exception is a closed connection. A local worker's only
    peer is the scheduler in the sweep's own process, and its connection closes only when
    the cluster shuts down: a heartbeat then in flight was logged as an ERROR with two
    tracebacks on the sweep's stderr (seen under load, after every run had ended)."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        while error is not None:
            if type(error).__name__ in ("CommClosedError", "StreamClosedError"):
                return False
            error = error.__cause__ or error.__context__
        return True


def dask_setup(worker: Any) -> None:
    """Dask's preload hook, run in each local worker process (forked or spawned) once it
    has started: its closed-connection records at shutdown are not printed."""
    for name in ("distributed.worker", "distributed.core", "distributed.comm"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _ClosedConnections) for f in logger.filters):
            logger.addFilter(_ClosedConnections())


class _Forked:
    """What multiprocessing's after-fork registry holds (weakly: kept alive here)."""


_FORKED = _Forked()
_registered = False
# Dask's and its libraries' loggers, which report the cancelled tasks and closed
# connections of a cluster shut down in the middle of a sweep
NOISY = ("distributed", "tornado", "asyncio", "bokeh")


def _ignore_sigint(_: object) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the sweep's own (`_terminates`)
    remove_temporaries_at_termination()
    _armed.append(True)


def _workers_ignore_ctrl_c() -> None:
    """The local workers forked from here ignore SIGINT: Ctrl-C on a terminal reaches the
    whole process group, and each worker printed its tracebacks (30 lines) while this process
    was shutting it down anyway. Registered once; it runs in each forked child only."""
    global _registered
    if not _registered:
        multiprocessing.util.register_after_fork(_FORKED, _ignore_sigint)
        _registered = True


def quieten_after_interrupt() -> None:
    """Nothing more from Dask once Ctrl-C is taken: the shutdown's log lines, the tracebacks
    of its threads and of what the interpreter's exit collects are noise after
    "interrupted", which says it all (the store keeps every run that ended)."""
    for name in NOISY:
        logger = logging.getLogger(name)
        logger.setLevel(logging.CRITICAL + 1)
        logger.propagate = False
    threading.excepthook = lambda _args: None
    sys.unraisablehook = lambda _args: None


def execute(runs: Sequence[RunDesc], out: str, scheduler: str | None = None,
            workers: int | None = None,
            done: Callable[[RunDesc, str], None] | None = None,
            ready: Callable[[], None] | None = None,
            timeout: float | None = RUN_TIMEOUT) -> dict[str, str]:
    """Run ``runs`` (already missing from the store) and return each key's status; ``ready``
    is called once the cluster is up, ``done`` as each run ends, in the order they end;
    ``timeout``: seconds a run may take (None: no limit). The store is checked writable
    first. SIGTERM closes the cluster as Ctrl-C does, then ends this process by it."""
    statuses: dict[str, str] = {}
    if not runs:  # a finished sweep resumed: no cluster, not even dask's import
        return statuses
    Store(out).check_writable(d.key for d in runs)
    if timeout is not None and not timeout > 0:
        raise OptionError(f"a per-run timeout of {timeout:g} s: it must be positive",
                          help="give the seconds a run may take, e.g. 3600")
    try:
        with _terminates(), client_for(scheduler, workers) as client:
            _submit_and_wait(client, runs, out, statuses, done, ready, timeout)
    except KeyboardInterrupt:
        quieten_after_interrupt()
        raise
    except _Terminated:
        quieten_after_interrupt()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)  # the cluster closed: end as the signal does
        raise
    return statuses


class _Terminated(BaseException):
    """SIGTERM of the sweep, raised in its main thread to close the cluster on the way out."""


@contextmanager
def _terminates() -> Iterator[None]:
    """While the cluster lives, SIGTERM raises `_Terminated` in the main thread (if nothing
    else handles it): the local workers are closed by their nannies, not left running."""
    main = threading.current_thread() is threading.main_thread()
    if not main or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def terminated(signum: int, frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends it at once
        raise _Terminated

    signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:
        if signal.getsignal(signal.SIGTERM) is terminated:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _submit_and_wait(client: Any, runs: Sequence[RunDesc], out: str,
                     statuses: dict[str, str], done: Callable[[RunDesc, str], None] | None,
                     ready: Callable[[], None] | None, timeout: float | None) -> None:
    try:
        if ready is not None:
            ready()
        # Tasks in plan order (a worker's cache serves its next runs), at most WINDOW on
        # the cluster at a time: the scheduler holds a few kB per task, and a whole sweep of
        # 100,000 runs given at once took gigabytes. The session tells a task given up on by
        # its timeout from the same run resumed later
        session = secrets.token_hex(8)
        waiting = iter(runs)
        # Each ended run is queued by a Dask callback and this thread sleeps until one is
        # (`as_completed` polls every 100 ms in this thread, competing with the workers);
        # Ctrl-C still interrupts the wait
        ended: queue.SimpleQueue[tuple[Any, RunDesc]] = queue.SimpleQueue()

        def submit(count: int) -> int:
            batch = list(itertools.islice(waiting, count))
            if batch:
                futures = client.map(run_one, batch, out=out, timeout=timeout,
                                     session=session,
                                     key=[f"schedc-run-{d.key}" for d in batch],
                                     pure=False, retries=RETRIES)
                for future, desc in zip(futures, batch, strict=True):
                    future.add_done_callback(partial(_queue_ended, ended, desc))
            return len(batch)

        on_cluster = submit(WINDOW)
        read: list[Any] = []
        for _ in runs:
            future, desc = ended.get()
            on_cluster -= 1
            status = _outcome(future, desc, out)
            statuses[desc.key] = status
            read.append(future)
            if len(read) == RELEASE_EVERY:
                _release(read)
            if on_cluster <= WINDOW - RELEASE_EVERY:
                on_cluster += submit(RELEASE_EVERY)
            if done is not None:
                done(desc, status)
    except (KeyboardInterrupt, _Terminated):  # before the client and the cluster close
        quieten_after_interrupt()
        raise


def _release(futures: list[Any]) -> None:
    """Let the cluster forget these ended tasks, together: released one by one, each woke
    the scheduler and a worker in the middle of a run (100 runs on 2 workers: this
    process's CPU 0.31 s, not 0.22 s, and the runs' wall time 2% longer)."""
    for future in futures:
        future.release()
    futures.clear()


def _queue_ended(ended: queue.SimpleQueue[tuple[Any, RunDesc]], desc: RunDesc,
                 future: Any) -> None:
    ended.put((future, desc))


def _outcome(future: Any, desc: RunDesc, out: str) -> str:
    """The run's status; a task that never ended is stored failed with the reason."""
    from distributed import KilledWorker

    if future.status == "finished":
        # run_one stored the record before its task ended: read here, not fetched from the
        # worker, which is running its next run by now
        record = Store(out).read(desc.key)
        if record is not None:
            return record["status"]
    try:  # not in this process's view of the store (another file system): from the worker
        _, status = future.result()
        return status
    except KilledWorker:
        reason = ("KilledWorker: the workers running this run died (the scheduler's allowed "
                  "failures reached); rerun with --retry-failed")
    except Exception as error:  # noqa: BLE001 - the sweep goes on
        reason = error_text(error)
    Store(out).write({**failed_record(desc, reason), "run_s": None})
    return FAILED
