"""`schedc run`: the command line's options made `RunOptions` (`compare` makes them here
too), then `schedc.runtime.run.run_policy` and a report."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from schedc.runtime.cli.errors import EXIT_OK, UserError
from schedc.runtime.cli.errors import report as report_diagnostics
from schedc.runtime.cli.extras import require
from schedc.runtime.cli.options import add_simulation_options
from schedc.runtime.outputs import (
    Input,
    Output,
    check_outputs,
    policy_inputs,
    workload_inputs,
)
from schedc.runtime.run import RunOptions


def run(args: argparse.Namespace) -> int:
    if args.report:
        require("plot", "--report (its figures)")
    from schedc.runtime.results import report
    from schedc.runtime.run import prepare_run

    to_stdout = check_outputs(
        [Output("--jobs-out", args.jobs_out, "jobs.csv"),
         Output("--swf-out", args.swf_out, "schedule.swf"),
         Output("--switches-out", args.switches_out, "switches.csv"),
         report_output(args.report)],
        run_inputs(args), stdout="--json" if args.json else None)
    if args.jobs_out_format != "schedc" and not args.jobs_out:
        raise UserError(f"--jobs-out-format {args.jobs_out_format} needs --jobs-out",
                        help="give the file to write, e.g. --jobs-out jobs.csv")
    options = run_options(args)
    if args.switches_out or args.timing:
        _check_tuned(args, options)
    prepared = prepare_run(args.policy_file, args.workload, options)
    result = prepared.run()
    if result.warnings:
        report_diagnostics(result.warnings)
    # the report first: a file that cannot be written then loses no metrics
    if args.json:
        print(json.dumps(report.run_json(result, timing=args.timing), indent=2))
    else:
        report.print_run(result, to_stderr=to_stdout, timing=args.timing)
    if args.switches_out and result.schedule.tuning is not None:
        from schedc.runtime.results.tuning_report import write_switches_csv

        write_switches_csv(result.schedule.tuning, args.switches_out,
                           report.provenance_header(result))
    if args.jobs_out:
        from schedc.runtime.results.metrics import write_jobs_csv

        if args.jobs_out_format == "batsim":  # no comment lines: pandas would not read it
            from schedc.runtime.results.batsim import write_batsim_jobs

            write_batsim_jobs(result.schedule, args.jobs_out)
        else:
            write_jobs_csv(result.schedule, args.jobs_out, report.provenance_header(result))
    if args.swf_out:
        from schedc.runtime.results.swf_out import write_swf

        write_swf(result.schedule, args.swf_out,
                  result.provenance.to_json() if result.provenance else None)
    if args.report:
        from schedc.runtime.results.html_report.run import run_page

        run_page(result).write(args.report)
    return EXIT_OK


def _check_tuned(args: argparse.Namespace, options: RunOptions) -> None:
    """--switches-out and --timing report a self-tuning dynP policy's steps: on any other
    policy they are a mistake, found before the run and located at the policy."""
    from schedc.dsl.diagnostics import Diagnostic, DiagnosticError
    from schedc.runtime.run import compiled

    policy = compiled(args.policy_file, options)
    if policy.tuning is not None:
        return
    flag = "--switches-out" if args.switches_out else "--timing"
    raise DiagnosticError([Diagnostic(
        f"{flag}: policy {policy.name} is not self-tuning: it never switches",
        **_declaration(policy.file, policy.name),
        help="give a dynP policy (one with `candidates`, e.g. examples/dynp.pol), or drop "
        f"{flag}")])


def _declaration(file: str, name: str) -> dict[str, Any]:
    """Where `policy NAME` is in ``file`` (the IR keeps no span of a policy's header), with
    its source line; the file alone if it is not found there."""
    import re
    from pathlib import Path

    try:
        text = Path(file).read_text(encoding="utf-8")
    except OSError:
        return {"file": file}
    for number, line in enumerate(text.splitlines(), 1):
        found = re.search(rf"\bpolicy\s+({re.escape(name)})\b", line)
        if found:
            return {"file": file, "line": number, "col": found.start(1) + 1,
                    "end_line": number, "end_col": found.end(1) + 1, "source": line}
    return {"file": file}


def run_inputs(args: argparse.Namespace) -> Iterator[Input]:
    """What `run` (and `plot run`) reads: the policy with its imports, the workload (the
    bundled trace by default) or the state file."""
    yield from policy_inputs(args.policy_file)
    yield from workload_inputs(args.workload, getattr(args, "state", None))


def report_output(path: str | None) -> Output:
    """`--report FILE.html`. Not `-`: a page is read in a browser, and standard output has
    the table or the JSON; a pipe or /dev/stdout given by name is streamed to."""
    return Output("--report", path, "report.html", file_only="the page")


def report_checked(path: str | None) -> None:
    """`--report FILE.html` can be written (`schedc verify`'s check; the other commands
    check it with their other outputs)."""
    check_outputs([report_output(path)])


def run_options(args: argparse.Namespace) -> RunOptions:
    """The options of `run` or `compare`, checked for what needs no policy or workload."""
    state = getattr(args, "state", None)
    if state:
        _check_state_options(args)
    params = parse_assignments(args.param, "--param")
    capacities = parse_capacities(args.capacity)
    speeds = None if state else _speeds(args)  # a state's machine is its own
    return RunOptions(
        policy_name=getattr(args, "policy", None), params=params, capacities=capacities,
        lenient=args.lenient, resources=args.resources,
        moldable=None if state else _moldable_spec(args), speeds=speeds,
        limit=getattr(args, "limit", None), overrun=args.overrun, knowledge=args.knowledge,
        bsld_tau=args.bsld_tau, warmup=args.warmup, cooldown=args.cooldown,
        background_load=args.background_load, load_seed=args.load_seed, state=state or None,
        progress=_progress_bars(args), command=getattr(args, "argv", None),
        all_labels=bool(getattr(args, "swf_out", None)),  # else only the labels it reads
        max_passes=args.max_passes or None)


def _check_state_options(args: argparse.Namespace) -> None:
    """`run --state` replays the state's own jobs on its own machine: nothing to change."""
    if args.workload:
        raise UserError("give either --state or --workload, not both",
                        help="a state holds its own jobs; give jobs that arrive later as "
                        "the state's `arrivals`")
    if args.capacity:
        raise UserError("--capacity does not apply with --state",
                        help="the state's `capacity` is the machine: edit it in the file")
    if args.range_factor is not None or args.load_factor != 100 or args.sigma != 0:
        raise UserError("--range-factor, --sigma and --load-factor do not apply with --state",
                        help="they change a workload read with --workload")
    if getattr(args, "limit", None) is not None:
        raise UserError("--limit does not apply with --state",
                        help="a state holds its own jobs: edit the file to drop some")
    if args.speeds is not None:
        raise UserError("--speeds does not apply with --state",
                        help="a state's machine is its `capacity`")


def parse_assignments(items: Sequence[str], flag: str) -> dict[str, str]:
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


def parse_capacities(items: Sequence[str]) -> dict[str, int]:
    capacities: dict[str, int] = {}
    from schedc.dsl.number_text import short
    from schedc.runtime.workloads.workload import VALUE_HELP, capacity_problem, whole_number

    for name, value in parse_assignments(items, "--capacity").items():
        # ASCII digits only (`int` takes `1_000` and `١٢`), at most number_text.MAX_DIGITS
        text = value.strip()
        number = whole_number(text.removeprefix("-"))
        if number is not None and text.startswith("-"):
            number = -number
        if number is None:
            if value.strip().isascii() and value.strip().isdigit():  # only too long
                raise UserError(f"--capacity {name}={short(value)}: outside the supported "
                                "range", help=VALUE_HELP)
            raise UserError(
                f"--capacity {name}={short(value)}: the capacity must be a whole number",
                help="capacities count units of a resource, e.g. --capacity cpus=128",
            ) from None
        if number >= 1 and (problem := capacity_problem(name, number)):
            raise UserError(f"--capacity {name}={short(value)}: {problem}", help=VALUE_HELP)
        if number < 1:
            raise UserError(
                f"--capacity {name}={value}: the capacity must be at least 1",
                help="a resource with no capacity can run no job",
            )
        capacities[name] = number
    return capacities


def _speeds(args: argparse.Namespace) -> tuple[float, ...] | None:
    """The processors of --speeds (checked by the cluster when the run makes it)."""
    from schedc.runtime.engine.cluster import ClusterError, parse_speeds

    if args.speeds is None:
        if args.background_load != 0 or args.load_seed != 0:
            raise UserError("--background-load and --load-seed need --speeds",
                            help="give the processors' speeds, e.g. --speeds 64x1 for a "
                            "homogeneous cluster with background load")
        return None
    from schedc.runtime.workloads.workload import speeds_problem

    problem = speeds_problem(args.speeds)  # before one float per processor is made
    if problem is not None:
        raise UserError(f"--speeds {problem.removeprefix('speeds ')}",
                        help="e.g. --speeds 32x1,32x2 (docs/reference/limits.md)")
    try:
        return tuple(parse_speeds(args.speeds))
    except ClusterError as exc:
        raise UserError(str(exc), help=exc.help) from None


def _moldable_spec(args: argparse.Namespace):
    """papers/000's transform of the workload, or None when the options change nothing."""
    from schedc.runtime.workloads.moldable import MoldableSpec

    try:
        spec = MoldableSpec(args.range_factor, args.sigma, args.load_factor)
    except ValueError as exc:
        raise UserError(str(exc), help="e.g. --range-factor 2 --sigma 1 --load-factor 125"
                        ) from None
    if spec.range_factor is None and args.sigma != 0:
        raise UserError("--sigma needs --range-factor",
                        help="sigma shapes the speedup of jobs made moldable")
    if spec.range_factor is None and spec.load_factor == 100:
        return None
    return spec


def _progress_bars(args: argparse.Namespace) -> Callable[[str, int], Any] | None:
    """A rich progress bar per run on a terminal; none when piped or with --no-progress."""
    if args.no_progress or getattr(args, "json", False) or not sys.stderr.isatty():
        return None
    return _ProgressBar


class _ProgressBar:
    def __init__(self, label: str, total: int) -> None:
        self.label = label
        self.total = total
        self._bar = None
        self._task = None

    def __enter__(self) -> Callable[[int, int], None]:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        from schedc.runtime.results.report import stderr_console

        self._bar = Progress(TextColumn("{task.description}"), BarColumn(),
                             TextColumn("{task.completed:,.0f}/{task.total:,.0f} jobs ended"),
                             TimeElapsedColumn(), console=stderr_console(), transient=True)
        self._bar.__enter__()
        self._task = self._bar.add_task(self.label, total=self.total)

        def update(done: int, total: int) -> None:
            self._bar.update(self._task, completed=done, total=total)

        return update

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)


def add_parser(commands: Any) -> None:
    """`schedc run`'s parser."""
    sub = commands.add_parser(
        "run", help="simulate a policy on a workload",
        description="Simulate a policy on a workload (SWF trace, .swf.gz or CSV job table) "
        "and print its metrics. Without --workload, runs on the bundled KTH-SP2 trace.")
    sub.add_argument("policy_file", metavar="POLICY", help=".pol file")
    add_simulation_options(sub)
    sub.add_argument("--state", metavar="STATE.json",
                     help="replay from a machine state (running and queued jobs at an "
                     "instant, e.g. a counterexample of `verify`) instead of a workload")
    sub.add_argument("--jobs-out", metavar="FILE.csv",
                     help="write one row per job, after the run's provenance as `# KEY: "
                     "VALUE` lines")
    sub.add_argument("--jobs-out-format", choices=["schedc", "batsim"], default="schedc",
                     help="columns of --jobs-out: schedc's own (default; the last, "
                     "allocated_resources, is the processor ids as \"0-3 8\"), or Batsim's "
                     "jobs.csv that evalys reads (times in seconds; no provenance lines, "
                     "which pandas would not read: keep the run's --json for them)")
    sub.add_argument("--swf-out", metavar="FILE.swf", help="write the simulated schedule as SWF")
    sub.add_argument("--switches-out", metavar="FILE.csv",
                     help="a self-tuning dynP policy: write one row per switch (time, from, "
                     "to, each candidate's metric value), after the run's provenance")
    sub.add_argument("--timing", action="store_true",
                     help="a self-tuning dynP policy: report the wall time per self-tuning "
                     "step (median, 99th percentile, max); not byte-identical across runs")
