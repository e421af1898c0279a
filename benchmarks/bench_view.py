"""What naming processors and drawing figures cost, per trace: the simulation of EASY, the
processor ids (`processor_runs`) computed after it, `--jobs-out` (schedc and Batsim
formats) and the Gantt chart (PNG and SVG, with the SVG's size). `schedc run` without
--jobs-out computes no ids at all: this is the cost only of the runs that ask for them.

    python -m benchmarks.bench_view [--traces NAME ...] [--repeat N]

Each time is the least of --repeat runs (seconds). Traces are read from $SCHEDC_TRACES,
else ../shared/traces; KTH-SP2 also from the package.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRACES = ("KTH-SP2-1996-2.1-cln.swf.gz", "LANL-CM5-1994-4.1-cln.swf.gz",
          "NASA-iPSC-1993-3.1-cln.swf.gz", "lublin_256.swf.gz")


def least(repeat: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def measure(name: str, path: Path, repeat: int, out: Path) -> str:
    """One table row: the least of ``repeat`` times of each step, on EASY's schedule."""
    from schedc.runtime.results.allocation import processor_runs
    from schedc.runtime.results.batsim import write_batsim_jobs
    from schedc.runtime.results.metrics import write_jobs_csv
    from schedc.runtime.results.plots.run import gantt_figure
    from schedc.runtime.results.plots.save import save_figure
    from schedc.runtime.run import RunOptions, run_policy

    easy = ROOT / "examples" / "easy.pol"
    runs = [run_policy(easy, path, RunOptions()) for _ in range(repeat)]
    result = runs[0]
    schedule = result.schedule
    simulate = min(r.wall for r in runs)  # the simulation alone, as `schedc run` times it
    ids = least(repeat, lambda: processor_runs(schedule))
    jobs = least(repeat, lambda: write_jobs_csv(schedule, out / "jobs.csv"))
    batsim = least(repeat, lambda: write_batsim_jobs(schedule, out / "b.csv"))
    png = least(1, lambda: save_figure(gantt_figure(result), out / "g.png"))
    svg = least(1, lambda: save_figure(gantt_figure(result), out / "g.svg"))
    size = (out / "g.svg").stat().st_size
    return (f"| {name} | {len(schedule.records):,} | {simulate:.2f} | {ids:.2f} | "
            f"{jobs:.2f} | {batsim:.2f} | {png:.2f} | {svg:.2f} | {size / 1e6:.2f} MB |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_view",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--traces", nargs="+", default=list(TRACES), metavar="NAME")
    parser.add_argument("--repeat", type=int, default=3, metavar="N")
    args = parser.parse_args(argv)
    folder = Path(os.environ.get("SCHEDC_TRACES") or ROOT.parent / "shared" / "traces")
    print("| trace | jobs | simulate | processor ids | --jobs-out | batsim | Gantt PNG | "
          "Gantt SVG | SVG size |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.traces:
            path = folder / name
            if not path.exists():
                print(f"| {name} | not found in {folder} |")
                continue
            print(measure(name, path, args.repeat, Path(tmp)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
