"""`schedc verify` of every preemption example (`examples/preemption/`), timed.

Prints, per example, the CPU time of its verification (all properties, counterexamples
replayed by the simulator, as the CLI does; CPU time, so that a busy machine does not count)
and each property's verdict, CPU seconds and Z3 work (millions of resource units, the same
on any machine), at the default bounds of a preemptive pass or the given ones; the goal
(issues 34 and 44) is each example under 10 s, at P = 16 too:

    python -m benchmarks.bench_verify_preemption [--queued 3] [--running 3] [--processors 4]
        [--only srpt --only gang] [--property capacity] [--timeout 60]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from schedc.dsl import compile_file
from schedc.dsl.verify.prover import verify_policy
from schedc.dsl.verify.verdict import Bounds, Limits
from schedc.dsl.verify.vocabulary import PROCESSORS, TIMEOUT_S
from schedc.runtime.replay import replayer

ROOT = Path(__file__).resolve().parents[1]
SHORT = {"proved": "p", "violated": "V", "unknown": "?", "vacuous": "0"}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_verify_preemption",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--queued", type=int, default=None)
    parser.add_argument("--running", type=int, default=None)
    parser.add_argument("--processors", type=int, default=PROCESSORS)
    parser.add_argument("--only", action="append", default=None,
                        help="an example's name (repeatable); default: every example")
    parser.add_argument("--property", action="append", default=None, dest="properties",
                        help="a property (repeatable); default: every property")
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S,
                        help="CPU seconds per property")
    args = parser.parse_args(argv)
    bounds = Bounds.checked(args.queued, args.running, args.processors)
    limits = Limits.checked(Limits().rlimit, args.timeout)
    print(f"bounds: N={bounds.preemptive[0]} waiting, R={bounds.preemptive[1]} running, "
          f"P={bounds.processors} processors (p proved, V violated and replayed, ? unknown, "
          "0 vacuous; CPU seconds, Z3 work in millions of units)")
    slowest = 0.0
    for path in sorted((ROOT / "examples" / "preemption").glob("*.pol")):
        if args.only is not None and path.stem not in args.only:
            continue
        policy = compile_file(path)
        start = time.process_time()
        verdicts = verify_policy(policy, bounds, limits, only=args.properties,
                                 replay=replayer(policy))
        took = time.process_time() - start
        slowest = max(slowest, took)
        cells = "  ".join(f"{v.property}={SHORT[v.status]}:{v.seconds:.1f}s/"
                          f"{(v.work or 0) / 1e6:.0f}M" for v in verdicts)
        print(f"{path.stem:<22}{took:>7.1f}s  {cells}", flush=True)
    print(f"slowest: {slowest:.1f} s")


if __name__ == "__main__":
    main()
