"""Wall time of `schedc optimal --time-limit L` as its users run it, on long queues (issue 32:
the limit plus one second at 200 waiting jobs; before, 0.5 s took 28 s at 60 jobs and more
than 400 s at 120).

For each size N of --sizes a KTH-SP2-like state of N waiting jobs (seed 0, the generator of
tests/runtime/tools/optimal/test_time_limits.py) is written, then `schedc optimal` runs on it
with the FCFS/SJF/LJF planning policies for each limit of --limits, in a fresh process; prints
the command's wall time, its overrun past the limit, status and what gave the verdict.

    python -m benchmarks.bench_optimal_limits [--sizes 60 120 200] [--limits 0.5 1 2]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
POLICIES = [str(ROOT / "examples" / f"{n}.pol")
            for n in ("conservative", "conservative-sjf", "conservative-ljf")]
SCHEDC = Path(sys.executable).parent / "schedc"
CPUS = 100


def long_queue(jobs: int, seed: int = 0) -> dict:
    """A state of ``jobs`` waiting jobs behind a dozen running ones (as the test's)."""
    rng = random.Random(seed)
    now, used, running = 100_000, 0, []
    for i in range(12):
        width, estimate = rng.choice([1, 2, 4, 8, 16]), rng.randint(600, 40_000)
        if used + width > CPUS:
            break
        used += width
        start = now - rng.randint(1, estimate - 1)
        running.append({"id": i + 1, "submit": start - 10, "start": start,
                        "estimate": estimate, "run_time": estimate,
                        "request": {"cpus": width}})
    queue = []
    for i in range(jobs):
        width = rng.choice([1, 1, 1, 2, 3, 4, 5, 8, 12, 16, 24, 32, 64])
        estimate = rng.choice([60, 120, 300, 900, 1800, 3600, 7200, 14_400, 28_800,
                               rng.randint(60, 40_000)])
        queue.append({"id": 100 + i, "submit": now - rng.randint(0, 50_000),
                      "estimate": estimate, "run_time": estimate, "request": {"cpus": width}})
    return {"now": now, "capacity": {"cpus": CPUS}, "running": running, "queue": queue}


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_optimal_limits",
                                description=__doc__.splitlines()[0])
    p.add_argument("--sizes", nargs="+", type=int, default=[60, 120, 200])
    p.add_argument("--limits", nargs="+", type=float, default=[0.5, 1.0, 2.0])
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args()
    print(f"{'jobs':>4} {'limit':>5} {'wall':>6} {'over':>6} {'status':8} by")
    with tempfile.TemporaryDirectory() as folder:
        for n in args.sizes:
            state = Path(folder) / f"state{n}.json"
            state.write_text(json.dumps(long_queue(n)))
            for limit in args.limits:
                began = time.perf_counter()
                done = subprocess.run([str(SCHEDC), "optimal", *POLICIES, "--state", str(state),
                                       "--time-limit", str(limit), "--workers",
                                       str(args.workers), "--json"],
                                      capture_output=True, text=True, check=False)
                wall = time.perf_counter() - began
                status = by = "-"
                if done.returncode == 0:
                    facts = json.loads(done.stdout)
                    first = facts["instances"][0] if "instances" in facts else facts
                    status, by = first.get("status", "-"), first.get("solver", "-")
                else:
                    status = f"exit {done.returncode}"
                print(f"{n:4} {limit:5g} {wall:6.2f} {wall - limit:+6.2f} {status:8} {by}",
                      flush=True)


if __name__ == "__main__":
    main()
