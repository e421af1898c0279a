"""Record, then compare, what `schedc run` prints for every example on every shared trace.

A refactoring must not change a single byte of a run's results. This script runs
`schedc run EXAMPLE --workload TRACE --json --jobs-out JOBS.csv --no-progress` for every
`examples/**/*.pol` on every trace of `--traces`, and keeps each run's exit status, its
standard output (the JSON), its standard error and the jobs table in a directory:

    python -m benchmarks.same_outputs record /tmp/before   # on the old commit
    python -m benchmarks.same_outputs record /tmp/after    # on the new commit
    python -m benchmarks.same_outputs compare /tmp/before /tmp/after

`compare` prints each run whose files differ and exits 1 if any does. Files are compared
byte for byte: a run's JSON holds no timings, so the same code gives the same bytes (its
provenance names the schedc version and the policy's hash: a run recorded before a version
bump or an edit of an example differs there).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
def schedc_command() -> list[str]:
    exe = shutil.which("schedc")
    return [exe] if exe else [sys.executable, "-m", "schedc.runtime.cli"]


def run_one(policy: Path, trace: Path, out: Path) -> str:
    name = f"{policy.relative_to(EXAMPLES).with_suffix('')}@{trace.name}".replace("/", "~")
    with tempfile.TemporaryDirectory() as tmp:
        # run in the scratch folder with the same arguments every time: the result's
        # provenance holds the command line, which must not name a random folder
        jobs = Path(tmp) / "jobs.csv"
        done = subprocess.run(
            schedc_command() + ["run", str(policy), "--workload", str(trace.resolve()),
                                "--json", "--jobs-out", jobs.name, "--no-progress"],
            capture_output=True, text=True, cwd=tmp)
        target = out / name
        target.mkdir(parents=True, exist_ok=True)
        (target / "rc").write_text(f"{done.returncode}\n")
        (target / "stdout.json").write_text(done.stdout)
        (target / "stderr").write_text(done.stderr)
        if jobs.exists():
            shutil.copyfile(jobs, target / "jobs.csv")
    return name


def record(out: Path, traces: Path, workers: int) -> None:
    policies = sorted(EXAMPLES.rglob("*.pol"))
    trace_files = sorted(traces.glob("*.swf*"))
    if not trace_files:
        raise SystemExit(f"no traces in {traces}")
    out.mkdir(parents=True, exist_ok=True)
    runs = [(p, t) for t in trace_files for p in policies]
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for count, name in enumerate(pool.map(lambda r: run_one(r[0], r[1], out), runs), 1):
            print(f"[{count}/{len(runs)}] {name}", flush=True)


def compare(before: Path, after: Path) -> int:
    names = sorted({p.name for p in before.iterdir()} | {p.name for p in after.iterdir()})
    differ = 0
    for name in names:
        files = sorted({f.name for d in (before, after) if (d / name).is_dir()
                        for f in (d / name).iterdir()})
        for file in files:
            a, b = before / name / file, after / name / file
            if not (a.exists() and b.exists() and a.read_bytes() == b.read_bytes()):
                differ += 1
                print(f"DIFFERS {name}/{file}")
    print(f"{len(names)} runs compared, {differ} files differ")
    return 1 if differ else 0


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.same_outputs",
                                     description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("out", type=Path)
    rec.add_argument("--traces", type=Path, default=ROOT.parent / "shared" / "traces")
    rec.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    cmp = sub.add_parser("compare")
    cmp.add_argument("before", type=Path)
    cmp.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "record":
        record(args.out, args.traces, args.jobs)
    else:
        raise SystemExit(compare(args.before, args.after))


if __name__ == "__main__":
    main()
