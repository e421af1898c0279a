"""The `schedc` command line: check, compile, run and compare policies.

Every user mistake ends in a diagnostic and exit status 2, never a traceback. The heavy
modules (the simulator, rich) are imported inside the commands that need them, so that
`schedc --help` and `schedc check` start fast.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Sequence
from importlib import resources as importlib_resources
from pathlib import Path
from typing import Any, TypeVar

EXIT_OK = 0
EXIT_VIOLATION = 1
EXIT_USER_ERROR = 2

BUNDLED_TRACE = "KTH-SP2-1996-2.1-cln.swf.gz"
# `schedc verify` bounds: the defaults of dsl/sympass.Bounds (not imported here: z3 loads slowly)
VERIFY_QUEUED = 8
VERIFY_RUNNING = 8


class UserError(Exception):
    """A mistake in the command line itself (not in a file): one message and a help line."""

    def __init__(self, message: str, help: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.help = help


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("schedc")
    except PackageNotFoundError:  # running from a checkout that is not installed
        return "unknown"


def bundled_trace() -> Path:
    """The KTH-SP2 trace shipped inside the package (the default workload of `run`)."""
    return Path(str(importlib_resources.files("schedc.runtime") / "data" / BUNDLED_TRACE))


def _parse_assignments(items: Sequence[str], flag: str) -> dict[str, str]:
    result: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise UserError(
                f"{flag} {item!r} is not of the form NAME=VALUE",
                help=f"for example {flag} cpus=128" if flag == "--capacity" else
                f"for example {flag} depth=2",
            )
        result[name.strip()] = value.strip()
    return result


def _parse_capacities(items: Sequence[str]) -> dict[str, int]:
    capacities: dict[str, int] = {}
    for name, value in _parse_assignments(items, "--capacity").items():
        try:
            number = int(value)
        except ValueError:
            raise UserError(
                f"--capacity {name}={value}: the capacity must be a whole number",
                help="capacities count units of a resource, e.g. --capacity cpus=128",
            ) from None
        if number < 1:
            raise UserError(
                f"--capacity {name}={value}: the capacity must be at least 1",
                help="a resource with no capacity can run no job",
            )
        capacities[name] = number
    return capacities


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="schedc",
        description="Compile, check, run and compare parallel-job scheduling policies "
        "written in the .pol language.",
    )
    parser.add_argument("--version", action="version", version=f"schedc {_version()}")
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
    run.add_argument("--jobs-out", metavar="FILE.csv", help="write one row per job")
    run.add_argument("--swf-out", metavar="FILE.swf", help="write the simulated schedule as SWF")

    verify = commands.add_parser(
        "verify", help="prove a policy's properties with Z3",
        description="Prove, for one scheduling pass over every state within the bounds, that "
        "no resource is overcommitted (capacity), sizes are in range (size-bounds), no "
        "formula divides by zero or takes sqrt/log of a bad value (well-defined), no backfill "
        "delays a reservation (reservation-safety), an idle machine starts a job (progress), "
        "and every `invariant`. Exit status: 0 all proved, 1 a property violated, 2 a user "
        "error, 3 some verdict unknown.")
    verify.add_argument("files", nargs="+", metavar="FILE", help=".pol file(s)")
    verify.add_argument("--policy", help="which policy of the file (if it defines several)")
    verify.add_argument("--queued", type=int, default=VERIFY_QUEUED, metavar="N",
                        help=f"queued-job slots of the symbolic state (default {VERIFY_QUEUED})")
    verify.add_argument("--running", type=int, default=VERIFY_RUNNING, metavar="R",
                        help="running-job slots of the symbolic state "
                        f"(default {VERIFY_RUNNING})")
    verify.add_argument("--resources", type=int, metavar="K",
                        help="prove for a machine of K resources (1 to 8): the policy's own, "
                        "then generic ones with symbolic capacities (default: the machine's)")
    verify.add_argument("--property", action="append", dest="properties", metavar="NAME",
                        help="check only this property (repeatable): capacity, size-bounds, "
                        "well-defined, reservation-safety, progress, invariant")
    verify.add_argument("--rlimit", type=int, default=50_000_000,
                        help="Z3 resource limit per property (machine-independent; "
                        "default 50,000,000)")
    verify.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                        help="wall-clock limit per property (default 60)")
    verify.add_argument("--format", choices=["text", "json", "markdown", "sarif"],
                        default="text", help="report format (default: text)")
    verify.add_argument("-o", "--output", metavar="PATH", help="write the report to PATH")
    verify.add_argument("--counterexamples", metavar="DIR",
                        help="write each counterexample as a state file that "
                        "`schedc run POLICY --state FILE` replays")

    workload = commands.add_parser(
        "workload", help="make workloads", description="Make workloads for `schedc run`.")
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
    rate.add_argument("--mean-interarrival", type=float, metavar="S",
                      help="mean time between arrivals (s)")
    rate.add_argument("--utilisation", type=float, metavar="U",
                      help="offered utilisation in (0, 1] (eq. 9), with --processors")
    generate.add_argument("--processors", type=int, default=64,
                          help="processors of eq. 9 (default 64, as the paper)")
    generate.add_argument("--cv-interarrival", type=float, default=1.0, metavar="CV",
                          help="coefficient of variation of inter-arrival times (default 1)")
    generate.add_argument("--mean-demand", type=float, default=16.0, metavar="D",
                          help="mean service demand, BPU-seconds (default 16, as the paper)")
    generate.add_argument("--cv-demand", type=float, default=4.0, metavar="CV",
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
    krate.add_argument("--mean-interarrival", type=float, metavar="S",
                       help="mean time between arrivals (s)")
    krate.add_argument("--queue-length", type=float, metavar="Q",
                       help="calibrate the rate: the baseline's mean number of waiting jobs "
                       "(the paper: 64, 128, 256)")
    kres.add_argument("--baseline", metavar="POLICY",
                      help="the policy of the calibration (default: FCFS/FF-EASY, "
                      "examples/ff-easy.pol)")
    kres.add_argument("--tolerance", type=float, default=0.03, metavar="F",
                      help="calibrate to within this fraction of Q (default 0.03)")
    kres.add_argument("--seed", type=int, default=0)

    compare = commands.add_parser(
        "compare", help="simulate several policies on one workload",
        description="Simulate several policies on the same workload; one table row per "
        "policy.")
    compare.add_argument("policy_files", nargs="+", metavar="POLICY", help=".pol files")
    _add_simulation_options(compare, several=True)
    compare.add_argument("--csv", metavar="FILE.csv", dest="csv_out",
                         help="also write the comparison table as CSV")
    return parser


def _add_simulation_options(sub: argparse.ArgumentParser, several: bool = False) -> None:
    sub.add_argument("--workload", metavar="TRACE",
                     help="SWF trace (.swf, .swf.gz) or CSV job table; default: the bundled "
                     "KTH-SP2 trace")
    if not several:
        sub.add_argument("--policy", help="which policy of the file (if it defines several)")
    sub.add_argument("--capacity", action="append", default=[], metavar="NAME=VALUE",
                     help="machine capacity of a resource (repeatable), e.g. cpus=128")
    sub.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                     help="value of a policy parameter (repeatable)")
    sub.add_argument("--lenient", action="store_true",
                     help="skip and count malformed workload lines, and jobs with a "
                     "negative or repeated id or a negative submit time, instead of stopping")
    sub.add_argument("--range-factor", type=float, metavar="RF",
                     help="make the jobs moldable (papers/000): a job recorded on p of n cpus "
                     "may run on [floor((1-1/RF) p)+1, floor((n-p)/RF)+p], with Downey's "
                     "speedup (A = that max)")
    sub.add_argument("--sigma", type=float, default=0.0, metavar="S",
                     help="Downey's sigma for --range-factor (default 0: linear up to A)")
    sub.add_argument("--load-factor", type=float, default=100.0, metavar="LF",
                     help="scale inter-arrival times by 100/LF (percent of the trace's load; "
                     "default 100)")
    sub.add_argument("--resources", metavar="K|NAMES",
                     help="run the policy on more resources than its machine declares: K (its "
                     "own, then r2, r3, ... as `verify --resources K`) or names, e.g. "
                     "cpus,memory; capacities from the workload or --capacity")
    sub.add_argument("--speeds", metavar="GROUPS",
                     help="heterogeneous cpus (papers/002): COUNTxBPU groups, e.g. 32x1,32x2; "
                     "a job's times scale by the power of the processors it gets")
    sub.add_argument("--background-load", type=float, default=0.0, metavar="MAX",
                     help="with --speeds: each processor's background load is uniform in "
                     "[0, MAX], redrawn at every arrival and departure (default 0)")
    sub.add_argument("--load-seed", type=int, default=0, metavar="SEED",
                     help="seed of the background loads (default 0)")
    sub.add_argument("--json", action="store_true", help="print results as JSON")
    sub.add_argument("--no-progress", action="store_true", help="never show a progress bar")


# --- commands ---------------------------------------------------------------------------


def cmd_check(args: argparse.Namespace) -> int:
    from schedc.dsl import check_file

    failed = False
    for file in args.files:
        _require_file(file, "policy")
        result = check_file(file)
        if result.diagnostics:
            failed = True
            _report(result.diagnostics)
        else:
            names = ", ".join(result.policies) or "no policy"
            print(f"ok: {file} ({names})")
    return EXIT_USER_ERROR if failed else EXIT_OK


def cmd_compile(args: argparse.Namespace) -> int:
    from schedc.dsl import compile_file, policy_to_json

    _require_file(args.file, "policy")
    policy = compile_file(args.file, args.policy)
    text = json.dumps(policy_to_json(policy), indent=2) + "\n"
    if args.output:
        from schedc.runtime.atomicio import write_text_atomic

        write_text_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    from schedc.runtime import report

    outcome = _simulate_one(args.policy_file, args.policy, args)
    if args.jobs_out:
        from schedc.runtime.metrics import write_jobs_csv

        write_jobs_csv(outcome.schedule, args.jobs_out)
    if args.swf_out:
        from schedc.runtime.workloads.swf import write_swf

        write_swf(outcome.schedule, args.swf_out)
    if args.json:
        print(json.dumps(report.run_json(outcome), indent=2))
    else:
        report.print_run(outcome)
    return EXIT_OK


def cmd_compare(args: argparse.Namespace) -> int:
    from schedc.runtime import report

    loaded: dict = {}  # policies on the same machine share one parsed workload
    outcomes = [_simulate_one(path, None, args, loaded) for path in args.policy_files]
    if args.csv_out:
        report.write_compare_csv(outcomes, args.csv_out)
    if args.json:
        print(json.dumps(report.compare_json(outcomes), indent=2))
    else:
        report.print_compare(outcomes)
    return EXIT_OK


EXIT_UNKNOWN = 3


def cmd_verify(args: argparse.Namespace) -> int:
    from schedc.dsl import compile_file
    from schedc.dsl.verify import reports as vr
    from schedc.dsl.verify.pass_encoding import Bounds
    from schedc.dsl.verify.prover import PROPERTIES, Limits, verify_policy, with_resources
    from schedc.runtime.replay import replayer

    for flag, value, default in (("--queued", args.queued, VERIFY_QUEUED),
                                 ("--running", args.running, VERIFY_RUNNING)):
        if not 1 <= value <= 64:
            raise UserError(f"{flag} {value}: the bound must lie in [1, 64]",
                            help=f"small bounds prove less; large ones take long (default "
                            f"{default})")
    # Z3 reads both limits as unsigned 32-bit numbers (a larger rlimit wraps round; 0 is none)
    if not 1 <= args.rlimit < 2**32:
        raise UserError(f"--rlimit {args.rlimit}: the limit must lie in [1, {2**32 - 1}]",
                        help="Z3's resource units per property (default 50000000)")
    if not 0.001 <= args.timeout < 2**32 / 1000:  # also false for nan
        raise UserError(f"--timeout {args.timeout:g}: give a number of seconds in "
                        f"[0.001, {2**32 // 1000}]", help="per property (default 60)")
    if args.resources is not None and not 1 <= args.resources <= 8:
        raise UserError(f"--resources {args.resources}: K must lie in [1, 8]",
                        help="the machine's own resources, then generic ones, up to 8")
    from schedc.runtime.workloads.workload import choices_help

    known = (*PROPERTIES, "invariant")
    for name in args.properties or ():
        if name not in known:
            raise UserError(f"--property {name}: no such property",
                            help=choices_help(name, known, "the properties are"))

    def verify_all() -> list:
        reports = []
        for file in args.files:
            _require_file(file, "policy")
            policy = compile_file(file, args.policy)
            if args.resources is not None:
                try:
                    policy = with_resources(policy, args.resources)
                except ValueError as exc:
                    raise UserError(f"--resources {args.resources}: {exc}",
                                    help="give at least as many resources as the machine has"
                                    ) from None
            verdicts = verify_policy(policy, Bounds(args.queued, args.running),
                                     Limits(args.rlimit, int(args.timeout * 1000)),
                                     only=args.properties, replay=replayer(policy))
            reports.append(vr.PolicyReport(file, policy.name, tuple(verdicts)))
        return reports

    # Nothing is written until every verdict is in: Ctrl-C leaves no partial report.
    reports = _interruptibly(verify_all)
    if args.counterexamples:
        _write_counterexamples(reports, Path(args.counterexamples))
    if args.format == "text" and not args.output:
        from schedc.runtime.report import stdout_console

        vr.print_terminal(reports, stdout_console())
    else:
        text = {"json": vr.to_json, "markdown": vr.to_markdown, "text": vr.to_markdown,
                "sarif": lambda r: vr.to_sarif(r, _version())}[args.format](reports)
        if args.output:
            from schedc.runtime.atomicio import write_text_atomic

            write_text_atomic(args.output, text)
        else:
            sys.stdout.write(text)
    statuses = {v.status for r in reports for v in r.verdicts}
    if "violated" in statuses:
        return EXIT_VIOLATION
    return EXIT_UNKNOWN if "unknown" in statuses else EXIT_OK


T = TypeVar("T")


class _Cancelled(BaseException):
    """Raised in the verifying thread when the user presses Ctrl-C (never seen outside)."""


def _interruptibly(work: Callable[[], T]) -> T:
    """``work()`` (Z3 checks), stopped at once by Ctrl-C: KeyboardInterrupt within a moment,
    and no verdict "unknown: canceled".

    A Z3 check runs in C, where Python raises no KeyboardInterrupt until it returns; and Z3
    traps SIGINT itself by default, cancels the check at hand (unknown, "canceled") and lets
    the next one run. So Z3 leaves SIGINT to Python here (its `ctrl_c` parameter), ``work``
    runs in a worker thread while this (main) thread only waits, and on KeyboardInterrupt
    this thread interrupts Z3's context (a check returns at once) and raises `_Cancelled` in
    the worker (its Python code stops at the next step), then raises KeyboardInterrupt."""
    import threading

    import z3

    outcome: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # re-raised in the main thread
            outcome["error"] = exc
        finally:
            done.set()

    trapped = z3.get_param("ctrl_c")
    z3.set_param("ctrl_c", False)
    worker = threading.Thread(target=run, name="schedc-verify", daemon=True)
    try:
        worker.start()
        # an Event, not join(): a join interrupted by Ctrl-C can leave is_alive() wrong
        while worker.is_alive():
            done.wait(0.1)
    except KeyboardInterrupt:
        _cancel(worker)
        raise
    finally:
        z3.set_param("ctrl_c", trapped)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _cancel(worker, patience: float = 2.0) -> None:
    """Stop ``worker`` (see `_interruptibly`); give up waiting after ``patience`` seconds (a
    daemon thread: the process can still exit)."""
    import ctypes
    import threading
    import time

    import z3

    unraisable, excepthook = sys.unraisablehook, threading.excepthook

    # `_Cancelled` raised in a `__del__` (z3 objects have one) is lost, so it is raised again
    # until the worker ends; one raised after `work` returned ends the thread: both silently
    def swallowed(unraisable_: Any) -> None:
        if not isinstance(unraisable_.exc_value, _Cancelled):
            unraisable(unraisable_)

    def escaped(args_: Any) -> None:
        if not isinstance(args_.exc_value, _Cancelled):
            excepthook(args_)

    sys.unraisablehook, threading.excepthook = swallowed, escaped
    try:
        deadline = time.monotonic() + patience
        while worker.is_alive() and time.monotonic() < deadline:
            # the check at hand, or the next one if none runs yet; read on each round: a
            # verification makes its own context (dsl/verify/z3context.py)
            z3.main_ctx().interrupt()
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(worker.ident),
                                                       ctypes.py_object(_Cancelled))
            time.sleep(0.02)
    finally:
        if not worker.is_alive():
            sys.unraisablehook, threading.excepthook = unraisable, excepthook


def _write_counterexamples(reports, folder: Path) -> None:
    from schedc.runtime.atomicio import write_text_atomic

    folder.mkdir(parents=True, exist_ok=True)
    for r in reports:
        for v in r.verdicts:
            if v.counterexample:
                state = {k: val for k, val in v.counterexample.items() if k != "pass"}
                name = v.property.split()[0] if v.property.startswith("invariant") \
                    else v.property
                target = folder / f"{Path(r.file).stem}.{name}.json"
                write_text_atomic(target, json.dumps(state, indent=2) + "\n")


def cmd_workload(args: argparse.Namespace) -> int:
    from schedc.runtime.workloads import synthetic

    if args.workload_command == "kresource":
        return cmd_kresource(args)

    if args.time_scale < 1:
        raise UserError(f"--time-scale must be at least 1, got {args.time_scale}",
                        help="K = 1000 writes times in milliseconds")
    try:
        mean = args.mean_interarrival
        if args.utilisation is not None:
            mean = synthetic.interarrival_for_utilisation(args.utilisation, args.mean_demand,
                                                          args.processors)
        k = args.time_scale
        spec = synthetic.SyntheticSpec(
            jobs=args.jobs, mean_interarrival=mean * k, cv_interarrival=args.cv_interarrival,
            mean_demand=args.mean_demand * k, cv_demand=args.cv_demand, pmax_high=args.pmax,
            seed=args.seed)
    except ValueError as exc:
        raise UserError(str(exc), help="see `schedc workload generate --help`") from None
    jobs = synthetic.generate(spec)
    synthetic.write_schedc_table(jobs, args.output)
    offered = synthetic.offered_utilisation(spec, args.processors)
    unit = "s" if args.time_scale == 1 else f"s, times in units of 1/{args.time_scale} s"
    print(f"wrote {len(jobs)} jobs to {args.output}: mean inter-arrival {mean:.4g} {unit}; "
          f"offered utilisation {offered:.3f} on {args.processors} processors (eq. 9)")
    return EXIT_OK


# The calibration's default baseline: examples/ff-easy.pol, here so that an installed
# schedc needs no checkout.
FF_EASY = "policy ff_easy {\n  order job.submit asc\n  reserve 1\n  backfill first_fit\n}\n"


def cmd_kresource(args: argparse.Namespace) -> int:
    from schedc.dsl import compile_file, compile_source
    from schedc.dsl.machines import with_resources
    from schedc.runtime.engine.from_ir import to_runtime
    from schedc.runtime.workloads import kresource
    from schedc.runtime.workloads.load import load_workload

    k = args.resources
    if k < 1:
        raise UserError(f"--resources must be at least 1, got {k}",
                        help="the paper uses 2, 4 and 8")
    if args.jobs is not None and args.jobs < 1:
        raise UserError(f"--jobs must be at least 1, got {args.jobs}",
                        help="leave it out for all the trace's jobs")
    for flag, value in (("--mean-interarrival", args.mean_interarrival),
                        ("--queue-length", args.queue_length), ("--tolerance", args.tolerance)):
        if value is not None and not 0 < value < float("inf"):
            raise UserError(f"{flag} must be a number > 0, got {value:g}",
                            help="see `schedc workload kresource --help`")
    baseline = None
    if args.queue_length is not None:  # compile first: a policy mistake costs no loading
        if args.baseline:
            _require_file(args.baseline, "policy")
            policy_ir = compile_file(args.baseline)
        else:
            policy_ir = compile_source(FF_EASY, "<ff-easy>")
        names = kresource.resource_names(k)
        try:
            baseline = to_runtime(with_resources(policy_ir, k))
        except ValueError:
            baseline = None
        if baseline is None or tuple(baseline.resources) != names:
            own = ", ".join(r.name for r in policy_ir.machine.resources)
            raise UserError(f"--baseline: the policy's machine has resources {own}; the "
                            f"workload has {', '.join(names)}",
                            help="give a policy whose machine has only cpus (the others are "
                            "added as r2, r3, ...)")
    path = args.source or str(bundled_trace())
    _require_file(path, "trace")
    trace = load_workload(path)
    source = kresource.source_jobs(trace, args.jobs)
    if not source:
        raise UserError(f"{path} has no job to take sizes from", help="give another trace")
    capacity = trace.capacities[0]
    draws = kresource.draw(source, k, args.distribution, args.seed)
    gap = args.mean_interarrival
    note = ""
    if baseline is not None:
        try:
            found = kresource.calibrate_rate(baseline, source, draws, capacity,
                                             args.queue_length, args.tolerance)
        except ValueError as exc:
            raise UserError(str(exc), help="try a larger --tolerance, a target the trace "
                            "can reach, or --mean-interarrival") from None
        gap = found.mean_interarrival
        note = (f"; {baseline.name}'s mean queue length {found.queue_length:.1f} "
                f"(target {args.queue_length:g}, {len(found.steps)} simulations)")
    w = kresource.workload(source, draws, capacity, gap)
    comment = (f"schedc workload kresource --from {Path(path).name} --jobs {len(source)} "
               f"--resources {k} --distribution {args.distribution} "
               f"--mean-interarrival {gap!r} --seed {args.seed}")
    kresource.write_table(w, args.output, comment)
    print(f"wrote {len(w.jobs)} jobs on {k} resources ({args.distribution}, capacity "
          f"{capacity} each) to {args.output}: mean inter-arrival {gap:.4g} s{note}")
    return EXIT_OK


def _simulate_one(policy_file: str, policy_name: str | None, args: argparse.Namespace,
                  loaded: dict | None = None):
    from schedc.dsl import compile_file
    from schedc.runtime.engine.from_ir import to_runtime
    from schedc.runtime.engine.simulator import simulate
    from schedc.runtime.report import RunOutcome
    from schedc.runtime.workloads.load import load_workload

    if getattr(args, "state", None):
        return _simulate_state(policy_file, policy_name, args)
    _require_file(policy_file, "policy")
    policy_ir = _on_resources(compile_file(policy_file, policy_name), args.resources)
    policy = to_runtime(policy_ir, _parse_assignments(args.param, "--param"))
    capacities = _resolve_capacities(policy.resources, policy.capacities, args.capacity)
    cluster = _cluster(args)
    if cluster is not None and capacities.get("cpus") is None:
        capacities["cpus"] = len(cluster.speeds)  # one cpu per processor
    workload_path = args.workload or str(bundled_trace())
    _require_file(workload_path, "workload")
    key = (workload_path, policy.resources, tuple(capacities.items()))
    workload = (loaded or {}).get(key)
    if workload is None:
        workload = load_workload(workload_path, resources=policy.resources,
                                 capacities=capacities, lenient=args.lenient)
        workload = _transformed(workload, args)
        if loaded is not None:
            loaded[key] = workload
    label = f"{policy.name} on {Path(workload_path).name}"
    with _progress(args, label, len(workload.jobs)) as progress:
        schedule = simulate(policy, workload, progress=progress, cluster=cluster)
    return RunOutcome(policy_file=policy_file, policy=policy, workload=workload,
                      schedule=schedule, cluster=cluster.describe() if cluster else None)


def _on_resources(policy, spec: str | None):
    """`--resources K|NAMES`: the policy on its machine's resources and more."""
    from schedc.dsl.machines import extend_machine, with_resources

    if spec is None:
        return policy
    try:
        if spec.strip().isascii() and spec.strip().isdigit():
            return with_resources(policy, int(spec))
        return extend_machine(policy, [n.strip() for n in spec.split(",")])
    except ValueError as exc:
        own = ",".join(r.name for r in policy.machine.resources)
        raise UserError(f"--resources {spec}: {exc}",
                        help=f"list the machine's own first, e.g. --resources {own},memory"
                        ) from None


def _cluster(args: argparse.Namespace):
    """The heterogeneous cluster of --speeds / --background-load / --load-seed, or None."""
    from schedc.runtime.engine.cluster import Cluster, ClusterError, parse_speeds

    if args.speeds is None:
        if args.background_load != 0 or args.load_seed != 0:
            raise UserError("--background-load and --load-seed need --speeds",
                            help="give the processors' speeds, e.g. --speeds 64x1 for a "
                            "homogeneous cluster with background load")
        return None
    try:
        return Cluster(parse_speeds(args.speeds), args.background_load, args.load_seed)
    except ClusterError as exc:
        raise UserError(str(exc), help=exc.help) from None


def _moldable_spec(args: argparse.Namespace):
    from schedc.runtime.workloads.moldable import MoldableSpec

    try:
        return MoldableSpec(args.range_factor, args.sigma, args.load_factor)
    except ValueError as exc:
        raise UserError(str(exc), help="e.g. --range-factor 2 --sigma 1 --load-factor 125"
                        ) from None


def _transformed(workload, args: argparse.Namespace):
    """The workload made moldable and/or scaled in load, as the options say."""
    from schedc.runtime.workloads.moldable import make_moldable

    spec = _moldable_spec(args)
    if spec.range_factor is None and args.sigma != 0:
        raise UserError("--sigma needs --range-factor",
                        help="sigma shapes the speedup of jobs made moldable")
    if spec.range_factor is None and spec.load_factor == 100:
        return workload
    return make_moldable(workload, spec)


def _simulate_state(policy_file: str, policy_name: str | None, args: argparse.Namespace):
    """`run --state`: one machine state replayed; its params are defaults for --param."""
    from schedc.dsl import compile_file
    from schedc.runtime.engine.from_ir import to_runtime
    from schedc.runtime.engine.simulator import simulate
    from schedc.runtime.report import RunOutcome
    from schedc.runtime.workloads.state_file import load_state, merged_params

    if args.workload:
        raise UserError("give either --state or --workload, not both",
                        help="a state holds its own jobs; later arrivals are not supported")
    if args.capacity:
        raise UserError("--capacity does not apply with --state",
                        help="the state's `capacity` is the machine: edit it in the file")
    if args.range_factor is not None or args.load_factor != 100 or args.sigma != 0:
        raise UserError("--range-factor, --sigma and --load-factor do not apply with --state",
                        help="they change a workload read with --workload")
    if args.speeds is not None:
        raise UserError("--speeds does not apply with --state",
                        help="a state's machine is its `capacity`")
    _require_file(policy_file, "policy")
    policy_ir = _on_resources(compile_file(policy_file, policy_name), args.resources)
    _require_file(args.state, "state")
    resources = tuple(r.name for r in policy_ir.machine.resources)
    state = load_state(args.state, resources)
    params = merged_params(state, _parse_assignments(args.param, "--param"))
    policy = to_runtime(policy_ir, params)
    if state.sizes and not policy.size_fixed:
        raise UserError(f"the state gives queued jobs a `size`, but policy {policy.name} "
                        "chooses sizes at every pass",
                        help="kept sizes are for `size fixed` policies: remove the `size` "
                        "fields")
    workload = state.workload
    with _progress(args, f"{policy.name} on {Path(args.state).name}",
                   len(workload.jobs)) as progress:
        schedule = simulate(policy, workload, progress=progress, initial=state)
    return RunOutcome(policy_file=policy_file, policy=policy, workload=workload,
                      schedule=schedule)


def _resolve_capacities(resources: tuple[str, ...], declared: tuple[int | None, ...],
                        items: Sequence[str]) -> dict[str, int | None]:
    """CLI --capacity overrides the policy's machine block, which overrides the trace."""
    from schedc.runtime.workloads.workload import choices_help

    given = _parse_capacities(items)
    for name in given:
        if name not in resources:
            raise UserError(
                f"--capacity {name}: the policy's machine has no resource `{name}`",
                help=choices_help(name, resources, "its resources are"),
            )
    return {name: given.get(name, cap) for name, cap in zip(resources, declared, strict=True)}


class _progress:
    """A rich progress bar on a terminal; nothing when piped or with --no-progress."""

    def __init__(self, args: argparse.Namespace, label: str, total: int) -> None:
        self.enabled = not args.no_progress and not args.json and sys.stderr.isatty()
        self.label = label
        self.total = total
        self._bar = None
        self._task = None

    def __enter__(self):
        if not self.enabled:
            return None
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        from schedc.runtime.report import stderr_console

        self._bar = Progress(TextColumn("{task.description}"), BarColumn(),
                             TextColumn("{task.completed:,.0f}/{task.total:,.0f} jobs ended"),
                             TimeElapsedColumn(), console=stderr_console(), transient=True)
        self._bar.__enter__()
        self._task = self._bar.add_task(self.label, total=self.total)

        def update(done: int, total: int) -> None:
            self._bar.update(self._task, completed=done, total=total)

        return update

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)


def _require_file(path: str, what: str) -> None:
    p = Path(path)
    if not p.exists():
        raise UserError(f"{what} file not found: {path}",
                        help="check the path; it is relative to the current directory")
    if p.is_dir():
        raise UserError(f"{what} file is a directory: {path}", help="give a file")


def _color(stream) -> bool:
    return stream.isatty()


def _err(text: str) -> None:
    sys.stderr.write(text if text.endswith("\n") else text + "\n")


def _report(diagnostics) -> None:
    """Diagnostics on standard error: coloured through rich on a terminal, plain otherwise."""
    from schedc.dsl import render_diagnostics

    if _color(sys.stderr):
        from schedc.runtime.report import stderr_console

        stderr_console().print(render_diagnostics(diagnostics, color=True), end="",
                               highlight=False, soft_wrap=True)
    else:
        _err(render_diagnostics(diagnostics))


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return _dispatch(args)
    except KeyboardInterrupt:  # also while the heavy modules load
        _err("interrupted")
        return 130


def _dispatch(args: argparse.Namespace) -> int:
    handlers = {"check": cmd_check, "compile": cmd_compile, "run": cmd_run,
                "compare": cmd_compare, "verify": cmd_verify, "workload": cmd_workload}
    from schedc.dsl import DiagnosticError
    from schedc.runtime.workloads.workload import WorkloadError

    try:
        return handlers[args.command](args)
    except UserError as error:
        _err(f"error: {error.message}")
        if error.help:
            _err(f"help: {error.help}")
        return EXIT_USER_ERROR
    except DiagnosticError as error:
        _report(error.diagnostics)
        return EXIT_USER_ERROR
    except WorkloadError as error:
        _report([_workload_diagnostic(error)])
        return EXIT_USER_ERROR
    except _cluster_error() as error:
        _err(f"error: {error}")
        if error.help:
            _err(f"help: {error.help}")
        return EXIT_USER_ERROR
    except _monitor_violation() as error:
        _err(f"runtime monitor: {error}")
        return EXIT_VIOLATION
    except OSError as error:  # unreadable input, unwritable output
        _err(f"error: {error.strerror or error}: {error.filename or ''}".rstrip(": "))
        return EXIT_USER_ERROR


def _workload_diagnostic(error):
    """A workload mistake in the same shape as a policy one: location, line, caret, help."""
    from schedc.dsl.diagnostics import Diagnostic

    end_col = None
    if error.col is not None and error.source_line is not None:
        # the value the column points at: an SWF field, a CSV cell (quoted, or up to a
        # comma), a JSON string or number
        token = re.match(r'"[^"]*"?|[^\s,"\]}]*', error.source_line[error.col - 1:])
        end_col = error.col + max(1, len(token.group()) if token else 1)
    return Diagnostic(error.message, error.path, error.line, error.col,
                      error.line if end_col else None, end_col, error.help,
                      source=error.source_line)


def _cluster_error() -> type[Exception]:
    from schedc.runtime.engine.cluster import ClusterError

    return ClusterError


def _monitor_violation() -> type[Exception]:
    from schedc.runtime.monitor import MonitorViolation

    return MonitorViolation


if __name__ == "__main__":
    sys.exit(main())
