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
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from schedc.runtime.run import OptionError, WorkloadCache
from schedc.runtime.sweep.runs import RunDesc
from schedc.runtime.sweep.store import FAILED, OK, Store

# Workloads loaded by this worker process, reused by its next runs on the same file
_CACHE: WorkloadCache = {}
_CACHE_SIZE = 6  # workloads kept per process (a whole LANL-CM5 is about 100 MB)
SCHEDULER_TIMEOUT = "10s"  # to connect to --scheduler
RETRIES = 2  # Dask's retries of a task that raised (a run's own errors are caught)


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


@contextmanager
def client_for(scheduler: str | None, workers: int | None) -> Iterator[Any]:
    """A Dask client of the cluster at ``scheduler``, else of a local cluster of
    ``workers`` single-threaded processes (default: one per core), quiet, no dashboard."""
    import os

    from distributed import Client, LocalCluster

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

    n = workers or os.cpu_count() or 1
    # No statistical profiler sampling the runs' stacks every 10 ms, nor GIL monitor: they
    # take the GIL from the simulation (a run was a fifth slower in a worker than alone)
    with dask.config.set({"distributed.worker.profile.enabled": False,
                          "distributed.admin.system-monitor.gil.enabled": False}), \
            LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                         dashboard_address=None, silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client:
        yield client


def execute(runs: Sequence[RunDesc], out: str, scheduler: str | None = None,
            workers: int | None = None,
            done: Callable[[RunDesc, str], None] | None = None) -> dict[str, str]:
    """Run ``runs`` (already missing from the store) and return each key's status; ``done``
    is called as each run ends, in the order they end."""
    statuses: dict[str, str] = {}
    if not runs:  # a finished sweep resumed: no cluster, not even dask's import
        return statuses
    from distributed import as_completed

    with client_for(scheduler, workers) as client:
        by_future = {}
        for desc in runs:  # in submission order: a worker's cache serves its next runs
            future = client.submit(run_one, desc, out, key=f"schedc-run-{desc.key}",
                                   pure=False, retries=RETRIES)
            by_future[future] = desc
        for future in as_completed(by_future):
            desc = by_future.pop(future)
            status = _outcome(future, desc, out)
            statuses[desc.key] = status
            future.release()
            if done is not None:
                done(desc, status)
    return statuses


def _outcome(future: Any, desc: RunDesc, out: str) -> str:
    """The run's status; a task that never ended is stored failed with the reason."""
    from distributed import KilledWorker

    try:
        _, status = future.result()
        return status
    except KilledWorker:
        reason = ("KilledWorker: the workers running this run died (the scheduler's allowed "
                  "failures reached); rerun with --retry-failed")
    except Exception as error:  # noqa: BLE001 - the sweep goes on
        reason = error_text(error)
    Store(out).write({**failed_record(desc, reason), "run_s": None})
    return FAILED
