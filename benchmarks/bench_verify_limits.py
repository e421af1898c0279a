"""What bounds `schedc verify`'s verdicts: the CPU time and Z3's resource units each property
of every shipped example takes, and how far past a small time limit a verification goes.

`--examples` (the default): each example of `examples/` and `examples/preemption/` verified
as `schedc verify FILE` does (its default bounds and --rlimit, counterexamples replayed, the
property across passes where it applies), with no time limit that could decide (`--timeout`
of a day), one line per property: its verdict, its CPU seconds (the `time` column: the
pass every property reads counted in each one's) and its Z3 work (`z3_work`), marked `R`
where the rlimit ran out. The defaults are sound when every property's CPU time is well
below the default --timeout: then the rlimit, not the clock, decides every verdict (the
same on a quiet and a busy machine).

`--overshoot`: verifications that would run for minutes (encoding-heavy and solver-heavy),
run with a small --timeout: how many CPU seconds each property's time column shows, and the
whole process's CPU time, against the limit.

    python -m benchmarks.bench_verify_limits [--only easy srpt ...] [--json-out FILE]
    python -m benchmarks.bench_verify_limits --overshoot [--timeout 2]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHORT = {"proved": "p", "violated": "V", "unknown": "?", "vacuous": "0"}
NO_CLOCK = "86400"  # a day: no example comes near it
# (what it stresses, schedc verify's arguments)
HEAVY = [
    ("encoding, rigid", ["--queued", "64", "--running", "64", "examples/easy.pol"]),
    ("encoding, preemptive", ["--queued", "64", "--running", "64", "--processors", "32",
                              "--property", "capacity", "examples/preemption/srpt.pol"]),
    ("encoding and Z3, preemptive", ["--queued", "12", "--running", "12", "--processors",
                                     "12", "--property", "capacity",
                                     "examples/preemption/srpt.pol"]),
    ("Z3, preemptive", ["--rlimit", "4000000000", "--processors", "8", "--property",
                        "mechanism", "examples/preemption/lsf-mig.pol"]),
]


def examples(only: list[str] | None) -> list[Path]:
    paths = [*sorted((ROOT / "examples").glob("*.pol")),
             *sorted((ROOT / "examples" / "preemption").glob("*.pol"))]
    return [p for p in paths if not only or p.stem in only]


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def verify(args: list[str]) -> tuple[list[dict], float, int]:
    """``schedc verify ARGS --format json`` in a process of its own: its verdicts, the
    process's CPU seconds and its exit status."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "verdicts.json"
        before = cpu_of_children()
        done = subprocess.run([sys.executable, "-m", "schedc.runtime.cli.main", "verify",
                               *args, "--format", "json", "-o", str(out)], cwd=ROOT,
                              capture_output=True, text=True)
        took = cpu_of_children() - before
        if done.returncode not in (0, 1, 3):
            raise SystemExit(f"schedc verify {' '.join(args)}: exit {done.returncode}\n"
                             f"{done.stderr}")
        return json.loads(out.read_text()), took, done.returncode


def by_rlimit(v: dict) -> bool:
    return v["status"] == "unknown" and "--rlimit" in (v["reason"] or "") \
        and "resource limit" in (v["reason"] or "")


def run_examples(only: list[str] | None, json_out: Path | None) -> None:
    rows = []
    print(f"{'example':<28}{'cpu s':>7}  property: verdict cpu-s z3-work (R: the rlimit "
          f"ran out, T: the time limit)")
    for path in examples(only):
        reports, took, _ = verify([str(path.relative_to(ROOT)), "--timeout", NO_CLOCK])
        verdicts = reports[0]["verdicts"]
        cells = []
        for v in verdicts:
            mark = "R" if by_rlimit(v) else "T" if "--timeout" in (v["reason"] or "") \
                and "CPU time" in (v["reason"] or "") else ""
            cells.append(f"{v['property'].split()[0]}={SHORT.get(v['status'], '?')}{mark}:"
                         f"{v['seconds']:.1f}s/{v['z3_work'] / 1e6:.1f}M")
            rows.append({"example": str(path.relative_to(ROOT)), "property": v["property"],
                         "status": v["status"], "seconds": v["seconds"],
                         "z3_work": v["z3_work"], "rlimit_ran_out": by_rlimit(v)})
        print(f"{path.stem:<28}{took:>7.1f}  {'  '.join(cells)}", flush=True)
    if rows:
        slowest = max(rows, key=lambda r: r["seconds"])
        print(f"slowest property: {slowest['example']} {slowest['property']}: "
              f"{slowest['seconds']:.1f} CPU s, {slowest['z3_work']:,} Z3 units "
              f"({'the rlimit ran out' if slowest['rlimit_ran_out'] else slowest['status']})")
    if json_out is not None:
        old = json.loads(json_out.read_text()) if json_out.exists() else []
        json_out.write_text(json.dumps([*old, *rows], indent=1) + "\n")


def run_overshoot(timeout: float) -> None:
    print(f"--timeout {timeout:g}: the largest time column and the process's CPU seconds "
          "(its start, about 0.5 s, included)")
    for what, args in HEAVY:
        reports, took, status = verify([*args, "--timeout", f"{timeout:g}"])
        shown = max(v["seconds"] for r in reports for v in r["verdicts"])
        count = sum(len(r["verdicts"]) for r in reports)
        print(f"{what:<30} exit {status}  time column at most {shown:.2f} s "
              f"({shown - timeout:+.2f} s past the limit), {count} verdict(s), process "
              f"{took:.1f} CPU s", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_verify_limits",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help="these examples only (file names without .pol)")
    parser.add_argument("--json-out", type=Path, help="append the rows to this JSON file")
    parser.add_argument("--overshoot", action="store_true",
                        help="time the heavy verifications under a small --timeout instead")
    parser.add_argument("--timeout", type=float, default=2.0,
                        help="the --timeout of --overshoot (default 2)")
    args = parser.parse_args(argv)
    if args.overshoot:
        run_overshoot(args.timeout)
    else:
        run_examples(args.only, args.json_out)


if __name__ == "__main__":
    main()
