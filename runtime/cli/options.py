"""Option types and option groups that several commands share: a finite number, a count,
`--bsld-tau`'s seconds, `--warmup`'s jobs or duration, and the simulation options of `run`,
`compare` and `plot` (workload, machine, params, transforms, metrics)."""

from __future__ import annotations

import argparse
import math

from schedc.dsl.knowledge import DEFAULT as KNOWLEDGE_DEFAULT
from schedc.dsl.knowledge import KNOWLEDGE
from schedc.runtime.run import MAX_PASSES
from schedc.runtime.workloads.overrun import DEFAULT as OVERRUN_DEFAULT
from schedc.runtime.workloads.overrun import MODES as OVERRUN_MODES


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


def passes(text: str) -> int:
    """`--max-passes`'s value: a whole number of at least 0 (0: no bound)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative (0: no bound)")
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


def add_simulation_options(sub: argparse.ArgumentParser, several: bool = False,
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
    sub.add_argument("--knowledge", choices=KNOWLEDGE, default=KNOWLEDGE_DEFAULT,
                     help="what the scheduler is told of the jobs (papers/003): their service "
                     "demand (estimates), their speedup, both (default) or none; a policy "
                     "that reads what the run withholds is refused, each read located")
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
    sub.add_argument("--max-passes", type=passes, default=MAX_PASSES, metavar="N",
                     help="stop a preemptive run after N scheduling passes, with exit status "
                     f"3 and nothing written (default {MAX_PASSES:,}; 0: no bound); a "
                     "preemptive policy makes a pass at every arrival and end, and every "
                     "`quantum` while a job waits")
    if json:  # run and compare (not plot, whose output is the figure)
        sub.add_argument("--json", action="store_true", help="print results as JSON")
        sub.add_argument("--report", metavar="FILE.html",
                         help="also write a self-contained HTML page: the tables, the figures "
                         "and the provenance")
    sub.add_argument("--no-progress", action="store_true", help="never show a progress bar")
