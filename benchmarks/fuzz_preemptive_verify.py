"""A campaign of the verifier's encoded preemptive pass against the simulator
(tests/support/preemptive_agreement.py): random policies the encoding covers, each with
random states of jobs in every phase; for each state the encoding must admit it and have
the simulator's first pass as its only outcome, job by job (or both stop).

    python -m benchmarks.fuzz_preemptive_verify --count 200 --seed 0
    python -m benchmarks.fuzz_preemptive_verify --verify --count 200 --seed 0

Policy i is generated from seed S + i (``preemptive_agreement.encodable_policy``). Prints
the policies and states tried, what their first passes did, each disagreement (with its
policy and state) and the time; exit 1 on a disagreement.

With ``--verify``, each policy is verified instead (N = R = 2 waiting and running slots,
P = 8; counterexamples replayed), then random states within those bounds are replayed
asking for the first pass's checks: a proved property that a replay stops for, or a
violation Z3 finds that no replay confirms, is a disagreement (``verify_one``). Prints the
verdicts by property and status and what the replays stopped for.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter

from tests.support.preemptive_agreement import agree_one, verify_one


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fuzz_preemptive_verify",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--states", type=int, default=4, help="random states per policy")
    parser.add_argument("--verify", action="store_true",
                        help="verify each policy and replay states against its proofs")
    args = parser.parse_args(argv)
    if args.verify:
        return _verify(args)
    started = time.perf_counter()
    tally: Counter = Counter()
    failures, skipped = [], 0
    for seed in range(args.seed, args.seed + args.count):
        result = agree_one(seed, args.states, tally)
        if result == "skip":
            skipped += 1
        elif result is not None:
            failures.append(result)
    took = time.perf_counter() - started
    kinds = ", ".join(f"{kind} {tally[kind]}" for kind in
                      ("start", "resume", "claim", "suspend", "checkpoint", "requeue", "stops"))
    print(f"{args.count} preemptive policies (seeds {args.seed}..{args.seed + args.count - 1}; "
          f"{skipped} not encodable), {tally['states']} states: {len(failures)} "
          f"disagreements, {took:.1f} s")
    print(f"first passes did: {kinds}")
    for f in failures:
        print(f"\nseed {f.seed}: {f.what}\n  state: {f.state}\n{f.policy}")
    return 1 if failures else 0


def _verify(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    tally: Counter = Counter()
    failures, skipped = [], 0
    for seed in range(args.seed, args.seed + args.count):
        result = verify_one(seed, 2 * args.states, (2, 2), tally)
        if result == "skip":
            skipped += 1
        else:
            failures += result
    took = time.perf_counter() - started
    print(f"{args.count} preemptive policies verified (seeds {args.seed}.."
          f"{args.seed + args.count - 1}; {skipped} not encodable), {tally['replays']} states "
          f"replayed: {len(failures)} disagreements, {took:.1f} s")
    print("verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(tally.items())
                                   if k != "replays" and not k.startswith("replay ")))
    print("replays stopped for: " + (", ".join(
        f"{k.split()[-1]} {v}" for k, v in sorted(tally.items())
        if k.startswith("replay stops") and v) or "nothing"))
    for f in failures:
        print(f"\nseed {f.seed}: {f.what}\n  state: {f.state}\n{f.policy}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
