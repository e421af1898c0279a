"""Random policies against the simulator one pass at a time (tests/support/pass_fuzz.py).

    python -m benchmarks.fuzz_pass --count 200 --seed 0 --states 15 --jobs 2 --out fuzz-pass
    python -m benchmarks.fuzz_pass --count 100 --seed 0 --tuned-rate 1   # dynP policies
    python -m benchmarks.fuzz_pass --count 100 --seed 0 --slack-rate 1   # relaxed backfilling
    python -m benchmarks.fuzz_pass --count 200 --seed 0 --reachable 6    # states runs reach

Policy i is generated from seed S + i as in fuzz_verify.py; each is encoded once (N=3 queued,
R=2 running slots) and pinned to --states random states: the encoded pass must have a model,
stop exactly where the simulator's pass at now stops, and otherwise decide what it decides.
Policies with `sqrt` or `log` are checked for a model only (their pinned decisions are not
unique). A self-tuning dynP policy (--tuned-rate) is checked candidate by candidate as
`schedc verify` encodes them, each against the tuned policy's pass from states naming that
candidate active. With --reachable R, the states are those R runs of random workloads reach
(at each pass, rebuilt as a counterexample's state file): each state's replay must also make
the run's pass. Prints the figures and every mismatch (its policy and state); with --out, writes
each mismatch as FOLDER/seedS.pol and seedS.json (`schedc run seedS.pol --state seedS.json`
replays the simulator's side) and the figures as summary.json.

    python -m benchmarks.fuzz_pass --count 250 --seed 0 --preemptive-rate 1 --states 6 --jobs 1

With --preemptive-rate P, a share P of the seeds (drawn from each seed by a stream of its
own: `policy_fuzz.is_preemptive`; the other seeds keep their rigid policies) give a random
preemptive policy instead (`preempt when` / `preempt by order`, papers/003), checked as
`benchmarks/fuzz_preemptive_verify.py` checks it (`preemptive_agreement.agree_one`) on
--preemptive-states random states of jobs in every phase (running, suspended, stopped,
pending, requeued; default: --states, also with --reachable): the encoded preemptive pass
pinned to each must admit it and have the simulator's first pass as its only outcome, job by
job and processor by processor (or both stop). Their policies, states, the actions their
first passes took and their mismatches are printed, and written to summary.json
("preemptive"), apart from the rigid ones; each mismatch is written as the rigid ones are.
The default rate is 0, so that a seed names the policy of earlier campaigns. The classes of
issue 44 are drawn onto them as in fuzz_verify.py (--kind-rates; their counts printed): a
policy `check` must refuse is checked for a located refusal only; the others are encoded
with their P and `--overrun`. These checks give no verdicts, so no vacuity check: a state
the encoding does not admit is a mismatch (the pass-level form of a vacuous proof).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import queue
import sys
import time
from pathlib import Path

from tests.support.pass_fuzz import PolicyCheck, check_policy, check_reachable, tally
from tests.support.policy_fuzz import (
    MORE_PATTERNS,
    PATTERNS,
    GenConfig,
    KindRates,
    is_preemptive,
)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.fuzz_pass",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--count", type=int, default=100, help="policies to try (default 100)")
    p.add_argument("--seed", type=int, default=0, help="the first seed (default 0)")
    p.add_argument("--states", type=int, default=15, help="states a policy (default 15)")
    p.add_argument("--jobs", type=int, default=2, help="processes (default 2)")
    p.add_argument("--out", help="write each mismatch and summary.json here")
    p.add_argument("--reachable", type=int, metavar="R",
                   help="the states R runs of random workloads reach, not --states drawn ones "
                        "(no dynP, `size fixed` or moldable jobs)")
    p.add_argument("--seconds", type=float, default=600.0,
                   help="a policy's check is stopped after this long and counted as skipped "
                        "(Z3 does not always heed its timeout in nonlinear arithmetic)")
    p.add_argument("--tuned-rate", type=float, default=0.0, metavar="P",
                   help="chance that a policy is a self-tuning dynP policy (default 0: the "
                        "seeds give the policies of earlier campaigns)")
    p.add_argument("--slack-rate", type=float, default=0.0, metavar="P",
                   help="chance that a policy that reserves gets a `slack` clause (default 0)")
    p.add_argument("--kept-rate", type=float, default=0.0, metavar="P",
                   help="chance that a dynP candidate keeping sizes states its own rule as an "
                        "invariant (default 0)")
    p.add_argument("--patterns", help=f"edge templates to use, of "
                   f"{','.join(PATTERNS + MORE_PATTERNS)} (default: all but "
                   f"{','.join(MORE_PATTERNS)})")
    p.add_argument("--queued", type=int, default=3,
                   help="queued jobs a state may hold, the encoded pass's slots (default 3)")
    p.add_argument("--preemptive-rate", type=float, default=0.0, metavar="P",
                   help="share of the seeds whose policy is a random preemptive one, checked "
                        "by preemptive_agreement.agree_one (0 to 1; default 0: the seeds give "
                        "the policies of earlier campaigns)")
    p.add_argument("--preemptive-states", type=int, metavar="N",
                   help="random states a preemptive policy (default: --states)")
    p.add_argument("--kind-rates", metavar="KIND=P,...", default="",
                   help="the chance of each class of issue 44 drawn onto a preemptive policy, "
                        "as fuzz_verify.py takes it (`none`: the policies of earlier "
                        "campaigns)")
    args = p.parse_args(argv)
    started = time.perf_counter()
    seeds = range(args.seed, args.seed + args.count)
    gen = GenConfig(tuned_rate=args.tuned_rate, slack_rate=args.slack_rate,
                    kept_rate=args.kept_rate, preemptive_rate=args.preemptive_rate,
                    patterns=tuple(args.patterns.split(",")) if args.patterns else PATTERNS,
                    preemptive_kinds=KindRates.parse(args.kind_rates))
    pre_states = args.preemptive_states or args.states
    # a preemptive seed is checked on random states (check_policy dispatches it), also
    # with --reachable
    tasks = [(s, check_policy, pre_states) if is_preemptive(s, gen) else
             (s, check_reachable, args.reachable) if args.reachable else
             (s, check_policy, args.states) for s in seeds]
    checks = _in_processes(tasks, gen, args.jobs, args.seconds, args.queued)
    figures = tally(checks) | {"seconds": round(time.perf_counter() - started, 1),
                                 "first_seed": args.seed, "count": args.count,
                                 "states_each": args.states, "reachable_runs": args.reachable,
                                 "tuned_rate": args.tuned_rate,
                                 "slack_rate": args.slack_rate, "kept_rate": args.kept_rate,
                                 "patterns": list(gen.patterns), "queued": args.queued,
                                 "preemptive_rate": args.preemptive_rate,
                                 "preemptive_states_each": pre_states,
                                 "preemptive_kind_rates": gen.preemptive_kinds.as_dict()}
    for check in checks:
        for m in check.mismatches:
            kind = "preemptive " if check.preemptive else ""
            print(f"{kind}seed {m.seed}: {m.what}\n{m.policy}\n"
                  f"{json.dumps(m.state, default=float)}\n")
    pre = figures["preemptive"]
    print(f"policies: {figures['policies']} (seeds {args.seed}..{args.seed + args.count - 1}): "
          f"{figures['rigid_policies']} rigid, {pre['policies']} preemptive")
    if figures["rigid_policies"]:
        print(f"rigid: checked {figures['checked']}, skipped: {figures['skipped'] or 'none'}")
        print(f"  states: {figures['states']}, of which the simulator's pass stopped in "
              f"{figures['stops']}")
        print(f"  mismatches: {len(figures['rigid_mismatches'])} "
              f"{figures['rigid_mismatches']}")
    if pre["policies"]:
        print(f"preemptive: checked {pre['checked']}, skipped: {pre['skipped'] or 'none'}")
        print(f"  states: {pre['states']}, of which the simulator's first pass stopped in "
              f"{pre['stops']}; its actions: " + ", ".join(
                  f"{kind} {n}" for kind, n in pre["actions"].items()))
        print(f"  mismatches: {len(pre['mismatches'])} {pre['mismatches']}")
        rates = figures["preemptive_kind_rates"]
        print("  kinds drawn (issue 44): " + ", ".join(
            f"{k} {n} (rate {rates[k]})" for k, n in pre["kinds"].items()))
    print(f"mismatches: {len(figures['mismatches'])} {figures['mismatches']}")
    print(f"time: {figures['seconds']} s")
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        for check in checks:
            for m in check.mismatches:
                (out / f"seed{m.seed}.pol").write_text(m.policy)
                state = json.dumps(m.state, indent=1, default=float)
                (out / f"seed{m.seed}.json").write_text(state + "\n")
        (out / "summary.json").write_text(json.dumps(figures, indent=1) + "\n")
    return 1 if figures["mismatches"] else 0


def _one(check, seed: int, each: int | None, config: GenConfig, results,
         queued: int) -> None:
    results.put(check(seed, each, config, queued))


def _collect(results, done: dict[int, PolicyCheck], wait: float) -> None:
    """Every result in the queue into ``done``, waiting up to ``wait`` s for the first."""
    try:
        while True:
            result = results.get(timeout=wait)
            done[result.seed] = result
            wait = 0.01
    except queue.Empty:
        pass


def _in_processes(tasks: list[tuple], config: GenConfig, jobs: int, seconds: float,
                  queued: int = 3) -> list[PolicyCheck]:
    """``check(seed, each, ...)`` of each task ``(seed, check, each)``, in a fresh process
    each (Z3's context carries no state from one policy to the next), ``jobs`` at a time; a
    check running longer than ``seconds`` is stopped and counted as skipped."""
    ctx = multiprocessing.get_context("spawn")
    results = ctx.Queue()
    done: dict[int, PolicyCheck] = {}
    waiting = list(tasks)
    seeds = [t[0] for t in tasks]
    preemptive = {s for s in seeds if is_preemptive(s, config)}
    running: dict[int, tuple[multiprocessing.Process, float]] = {}
    while waiting or running:
        while waiting and len(running) < jobs:
            seed, check, each = waiting.pop(0)
            proc = ctx.Process(target=_one, args=(check, seed, each, config, results,
                                                      queued))
            proc.start()
            running[seed] = (proc, time.monotonic() + seconds)
        _collect(results, done, 0.5)
        for seed, (proc, deadline) in list(running.items()):
            if seed in done or not proc.is_alive():
                proc.join()  # its result, if any, is in the queue's pipe by now
                del running[seed]
                if seed not in done:
                    _collect(results, done, 2.0)
                done.setdefault(seed, PolicyCheck(seed, "crashed: no result", 0, 0, (),
                                                  seed in preemptive))
            elif time.monotonic() > deadline:
                proc.kill()
                proc.join()
                del running[seed]
                done[seed] = PolicyCheck(seed, f"timed out: over {seconds:g} s", 0, 0, (),
                                         seed in preemptive)
    return [done[s] for s in seeds]


if __name__ == "__main__":
    sys.exit(main())
