"""A differential fuzzing campaign: random policies, `schedc verify` against the simulator.

    python -m benchmarks.fuzz_verify --count 500 --seed 0 --jobs 2 --out fuzz-out

Policy i of the campaign is generated from seed S + i (tests/support/policy_fuzz/), so any one
of them is reproduced by `fuzz_seed(S + i)`. Each runs in its own process (a fresh Z3: a
long-lived one carries state from earlier proofs, which may change which counterexample a
search lands on). Prints the policies tried, verdicts by property, disagreements by
category and the time; writes each disagreement (policy, evidence, README with the commands
that show it) to a folder of --out, and the campaign's figures to --out/summary.json.

    python -m benchmarks.fuzz_verify --count 60 --seed 0 --preemptive-rate 1 --jobs 1

With --preemptive-rate P, a share P of the seeds (drawn from each seed by a stream of its
own: `policy_fuzz.is_preemptive`; the other seeds keep their rigid policies) give a random
preemptive policy instead (`preempt when` / `preempt by order`, papers/003), checked as
`benchmarks/fuzz_preemptive_verify.py --verify` checks it (`preemptive_agreement.verify_one`):
verified with N = R = 2 waiting and running slots (--preemptive-queued/--preemptive-running)
and P = 8 processors, its counterexamples replayed, then --preemptive-states random states
within those bounds replayed asking for the first pass's checks. A proved property a replay
stops for (category `preemptive`, its state as evidence) or a violation no replay confirms
(`preemptive-counterexample`) is a disagreement, counted with the rigid ones; their verdicts,
replays and disagreements are also printed, and written to summary.json ("preemptive"),
apart. The default rate is 0, so that a seed names the policy of earlier campaigns.

The classes of issue 44 are drawn onto each preemptive policy at the rates of --kind-rates
(tests/support/policy_fuzz/kinds.py; `none`: the policies of earlier campaigns): a param
making `limit preemptions`, `resident` or `quantum` non-positive (`check` must refuse the
policy at the clause, or `run --param` the value: category `bad-setting`), `job.progress`
under `sqrt`, division and comparisons, a `mechanism ... when` that can fail, proofs and runs
under `--overrun extend`, machines of P = 4 to 16 processors (N = R = 1 above P = 8). Each
verified policy is also run on 4 small workloads (at most N and R jobs), half with jobs past
their estimates under `--overrun extend`: a stop for a proved property, unless the monitor
noted first that the run left the proofs' assumptions, is a disagreement (`preemptive-run`).
The summary counts the kinds drawn and the machines.

Every verified policy's verdicts go through a vacuity check of their own
(tests/support/vacuity.py): a property proved although its assumptions admit no state in
which a job waits is a disagreement (category `vacuous-proof`), counted and printed with
the number of policies checked and of verdicts the prover itself called vacuous.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from tests.support.policy_fuzz import (
    KINDS,
    MORE_PATTERNS,
    PATTERNS,
    STATED_BOUNDS,
    GenConfig,
    HarnessConfig,
    KindRates,
    PolicyResult,
    fuzz_seed,
    tally,
    write_evidence,
)
from tests.support.policy_fuzz.preemptive import RUNS


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    gen = GenConfig(patterns=tuple(args.patterns.split(",")) if args.patterns else PATTERNS,
                    tuned_rate=args.tuned_rate, slack_rate=args.slack_rate,
                    kept_rate=args.kept_rate, preemptive_rate=args.preemptive_rate,
                    preemptive_kinds=KindRates.parse(args.kind_rates))
    cfg = HarnessConfig(bounds=(args.queued, args.running), rlimit=args.rlimit,
                        triage=not args.no_triage,
                        preemptive_bounds=(args.preemptive_queued, args.preemptive_running),
                        preemptive_states=args.preemptive_states)
    seeds = range(args.seed, args.seed + args.count)
    started = time.perf_counter()
    results = _run(seeds, gen, cfg, args.jobs, args.quiet)
    elapsed = time.perf_counter() - started
    figures = tally(results)
    figures |= {"seconds": round(elapsed, 1), "first_seed": args.seed, "count": args.count,
                "jobs": args.jobs, "bounds": list(cfg.bounds), "rlimit": cfg.rlimit,
                "patterns": list(gen.patterns), "tuned_rate": gen.tuned_rate,
                "slack_rate": gen.slack_rate, "kept_rate": gen.kept_rate,
                "preemptive_rate": gen.preemptive_rate,
                "preemptive_bounds": list(cfg.preemptive_bounds),
                "preemptive_states": cfg.preemptive_states,
                "preemptive_kind_rates": gen.preemptive_kinds.as_dict(),
                "preemptive_runs_each": RUNS}
    _print(figures, results)
    if args.out:
        _write(Path(args.out), results, figures, cfg)
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.fuzz_verify",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--count", type=int, default=200, help="policies to try (default 200)")
    p.add_argument("--seed", type=int, default=0, help="the first seed (default 0)")
    p.add_argument("--jobs", type=int, default=2, help="processes (default 2)")
    p.add_argument("--out", metavar="DIR", help="write each disagreement and summary.json here")
    p.add_argument("--queued", type=int, default=3, help="verifier job slots N (default 3)")
    p.add_argument("--running", type=int, default=3, help="verifier job slots R (default 3)")
    p.add_argument("--rlimit", type=int, default=HarnessConfig().rlimit,
                   help="Z3 resource limit per property")
    p.add_argument("--patterns", help=f"edge templates to use, of "
                   f"{','.join(PATTERNS + MORE_PATTERNS)} (default: all but "
                   f"{','.join(MORE_PATTERNS)})")
    p.add_argument("--tuned-rate", type=float, default=0.0, metavar="P",
                   help="chance that a policy is a self-tuning dynP policy over 2-3 generated "
                        "planning candidates (default 0: the seeds give the policies of "
                        "earlier campaigns)")
    p.add_argument("--slack-rate", type=float, default=0.0, metavar="P",
                   help="chance that a policy that reserves gets a `slack` clause (default 0)")
    p.add_argument("--kept-rate", type=float, default=0.0, metavar="P",
                   help="chance that a dynP candidate sizing `size fixed` states its kept "
                   "size is its own rule's (with --tuned-rate; default 0)")
    p.add_argument("--preemptive-rate", type=float, default=0.0, metavar="P",
                   help="share of the seeds whose policy is a random preemptive one, verified "
                        "and replayed by preemptive_agreement.verify_one (0 to 1; default 0: "
                        "the seeds give the policies of earlier campaigns)")
    p.add_argument("--preemptive-queued", type=int, default=2,
                   help="a preemptive policy's waiting slots N (default 2)")
    p.add_argument("--preemptive-running", type=int, default=2,
                   help="a preemptive policy's running slots R (default 2)")
    p.add_argument("--preemptive-states", type=int, default=8,
                   help="random states replayed against a preemptive policy's proofs "
                        "(default 8)")
    p.add_argument("--kind-rates", metavar="KIND=P,...", default="",
                   help="the chance of each class of issue 44 drawn onto a preemptive policy "
                        f"(tests/support/policy_fuzz/kinds.py: {', '.join(KINDS)}; default "
                        + ", ".join(f"{k}={v}" for k, v in KindRates().as_dict().items())
                        + "); `none`: the preemptive policies of earlier campaigns")
    p.add_argument("--no-triage", action="store_true", help="skip shrinking and classifying")
    p.add_argument("--quiet", action="store_true", help="no line per policy")
    return p


def _run(seeds: range, gen: GenConfig, cfg: HarnessConfig, jobs: int,
         quiet: bool) -> list[PolicyResult]:
    results: list[PolicyResult] = []
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, max_tasks_per_child=1) as pool:
        futures = [pool.submit(fuzz_seed, s, gen, cfg) for s in seeds]
        for future in futures:  # in seed order: the log reads the same on every run
            r = future.result()
            results.append(r)
            if not quiet:
                _line(r)
    return results


def _line(r: PolicyResult) -> None:
    bad = [v for v in r.verdicts if v.status != "proved"]
    marks = " ".join(f"{v.property.split(' ')[0]}={v.status[0]}" for v in bad)
    found = " ".join(f"[{d.category}:{d.property.split(' ')[0]}]" for d in r.disagreements)
    err = " INVALID POLICY" if r.compile_error else ""
    kind = "P" if r.preemptive else " "  # a preemptive policy
    skipped = f" (skipped: {r.skipped})" if r.skipped else ""
    print(f"seed {r.seed:>6} {kind} {r.seconds:6.1f}s {marks:<40} {found}{err}{skipped}",
          flush=True)


def _print(f: dict, results: list[PolicyResult]) -> None:
    pre = f["preemptive"]
    print(f"\npolicies tried: {f['policies']} (invalid: {f['invalid']}), seeds "
          f"{f['first_seed']}..{f['first_seed'] + f['count'] - 1}: {f['rigid_policies']} rigid "
          f"(bounds N={f['bounds'][0]} R={f['bounds'][1]}, rlimit {f['rlimit']:,}), "
          f"{pre['policies']} preemptive (N={f['preemptive_bounds'][0]} "
          f"R={f['preemptive_bounds'][1]}, N=R=1 above P=8), {f['jobs']} processes")
    print(f"time: {f['seconds']} s ({f['seconds'] / max(1, f['policies']):.2f} s a policy)")
    if f["rigid_policies"]:
        print(f"simulations: {f['simulations']} ({f['out_of_budget']} out of budget); "
              f"monitor stops agreeing with a verdict: {f['agreed_stops']}")
        _verdict_table("verdicts", f["verdicts"])
    if pre["policies"]:
        print(f"\npreemptive: {pre['policies']} policies ({pre['skipped']} not encoded, "
              f"{pre['refused_by_check']} refused by check as they must be), "
              f"{pre['replays']} states replayed and workloads run "
              f"({pre['replay_stops_agreeing']} states stopped for a property not proved), "
              f"{pre['disagreements']} disagreements {pre['seeds_disagreeing']}")
        rates = f["preemptive_kind_rates"]
        print("kinds drawn (issue 44): " + ", ".join(
            f"{k} {n} (rate {rates[k]})" for k, n in pre["kinds"].items()))
        print("machines: " + ", ".join(f"P={p}: {n}" for p, n in pre["processors"].items()))
        _verdict_table("preemptive", pre["verdicts"])
        for reason, n in pre["unknown_reasons"].items():
            print(f"  unknown {n}x: {reason} ...")
    vac = f["vacuity"]
    print(f"\nvacuity check: {vac['policies_checked']} policies' verdicts, "
          f"{vac['proved_but_vacuous']} proved of no state (failures), "
          f"{vac['vacuous_verdicts']} verdicts vacuous")
    print(f"\ndisagreements: {f['disagreements']} in {f['policies_disagreeing']} policies"
          f" (and {f['beyond_stated_bounds']} stops beyond the bounds a proof states)")
    for cat, n in f["by_category"].items():
        print(f"  {cat:<22} {n:>4}")
    seeds = [r.seed for r in results
             if any(d.category != STATED_BOUNDS for d in r.disagreements)]
    print(f"seeds with disagreements: {seeds}")


def _verdict_table(title: str, verdicts: dict) -> None:
    print(f"\n{title:<25} proved  violated  vacuous  unknown")
    for prop, row in verdicts.items():
        print(f"  {prop:<25} {row['proved']:>4} {row['violated']:>9} "
              f"{row.get('vacuous', 0):>8} {row['unknown']:>8}")


def _write(out: Path, results: list[PolicyResult], figures: dict,
           cfg: HarnessConfig) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for r in results:
        for i, d in enumerate(r.disagreements):
            write_evidence(out / f"seed{r.seed}-{i}-{d.category}", r, d, cfg)
    (out / "summary.json").write_text(json.dumps(figures, indent=2) + "\n")
    print(f"wrote {figures['disagreements']} disagreement folders and summary.json to {out}")


if __name__ == "__main__":
    sys.exit(main())
