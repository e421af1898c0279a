"""Speed of preemptive policies (`examples/preemption/`) against EASY on the same trace.

Prints, per trace, the wall time of the whole `schedc run` process for EASY and for each
preemption example (best of --repeat), the ratio to EASY (issue 34's goal: within 3x for a
preemptive run of the bundled trace), and the preemptions each made:

    python -m benchmarks.bench_preemption [--repeat 3] [--lanl-jobs 20000]
                                          [--traces ../shared/traces]

KTH-SP2 is the bundled trace (selective suspension; the Slurm examples preempt nothing there,
having no queue numbers); LANL-CM5 runs on its first --lanl-jobs jobs, with its memory.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from benchmarks.bench_simulate import EXAMPLES, ROOT, best_of, swf_prefix

BUNDLED = ROOT / "runtime" / "data" / "KTH-SP2-1996-2.1-cln.swf.gz"
PREEMPTION = EXAMPLES / "preemption"
RUNS = {  # trace -> (baseline, preemptive policies)
    "KTH-SP2": (EXAMPLES / "easy.pol", [PREEMPTION / "selective-suspension.pol",
                                         PREEMPTION / "srpt.pol", PREEMPTION / "mlf.pol"]),
    "LANL-CM5": (EXAMPLES / "easy-memory.pol",
                 [PREEMPTION / "selective-suspension.pol", PREEMPTION / "slurm-suspend.pol",
                  PREEMPTION / "slurm-requeue.pol"]),
}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_preemption",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--lanl-jobs", type=int, default=20000)
    parser.add_argument("--traces", type=Path, default=ROOT.parent / "shared" / "traces")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        traces = {"KTH-SP2": BUNDLED}
        lanl = args.traces / "LANL-CM5-1994-4.1-cln.swf"
        lanl = lanl if lanl.exists() else lanl.with_suffix(".swf.gz")
        if lanl.exists():
            traces["LANL-CM5"] = Path(tmp) / "lanl.swf"
            swf_prefix(lanl, args.lanl_jobs, traces["LANL-CM5"])
        else:
            print(f"(no LANL-CM5 in {args.traces}: KTH-SP2 only)")
        print(f"{'trace':10} {'policy':28} {'jobs':>7} {'wall s':>8} {'/ EASY':>7} "
              f"{'preemptions':>12}")
        for name, workload in traces.items():
            baseline, policies = RUNS[name]
            base, _, result = best_of(args.repeat, baseline, workload)
            print(f"{name:10} {baseline.stem:28} {result['metrics']['jobs']:>7,} {base:>8.2f} "
                  f"{1:>7.1f} {'-':>12}")
            for policy in policies:
                wall, _, result = best_of(args.repeat, policy, workload)
                p = result["preemption"]
                print(f"{name:10} {policy.stem:28} {result['metrics']['jobs']:>7,} "
                      f"{wall:>8.2f} {wall / base:>7.1f} "
                      f"{p['suspensions'] + p['checkpoints'] + p['requeues']:>12,}")


if __name__ == "__main__":
    main()
