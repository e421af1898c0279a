"""Running a sweep's runs on Dask distributed, one code path for one machine and many: a
`LocalCluster` of one single-threaded worker process per core by default, or an existing
cluster's scheduler (`dask scheduler` / `dask worker`, dask-jobqueue).

Each run is one task, `run_one`, which makes the run with `run_policy` and writes its record
into the store itself: a finished run is on disk before its task ends, whatever happens to
the client later. Any exception of a run is that run's failed record, not the sweep's end;
a run whose workers keep dying (Dask's `KilledWorker`) is recorded failed by the client with
that reason. dask is imported inside the functions, so the CLI starts fast."""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.util
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any

from schedc.runtime.run import OptionError, WorkloadCache
from schedc.runtime.sweep.runs import RunDesc
from schedc.runtime.sweep.store import FAILED, OK, Store

# Workloads loaded by this worker process, reused by its next runs on the same file
_CACHE: WorkloadCache = {}
_CACHE_SIZE = 6  # workloads kept per process (a whole LANL-CM5 is about 100 MB)
SCHEDULER_TIMEOUT = "10s"  # to connect to --scheduler
RELEASE_EVERY = 1000  # ended tasks the cluster keeps (a few kB each) before they are released
RETRIES = 2  # Dask's retries of a task that raised (a run's own errors are caught)
# How the local cluster's first workers start ("spawn" where fork is not available)
FIRST_START = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"


def run_one(desc: RunDesc, out: str) -> tuple[str, str]:
    """Make one run and store its record; return (key, status)."""
    started = time.perf_counter()
    try:
        record = ok_record(desc, _run(desc))
    except Exception as error:  # noqa: BLE001 - any failure is this run's result
        record = failed_record(desc, error_text(error))
    record["run_s"] = round(time.perf_counter() - started, 6)
    Store(out).write(record)
    return desc.key, record["status"]


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
# CPU and the GIL from the runs when the workers fill the cores: with all of them on, 2
# workers on 2 cores made a run 7% slower than alone. A run's memory is its workload's.
QUIET = {
    "distributed.worker.profile.enabled": False,  # a stack sample every 10 ms
    "distributed.admin.system-monitor.gil.enabled": False,
    "distributed.admin.system-monitor.interval": "5s",  # was 500 ms
    "distributed.admin.tick.interval": "1s",  # the event loop's watchdog, was 20 ms
    "distributed.worker.memory.monitor-interval": "1s",  # was 100 ms
    "distributed.worker.memory.target": False,  # nothing to spill: results are small
    "distributed.worker.memory.spill": False,
    "distributed.worker.memory.pause": False,
    # Without Dask's MALLOC_TRIM_THRESHOLD_=65536: giving memory back to the OS at every
    # free made a run 3% slower; a worker's memory is its workloads, kept anyway
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
                               silence_logs=logging.ERROR)
    with cluster:
        yield cluster


class _Forked:
    """What multiprocessing's after-fork registry holds (weakly: kept alive here)."""


_FORKED = _Forked()
_registered = False
# Dask's and its libraries' loggers, which report the cancelled tasks and closed
# connections of a cluster shut down in the middle of a sweep
NOISY = ("distributed", "tornado", "asyncio", "bokeh")


def _ignore_sigint(_: object) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


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
            ready: Callable[[], None] | None = None) -> dict[str, str]:
    """Run ``runs`` (already missing from the store) and return each key's status; ``ready``
    is called once the cluster is up, ``done`` as each run ends, in the order they end."""
    statuses: dict[str, str] = {}
    if not runs:  # a finished sweep resumed: no cluster, not even dask's import
        return statuses
    try:
        with client_for(scheduler, workers) as client:
            _submit_and_wait(client, runs, out, statuses, done, ready)
    except KeyboardInterrupt:
        quieten_after_interrupt()
        raise
    return statuses


def _submit_and_wait(client: Any, runs: Sequence[RunDesc], out: str,
                     statuses: dict[str, str], done: Callable[[RunDesc, str], None] | None,
                     ready: Callable[[], None] | None) -> None:
    try:
        if ready is not None:
            ready()
        # One message for every task, in plan order: a worker's cache serves its next runs
        futures = client.map(run_one, runs, out=out, key=[f"schedc-run-{d.key}" for d in runs],
                             pure=False, retries=RETRIES)
        # Each ended run is queued by a Dask callback and this thread sleeps until one is
        # (`as_completed` polls every 100 ms in this thread, competing with the workers);
        # Ctrl-C still interrupts the wait
        ended: queue.SimpleQueue[tuple[Any, RunDesc]] = queue.SimpleQueue()
        for future, desc in zip(futures, runs, strict=True):
            future.add_done_callback(partial(_queue_ended, ended, desc))
        read: list[Any] = []
        for _ in runs:
            future, desc = ended.get()
            status = _outcome(future, desc, out)
            statuses[desc.key] = status
            read.append(future)
            if len(read) == RELEASE_EVERY:
                _release(read)
            if done is not None:
                done(desc, status)
    except KeyboardInterrupt:  # before the client and the cluster close, which log
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
