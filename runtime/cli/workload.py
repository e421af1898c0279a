"""`schedc workload generate`, `parsons-sevcik` and `kresource`: make workloads for runs;
`schedc workload info`: what a workload holds, before a run."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schedc.runtime.cli.errors import EXIT_OK, UserError
from schedc.runtime.cli.options import finite
from schedc.runtime.run import bundled_trace, require_file
from schedc.runtime.workloads.overrun import DEFAULT as OVERRUN_DEFAULT
from schedc.runtime.workloads.overrun import MODES as OVERRUN_MODES

if TYPE_CHECKING:
    from schedc.runtime.outputs import Input
    from schedc.runtime.workloads.info import WorkloadInfo


def run(args: argparse.Namespace) -> int:
    from schedc.runtime.outputs import Output, check_outputs
    from schedc.runtime.workloads import synthetic

    # info writes standard output only: compared with the trace if it is a file
    outputs = [] if args.workload_command == "info" else [Output("-o", args.output)]
    check_outputs(outputs, _inputs(args))
    if args.workload_command == "info":
        return cmd_info(args)
    if args.workload_command == "kresource":
        return cmd_kresource(args)
    if args.workload_command == "parsons-sevcik":
        return cmd_parsons_sevcik(args)

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
    _within_range(jobs)
    synthetic.write_schedc_table(jobs, args.output, args.time_scale)
    offered = synthetic.offered_utilisation(spec, args.processors)
    unit = "s" if args.time_scale == 1 else f"s, times in units of 1/{args.time_scale} s"
    summary(args, f"wrote {len(jobs)} jobs to {args.output}: mean inter-arrival {mean:.4g} "
            f"{unit}; offered utilisation {offered:.3f} on {args.processors} processors (eq. 9)")
    return EXIT_OK


def _inputs(args: argparse.Namespace) -> Iterator[Input]:
    """What a `workload` command reads: info's trace, kresource's trace and baseline
    policy (the bundled trace when none is given); generate and parsons-sevcik read nothing."""
    from schedc.runtime.outputs import Input, policy_inputs

    if args.workload_command in ("generate", "parsons-sevcik"):
        return
    flag = "TRACE" if args.workload_command == "info" else "--from"
    given = args.trace if args.workload_command == "info" else args.source
    yield Input(flag if given else "the bundled trace", given or str(bundled_trace()))
    if args.workload_command == "kresource":
        yield from policy_inputs(args.baseline, "--baseline")


# The calibration's default baseline: examples/ff-easy.pol, here so that an installed
# schedc needs no checkout.
FF_EASY = "policy ff_easy {\n  order job.submit asc\n  reserve 1\n  backfill first_fit\n}\n"


def _within_range(jobs: Sequence[Any]) -> None:
    """The generated times are ones schedc reads back (docs/reference/limits.md): a table
    past them is refused here, before it is written, not when a run reads it."""
    from schedc.dsl.number_text import MAX_VALUE

    for job in jobs:
        run = job.demand / job.pmax
        if job.submit > MAX_VALUE or run > MAX_VALUE:
            what = (f"submitted at {job.submit:.4g}" if job.submit > MAX_VALUE
                    else f"running for {run:.4g}")
            raise UserError(f"job {job.id} would be {what} time units, past 10^15, the "
                            "largest time schedc holds", help="lower --jobs, the means "
                            "(--mean-interarrival, --mean-demand) or --time-scale")


def cmd_parsons_sevcik(args: argparse.Namespace) -> int:
    from schedc.dsl.number_text import MAX_TIME, MAX_VALUE
    from schedc.runtime.workloads import parsons_sevcik as ps

    more = "see `schedc workload parsons-sevcik --help`"
    if args.jobs < 1:
        raise UserError(f"--jobs must be at least 1, got {args.jobs}", help=more)
    for flag, value in (("--mean-interarrival", args.mean_interarrival), ("--load", args.load)):
        if value is not None and not value > 0:
            raise UserError(f"{flag} must be a number > 0, got {value:g}", help=more)
    try:
        gap = args.mean_interarrival
        if args.load is not None:
            gap = ps.interarrival_for_load(args.load)
            if gap > MAX_TIME:
                raise UserError(f"--load {args.load:g} is a mean inter-arrival of {gap:.4g} s, "
                                "past 10^15 s, the largest schedc holds", help="raise --load")
        spec = ps.ParsonsSevcikSpec(jobs=args.jobs, mean_interarrival=gap, seed=args.seed)
    except ValueError as exc:
        raise UserError(str(exc), help=more) from None
    jobs = ps.generate(spec)
    if jobs[-1].submit > MAX_VALUE:  # refused here, not when a run reads the table
        raise UserError(f"job {jobs[-1].id} would be submitted at {jobs[-1].submit:.4g} s, past "
                        "10^15, the largest time schedc holds",
                        help="lower --jobs or --mean-interarrival, or raise --load")
    comment = (f"schedc workload parsons-sevcik --jobs {spec.jobs} --mean-interarrival "
               f"{gap!r} --seed {spec.seed}")
    ps.write_table(jobs, args.output, comment)
    summary(args, f"wrote {len(jobs)} jobs to {args.output}: mean inter-arrival {gap:.4g} s; "
            f"offered load {ps.offered_load(spec):.3f} on {ps.NODES} nodes at the requested "
            f"sizes, {ps.offered_load(spec, 'minimum'):.3f} at the minimum sizes")
    return EXIT_OK


def cmd_kresource(args: argparse.Namespace) -> int:
    from schedc.dsl import compile_file, compile_source
    from schedc.dsl.machines import with_resources
    from schedc.runtime.engine.from_ir import to_runtime
    from schedc.runtime.tools import calibrate
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
            require_file(args.baseline, "policy")
            policy_ir = compile_file(args.baseline)
        else:
            policy_ir = compile_source(FF_EASY, "<ff-easy>")
        names = kresource.resource_names(k)
        try:
            baseline = to_runtime(with_resources(policy_ir, k))
        except ValueError:
            baseline = None
        if baseline is not None and baseline.preemption is not None:
            raise UserError(f"--baseline: policy {baseline.name} preempts, and the "
                            "calibration runs run-to-completion policies only",
                            help="give a policy without `preempt when` (the default is "
                                 "FCFS/FF-EASY)")
        if baseline is None or tuple(baseline.resources) != names:
            own = ", ".join(r.name for r in policy_ir.machine.resources)
            raise UserError(f"--baseline: the policy's machine has resources {own}; the "
                            f"workload has {', '.join(names)}",
                            help="give a policy whose machine has only cpus (the others are "
                            "added as r2, r3, ...)")
    path = args.source or str(bundled_trace())
    require_file(path, "trace")
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
            found = calibrate.calibrate_rate(baseline, source, draws, capacity,
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
    summary(args, f"wrote {len(w.jobs)} jobs on {k} resources ({args.distribution}, "
            f"capacity {capacity} each) to {args.output}: mean inter-arrival {gap:.4g} s{note}")
    return EXIT_OK


def cmd_info(args: argparse.Namespace) -> int:
    from schedc.runtime.cli.run import parse_capacities
    from schedc.runtime.workloads.info import workload_info
    from schedc.runtime.workloads.load import load_workload

    capacities = parse_capacities(args.capacity)
    resources = info_resources(args.resources)
    for name in capacities:  # the readers would ignore it: say so instead
        if name not in resources:
            raise UserError(f"--capacity {name}: the workload is read with resources "
                            f"{', '.join(resources)}",
                            help="read it too with --resources "
                            + ",".join((*resources, name)))
    path = args.trace or str(bundled_trace())
    require_file(path, "workload")
    workload = load_workload(path, resources=resources, capacities=capacities,
                             lenient=args.lenient)
    info = workload_info(workload, args.overrun, given=capacities)
    if args.json:
        print(json.dumps(info.to_dict(), indent=2))
    else:
        print_info(info)
    return EXIT_OK


def info_resources(spec: str | None) -> tuple[str, ...]:
    """`--resources K|NAMES` as resource names: K is cpus, r2, ..., rK (the names
    `workload kresource` writes), NAMES a comma list that starts with cpus."""
    if spec is None:
        return ("cpus",)
    text = spec.strip()
    if text.isascii() and text.isdigit():
        k = int(text)
        if k < 1:
            raise UserError(f"--resources must be at least 1, got {k}",
                            help="K counts cpus, r2, ..., rK")
        return ("cpus", *(f"r{i}" for i in range(2, k + 1)))
    names = tuple(n.strip() for n in text.split(","))
    if not all(names) or len(set(names)) < len(names) or names[0] != "cpus":
        raise UserError(f"--resources {spec}: expected K or distinct names, cpus first",
                        help="e.g. --resources 4 or --resources cpus,memory")
    return names


def print_info(info: WorkloadInfo) -> None:
    """The facts as one table, a section per kind of fact."""
    from rich.table import Table

    from schedc.runtime.results.report import stdout_console

    facts = info.to_dict()
    unit = "s" if info.time_unit == 1 else f"units of {info.time_unit} s"
    title = (f"{Path(info.source).name}: {info.jobs:,} jobs "
             f"(--overrun {info.mode})")
    table = Table(title=title, min_width=len(title))
    table.add_column("fact")
    table.add_column("value", justify="right")
    for number, section in enumerate(info_rows(info, facts, unit)):
        if number:
            table.add_section()
        for label, value in section:
            table.add_row(label, value)
    stdout_console().print(table)


def info_rows(info: WorkloadInfo, facts: dict[str, Any], unit: str) -> list[list[tuple[str, str]]]:
    """The table's sections of (fact, value) rows, every value from ``facts`` (the JSON)."""
    time, load, work = facts["time"], facts["offered_load"], facts["work"]
    over, est, sizes = facts["overrun"], facts["estimates"], facts["sizes"]
    jobs = [("jobs read", _text(info.jobs))]
    partial = facts["partial_executions"]
    if partial["jobs"]:
        unfinished = partial["jobs_without_last_part"]
        jobs.append(("jobs read from partial executions (parts)",
                     f"{partial['jobs']:,} from {partial['parts']:,}"))
        if unfinished:
            jobs.append(("of these, jobs without a last part", _text(unfinished)))
    jobs += [(f"skipped: {reason}", _text(n)) for reason, n in facts["skipped"].items()]
    machine = [(f"capacity of {name}", f"{m['capacity']:,} ({m['source']})")
               for name, m in facts["machine"].items()]
    if info.time_unit != 1:
        machine.append(("time unit", f"{info.time_unit} s"))
    span = ("-" if time["span_seconds"] is None else
            f"{_text(time['span_seconds'])} s ({time['span_days']:.4g} days)")
    times = [(f"first submit ({unit})", _text(time["first_submit"])),
             (f"last submit ({unit})", _text(time["last_submit"])),
             ("span of submissions", span)]
    loads = [("offered load, recorded run times", _text(load["recorded"])),
             ("offered load, run times capped at estimates", _text(load["capped_at_estimate"])),
             (f"work recorded (cpus x {unit})", _text(work["recorded"])),
             (f"work capped at estimates (cpus x {unit})", _text(work["capped_at_estimate"])),
             (f"work simulated, --overrun {info.mode} (cpus x {unit})",
              _text(work["simulated"]))]
    ratios = est["run_over_estimate"]
    estimates = [
        ("jobs over their estimate", f"{over['jobs_over_estimate']:,} "
         f"({_percent(over['share_of_jobs'])} of jobs, {_percent(over['share_of_work'])} "
         "of work)"),
        (f"work past estimates (cpus x {unit})", _text(over["work_past_estimates"])),
        ("run/estimate of those: median, p90",
         f"{_text(over['median_run_over_estimate'])}, {_text(over['p90_run_over_estimate'])}"),
        ("jobs without a requested time", _text(est["jobs_without_requested_time"])),
        ("run/estimate of jobs with one: " + ", ".join(ratios),
         ", ".join(_text(v) for v in ratios.values()))]
    if info.killed_at_estimate:
        estimates.append(("jobs --overrun kill ends at their estimate",
                          _text(info.killed_at_estimate)))
    size_rows = [("cpus requested: min, median, max",
                  f"{_text(sizes['min'])}, {_text(sizes['median'])}, {_text(sizes['max'])}"),
                 ("distinct sizes", _text(sizes["distinct"])),
                 ("serial jobs", _percent(sizes["serial_share"]))]
    labels = [(f"distinct {name}s", _text(n)) for name, n in facts["labels"].items()]
    missing = [("fields missing",
                ", ".join(n.replace("_", " ") for n in facts["missing"]["fields"]) or "none")]
    if info.format == "swf" and "memory" not in facts["machine"]:
        # SWF records memory per job, but it is read only as a resource (with a capacity)
        missing.append(("memory", "not read (--resources cpus,memory)"))
    return [jobs, machine, times, loads, estimates, size_rows, labels, missing]


def _text(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1e6 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _percent(share: object) -> str:
    return "-" if not isinstance(share, float | int) else f"{100 * share:.1f}%"


def summary(args: argparse.Namespace, text: str) -> None:
    """What was written: on standard output, or standard error when the table went there."""
    from schedc.runtime.atomicio import standard_stream

    print(text, file=sys.stderr if standard_stream(args.output) == 1 else sys.stdout)


def add_parser(commands: Any) -> None:
    """`schedc workload`'s parser."""
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

    ps = kinds.add_parser(
        "parsons-sevcik", help="a two-speedup-class moldable workload (papers/003)",
        description="Parsons and Sevcik's workload (papers/003 section 6.1) on their 16 "
        "nodes of 8 processors, schedc's cpus counting nodes: Poisson arrivals, a "
        "hyper-exponential service demand (mean 8000 s on one processor, CV 4), 75% of the "
        "jobs with good speedup (99.9% parallel: 113.6 on 128 processors) and 25% poor "
        "(6.4 on 8, 9.3 on 128), a minimum size uniform in [1, 16] nodes, the maximum 16, "
        "the request (the rigid size) uniform between them. Written as a moldable job table "
        "headed `# capacity cpus=16`, each job recorded at its request with its speedup in "
        "nodes. Give the arrival rate by --mean-interarrival or by --load.")
    ps.add_argument("-o", "--output", required=True, metavar="FILE.csv")
    ps.add_argument("--jobs", type=int, default=10_000, help="number of jobs")
    ps_rate = ps.add_mutually_exclusive_group(required=True)
    ps_rate.add_argument("--mean-interarrival", type=finite, metavar="S",
                         help="mean time between arrivals (s); the paper does not give it")
    ps_rate.add_argument("--load", type=finite, metavar="U",
                         help="offered load: arrival rate x mean (requested nodes x run "
                         "time) / 16 nodes; 1 is a mean inter-arrival of 216.1 s")
    ps.add_argument("--seed", type=int, default=0)

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
