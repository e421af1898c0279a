"""The `schedc` command line: its parser, and each command handed to the module that does
it (`check`/`compile`, `run`/`compare`, `verify`, `workload`).

Every user mistake ends in a diagnostic and exit status 2, never a traceback (`errors`). The
heavy modules (the simulator, rich, z3) are imported inside the commands that need them, so
that `schedc --help` and `schedc check` start fast.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence

from schedc.dsl.verify import vocabulary
from schedc.runtime.cli import compare as compare_cmd
from schedc.runtime.cli import compile as compile_cmd
from schedc.runtime.cli import optimal, plot, run, sweep, verify, workload
from schedc.runtime.cli.errors import (
    EXIT_INTERNAL,
    EXIT_USER_ERROR,
    closed_streams,
    err,
    handled,
)
from schedc.runtime.cli.usage import (
    ArgumentsError,
    Parser,
    bad_arguments,
    unknown_arguments,
    unknown_command,
)
from schedc.runtime.cli.verify import VERIFY_QUEUED, VERIFY_RUNNING
from schedc.runtime.run import bundled_trace
from schedc.runtime.version import version
from schedc.runtime.workloads.overrun import DEFAULT as OVERRUN_DEFAULT
from schedc.runtime.workloads.overrun import MODES as OVERRUN_MODES

__all__ = ["VERIFY_QUEUED", "VERIFY_RUNNING", "build_parser", "bundled_trace", "main"]

COMMANDS = {"check": compile_cmd.cmd_check, "compile": compile_cmd.cmd_compile,
            "run": run.cmd_run, "compare": compare_cmd.cmd_compare, "verify": verify.cmd_verify,
            "workload": workload.cmd_workload, "optimal": optimal.cmd_optimal,
            "plot": plot.cmd_plot, "sweep": sweep.cmd_sweep}


def finite(text: str) -> float:
    """A number option's value: `nan` and `1e400` (infinite) are refused with the rest
    (`verify --timeout` checks its own range, with a help line)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def positive(text: str) -> int:
    """A count option's value: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not at least 1")
    return value


def seconds(text: str) -> int | float:
    """`--bsld-tau`'s value: seconds, more than 0 (10, 2.5, or a duration: 1min)."""
    from schedc.runtime.results.metrics import parse_tau

    try:
        return parse_tau(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def jobs_or_duration(text: str) -> object:
    """`--warmup`/`--cooldown`'s value: N jobs or a duration (`metrics.Cut`)."""
    from schedc.runtime.results.metrics import parse_cut

    try:
        return parse_cut(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="schedc",
        description="Compile, check, run and compare parallel-job scheduling policies "
        "written in the .pol language.",
    )
    parser.add_argument("--version", action="version", version=f"schedc {version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    check = commands.add_parser(
        "check", help="parse and type-check policy files", description="Parse and check "
        ".pol files; report every error of every file at once.")
    check.add_argument("files", nargs="+", metavar="FILE", help=".pol file(s)")

    compile_ = commands.add_parser(
        "compile", help="compile a policy to its IR", description="Compile a policy and "
        "print its intermediate representation.")
    compile_.add_argument("file", metavar="FILE", help=".pol file")
    compile_.add_argument("--policy", help="which policy of the file (if it defines several)")
    compile_.add_argument("--emit", choices=["json"], default="json",
                          help="output format (default: json)")
    compile_.add_argument("-o", "--output", metavar="PATH",
                          help="write to PATH instead of standard output")

    run = commands.add_parser(
        "run", help="simulate a policy on a workload",
        description="Simulate a policy on a workload (SWF trace, .swf.gz or CSV job table) "
        "and print its metrics. Without --workload, runs on the bundled KTH-SP2 trace.")
    run.add_argument("policy_file", metavar="POLICY", help=".pol file")
    _add_simulation_options(run)
    run.add_argument("--state", metavar="STATE.json",
                     help="replay from a machine state (running and queued jobs at an "
                     "instant, e.g. a counterexample of `verify`) instead of a workload")
    run.add_argument("--jobs-out", metavar="FILE.csv",
                     help="write one row per job, after the run's provenance as `# KEY: "
                     "VALUE` lines")
    run.add_argument("--jobs-out-format", choices=["schedc", "batsim"], default="schedc",
                     help="columns of --jobs-out: schedc's own (default; the last, "
                     "allocated_resources, is the processor ids as \"0-3 8\"), or Batsim's "
                     "jobs.csv that evalys reads (times in seconds; no provenance lines, "
                     "which pandas would not read: keep the run's --json for them)")
    run.add_argument("--swf-out", metavar="FILE.swf", help="write the simulated schedule as SWF")
    run.add_argument("--switches-out", metavar="FILE.csv",
                     help="a self-tuning dynP policy: write one row per switch (time, from, "
                     "to, each candidate's metric value), after the run's provenance")
    run.add_argument("--timing", action="store_true",
                     help="a self-tuning dynP policy: report the wall time per self-tuning "
                     "step (median, 99th percentile, max); not byte-identical across runs")

    verify = commands.add_parser(
        "verify", help="prove a policy's properties with Z3",
        description="Prove, for one scheduling pass over every state within the bounds, that "
        "no resource is overcommitted (capacity), sizes are in range (size-bounds), no "
        "formula divides by zero or takes sqrt/log of a bad value (well-defined), no backfill "
        "delays a reservation more than the policy's `slack` allows, none without one "
        "(reservation-safety), an idle machine starts a job (progress), "
        "and every `invariant`; and, across two passes, that a reserved job is never "
        "reserved later at the next pass (reservations-kept; policies that reserve). "
        "Exit status: 0 all proved, 1 a property violated, 2 a user "
        "error, 3 some verdict unknown.")
    verify.add_argument("files", nargs="+", metavar="FILE", help=".pol file(s)")
    verify.add_argument("--policy", help="which policy of the file (if it defines several)")
    verify.add_argument("--queued", type=int, default=VERIFY_QUEUED, metavar="N",
                        help=f"queued-job slots of the symbolic state (default {VERIFY_QUEUED})")
    verify.add_argument("--running", type=int, default=VERIFY_RUNNING, metavar="R",
                        help="running-job slots of the symbolic state "
                        f"(default {VERIFY_RUNNING})")
    verify.add_argument("--resources", type=int, metavar="K",
                        help=f"prove for a machine of K resources (1 to "
                        f"{vocabulary.MAX_RESOURCES}): the policy's own, "
                        "then generic ones with symbolic capacities (default: the machine's)")
    verify.add_argument("--property", action="append", dest="properties", metavar="NAME",
                        help="check only this property (repeatable): "
                        f"{', '.join((*vocabulary.PROPERTIES, 'invariant', vocabulary.KEPT))}")
    verify.add_argument("--rlimit", type=int, default=vocabulary.RLIMIT,
                        help="Z3 resource limit per property (machine-independent; "
                        f"default {vocabulary.RLIMIT:,})")
    verify.add_argument("--timeout", type=float, default=vocabulary.TIMEOUT_S,
                        metavar="SECONDS", help="wall-clock limit per property, all its "
                        "checks together (a dynP policy: per property of each candidate; "
                        f"default {vocabulary.TIMEOUT_S:g})")
    verify.add_argument("--format", choices=["text", "json", "markdown", "sarif"],
                        default="text", help="report format (default: text)")
    verify.add_argument("-o", "--output", metavar="PATH", help="write the report to PATH")
    verify.add_argument("--report", metavar="FILE.html",
                        help="also write a self-contained HTML page: every verdict, each "
                        "counterexample's state and the command that replays it")
    verify.add_argument("--counterexamples", metavar="DIR",
                        help="write each counterexample as a state file that "
                        "`schedc run POLICY --state FILE` replays")

    workload = commands.add_parser(
        "workload", help="make or inspect workloads",
        description="Make workloads for `schedc run`, or see what one holds.")
    kinds = workload.add_subparsers(dest="workload_command", metavar="KIND")
    kinds.required = True
    generate = kinds.add_parser(
        "generate", help="a synthetic moldable workload (papers/002)",
        description="Poisson (or other CV) arrivals, two-stage hyper-exponential service "
        "demand, Pmax uniform in [1, --pmax]; written as a moldable job table (each job may "
        "run on 1..Pmax cpus, linear speedup). Give the arrival rate by --mean-interarrival "
        "or by --utilisation (papers/002 eq. 9: rate x mean demand / processors).")
    generate.add_argument("-o", "--output", required=True, metavar="FILE.csv")
    generate.add_argument("--jobs", type=int, default=10_000, help="number of jobs")
    rate = generate.add_mutually_exclusive_group(required=True)
    rate.add_argument("--mean-interarrival", type=finite, metavar="S",
                      help="mean time between arrivals (s)")
    rate.add_argument("--utilisation", type=finite, metavar="U",
                      help="offered utilisation in (0, 1] (eq. 9), with --processors")
    generate.add_argument("--processors", type=int, default=64,
                          help="processors of eq. 9 (default 64, as the paper)")
    generate.add_argument("--cv-interarrival", type=finite, default=1.0, metavar="CV",
                          help="coefficient of variation of inter-arrival times (default 1)")
    generate.add_argument("--mean-demand", type=finite, default=16.0, metavar="D",
                          help="mean service demand, BPU-seconds (default 16, as the paper)")
    generate.add_argument("--cv-demand", type=finite, default=4.0, metavar="CV",
                          help="coefficient of variation of the demand (default 4)")
    generate.add_argument("--pmax", type=int, default=32,
                          help="Pmax is uniform in [1, PMAX] (default 32)")
    generate.add_argument("--time-scale", type=int, default=1, metavar="K",
                          help="write times in units of 1/K s (inter-arrivals and demands "
                          "scaled by K; utilisation and CVs unchanged): with the paper's "
                          "mean demand of 16 s, whole seconds would round most run times "
                          "to 1; e.g. 100 for 10 ms")
    generate.add_argument("--seed", type=int, default=0)

    kres = kinds.add_parser(
        "kresource", help="a K-resource workload (papers/004)",
        description="Sizes, run times and estimates of a trace's jobs, each given K "
        "requirements (the largest its size, the others drawn uniform or exponential "
        "relative to it) on K resources cpus, r2, ..., rK of the trace's capacity, arriving "
        "by a Poisson process. Give the rate by --mean-interarrival, or by --queue-length: "
        "the rate at which the baseline policy (FCFS/FF-EASY) keeps that many jobs waiting "
        "on average, found by bisection (papers/004 section 3.1). Run it with "
        "`schedc run POLICY --workload FILE.csv --resources K`.")
    kres.add_argument("-o", "--output", required=True, metavar="FILE.csv")
    kres.add_argument("--from", dest="source", metavar="TRACE",
                      help="the trace whose sizes and run times are used (default: the "
                      "bundled KTH-SP2 trace)")
    kres.add_argument("--jobs", type=int, metavar="N", help="the trace's first N jobs "
                      "(default: all)")
    kres.add_argument("--resources", type=int, required=True, metavar="K",
                      help="number of resources (the paper: 2, 4, 8)")
    kres.add_argument("--distribution", choices=["uniform", "exponential"],
                      default="uniform", help="how a job's requirements compare to its "
                      "largest (default: uniform)")
    krate = kres.add_mutually_exclusive_group(required=True)
    krate.add_argument("--mean-interarrival", type=finite, metavar="S",
                       help="mean time between arrivals (s)")
    krate.add_argument("--queue-length", type=finite, metavar="Q",
                       help="calibrate the rate: the baseline's mean number of waiting jobs "
                       "(the paper: 64, 128, 256)")
    kres.add_argument("--baseline", metavar="POLICY",
                      help="the policy of the calibration (default: FCFS/FF-EASY, "
                      "examples/ff-easy.pol)")
    kres.add_argument("--tolerance", type=finite, default=0.03, metavar="F",
                      help="calibrate to within this fraction of Q (default 0.03)")
    kres.add_argument("--seed", type=int, default=0)

    info = kinds.add_parser(
        "info", help="what a workload holds, before a run",
        description="Read a workload (SWF trace, .swf.gz or CSV job table) and print its "
        "facts: jobs read and skipped, the machine and where its size came from, the span of "
        "submissions, the offered load, how the run times compare with the estimates, the "
        "work the --overrun mode simulates, the sizes, the labels present and the fields "
        "missing. Without TRACE, the bundled KTH-SP2 trace.")
    info.add_argument("trace", nargs="?", metavar="TRACE",
                      help="SWF trace (.swf, .swf.gz) or CSV job table; default: the "
                      "bundled KTH-SP2 trace")
    info.add_argument("--overrun", choices=OVERRUN_MODES, default=OVERRUN_DEFAULT,
                      help="the mode whose simulated work is shown, as `run --overrun` "
                      f"(default {OVERRUN_DEFAULT})")
    info.add_argument("--capacity", action="append", default=[], metavar="NAME=VALUE",
                      help="machine capacity of a resource (repeatable), e.g. cpus=128")
    info.add_argument("--lenient", action="store_true",
                      help="skip and count malformed lines, and jobs with a negative or "
                      "repeated id or a negative submit time, instead of stopping")
    info.add_argument("--resources", metavar="K|NAMES",
                      help="read these resources: K (cpus, r2, ..., rK) or names, e.g. "
                      "cpus,memory (default cpus)")
    info.add_argument("--json", action="store_true", help="print the facts as JSON")

    compare = commands.add_parser(
        "compare", help="simulate several policies on one workload",
        description="Simulate several policies, or one at several param values, on the same "
        "workload; one table row per run. Every run is checked against the workload before "
        "the first simulation.")
    compare.add_argument("policy_files", nargs="+", metavar="POLICY",
                         help="FILE.pol, or FILE.pol:NAME for one policy of a file that "
                         "defines several")
    _add_simulation_options(compare, several=True)
    compare.add_argument("--vary", action="append", default=[], metavar="NAME=V1,V2,...",
                         help="run each policy that declares param NAME once per value "
                         "(repeatable: every combination); a policy that declares none of "
                         "them runs once")
    compare.add_argument("--csv", metavar="FILE.csv", dest="csv_out",
                         help="also write the comparison table as CSV, after the runs' "
                         "provenance as `# KEY: VALUE` lines")
    optimal.add_parser(commands, finite)
    plot.add_parser(commands, _add_simulation_options)
    sweep.add_parser(commands)
    return parser


def _add_simulation_options(sub: argparse.ArgumentParser, several: bool = False,
                            json: bool = True) -> None:
    sub.add_argument("--workload", metavar="TRACE",
                     help="SWF trace (.swf, .swf.gz) or CSV job table; default: the bundled "
                     "KTH-SP2 trace")
    sub.add_argument("--limit", type=positive, metavar="N",
                     help="simulate only the workload's first N jobs (file order)")
    if not several:
        sub.add_argument("--policy", help="which policy of the file (if it defines several)")
    sub.add_argument("--capacity", action="append", default=[], metavar="NAME=VALUE",
                     help="machine capacity of a resource (repeatable), e.g. cpus=128")
    sub.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                     help="value of a policy parameter (repeatable)")
    sub.add_argument("--lenient", action="store_true",
                     help="skip and count malformed workload lines, and jobs with a "
                     "negative or repeated id or a negative submit time, instead of stopping")
    sub.add_argument("--overrun", choices=OVERRUN_MODES, default=OVERRUN_DEFAULT,
                     help="jobs the workload records as running past their requested time: "
                     "`estimate` runs them to completion with the estimate raised to it "
                     "(default, as the literature cleans such traces), `kill` ends them at "
                     "their estimate (as a batch system enforces), `extend` runs them to "
                     "completion while the scheduler plans with the estimate they gave")
    sub.add_argument("--range-factor", type=finite, metavar="RF",
                     help="make the jobs moldable (papers/000): a job recorded on p of n cpus "
                     "may run on [floor((1-1/RF) p)+1, floor((n-p)/RF)+p], with Downey's "
                     "speedup (A = that max)")
    sub.add_argument("--sigma", type=finite, default=0.0, metavar="S",
                     help="Downey's sigma for --range-factor (default 0: linear up to A)")
    sub.add_argument("--load-factor", type=finite, default=100.0, metavar="LF",
                     help="scale inter-arrival times by 100/LF (percent of the trace's load; "
                     "default 100)")
    sub.add_argument("--resources", metavar="K|NAMES",
                     help="run the policy on more resources than its machine declares: K (its "
                     "own, then r2, r3, ... as `verify --resources K`) or names, e.g. "
                     "cpus,memory; capacities from the workload or --capacity")
    sub.add_argument("--speeds", metavar="GROUPS",
                     help="heterogeneous cpus (papers/002): COUNTxBPU groups, e.g. 32x1,32x2; "
                     "a job's times scale by the power of the processors it gets")
    sub.add_argument("--background-load", type=finite, default=0.0, metavar="MAX",
                     help="with --speeds: each processor's background load is uniform in "
                     "[0, MAX], redrawn at every arrival and departure (default 0)")
    sub.add_argument("--load-seed", type=int, default=0, metavar="SEED",
                     help="seed of the background loads (default 0)")
    sub.add_argument("--bsld-tau", type=seconds, default=10, metavar="SECONDS",
                     help="bounded slowdown's threshold: max(1, response / max(run time, "
                     "SECONDS)) (default 10; a duration as 1min also)")
    for flag, end in (("--warmup", "first"), ("--cooldown", "last")):
        sub.add_argument(flag, type=jobs_or_duration, metavar="N|DURATION",
                         help=f"leave the {end} jobs (in submit order) out of the metrics, "
                         f"still simulated: N jobs, or a duration (90s, 30min, 12h, 2d: those "
                         f"submitted within it of the {end} submit)")
    if json:  # run and compare (not plot, whose output is the figure)
        sub.add_argument("--json", action="store_true", help="print results as JSON")
        sub.add_argument("--report", metavar="FILE.html",
                         help="also write a self-contained HTML page: the tables, the figures "
                         "and the provenance")
    sub.add_argument("--no-progress", action="store_true", help="never show a progress bar")




def main(argv: Sequence[str] | None = None) -> int:
    closed = closed_streams()  # `schedc run ... >&-`: said at once, on the stream still open
    if closed is not None:
        return closed
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else [os.fspath(a) for a in argv]
    if any("\0" in a for a in argv):  # only a program can pass one; no path holds it
        err("error: an argument contains a NUL character")
        return EXIT_USER_ERROR
    if argv and not argv[0].startswith("-") and argv[0] not in COMMANDS:
        return unknown_command(parser, argv, COMMANDS)
    try:
        args, extras = parser.parse_known_args(argv)
    except ArgumentsError as error:
        return bad_arguments(error, argv)
    if extras:  # argparse would print the top-level usage and no suggestion
        return unknown_arguments(parser, args, argv, extras)
    args.argv = tuple(argv)  # for a result's provenance
    try:
        return handled(COMMANDS[args.command], args)
    except KeyboardInterrupt:  # also while the heavy modules load
        err("interrupted")
        return 130
    except Exception as error:  # a bug of ours: one line and its own status, no traceback
        if os.environ.get("SCHEDC_DEBUG"):
            raise
        err(f"internal error: {type(error).__name__}: {error}".rstrip(": ")[:300])
        err("this is a bug in schedc: please report it with the command and its input files "
            "(SCHEDC_DEBUG=1 shows the traceback)")
        return EXIT_INTERNAL


def entry() -> None:
    """The `schedc` command (its console script and `python -m schedc.runtime.cli`)."""
    from schedc.runtime.cli.exit import finish

    finish(main())


if __name__ == "__main__":
    entry()
