"""Verification time as the bounds grow.

For each policy, prints the wall time and verdict of each property of `schedc verify` as the
number of queued-job slots N grows (R = N running slots), and for EASY and a backfill-best
policy as the number of resources K grows (a machine of K resources, built on the fly, at
N = R = 8). The total includes building the encodings. A verdict of `unknown` means Z3's
resource limit (--rlimit, machine-independent) ran out.

    python -m benchmarks.bench_verify [--sizes 4 8 16 32] [--resources 1 2 4 8]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from schedc.dsl import compile_file, compile_source
from schedc.dsl.verify.prover import verify_policy
from schedc.dsl.verify.verdict import Bounds, Limits

ROOT = Path(__file__).resolve().parents[1]


def k_resources(k: int, backfill: str) -> str:
    names = ["cpus", *(f"r{i}" for i in range(1, k))]
    resources = "\n".join(f"  resource {n}" for n in names)
    return (f"machine m{k} {{\n{resources}\n}}\n"
            f"policy p_k{k} {{\n  machine m{k}\n  reserve 1\n  backfill {backfill}\n}}\n")


# Backfill Balanced's shape (paper 004): the candidate that leaves the fullest resource least
# ahead of the average
BALANCED = ("best by max(r in resources: r.util) - avg(r in resources: r.util) asc")


def row(label: str, policy, bounds: Bounds, limits: Limits) -> None:
    start = time.perf_counter()
    verdicts = verify_policy(policy, bounds, limits)
    total = time.perf_counter() - start
    cells = "  ".join(f"{v.property.split()[0]}={v.status[0]}:{v.seconds:.1f}s"
                      for v in verdicts)
    print(f"{label:<34}{total:>8.1f}s  {cells}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_verify",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[4, 8, 16, 32])
    parser.add_argument("--resources", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--rlimit", type=int, default=50_000_000)
    args = parser.parse_args()
    limits = Limits(rlimit=args.rlimit, timeout_ms=600_000)
    print("verdicts: p = proved, v = violated, u = unknown (rlimit "
          f"{args.rlimit:,} per property)")
    for name in ("fcfs", "easy", "conservative"):
        policy = compile_file(ROOT / "examples" / f"{name}.pol")
        for n in args.sizes:
            row(f"{name}  N={n} R={n} K=1", policy, Bounds(n, n), limits)
    for label, backfill in (("easy", "first_fit"), ("balanced", BALANCED)):
        for k in args.resources:
            policy = compile_source(k_resources(k, backfill), f"<{label} on {k} resources>")
            row(f"{label}  N=8 R=8 K={k}", policy, Bounds(8, 8), limits)


if __name__ == "__main__":
    main()
