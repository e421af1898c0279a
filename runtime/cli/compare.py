"""`schedc compare`: its entries (`FILE.pol` or `FILE.pol:NAME`) times the parameter
variants of `--vary`, every run checked against the workload before the first simulation,
then simulated in order and reported as one table."""

from __future__ import annotations

import argparse
import itertools
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from attrs import evolve, frozen

from schedc.dsl.diagnostics import Diagnostic, DiagnosticError, did_you_mean
from schedc.runtime.cli.errors import EXIT_OK, UserError
from schedc.runtime.cli.errors import report as report_diagnostics
from schedc.runtime.cli.extras import require
from schedc.runtime.cli.options import add_simulation_options
from schedc.runtime.cli.run import (
    parse_assignments,
    report_output,
    run_options,
)
from schedc.runtime.outputs import Input, Output, check_outputs, policy_inputs, workload_inputs
from schedc.runtime.run import PreparedRun, RunOptions, WorkloadCache

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@frozen
class Entry:
    """One policy to compare: a file, and which of its policies (None: its only one)."""

    text: str  # as the user wrote it
    file: str
    policy: str | None


@frozen
class Run:
    """One row of the comparison: an entry with the values of the params varied for it."""

    entry: Entry
    varied: tuple[tuple[str, str], ...]  # (param, value) in the order of --vary

    def label(self, name: str) -> str:
        return " ".join((name, *(f"{p}={v}" for p, v in self.varied)))


def run(args: argparse.Namespace) -> int:
    if args.report:
        require("plot", "--report (its figures)")
    from schedc.runtime.results import report

    to_stdout = check_outputs(
        [Output("--csv", args.csv_out, "compare.csv"), report_output(args.report)],
        compare_inputs(args), stdout="--json" if args.json else None)
    options = run_options(args)
    runs = planned_runs([parse_entry(e) for e in args.policy_files],
                        parse_variations(args.vary, options.params), options)
    loaded: WorkloadCache = {}  # policies on the same machine share one parsed workload
    prepared = prepare_all(runs, args.workload, options, loaded)
    warnings = dict.fromkeys(w for p in prepared for w in p.warnings)  # each once, before runs
    if warnings:
        report_diagnostics(warnings)
    results = [p.run() for p in prepared]
    labels = [run.label(p.policy.name) for run, p in zip(runs, prepared, strict=True)]
    if args.json:
        print(json.dumps(report.compare_json(results, labels), indent=2))
    else:
        report.print_compare(results, labels, to_stderr=to_stdout)
    if args.csv_out:
        report.write_compare_csv(results, labels, args.csv_out)
    if args.report:
        from schedc.runtime.results.html_report.compare import compare_page

        compare_page(results, labels).write(args.report)
    return EXIT_OK


def compare_inputs(args: argparse.Namespace) -> Iterator[Input]:
    """What `compare` (and `plot compare`, `optimal`) reads: each entry's policy file with
    its imports, and the workload (the bundled trace by default) or a state file."""
    for text in dict.fromkeys(args.policy_files):
        try:
            file = parse_entry(text).file
        except UserError:  # reported when the entries are read
            file = text
        yield from policy_inputs(file)
    yield from workload_inputs(args.workload, getattr(args, "state", None))


def parse_entry(text: str) -> Entry:
    """`FILE.pol` or `FILE.pol:NAME` (a file whose own name holds a colon is taken whole)."""
    file, sep, name = text.rpartition(":")
    if sep and file and _NAME.fullmatch(name) and not Path(text).exists():
        return Entry(text, file, name)
    if sep and not Path(text).exists() and file.endswith(".pol"):
        raise UserError(f"compare entry {text!r}: `{name}` is not a policy name",
                        help="name a policy of the file as FILE.pol:NAME, e.g. "
                        "examples/easy.pol:easy")
    return Entry(text, text, None)


def parse_variations(items: Sequence[str], params: Mapping[str, str]
                     ) -> dict[str, tuple[str, ...]]:
    """`--vary NAME=V1,V2,...` (repeatable): each param's values, in the order given."""
    varied: dict[str, tuple[str, ...]] = {}
    for item in items:
        (name, text), = parse_assignments([item], "--vary").items()
        values = tuple(v.strip() for v in text.split(","))
        if any(not v for v in values):
            raise UserError(f"--vary {item!r}: an empty value",
                            help=f"list values separated by commas, e.g. --vary {name}=1,2,4")
        if name in varied:
            raise UserError(f"--vary {name} is given twice",
                            help=f"list all its values once: --vary {name}="
                            + ",".join((*varied[name], *values)))
        if name in params:
            raise UserError(f"param `{name}` is given by both --param and --vary",
                            help="--vary runs each of its values; drop the --param")
        varied[name] = tuple(dict.fromkeys(values))  # a repeated value would repeat a row
    return varied


def planned_runs(entries: Sequence[Entry], varied: Mapping[str, tuple[str, ...]],
                 options: RunOptions) -> list[Run]:
    """Each entry once per combination of the varied params it declares (in the order of
    --vary); an entry that declares none of them runs once, unless no entry declares one
    of them: that is an error naming the param."""
    from schedc.runtime.run import compiled

    declared: list[tuple[str, ...]] = []
    errors: list[Diagnostic] = []
    for entry in entries:
        try:
            policy = compiled(entry.file, evolve(options, policy_name=entry.policy),
                              select_help=f"compare one of them as {entry.file}:NAME")
        except DiagnosticError as error:
            errors.extend(error.diagnostics)
            declared.append(())
            continue
        declared.append(tuple(p.name for p in policy.params))
    if errors:  # an entry named twice reports its file's mistakes once
        raise DiagnosticError(dict.fromkeys(errors))
    known = sorted({name for names in declared for name in names})
    for name in varied:
        if name not in known:
            shown = ", ".join(e.text for e in entries)
            raise UserError(f"--vary {name}: no policy compared declares a param `{name}` "
                            f"({shown})",
                            help=did_you_mean(name, known) or
                            f"their params: {', '.join(known) or 'none'}")
    runs = []
    for entry, names in zip(entries, declared, strict=True):
        mine = [(name, values) for name, values in varied.items() if name in names]
        for combination in itertools.product(*(values for _, values in mine)):
            runs.append(Run(entry, tuple(zip((n for n, _ in mine), combination,
                                             strict=True))))
    return runs


def prepare_all(runs: Sequence[Run], workload: str | None, options: RunOptions,
                cache: WorkloadCache) -> list[PreparedRun]:
    """Every run checked (compiled, params bound, workload read on its machine, the machine
    checked) before any is simulated; the mistakes of all of them reported together."""
    from schedc.runtime.engine.cluster import ClusterError
    from schedc.runtime.run import prepare_run

    prepared: list[PreparedRun] = []
    failures: dict[Diagnostic, list[str]] = {}  # each mistake -> the runs that made it
    for run in runs:
        mine = evolve(options, policy_name=run.entry.policy,
                      params={**options.params, **dict(run.varied)})
        try:
            prepared.append(prepare_run(run.entry.file, workload, mine, cache))
            continue
        except DiagnosticError as error:
            diagnostics = list(error.diagnostics)
        except ClusterError as error:
            diagnostics = [Diagnostic(str(error), help=error.help)]
        for d in diagnostics:
            failures.setdefault(d, []).append(run.label(run.entry.text))
    if failures:  # each named by its runs, when there are several
        raise DiagnosticError([
            evolve(d, message=f"{', '.join(dict.fromkeys(who))}: {d.message}")
            if len(runs) > 1 else d for d, who in failures.items()])
    return prepared


def add_parser(commands: Any) -> None:
    """`schedc compare`'s parser."""
    compare = commands.add_parser(
        "compare", help="simulate several policies on one workload",
        description="Simulate several policies, or one at several param values, on the same "
        "workload; one table row per run. Every run is checked against the workload before "
        "the first simulation.")
    compare.add_argument("policy_files", nargs="+", metavar="POLICY",
                         help="FILE.pol, or FILE.pol:NAME for one policy of a file that "
                         "defines several")
    add_simulation_options(compare, several=True)
    compare.add_argument("--vary", action="append", default=[], metavar="NAME=V1,V2,...",
                         help="run each policy that declares param NAME once per value "
                         "(repeatable: every combination); a policy that declares none of "
                         "them runs once")
    compare.add_argument("--csv", metavar="FILE.csv", dest="csv_out",
                         help="also write the comparison table as CSV, after the runs' "
                         "provenance as `# KEY: VALUE` lines")
