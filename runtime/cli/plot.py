"""`schedc plot run|compare|sweep`: the figures of `runtime/results/plots` written as PNG or SVG.

`run` and `compare` take the options of `schedc run` and `schedc compare` (the same
argument definitions); `sweep DIR` reads a sweep's `summary.csv`. matplotlib is imported
only when a figure is drawn. Every output is checked before the simulation, and written
whole or not at all."""

from __future__ import annotations

import argparse
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schedc.dsl.diagnostics import Diagnostic, DiagnosticError, did_you_mean
from schedc.runtime.cli.errors import EXIT_OK, UserError
from schedc.runtime.cli.errors import report as report_diagnostics
from schedc.runtime.cli.extras import require
from schedc.runtime.cli.options import add_simulation_options
from schedc.runtime.cli.usage import COMMAND_LINE

if TYPE_CHECKING:
    from schedc.runtime.outputs import Input

RUN_KINDS = ("gantt", "utilisation", "waits")
COMPARE_KINDS = ("metrics", "categories")


def add_parser(commands: Any) -> None:
    sub = commands.add_parser(
        "plot", help="draw figures of a run, a comparison or a sweep",
        description="Draw figures as PNG or SVG (by the suffix of -o): a run's Gantt chart "
        "by processor, utilisation and queue length, wait distribution; a comparison's "
        "metrics and per-category bars; a sweep's metric against a parameter.")
    kinds = sub.add_subparsers(dest="plot_command", metavar="WHAT")
    kinds.required = True
    run = kinds.add_parser(
        "run", help="figures of one run",
        description="Simulate a policy as `schedc run` does and draw its figures: "
        f"{', '.join(RUN_KINDS)}.")
    run.add_argument("policy_file", metavar="POLICY", help=".pol file")
    add_simulation_options(run, json=False)
    run.add_argument("--state", metavar="STATE.json",
                     help="replay from a machine state (e.g. a counterexample of `verify`) "
                     "instead of a workload: its running jobs hold processors from their start")
    run.add_argument("--from", dest="window_from", type=_instant, metavar="T",
                     help="the Gantt chart from T: seconds since the first submission, or a "
                     "duration (90s, 30min, 12h, 2d); default the start")
    run.add_argument("--to", dest="window_to", type=_instant, metavar="T",
                     help="the Gantt chart up to T (as --from); default the last end")
    _output_options(run, RUN_KINDS)
    compare = kinds.add_parser(
        "compare", help="figures of a comparison",
        description="Simulate policies as `schedc compare` does and draw: "
        f"{', '.join(COMPARE_KINDS)} (the mean response per area category, as a change "
        "against the first run).")
    compare.add_argument("policy_files", nargs="+", metavar="POLICY",
                         help="FILE.pol, or FILE.pol:NAME for one policy of a file that "
                         "defines several")
    add_simulation_options(compare, several=True, json=False)
    compare.add_argument("--vary", action="append", default=[], metavar="NAME=V1,V2,...",
                         help="run each policy that declares param NAME once per value "
                         "(repeatable), as `schedc compare --vary`")
    _output_options(compare, COMPARE_KINDS)
    sweep = kinds.add_parser(
        "sweep", help="a metric against a parameter, from a sweep's results",
        description="Read DIR/summary.csv (written by `schedc sweep`) and draw the mean of "
        "a metric against an input column, one line per group, with its 95% confidence "
        "band over seeds.")
    sweep.add_argument("directory", metavar="DIR", help="a sweep's output folder")
    sweep.add_argument("--x", required=True, metavar="COLUMN",
                       help="the input column on x, e.g. load_factor or param.depth")
    sweep.add_argument("--y", required=True, metavar="METRIC",
                       help="the metric on y, e.g. mean_wait (its _mean and _ci_* columns)")
    sweep.add_argument("--group", default="policy", metavar="COLS",
                       help="columns whose values make one line each, comma-separated "
                       "(default: policy)")
    sweep.add_argument("--where", action="append", default=[], metavar="COLUMN=VALUE",
                       help="only the configurations with this value of an input column, "
                       "e.g. workload=KTH-SP2-1996-2.1-cln.swf.gz (repeatable)")
    sweep.add_argument("-o", "--output", required=True, metavar="OUT.png|OUT.svg",
                       help="the figure's file: PNG or SVG by its suffix")


def _output_options(sub: argparse.ArgumentParser, kinds: Sequence[str]) -> None:
    sub.add_argument("--kind", action="append", default=[], metavar="KIND",
                     help=f"which figures, repeatable or comma-separated: {', '.join(kinds)}, "
                     f"or all (default {kinds[0]})")
    sub.add_argument("-o", "--output", required=True, metavar="OUT.png|OUT.svg",
                     help="the figure's file, PNG or SVG by its suffix; with several kinds, "
                     "one file each, OUT-KIND.png")


def run(args: argparse.Namespace) -> int:
    require("plot", "schedc plot")
    return {"run": _plot_run, "compare": _plot_compare,
            "sweep": _plot_sweep}[args.plot_command](args)


# --- the command line's mistakes, located on it -----------------------------------------


def on_command_line(args: argparse.Namespace, value: str, message: str, help: str
                    ) -> DiagnosticError:
    """A diagnostic with its caret under ``value`` (its last occurrence) on the command
    line; unlocated when the command line is not known (a call from Python)."""
    argv = list(getattr(args, "argv", ()) or ())
    words = ["schedc", *argv]
    hits = [i for i, w in enumerate(words) if w == value or w.endswith("=" + value)
            or value in w.split(",")]
    if not argv or not hits:
        return DiagnosticError([Diagnostic(message, help=help)])
    at = hits[-1]
    line = " ".join(shlex.quote(w) for w in words)
    col = len(" ".join(shlex.quote(w) for w in words[:at])) + 2
    word = shlex.quote(words[at])
    if words[at] != value and word == words[at]:  # a part of a plain word: point at it
        head = words[at].rsplit("=", 1)[0] + "=" if words[at].endswith("=" + value) else ""
        parts = words[at].removeprefix(head).split(",")
        col += len(head) + sum(len(p) + 1 for p in parts[:parts.index(value)]) \
            if value in parts else len(head)
        word = value
    return DiagnosticError([Diagnostic(message, COMMAND_LINE, 1, col, 1, col + len(word),
                                       help, source=line)])


def chosen_kinds(args: argparse.Namespace, kinds: Sequence[str]) -> list[str]:
    """The kinds asked for (the first by default, every one for `all`), each once, in the
    order of ``kinds``."""
    asked = [k.strip() for item in args.kind for k in item.split(",")]
    if "all" in asked:
        return list(kinds)
    for kind in asked:
        if kind not in kinds:
            raise on_command_line(args, kind, f"no figure kind `{kind}` for `plot "
                                  f"{args.plot_command}`",
                                  did_you_mean(kind, (*kinds, "all")) or f"the kinds are "
                                  f"{', '.join(kinds)} and all")
    return [k for k in kinds if k in asked] if asked else [kinds[0]]


def output_paths(args: argparse.Namespace, kinds: Sequence[str],
                 inputs: Iterable[Input]) -> dict[str, str]:
    """Each kind's file: OUT itself for one kind, OUT-KIND.SUFFIX for several; checked (a
    suffix of .png or .svg, a folder that exists, none of the ``inputs``) before any work."""
    from schedc.runtime.atomicio import STDOUT
    from schedc.runtime.outputs import Output, check_outputs
    from schedc.runtime.results.plots.save import FORMATS

    out = args.output
    suffix = Path(out).suffix.lower()
    if out == STDOUT or suffix not in FORMATS:
        raise on_command_line(args, out, f"-o {out}: a figure is written as .png or .svg",
                              "name the file OUT.png or OUT.svg")
    if len(kinds) == 1:
        paths = {kinds[0]: out}
    else:
        base = out[:-len(suffix)]
        paths = {k: f"{base}-{k}{Path(out).suffix}" for k in kinds}
    check_outputs([Output("-o", path, f"figure{suffix}") for path in paths.values()],
                  inputs, stdout="the names of the figures written")
    return paths


def _save_all(figures: Mapping[str, Any], paths: Mapping[str, str]) -> None:
    from schedc.runtime.results.plots import save_figure

    for kind, path in paths.items():
        if kind in figures:
            save_figure(figures[kind], path)
            print(path)


# --- run, compare, sweep -------------------------------------------------------------------


def _plot_run(args: argparse.Namespace) -> int:
    from schedc.runtime.cli.run import run_inputs, run_options
    from schedc.runtime.results.plots import run as plots
    from schedc.runtime.run import prepare_run

    kinds = chosen_kinds(args, RUN_KINDS)
    paths = output_paths(args, kinds, run_inputs(args))
    window = (getattr(args, "window_from", None), getattr(args, "window_to", None))
    if window[0] is not None and window[1] is not None and window[0] >= window[1]:
        raise UserError(f"--from {window[0]:g} s is not before --to {window[1]:g} s",
                        help="give a window of the run, e.g. --from 1d --to 2d")
    if window != (None, None) and "gantt" not in kinds:
        raise UserError("--from and --to choose the Gantt chart's time window",
                        help="add --kind gantt, or drop --from/--to")
    prepared = prepare_run(args.policy_file, args.workload, run_options(args))
    result = prepared.run()
    if result.warnings:
        report_diagnostics(result.warnings)
    draw = {"gantt": partial(plots.gantt_figure, window=window),
            "utilisation": plots.utilisation_figure, "waits": plots.waits_figure}
    _save_all({k: draw[k](result) for k in kinds}, paths)
    return EXIT_OK


_INSTANT = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(s|min|h|d)?")


def _instant(text: str) -> float:
    """`--from`/`--to`: seconds since the first submission, or a duration as a .pol file
    writes one (2d, 12h)."""
    found = _INSTANT.fullmatch(text.strip())
    if found is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a time: give seconds since the "
                                         "first submission (3600) or a duration (1h, 2d)")
    return float(found[1]) * {"s": 1, "min": 60, "h": 3600, "d": 86400}[found[2] or "s"]


def _plot_compare(args: argparse.Namespace) -> int:
    from schedc.runtime.cli.compare import (
        compare_inputs,
        parse_entry,
        parse_variations,
        planned_runs,
        prepare_all,
    )
    from schedc.runtime.cli.run import run_options
    from schedc.runtime.results.plots import compare as plots

    kinds = chosen_kinds(args, COMPARE_KINDS)
    paths = output_paths(args, kinds, compare_inputs(args))
    options = run_options(args)
    runs = planned_runs([parse_entry(e) for e in args.policy_files],
                        parse_variations(args.vary, options.params), options)
    prepared = prepare_all(runs, args.workload, options, {})
    warnings = dict.fromkeys(w for p in prepared for w in p.warnings)
    if warnings:
        report_diagnostics(warnings)
    results = [p.run() for p in prepared]
    labels = [run.label(p.policy.name) for run, p in zip(runs, prepared, strict=True)]
    figures: dict[str, Any] = {}
    if "metrics" in kinds:
        figures["metrics"] = plots.metrics_figure(results, labels)
    if "categories" in kinds:
        figures["categories"] = plots.categories_figure(results, labels)
    _save_all(figures, paths)
    return EXIT_OK


def _plot_sweep(args: argparse.Namespace) -> int:
    from schedc.runtime.outputs import Input
    from schedc.runtime.results.plots import sweep_figure

    summary = Input(f"{args.directory}'s summary", str(Path(args.directory) / "summary.csv"))
    paths = output_paths(args, ["sweep"], [summary])
    rows = read_summary(args.directory)
    columns = list(rows[0]) if rows else []
    metrics = sorted({c.removesuffix("_mean") for c in columns if c.endswith("_mean")})
    inputs = [c for c in columns if not c.endswith(("_mean", "_ci_low", "_ci_high"))
              and c != "runs"]
    group = [g.strip() for g in args.group.split(",") if g.strip()]
    for value, known, what in ([(args.x, inputs, "input column")]
                               + [(args.y, metrics, "metric")]
                               + [(g, inputs, "input column") for g in group]):
        if value not in known:
            raise on_command_line(args, value, f"{args.directory}/summary.csv has no "
                                  f"{what} `{value}`",
                                  did_you_mean(value, known) or
                                  f"its {what}s: {', '.join(known) or 'none'}")
    rows = _where(args, rows, inputs)
    numeric = [r for r in rows if isinstance(r.get(args.x), int | float)]
    if len(numeric) < len(rows):
        raise on_command_line(args, args.x, f"column `{args.x}` is not a number in every "
                              "row of the summary", "put a numeric input column on x (a "
                              "transform or a param), the others in --group")
    try:
        fig = sweep_figure(rows, args.x, args.y, group)
    except ValueError as exc:
        raise UserError(str(exc), help="e.g. --group policy,workload") from None
    _save_all({"sweep": fig}, paths)
    return EXIT_OK


def _where(args: argparse.Namespace, rows: list[dict[str, Any]],
           inputs: list[str]) -> list[dict[str, Any]]:
    """The rows that ``--where COLUMN=VALUE`` keeps (a value compared as the CSV shows it)."""
    for given in args.where:
        column, sep, value = given.partition("=")
        if not sep:
            raise on_command_line(args, given, f"--where takes COLUMN=VALUE, not `{given}`",
                                  "e.g. --where workload=KTH-SP2-1996-2.1-cln.swf.gz")
        if column not in inputs:
            raise on_command_line(args, given, f"{args.directory}/summary.csv has no input "
                                  f"column `{column}`", did_you_mean(column, inputs) or
                                  f"its input columns: {', '.join(inputs) or 'none'}")
        # a param given as text ("1h") is found by its text or its value (3600)
        label = f"{column}.text"
        values = sorted({_shown(r.get(c)) for r in rows for c in (column, label) if c in r})
        if value not in values:
            raise on_command_line(args, given, f"no configuration has {column} = {value}",
                                  did_you_mean(value, values) or
                                  f"its values: {', '.join(values)}")
        rows = [r for r in rows if value == _shown(r.get(column))
                or (label in r and value == _shown(r.get(label)))]
    return rows


def _shown(value: Any) -> str:
    return "" if value is None else str(value)


def read_summary(directory: str) -> list[dict[str, Any]]:
    """The sweep's summary rows, numbers as numbers (the folder checked first)."""
    from schedc.runtime.run import require_file
    from schedc.runtime.tools.sweep import read_summary as sweep_summary

    folder = Path(directory)
    if not folder.is_dir():
        raise UserError(f"sweep folder not found: {directory}",
                        help="give the output folder of `schedc sweep`")
    require_file(folder / "summary.csv", "sweep summary")
    return sweep_summary(directory)
