"""`schedc verify` of every preemption example (`examples/preemption/`), timed.

Prints, per example, the wall time of its verification (all properties, counterexamples
replayed by the simulator, as the CLI does) and each property's verdict and time, at the
default bounds of a preemptive pass or the given ones; issue 34's goal is each example
under 10 s:

    python -m benchmarks.bench_verify_preemption [--queued 3] [--running 3] [--processors 4]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from schedc.dsl import compile_file
from schedc.dsl.verify.prover import verify_policy
from schedc.dsl.verify.verdict import Bounds, Limits
from schedc.dsl.verify.vocabulary import PROCESSORS
from schedc.runtime.replay import replayer

ROOT = Path(__file__).resolve().parents[1]
SHORT = {"proved": "p", "violated": "V", "unknown": "?"}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_verify_preemption",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--queued", type=int, default=None)
    parser.add_argument("--running", type=int, default=None)
    parser.add_argument("--processors", type=int, default=PROCESSORS)
    args = parser.parse_args(argv)
    bounds = Bounds.checked(args.queued, args.running, args.processors)
    print(f"bounds: N={bounds.preemptive[0]} waiting, R={bounds.preemptive[1]} running, "
          f"P={bounds.processors} processors (p proved, V violated and replayed, ? unknown)")
    slowest = 0.0
    for path in sorted((ROOT / "examples" / "preemption").glob("*.pol")):
        policy = compile_file(path)
        start = time.perf_counter()
        verdicts = verify_policy(policy, bounds, Limits(), replay=replayer(policy))
        took = time.perf_counter() - start
        slowest = max(slowest, took)
        cells = "  ".join(f"{v.property}={SHORT[v.status]}:{v.seconds:.1f}s" for v in verdicts)
        print(f"{path.stem:<22}{took:>7.1f}s  {cells}", flush=True)
    print(f"slowest: {slowest:.1f} s")


if __name__ == "__main__":
    main()
