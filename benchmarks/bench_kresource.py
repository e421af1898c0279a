"""Simulation speed of the four papers/004 examples on K-resource workloads.

Generates (as `schedc workload kresource` does) the first --jobs jobs of a trace on K
resources, at a fixed fraction of the offered-load gap (long queues: the case where a pass's
cost shows), and times the simulation alone (`run_policy`'s wall) for FF-EASY, BL-EASY,
BB-EASY and FF-CONS, best of --repeat. Prints the baseline's mean queue length too, the load
each figure is measured at.

    python -m benchmarks.bench_kresource [--ks 2 8] [--jobs 5000] [--repeat 3]

With --write DIR it only writes each workload as a job table (no comment lines, for older
checkouts whose reader lacks them) and prints the `--capacity` to give.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from schedc.runtime.run import RunOptions, compiled, run_policy
from schedc.runtime.workloads import kresource
from schedc.runtime.workloads.load import load_workload

ROOT = Path(__file__).resolve().parents[1]
POLICIES = ("ff-easy", "bl-easy", "bb-easy", "ff-cons")


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_kresource",
                                description=__doc__.splitlines()[0])
    p.add_argument("--source", default=str(ROOT.parent / "shared" / "traces" /
                                           "lublin_256.swf.gz"))
    p.add_argument("--jobs", type=int, default=5000)
    p.add_argument("--ks", nargs="+", type=int, default=[2, 8])
    p.add_argument("--distribution", default="uniform", choices=kresource.DISTRIBUTIONS)
    p.add_argument("--gap-factor", type=float, default=0.65,
                   help="mean inter-arrival as a fraction of the offered-load-1 gap")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--write", metavar="DIR", help="write the workloads only")
    args = p.parse_args()
    trace = load_workload(args.source)
    source = kresource.source_jobs(trace, args.jobs)
    capacity = trace.capacities[0]
    gap = kresource.offered_gap(source, capacity) * args.gap_factor
    print(f"{Path(args.source).name}: first {len(source)} jobs, {args.distribution}, mean "
          f"inter-arrival {gap:.1f} s ({args.gap_factor:g} x the offered-load-1 gap), "
          f"best of {args.repeat}")
    if not args.write:
        print(f"{'K':>2} {'policy':10} {'wall s':>8} {'jobs/s':>8} {'mean queue':>11}")
    for k in args.ks:
        draws = kresource.draw(source, k, args.distribution, seed=0)
        w = kresource.workload(source, draws, capacity, gap)
        if args.write:
            path = Path(args.write) / f"k{k}.csv"
            kresource.write_table(w, path)
            path.write_text("".join(line for line in path.read_text().splitlines(True)
                                    if not line.startswith("#")))
            print(f"{path}: --capacity " + " --capacity ".join(
                f"{r}={capacity}" for r in w.resources))
            continue
        for name in POLICIES:
            policy = compiled(str(ROOT / "examples" / f"{name}.pol"), RunOptions(resources=k))
            runs = [run_policy(policy, w) for _ in range(args.repeat)]
            best = min(r.wall for r in runs)  # the simulation alone
            queue = runs[-1].metrics()["mean_queue"]
            print(f"{k:>2} {name:10} {best:8.2f} {len(w.jobs) / best:8,.0f} {queue:11.1f}",
                  flush=True)


if __name__ == "__main__":
    main()
