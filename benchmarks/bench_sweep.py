"""Speed of `schedc sweep` (issue 15's targets):

(a) RUNS EASY runs on the bundled KTH-SP2 trace (examples/easy.pol, seeds 0..RUNS-1: the
    same simulation each time, distinct keys) as a sweep on 2 local workers (`schedc sweep`
    as a process: interpreter start, imports, LocalCluster start-up and tables included),
    against the same runs one after another in one process (`run_policy` and its metrics,
    one workload cache): the ratio of the wall times (target <= 0.55). The one-process
    runs are timed both ways: as a process, start-up included like the sweep's, and their
    loop alone (stricter: the sweep's start-up is counted and theirs is not);
    The machine's own limit is printed beside it: the same runs as two plain processes of
    RUNS/2 runs each, started together (no Dask, no sweep): on 2 cores the two slow each
    other down (shared caches and memory), which no sweep can undo;
(b) the sweep machinery's overhead per run: the wall time of the same sweep on 1 worker
    minus the runs' own time in their worker (`run_s` of each stored record), divided by
    the runs (target < 50 ms);
(c) resuming a finished sweep of TINY tiny runs (the first 10 jobs): the wall time of
    `schedc sweep SPEC` as a process, start-up included, when every run is stored
    (target < 5 s).

    python -m benchmarks.bench_sweep [--runs 100] [--tiny 1000] [--repeat 1]

With --repeat K, (a) is measured K times (one-process runs, then the sweep, in turn) and
each ratio is printed with their median: on a virtual machine a run's time varies by 10%
from one minute to the next. The machine's load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from schedc.runtime.run import WorkloadCache, run_policy
from schedc.runtime.tools.sweep.runs import plan
from schedc.runtime.tools.sweep.spec import read_spec
from schedc.runtime.tools.sweep.store import Store

ROOT = Path(__file__).resolve().parents[1]
EASY = ROOT / "examples" / "easy.pol"
SELF = [sys.executable, "-m", "benchmarks.bench_sweep"]  # this script in a process of its own


def spec_file(folder: Path, seeds: int, limit: int | None) -> Path:
    path = folder / f"easy-{seeds}-{limit}.toml"
    text = f'policies = ["{EASY}"]\nseeds = {seeds}\n'
    if limit is not None:
        text += f"[transforms]\nlimit = [{limit}]\n"
    path.write_text(text, encoding="utf-8")
    return path


def timed_sweep(spec: Path, out: Path, *flags: str) -> float:
    """The wall time of `schedc sweep` as a process, as a user waits for it (interpreter
    start and imports included)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "schedc.runtime.cli", "sweep", str(spec),
                           "--out", str(out), "--no-progress", "--json", *flags],
                          capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"the sweep failed ({done.returncode}): {done.stderr}")
    return wall


def sequential(spec: Path) -> float:
    """The wall time of the runs one after another in this process."""
    runs = plan(read_spec(str(spec))).runs
    cache: WorkloadCache = {}
    started = time.perf_counter()
    for desc in runs:  # with its metrics, as a sweep stores them
        run_policy(desc.policy_file, desc.workload_file, desc.options(), cache).metrics()
    return time.perf_counter() - started


def sequential_process(spec: Path) -> tuple[float, float]:
    """The runs one after another in a process of their own: (its wall time as a process,
    the wall time of its loop)."""
    started = time.perf_counter()
    done = subprocess.run([*SELF, "--sequential", str(spec)], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return time.perf_counter() - started, float(done.stdout)


def halves_in_parallel(folder: Path, runs: int) -> float:
    """The wall time of two one-process loops of ``runs // 2`` runs each, started together
    as processes (start-up included, as in sequential_process)."""
    half = spec_file(folder, runs // 2, None)
    started = time.perf_counter()
    children = [subprocess.Popen([*SELF, "--sequential", str(half)], cwd=ROOT,
                                 stdout=subprocess.DEVNULL) for _ in range(2)]
    if any(child.wait() for child in children):
        sys.exit("a one-process loop failed")
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_sweep",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100, help="EASY runs of (a) and (b)")
    parser.add_argument("--tiny", type=int, default=1000, help="tiny runs resumed in (c)")
    parser.add_argument("--repeat", type=int, default=1, help="measurements of (a)")
    parser.add_argument("--sequential", metavar="SPEC", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.sequential:  # the child of sequential_process
        print(sequential(Path(args.sequential)))
        return
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
          f"{os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        spec = spec_file(folder, args.runs, None)
        pairs = []
        for k in range(args.repeat):
            process, loop = sequential_process(spec)
            two = timed_sweep(spec, folder / f"two{k}", "--workers", "2")
            halves = halves_in_parallel(folder, args.runs)
            pairs.append((two / process, two / loop, two, process, loop, halves / process))
            if args.repeat > 1:
                print(f"    (a) #{k + 1}: sweep {two:.2f} s / one process {process:.2f} s = "
                      f"{two / process:.3f}; / its loop {loop:.2f} s = {two / loop:.3f}; "
                      f"two plain processes {halves:.2f} s = {halves / process:.3f}",
                      flush=True)
        ratio, _, two, process, _, _ = sorted(pairs)[len(pairs) // 2]  # the median (upper)
        strict = sorted(p[1] for p in pairs)[len(pairs) // 2]
        loop = sorted(p[4] for p in pairs)[len(pairs) // 2]
        limit = sorted(p[5] for p in pairs)[len(pairs) // 2]
        one = timed_sweep(spec, folder / "one", "--workers", "1")
        tiny = spec_file(folder, args.tiny, 10)
        timed_sweep(tiny, folder / "tiny", "--workers", "2")
        store = Store(folder / "one")
        own = sum(store.read(k)["run_s"] for k in store.stored())
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "schedc.runtime.cli", "sweep", str(tiny),
                               "--out", str(folder / "tiny"), "--json"],
                              capture_output=True, text=True, check=True)
        resume = time.perf_counter() - started
        facts = json.loads(done.stdout)
        assert facts["made"] == 0 and facts["stored_before"] == args.tiny, facts
    median = " (the median of the --repeat)" if args.repeat > 1 else ""
    print(f"(a) {args.runs} EASY runs on KTH-SP2: one after another in one process {process:.1f} "
          f"s (its loop {loop:.1f} s), sweep on 2 workers {two:.1f} s: ratio {ratio:.3f}"
          f"{median} (target <= 0.55); against the loop alone {strict:.3f}")
    print(f"    the machine's limit: the runs as two plain processes of {args.runs // 2} at "
          f"once / one process: {limit:.3f}")
    print(f"(b) sweep on 1 worker {one:.1f} s, the runs' own time {own:.1f} s: overhead "
          f"{(one - own) / args.runs * 1000:.0f} ms per run (target < 50 ms)")
    print(f"(c) resuming a finished sweep of {args.tiny} runs: {resume:.2f} s (target < 5 s)")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
