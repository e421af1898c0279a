"""`schedc optimal`: the waiting jobs of a state, or of sampled submissions of a run, planned
optimally with CP-SAT and compared with the planning policies' plans (papers/001, Table 1)."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from attrs import evolve

from schedc.runtime.cli.compare import compare_inputs, parse_entry
from schedc.runtime.cli.errors import EXIT_OK, UserError
from schedc.runtime.cli.extras import require
from schedc.runtime.cli.options import finite
from schedc.runtime.cli.run import parse_assignments
from schedc.runtime.engine.policy import RuntimePolicy
from schedc.runtime.outputs import check_outputs
from schedc.runtime.run import RunOptions
from schedc.runtime.workloads.overrun import DEFAULT as OVERRUN_DEFAULT
from schedc.runtime.workloads.overrun import MODES as OVERRUN_MODES

PLANNING_HELP = ("a planning policy plans every waiting job: `reserve all` and a backfill "
                 "other than `none`, e.g. examples/conservative.pol")


def add_parser(commands: Any) -> None:
    sub = commands.add_parser(
        "optimal", help="plan the waiting jobs optimally (event search and CP-SAT) and rate the "
        "policies' plans",
        description="Solve the quasi off-line problem of papers/001: the jobs waiting at an "
        "instant planned with the least ARTwW (width-weighted mean response) at 1-second "
        "resolution, the running jobs holding their cpus until their estimated ends, by an "
        "exact event search (branch and bound) and OR-Tools CP-SAT side by side: the first "
        "to end gives the verdict (`verdict by`, `solver` in JSON); before CP-SAT joins, "
        "annealing over job orders looks for better plans. ARTwW and SLDwA are "
        "both sum(width x start) plus a constant over a constant, so one optimum serves "
        "both. Each POLICY's plan is rated by quality = metric(optimal) / metric(policy); "
        "the best plan is the solvers' first upper bound. A proven optimum's objective is "
        "the same at every run; its plan and who proved it may differ when both end "
        "together; a plan stopped by --time-limit (status feasible) may differ from run to "
        "run, as may `seconds` (wall time).")
    sub.add_argument("policy_files", nargs="+", metavar="POLICY",
                     help="planning policies, FILE.pol or FILE.pol:NAME (a self-tuning policy "
                     "stands for its candidates)")
    sub.add_argument("--state", metavar="STATE.json", help="the instant to solve, as "
                     "`schedc run --state` replays it")
    sub.add_argument("--workload", metavar="TRACE", help="simulate the first POLICY on this "
                     "trace and solve at instants of it (--steps or --at)")
    sub.add_argument("--steps", type=int, metavar="N", help="with --workload: N submission "
                     "instants drawn with --seed among those with --min-jobs..--max-jobs "
                     "waiting jobs")
    sub.add_argument("--at", metavar="T1,T2,...", help="with --workload: these instants")
    sub.add_argument("--min-jobs", type=int, default=2, metavar="N",
                     help="--steps draws instants with at least N waiting jobs (default 2)")
    sub.add_argument("--max-jobs", type=int, default=40, metavar="N",
                     help="and at most N (default 40)")
    sub.add_argument("--seed", type=int, default=0, help="seed of --steps (default 0)")
    sub.add_argument("--metric", choices=("artww", "sldwa"), default="artww",
                     help="the metric of quality (default artww)")
    sub.add_argument("--time-limit", type=finite, default=60.0, metavar="SECONDS",
                     help="stop the solver after this long per instance (default 60)")
    sub.add_argument("--workers", type=int, default=None, metavar="N",
                     help="threads (default: the number of cores): the event search "
                          "takes one, CP-SAT the others (at least one)")
    sub.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                     help="value of a policy parameter (repeatable)")
    sub.add_argument("--lenient", action="store_true",
                     help="skip and count malformed workload lines")
    sub.add_argument("--overrun", choices=OVERRUN_MODES, default=OVERRUN_DEFAULT,
                     help="with --workload: jobs recorded past their requested time, as "
                     "`schedc run --overrun` (default estimate)")
    sub.add_argument("--plan", action="store_true",
                     help="print the optimal plan (start per job); always with --state")
    sub.add_argument("--json", action="store_true", help="print results as JSON")


def _check_options(args: argparse.Namespace) -> None:
    if (args.state is None) == (args.workload is None):
        raise UserError("give either --state or --workload" if args.state is None else
                        "give either --state or --workload, not both",
                        help="--state STATE.json solves one instant; --workload TRACE with "
                        "--steps N or --at T1,T2 solves instants of a run")
    if args.state is not None and (args.steps is not None or args.at is not None):
        raise UserError("--steps and --at apply to --workload",
                        help="a state is one instant: drop --steps/--at")
    if args.workload is not None and (args.steps is None) == (args.at is None):
        raise UserError("with --workload give either --steps N or --at T1,T2,...",
                        help="e.g. --steps 5, or --at 3600,7200")
    if args.steps is not None and args.steps < 1:
        raise UserError(f"--steps {args.steps}: give at least 1", help="e.g. --steps 5")
    if not 1 <= args.min_jobs <= args.max_jobs:
        raise UserError(f"--min-jobs {args.min_jobs} --max-jobs {args.max_jobs}: want "
                        "1 <= min <= max", help="e.g. --min-jobs 2 --max-jobs 40")
    if args.time_limit <= 0:
        raise UserError(f"--time-limit {args.time_limit:g}: must be positive",
                        help="seconds per instance, e.g. --time-limit 60")
    if args.workers is not None and args.workers < 1:
        raise UserError(f"--workers {args.workers}: must be at least 1",
                        help="leave it out to use every core")


def parse_times(text: str) -> list[int]:
    try:
        times = [int(t) for t in text.split(",")]
    except ValueError:
        times = []
    if not times or any(t < 0 for t in times):
        raise UserError(f"--at {text!r}: not a list of instants",
                        help="whole seconds >= 0 separated by commas, e.g. --at 3600,7200")
    return sorted(set(times))


def run(args: argparse.Namespace) -> int:
    require("optimal", "schedc optimal (OR-Tools CP-SAT)")
    from schedc.runtime.engine.planning import why_not_planning
    from schedc.runtime.run import prepare_run, prepared_policy
    from schedc.runtime.tools.optimal.instance import sample_steps, state_at
    from schedc.runtime.tools.optimal.outcome import candidates, optimise
    from schedc.runtime.tools.optimal.report import instance_json, print_instances

    _check_options(args)
    # it writes standard output only: compared with the inputs if it is a file
    check_outputs([], compare_inputs(args))
    times = parse_times(args.at) if args.at is not None else None
    entries = [parse_entry(e) for e in args.policy_files]
    base = RunOptions(params=parse_assignments(args.param, "--param"), lenient=args.lenient,
                      state=args.state, command=getattr(args, "argv", None),
                      overrun=args.overrun)
    first = prepare_run(entries[0].file, args.workload,
                        evolve(base, policy_name=entries[0].policy))
    given: list[RuntimePolicy] = [first.policy]
    for entry in entries[1:]:
        mine = evolve(base, policy_name=entry.policy)
        p = (prepare_run(entry.file, None, mine).policy if args.state is not None
             else prepared_policy(entry.file, mine))
        if p.resources != first.policy.resources:
            raise UserError(f"policy {p.name} has resources {list(p.resources)}, policy "
                            f"{first.policy.name} {list(first.policy.resources)}",
                            help="compare policies of one machine")
        given.append(p)
    policies = candidates(given)
    for p in policies:
        why = why_not_planning(p)
        if why is not None:
            raise UserError(f"policy {p.name} has no full plan: {why}", help=PLANNING_HELP)
    if args.state is not None:
        assert first.initial is not None
        states = [first.initial]
    else:
        schedule = first.run().schedule  # a dynP policy switches as in `schedc run`
        if times is None:
            times = sample_steps(schedule, args.steps, args.seed, args.min_jobs, args.max_jobs)
            if not times:
                raise UserError(f"no submission of the run has {args.min_jobs}.."
                                f"{args.max_jobs} waiting jobs",
                                help="widen --min-jobs/--max-jobs")
        states = [state_at(schedule, t, schedule.workload.source) for t in times]
    moldable = [j.id for s in states for j in s.queue if j.moldable is not None]
    if moldable:
        raise UserError(f"job {moldable[0]} is moldable; the model plans rigid jobs",
                        help="solve a workload without --range-factor or moldable jobs")
    workers = args.workers or os.cpu_count() or 1
    outcomes = [optimise(policies, s, time_limit=args.time_limit, workers=workers)
                for s in states]
    if args.json:
        print(json.dumps({
            "metric": args.metric, "time_limit": args.time_limit, "workers": workers,
            "instances": [instance_json(o, args.metric) for o in outcomes],
            "provenance": first.provenance.to_json()}, indent=2))
    else:
        print_instances(outcomes, args.metric, args.plan or args.state is not None,
                        first.policy.name)
    return EXIT_OK
