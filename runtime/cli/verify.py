"""`schedc verify`: prove a policy's properties with Z3 (imported here only: it loads
slowly), interruptible by Ctrl-C, with counterexamples written as replayable state files."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from schedc.dsl.verify import vocabulary
from schedc.runtime.cli.errors import EXIT_OK, EXIT_UNKNOWN, EXIT_VIOLATION, UserError, report
from schedc.runtime.run import require_file
from schedc.runtime.version import version

# `schedc verify` bounds: the defaults of dsl/verify's Bounds
VERIFY_QUEUED = vocabulary.QUEUED
VERIFY_RUNNING = vocabulary.RUNNING


def run(args: argparse.Namespace) -> int:
    import attrs

    from schedc.dsl import compile_file
    from schedc.dsl.machines import with_resources
    from schedc.dsl.verify import reports as vr
    from schedc.dsl.verify.across import KEPT, makes_reservations, verify_across
    from schedc.dsl.verify.prover import verify_policy
    from schedc.dsl.verify.verdict import Bounds, Limits, OutOfRange, with_waivers
    from schedc.dsl.verify.vocabulary import ALL_PROPERTIES
    from schedc.runtime.replay import replayer

    try:
        bounds = attrs.evolve(Bounds.checked(args.queued, args.running, args.processors),
                              overrun=args.overrun)
        # as the rigid pass's: a preemptive policy's are its verdicts' bound text
        args.queued, args.running = bounds.queued, bounds.running
        limits = Limits.checked(args.rlimit, args.timeout)
    except OutOfRange as exc:
        raise UserError(f"--{exc.field} {exc.value}: {exc.text}", help=exc.help) from None
    if args.resources is not None and not 1 <= args.resources <= vocabulary.MAX_RESOURCES:
        raise UserError(f"--resources {args.resources}: K must lie in "
                        f"[1, {vocabulary.MAX_RESOURCES}]",
                        help="the machine's own resources, then generic ones, up to 8")
    from schedc.runtime.workloads.workload import choices_help

    known = (*ALL_PROPERTIES, "invariant", KEPT)
    for name in args.properties or ():
        if name not in known:
            raise UserError(f"--property {name}: no such property",
                            help=choices_help(name, known, "the properties are"))

    from schedc.runtime.cli.run import report_output
    from schedc.runtime.outputs import Output, check_outputs, policy_inputs

    check_outputs(  # before minutes of proving, not after; never onto a policy or import
        [Output("-o", args.output, "verdicts.json"), report_output(args.report),
         Output("--counterexamples", args.counterexamples, "cex", checked=False)],
        (i for file in args.files for i in policy_inputs(file, "FILE")),
        stdout=None if args.output else "the verdicts")
    if args.counterexamples:
        _check_folder(Path(args.counterexamples))

    policies = []  # as verified, for the report's replays

    def verify_all() -> list:
        reports = []
        for file in args.files:
            require_file(file, "policy")
            policy = compile_file(file, args.policy)
            if policy.warnings:
                status.warn(policy.warnings)
            if args.resources is not None:
                try:
                    policy = with_resources(policy, args.resources)
                except ValueError as exc:
                    raise UserError(f"--resources {args.resources}: {exc}",
                                    help="give at least as many resources as the machine has"
                                    ) from None
            # a dynP policy: each candidate's pass (its invariants added) is proved, and its
            # counterexamples replayed with that candidate's runtime policy
            tuned = policy.tuning is not None
            status.file = f"{file}{f' ({policy.name})' if args.policy else ''}"
            verdicts = verify_policy(policy, bounds, limits,
                                     only=args.properties,
                                     replay=None if tuned else replayer(policy),
                                     replay_for=replayer if tuned else None,
                                     progress=status)
            if _across_wanted(args.properties, policy) and makes_reservations(policy):
                # the property across passes, after the one-pass ones
                verdicts += verify_across(policy, bounds, limits,
                                          replay=None if tuned else replayer(policy),
                                          progress=status)
            # what the policy waives is marked expected (a dynP policy's, by candidate)
            verdicts = with_waivers(verdicts, policy.waivers)
            stale = [_stale(v) for v in verdicts if v.stale_waiver]
            if stale:
                status.warn(stale)
            reports.append(vr.PolicyReport(file, policy.name, tuple(verdicts)))
            policies.append(policy)
        return reports

    # Nothing is written until every verdict is in: Ctrl-C leaves no partial report.
    with _Status((args.queued, args.running)) as status:
        reports = _interruptibly(verify_all)
    if args.counterexamples:
        _write_counterexamples(reports, Path(args.counterexamples))
    if args.report:
        _write_report(args, reports, policies)
    if args.format == "text" and not args.output:
        from schedc.runtime.results.report import stdout_console

        vr.print_terminal(reports, stdout_console())
    else:
        text = {"json": vr.to_json, "markdown": vr.to_markdown, "text": vr.to_markdown,
                "sarif": lambda r: vr.to_sarif(r, version())}[args.format](reports)
        if args.output:
            from schedc.runtime.atomicio import write_text_atomic

            write_text_atomic(args.output, text)
        else:
            sys.stdout.write(text)
    # a property the policy waives fails nothing, violated or unknown: it is no promise
    statuses = {v.status for r in reports for v in r.verdicts if not v.excused}
    # a vacuous proof is a defect of the policy, as a violation is (no limit changes it)
    if statuses & {"violated", "vacuous"}:
        return EXIT_VIOLATION
    return EXIT_UNKNOWN if "unknown" in statuses else EXIT_OK


def _stale(v):
    """The warning of a `waive` whose property is proved, located at the clause."""
    from attrs import evolve

    from schedc.dsl.diagnostics import Diagnostic, read_line
    from schedc.dsl.verify.reports import stale_warning

    return evolve(Diagnostic.at(v.expected_at, stale_warning(v),
                                "`waive` is for a property the policy may break; this one holds "
                                "in every state within the bounds", read_line(v.expected_at)),
                  severity="warning")


def _across_wanted(properties: list[str] | None, policy) -> bool:
    """``reservations-kept`` when asked for by name; with every property, where its proof
    applies (a rigid policy, order keys of the job alone, no `backfill best`: then it is
    proved, or violated with a replayed two-pass counterexample), never to add an unknown
    verdict to the policies it does not cover (a dynP policy, sizes, a dynamic order)."""
    from schedc.dsl.verify.across import KEPT, proof_blocked

    if properties is not None:
        return KEPT in properties
    # a `waive reservations-kept` is checked as its clause says (lowering allows it only
    # where the policy reserves)
    return policy.tuning is None and (proof_blocked(policy) is None
                                      or policy.waiver(KEPT) is not None)


T = TypeVar("T")


class _Status:
    """One line rewritten in place on a terminal's stderr while Z3 works (a hard property
    takes minutes): the file, the property, how far its search got and the property's
    elapsed wall time (the --timeout, of CPU time, is per property). Nothing when stderr is
    not a terminal. Called from the verifying thread: rich's updates take a lock."""

    def __init__(self, bounds: tuple[int, int]) -> None:
        self.file = ""
        self.bounds = bounds  # --queued, --running
        self._bar: Any = None

    def __enter__(self) -> _Status:
        if sys.stderr.isatty():
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            from schedc.runtime.results.report import stderr_console

            # the time first: a narrow terminal cuts the end of the line
            self._bar = Progress(SpinnerColumn(), TimeElapsedColumn(),
                                 TextColumn("{task.description}"), console=stderr_console(),
                                 transient=True)
            self._bar.__enter__()
            self._task = self._bar.add_task("verify: compiling", total=None)
        return self

    def __call__(self, prop: str, bounds: tuple[int, int] | None) -> None:
        if self._bar is None:
            return
        if bounds is None:  # a property starts: its own elapsed time
            self._bar.reset(self._task)
            where = f"proof at N={self.bounds[0]}, R={self.bounds[1]}"
        else:
            where = f"counterexample search at N={bounds[0]}, R={bounds[1]}"
        self._bar.update(self._task, description=f"verify {self.file}: {prop}: {where}")

    def warn(self, diagnostics: Any) -> None:
        """Diagnostics on stderr: above the line when it shows (through its console; a
        write of its own would land on the line)."""
        if self._bar is None:
            report(diagnostics)
            return
        from schedc.dsl import render_diagnostics

        self._bar.console.print(render_diagnostics(diagnostics, color=True), end="",
                                highlight=False, soft_wrap=True)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)


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


def _check_folder(folder: Path) -> None:
    """The counterexamples' folder can be made (or is there) and written."""
    if folder.exists() and not folder.is_dir():
        raise UserError(f"--counterexamples {folder}: it is a file, not a folder",
                        help="give a folder (it is made if missing)")
    existing = folder
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise UserError(f"--counterexamples {folder}: {existing} is not writable",
                        help="choose a folder you may write")


def _counterexample_path(folder: Path, r, v) -> Path:
    """Where `--counterexamples` writes the state of verdict ``v`` of report ``r``."""
    name = v.property.split()[0] if v.property.startswith("invariant") else v.property
    of = f".{v.candidate}" if v.candidate else ""  # a dynP policy's candidate
    return folder / f"{Path(r.file).stem}{of}.{name}.json"


def _write_counterexamples(reports, folder: Path) -> None:
    from schedc.runtime.atomicio import write_text_atomic
    from schedc.runtime.replay import state_part

    folder.mkdir(parents=True, exist_ok=True)
    for r in reports:
        for v in r.verdicts:
            if v.counterexample:
                state = state_part(v.counterexample)
                if v.candidate:  # `schedc run DYNP --state FILE` runs that candidate's pass
                    state["active"] = v.candidate
                write_text_atomic(_counterexample_path(folder, r, v),
                                  json.dumps(state, indent=2) + "\n")


def _write_report(args: argparse.Namespace, reports, policies) -> None:
    """The HTML page: each counterexample replayed once more in the simulator, for the
    monitor's words (a state of a few jobs: milliseconds)."""
    from schedc.dsl.tuning import candidate_policies
    from schedc.runtime.replay import replay_stop
    from schedc.runtime.results.html_report.verify import VerifyRun, verify_page

    files, monitor = {}, {}
    for i, (r, policy) in enumerate(zip(reports, policies, strict=True)):
        for j, v in enumerate(r.verdicts):
            if not v.counterexample:
                continue
            if args.counterexamples:
                files[i, j] = str(_counterexample_path(Path(args.counterexamples), r, v))
            replayed = next((c for c in candidate_policies(policy)
                             if c.name == (v.candidate or c.name)), policy)
            monitor[i, j] = replay_stop(replayed, v.counterexample).message
    bounds = f"N={args.queued} queued, R={args.running} running"
    limits = {"rlimit": args.rlimit, "timeout": args.timeout,
              "properties": args.properties or "all", "resources": args.resources}
    run = VerifyRun(version(), getattr(args, "argv", None), bounds, limits)
    verify_page(reports, run, files, monitor, args.policy).write(args.report)


def add_parser(commands: Any) -> None:
    """`schedc verify`'s parser."""
    verify = commands.add_parser(
        "verify", help="prove a policy's properties with Z3",
        description="Prove, for one scheduling pass over every state within the bounds, that "
        "no resource is overcommitted (capacity), sizes are in range (size-bounds), no "
        "formula divides by zero or takes sqrt/log of a bad value (well-defined), no backfill "
        "delays a reservation more than the policy's `slack` allows, none without one "
        "(reservation-safety), an idle machine starts a job (progress), "
        "and every `invariant`; and, across two passes, that a reserved job is never "
        "reserved later at the next pass (reservations-kept; policies that reserve). "
        "Exit status: 0 all proved, 1 a property violated or a proof vacuous (its "
        "assumptions admit no state in which a job waits), 2 a user error, 3 some verdict "
        "unknown.")
    verify.add_argument("files", nargs="+", metavar="FILE", help=".pol file(s)")
    verify.add_argument("--policy", help="which policy of the file (if it defines several)")
    verify.add_argument("--queued", type=int, metavar="N",
                        help=f"queued-job slots of the symbolic state (default {VERIFY_QUEUED}; "
                        f"a preemptive policy's waiting slots: {vocabulary.PREEMPTIVE_SLOTS})")
    verify.add_argument("--running", type=int, metavar="R",
                        help="running-job slots of the symbolic state "
                        f"(default {VERIFY_RUNNING}; a preemptive policy's: "
                        f"{vocabulary.PREEMPTIVE_SLOTS})")
    verify.add_argument("--processors", type=int, default=vocabulary.PROCESSORS, metavar="P",
                        help="a preemptive policy's machine has at most P processors, each "
                        f"a term per job (1 to {vocabulary.MAX_PROCESSORS}; default "
                        f"{vocabulary.PROCESSORS})")
    verify.add_argument("--overrun", choices=vocabulary.OVERRUN_MODES,
                        default=vocabulary.OVERRUN,
                        help="the `schedc run --overrun` mode a preemptive policy's proofs "
                        "cover: kill and estimate, where a running job has run less than its "
                        "estimate, or extend, where it may outrun it (default "
                        f"{vocabulary.OVERRUN}; a rigid policy's proofs cover every mode)")
    verify.add_argument("--resources", type=int, metavar="K",
                        help=f"prove for a machine of K resources (1 to "
                        f"{vocabulary.MAX_RESOURCES}): the policy's own, "
                        "then generic ones with symbolic capacities (default: the machine's)")
    verify.add_argument("--property", action="append", dest="properties", metavar="NAME",
                        help="check only this property (repeatable): "
                        f"{', '.join((*vocabulary.ALL_PROPERTIES, 'invariant', vocabulary.KEPT))}")
    verify.add_argument("--rlimit", type=int, default=vocabulary.RLIMIT,
                        help="Z3's resource limit of each check: what decides a verdict, "
                        "the same on any machine, quiet or busy (default "
                        f"{vocabulary.RLIMIT:,}; a preemptive policy's: "
                        f"{vocabulary.PREEMPTIVE_RLIMIT:,} per part of a property)")
    verify.add_argument("--timeout", type=float, default=vocabulary.TIMEOUT_S,
                        metavar="SECONDS", help="CPU-time limit per property, in seconds of "
                        "the process's CPU time, not of the wall clock: all of the "
                        "property's verification (encoding, Z3's checks, counterexamples "
                        "and their replays; the pass every property reads counted in each "
                        "one's); a guard: at the defaults the rlimit decides the verdicts "
                        "of every shipped example (a dynP policy: per property of each "
                        f"candidate; default {vocabulary.TIMEOUT_S:g})")
    verify.add_argument("--format", choices=["text", "json", "markdown", "sarif"],
                        default="text", help="report format (default: text)")
    verify.add_argument("-o", "--output", metavar="PATH", help="write the report to PATH")
    verify.add_argument("--report", metavar="FILE.html",
                        help="also write a self-contained HTML page: every verdict, each "
                        "counterexample's state and the command that replays it")
    verify.add_argument("--counterexamples", metavar="DIR",
                        help="write each counterexample as a state file that "
                        "`schedc run POLICY --state FILE` replays")
