"""`schedc workload generate` and `schedc workload kresource`: make workloads for runs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from schedc.runtime.cli.errors import EXIT_OK, UserError
from schedc.runtime.run import bundled_trace, require_file


def cmd_workload(args: argparse.Namespace) -> int:
    from schedc.runtime.atomicio import check_output
    from schedc.runtime.workloads import synthetic

    check_output(args.output)
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
    synthetic.write_schedc_table(jobs, args.output, args.time_scale)
    offered = synthetic.offered_utilisation(spec, args.processors)
    unit = "s" if args.time_scale == 1 else f"s, times in units of 1/{args.time_scale} s"
    summary(args, f"wrote {len(jobs)} jobs to {args.output}: mean inter-arrival {mean:.4g} "
            f"{unit}; offered utilisation {offered:.3f} on {args.processors} processors (eq. 9)")
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
            require_file(args.baseline, "policy")
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
    summary(args, f"wrote {len(w.jobs)} jobs on {k} resources ({args.distribution}, "
            f"capacity {capacity} each) to {args.output}: mean inter-arrival {gap:.4g} s{note}")
    return EXIT_OK



def summary(args: argparse.Namespace, text: str) -> None:
    """What was written: on standard output, or standard error when the table went there."""
    print(text, file=sys.stderr if args.output == "-" else sys.stdout)
