"""Simulation speed and memory of `schedc run`, measured on whole processes.

Prints, for EASY and conservative backfilling on KTH-SP2 and LANL-CM5: wall time of the whole
`schedc run` process (start-up, imports, parsing, simulation), simulated jobs per second, and
peak resident memory; then the time for 25k, 50k, 100k and 200k jobs (prefixes of LANL-CM5, and
LANL-CM5 twice in a row for 200k) to show linear growth.

    python -m benchmarks.bench_simulate [--repeat 3] [--traces ../shared/traces]

Each figure is the best of --repeat runs (the least disturbed by other load on the machine).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def schedc_command() -> list[str]:
    exe = shutil.which("schedc")
    return [exe] if exe else [sys.executable, "-m", "schedc.runtime.cli.main"]


def run_once(policy: Path, workload: Path) -> tuple[float, float, dict]:
    """Wall seconds, peak RSS in MB, and the JSON result of one `schedc run` process."""
    command = schedc_command() + ["run", str(policy), "--workload", str(workload), "--json",
                                  "--no-progress"]
    # ru_maxrss of children is the max over all children so far, so each run goes through a
    # tiny wrapper process whose only child is that run: its figure is that run's own peak.
    # The wrapper also times the child alone, without its own start-up.
    wrapper = ("import resource,subprocess,sys,time;t=time.perf_counter();"
               "r=subprocess.run(sys.argv[1:],capture_output=True,text=True);"
               "t=time.perf_counter()-t;"
               "sys.stdout.write(r.stdout);sys.stderr.write(r.stderr);"
               "print(t,resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,file=sys.stderr);"
               "sys.exit(r.returncode)")
    done = subprocess.run([sys.executable, "-c", wrapper, *command], capture_output=True,
                          text=True)
    if done.returncode != 0:
        raise SystemExit(f"schedc failed ({done.returncode}):\n{done.stderr}")
    elapsed_text, peak_text = done.stderr.strip().splitlines()[-1].split()
    elapsed, peak_kb = float(elapsed_text), int(peak_text)
    return elapsed, peak_kb / 1024, json.loads(done.stdout)


def best_of(repeat: int, policy: Path, workload: Path) -> tuple[float, float, dict]:
    runs = [run_once(policy, workload) for _ in range(repeat)]
    best = min(runs, key=lambda r: r[0])
    return best[0], max(r[1] for r in runs), best[2]


def swf_prefix(source: Path, jobs: int, target: Path, copies: int = 1) -> None:
    """Write the header and the first `jobs` records of `source`; with copies > 1 the records
    are repeated, each copy shifted after the previous one's last submission."""
    with gzip.open(source, "rt") as handle:
        lines = handle.read().splitlines()
    header = [line for line in lines if line.startswith(";")]
    records = [line for line in lines if line.strip() and not line.startswith(";")]
    out = list(header)
    shift = 0
    number = 0
    for _ in range(copies):
        last_submit = 0
        for line in records:
            fields = line.split()
            number += 1
            fields[0] = str(number)
            fields[1] = str(int(fields[1]) + shift)
            last_submit = int(fields[1])
            out.append(" ".join(fields))
            if number >= jobs:
                break
        shift = last_submit + 1
        if number >= jobs:
            break
    target.write_text("\n".join(out) + "\n")


def calibration() -> float:
    """Seconds for a 10-million-iteration Python loop, best of 3: this machine's speed now
    (shared machines vary by tens of percent within minutes)."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        total = 0
        for i in range(10_000_000):
            total += i
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_simulate",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--traces", type=Path, default=ROOT.parent / "shared" / "traces")
    args = parser.parse_args()
    kth = args.traces / "KTH-SP2-1996-2.1-cln.swf.gz"
    lanl = args.traces / "LANL-CM5-1994-4.1-cln.swf.gz"
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, "
          f"best of {args.repeat} runs, whole `schedc run` process; "
          f"10M-iteration loop: {calibration():.2f} s")
    print(f"{'policy':<14}{'trace':<10}{'jobs':>9}{'wall s':>9}{'jobs/s':>10}{'peak MB':>9}")
    for policy in ("easy", "conservative"):
        for name, trace in (("KTH-SP2", kth), ("LANL-CM5", lanl)):
            wall, peak, result = best_of(args.repeat, EXAMPLES / f"{policy}.pol", trace)
            jobs = result["metrics"]["jobs"]
            print(f"{policy:<14}{name:<10}{jobs:>9,}{wall:>9.2f}{jobs / wall:>10,.0f}"
                  f"{peak:>9.0f}")
    print("\nscaling (easy, prefixes of LANL-CM5; 200k = LANL-CM5 twice):")
    print(f"{'jobs':>9}{'wall s':>9}{'s per 100k jobs':>17}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in (25_000, 50_000, 100_000, 200_000):
            path = Path(tmp) / f"lanl-{size}.swf"
            swf_prefix(lanl, size, path, copies=2 if size > 120_000 else 1)
            wall, _, result = best_of(args.repeat, EXAMPLES / "easy.pol", path)
            jobs = result["metrics"]["jobs"]
            print(f"{jobs:>9,}{wall:>9.2f}{wall / jobs * 100_000:>17.2f}")


if __name__ == "__main__":
    main()
