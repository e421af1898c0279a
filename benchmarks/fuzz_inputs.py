"""Long campaigns of damaged inputs: policies, workloads, state files, preemptive settings,
partial executions and sweep specs mutated at random and run through the CLI in process
(tests/support/input_fuzz.py). Prints, per kind, how many runs ended in each exit status,
and every run that crashed, with its input kept for replay.

    python -m benchmarks.fuzz_inputs --runs 2000 --seed 7 --keep /tmp/fuzz
    python -m benchmarks.fuzz_inputs --limits --runs 300   # also inputs past the limits

Exit 1 if any run crashed (an exception, exit 70, or exit 2 with no message).
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
from pathlib import Path

from tests.support.input_fuzz import (
    limits_campaign,
    parts_campaign,
    plot_campaign,
    policy_campaign,
    preemptive_campaign,
    state_campaign,
    sweep_campaign,
    workload_campaign,
)

ROOT = Path(__file__).resolve().parents[1]

RUNNABLE = ["easy", "conservative", "easy-memory", "map", "fairshare", "depth2", "firstfit"]
PLANNING = ["conservative-sjf", "dynp"]  # policies `optimal` takes (with conservative)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fuzz_inputs",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=500, help="mutations per kind")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="keep the inputs here (default: a temp dir)")
    parser.add_argument("--limits", action="store_true",
                        help="also a campaign of inputs past the limits (docs/reference/limits.md)")
    args = parser.parse_args()
    examples = sorted((ROOT / "examples").glob("*.pol"))
    runnable = [ROOT / "examples" / f"{name}.pol" for name in RUNNABLE]
    planning = [ROOT / "examples" / f"{name}.pol" for name in PLANNING]
    preemptive = sorted((ROOT / "examples" / "preemption").glob("*.pol"))
    folder = args.keep or Path(tempfile.mkdtemp(prefix="schedc-fuzz-"))
    crashes = 0
    campaigns = [
        ("policies", policy_campaign(examples, _sub(folder, "p"), args.runs, args.seed)),
        ("workloads", workload_campaign(runnable, _sub(folder, "w"), args.runs, args.seed)),
        ("preemptive settings", preemptive_campaign(preemptive, _sub(folder, "ps"), args.runs,
                                                    args.seed)),
        ("partial executions", parts_campaign(runnable, _sub(folder, "pe"), args.runs,
                                              args.seed)),
        ("states", state_campaign(runnable + planning, _sub(folder, "s"), args.runs, args.seed,
                                  optimal=0.2)),
        ("sweeps", sweep_campaign(ROOT / "examples" / "depth2.pol",
                                  ROOT / "examples" / "firstfit.pol", _sub(folder, "sw"),
                                  args.runs, args.seed)),
        ("plots", plot_campaign(ROOT / "examples" / "depth2.pol", _sub(folder, "pl"),
                                args.runs, args.seed))]
    if args.limits:
        campaigns.append(("limits", limits_campaign(
            runnable, ROOT / "examples" / "depth2.pol", ROOT / "examples" / "firstfit.pol",
            _sub(folder, "l"), args.runs, args.seed)))
    for kind, campaign in campaigns:
        codes: collections.Counter = collections.Counter()
        for outcome in campaign:
            codes[outcome.code] += 1
            if outcome.bad:
                crashes += 1
                print(f"CRASH {' '.join(outcome.argv)}\n{outcome.error or outcome.stderr}",
                      flush=True)
        print(f"{kind}: {sum(codes.values())} runs, exit status "
              + ", ".join(f"{code}: {n}" for code, n in sorted(codes.items(), key=str)))
    print(f"inputs in {folder}; {crashes} crashed")
    return 1 if crashes else 0


def _sub(folder: Path, name: str) -> Path:
    path = folder / name
    path.mkdir(parents=True, exist_ok=True)
    return path


if __name__ == "__main__":
    sys.exit(main())
