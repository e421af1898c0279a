"""A fuzzing campaign of preemptive policies (tests/support/preemption_fuzz.py): random
policies with every preemption clause, each run on random workloads under the preemptive
loop's monitor, checked for complete and exact books, determinism, and, where no job can be
preempted, the rigid simulator's schedule.

    python -m benchmarks.fuzz_preemption --count 300 --seed 0

Policy i is generated from seed S + i (``preemption_fuzz.generate``). Prints the policies
tried, the failures (each with its policy and workload) and the time; exit 1 on a failure.
"""

from __future__ import annotations

import argparse
import sys
import time

from tests.support.preemption_fuzz import fuzz_one


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fuzz_preemption",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workloads", type=int, default=6, help="random workloads per policy")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    failures = []
    for seed in range(args.seed, args.seed + args.count):
        failures += fuzz_one(seed, args.workloads)
    took = time.perf_counter() - started
    print(f"{args.count} preemptive policies (seeds {args.seed}..{args.seed + args.count - 1}), "
          f"{args.workloads} workloads each: {len(failures)} failures, {took:.1f} s")
    for f in failures:
        print(f"\nseed {f.seed}: {f.what}\n  workload: {f.workload}\n{f.policy}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
