"""What the experiment scripts share: errors and exit codes, the process pool, reproducible
JSON and paths, atomic figures, and the command-line wrapper."""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import sys
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from schedc.dsl import DiagnosticError
from schedc.runtime.atomicio import open_atomic, write_text_atomic
from schedc.runtime.engine.policy import RuntimePolicy
from schedc.runtime.run import RunOptions, prepared_policy
from schedc.runtime.workloads.workload import WorkloadError

ROOT = Path(__file__).resolve().parents[1]
WALL_KEY = "wall_seconds_not_reproducible"  # the only part of results.json that varies
EXIT_OK, EXIT_VIOLATION, EXIT_USER_ERROR = 0, 1, 2

Outcome = dict[str, Any]


class ExperimentError(Exception):
    """A user mistake (missing input, bad policy, bad option): one line, exit status 2."""


class SimulationFailed(Exception):
    """The runtime monitor stopped a run (a policy bug): plain message, picklable."""


def load_policy(path: str) -> RuntimePolicy:
    """The policy as `run_policy` runs it with no options (its params' defaults)."""
    return prepared_policy(path, RunOptions())


def run_all(tasks: Sequence[Any], jobs: int, run_task: Callable[[Any], Outcome],
            progress: Callable[[Outcome, int, int], Outcome],
            longest_first: Callable[[Sequence[Any]], list[Any]]) -> dict[str, Outcome]:
    """Every task's outcome by key; the same whatever ``jobs`` (each run is deterministic)."""
    outcomes: dict[str, Outcome] = {}
    if jobs == 1:
        for task in tasks:
            outcomes[task.key] = progress(run_task(task), len(outcomes) + 1, len(tasks))
        return outcomes
    with _pool(jobs) as pool:
        futures = [pool.submit(run_task, task) for task in longest_first(tasks)]
        try:
            for future in as_completed(futures):
                result = future.result()
                outcomes[result["key"]] = progress(result, len(outcomes) + 1, len(tasks))
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    return outcomes


def _pool(jobs: int) -> Executor:
    # fork: the workers find the script's functions (it is no importable package module)
    # and inherit what it already loaded or generated
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    return ProcessPoolExecutor(max_workers=jobs, mp_context=context)


def num(x: float) -> int | float:
    return int(x) if float(x).is_integer() else x


def sha256(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def shown(path: str) -> str:
    """A path as results show it: relative to the repository when inside it (reproducible)."""
    p = Path(path).resolve()
    return p.relative_to(ROOT).as_posix() if p.is_relative_to(ROOT) else p.name


def dumps(results: dict[str, Any]) -> str:
    return json.dumps(results, indent=2, sort_keys=True, allow_nan=False) + "\n"


def without_wall_times(text: str) -> str:
    """results.json minus its wall times: byte-identical across reruns and --jobs."""
    data = json.loads(text)
    data.pop(WALL_KEY, None)
    return dumps(data)


def row(cells: Iterable[object]) -> str:
    return "| " + " | ".join(map(str, cells)) + " |"


def save_figure(fig: Any, path: Path) -> None:
    with open_atomic(path, binary=True) as out:
        # no timestamp in the metadata: the same results give the same bytes
        fig.savefig(out, format="png", dpi=110, metadata={"Software": None})


def add_output_options(p: argparse.ArgumentParser, folder: Path) -> None:
    """--out (default the script's own folder) and --jobs, as every script has them."""
    p.add_argument("--out", default=str(folder), metavar="DIR",
                   help=f"output folder (default {shown(str(folder))})")
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="worker processes")


def write_results(out: Path, results: dict[str, Any], table: str,
                  write_figure: Callable[[dict[str, Any], Path], bool]) -> bool:
    """results.json, results.md and figure.png into ``out`` (each whole or not at all);
    False if the figure was skipped (no matplotlib)."""
    write_text_atomic(out / "results.json", dumps(results))
    write_text_atomic(out / "results.md", table)
    return write_figure(results, out / "figure.png")


def policy_path(given: str) -> str:
    """A relative path not found here is tried from the repository root (the defaults)."""
    path = Path(given)
    if not path.is_absolute() and not path.exists() and (ROOT / path).exists():
        path = ROOT / path
    if not path.is_file():
        raise ExperimentError(f"policy file not found: {given}")
    return str(path)


def one_line(exc: Exception) -> str:
    """The first diagnostic of a policy or workload mistake, on one line."""
    if isinstance(exc, WorkloadError):  # before DiagnosticError, its base: no help shown
        where = ":".join(str(x) for x in (exc.path, exc.line, exc.col) if x is not None)
        return f"{where}: {exc.message}"
    if isinstance(exc, DiagnosticError):
        d = exc.diagnostics[0]
        where = ":".join(str(x) for x in (d.file, d.line, d.col) if x is not None)
        more = f" (+{len(exc.diagnostics) - 1} more: schedc check)" if exc.diagnostics[1:] else ""
        hint = f" ({d.help})" if d.help else ""
        return f"{where + ': ' if where else ''}{d.message}{hint}{more}"
    return str(exc)


def command(parser: argparse.ArgumentParser, experiment: Callable[[argparse.Namespace], Any],
            argv: Sequence[str] | None = None) -> int:
    """Run ``experiment`` on the parsed ``argv``: user mistakes end in one line, never a
    traceback."""
    args = parser.parse_args(argv)
    try:
        experiment(args)
    except (ExperimentError, DiagnosticError) as exc:  # WorkloadError too
        print(f"error: {one_line(exc)}", file=sys.stderr)
        return EXIT_USER_ERROR
    except SimulationFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_VIOLATION
    except OSError as exc:  # e.g. an unwritable --out
        print(f"error: {exc.strerror or exc}: {exc.filename or ''}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return EXIT_OK
