"""One way to run a policy: compile it, bind its params, load the workload on its machine,
transform it, simulate, and measure. `schedc run`/`compare`, the experiments and the
benchmarks all call `run_policy`.

The simulator and the readers are imported inside the functions that use them, so that the
CLI can import this module's light parts (`OptionError`, `require_file`) and still start fast.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attrs import field, frozen

from schedc.dsl.diagnostics import Diagnostic, DiagnosticError
from schedc.runtime.results.run_result import RunResult

if TYPE_CHECKING:
    from schedc.dsl import ir
    from schedc.runtime.engine.cluster import Cluster
    from schedc.runtime.engine.policy import RuntimePolicy
    from schedc.runtime.engine.schedule import Schedule
    from schedc.runtime.results.metrics import Cut, MetricOptions
    from schedc.runtime.results.provenance import Provenance
    from schedc.runtime.workloads.moldable import MoldableSpec
    from schedc.runtime.workloads.state_file import InitialState
    from schedc.runtime.workloads.workload import Workload

BUNDLED_TRACE = "KTH-SP2-1996-2.1-cln.swf.gz"
# The passes after which a preemptive run stops (`--max-passes`'s default): far above any
# shipped example's, minutes of a run whose quantum makes a pass every second
MAX_PASSES = 1_000_000

# What `simulate` calls as jobs end: (jobs ended, jobs in all)
Progress = Callable[[int, int], None]
# Given a run's label and job count, a context that yields its progress callback (or None)
ProgressFactory = Callable[[str, int], AbstractContextManager[Progress | None]]
# Loaded workloads shared by runs on the same machine (`schedc compare`, the experiments)
WorkloadCache = dict[tuple, "Workload"]


class OptionError(DiagnosticError):
    """A run option that does not fit (a file not found, a capacity of no resource): one
    unlocated diagnostic, a message and a help line."""

    def __init__(self, message: str, help: str | None = None) -> None:
        super().__init__([Diagnostic(message, help=help)])
        self.message = message
        self.help = help

    def __reduce__(self) -> tuple:  # picklable: it crosses the experiments' worker processes
        return (type(self), (self.message, self.help))


def bundled_trace() -> Path:
    """The KTH-SP2 trace shipped inside the package (the default workload of a run)."""
    from importlib import resources

    return Path(str(resources.files("schedc.runtime") / "data" / BUNDLED_TRACE))


def require_file(path: str | Path, what: str) -> None:
    p = Path(path)
    if not p.exists():
        raise OptionError(f"{what} file not found: {path}",
                          help="check the path; it is relative to the current directory")
    if p.is_dir():
        raise OptionError(f"{what} file is a directory: {path}", help="give a file")


@frozen
class RunOptions:
    """How to run: everything `schedc run` takes besides the policy and the workload."""

    policy_name: str | None = None  # which policy of the file (if it defines several)
    params: Mapping[str, str] = field(factory=dict)  # param values as text (`--param`)
    capacities: Mapping[str, int] = field(factory=dict)  # override the machine's and trace's
    lenient: bool = False  # skip and count malformed workload lines
    # More resources than the policy's machine: K (its own, then r2, r3, ...) or names
    resources: int | str | tuple[str, ...] | None = None
    moldable: MoldableSpec | None = None  # papers/000's transform (None: jobs as read)
    limit: int | None = None  # only the workload's first N jobs
    speeds: tuple[float, ...] | None = None  # a heterogeneous cluster (papers/002)
    background_load: float = 0.0
    load_seed: int = 0
    state: str | None = None  # replay a machine state file instead of a workload
    progress: ProgressFactory | None = field(default=None, eq=False)
    command: tuple[str, ...] | None = None  # the CLI's arguments, kept in the provenance
    # Every job label of an SWF trace is read (True), or only those the policy reads, the
    # others -1: converting unread label columns is most of a big trace's reading time
    all_labels: bool = True
    # jobs that ran past their estimate (`--overrun`, ``workloads/overrun.py``): kill,
    # estimate or extend
    overrun: str = "estimate"
    # How the metrics measure the run (``metrics.MetricOptions``): bounded slowdown's
    # threshold in seconds, and the jobs left out at the start and the end (still simulated)
    bsld_tau: int | float = 10
    warmup: Cut | None = None
    cooldown: Cut | None = None
    # What the scheduler is told of the jobs (papers/003's knowledge cases, `dsl/knowledge.py`):
    # none, demand, speedup or both; a policy that reads what is withheld is refused
    knowledge: str = "both"
    # A preemptive run stops past this many passes (``preemptive.PassLimit``; None: never).
    # A result that comes back is the same whatever the bound: the provenance leaves it out
    max_passes: int | None = MAX_PASSES

    def metric_options(self) -> MetricOptions:
        from schedc.runtime.results.metrics import MetricOptions

        return MetricOptions(self.bsld_tau, self.warmup, self.cooldown)

    def seeded(self) -> bool:
        """Whether ``load_seed`` changes the run: it draws only the background loads of a
        heterogeneous cluster (`make_cluster`); nothing else in a run is random."""
        return self.speeds is not None and self.background_load > 0


def run_policy(policy: str | Path | ir.Policy, workload: str | Path | Workload | None = None,
               options: RunOptions | None = None,
               cache: WorkloadCache | None = None) -> RunResult:
    """Simulate ``policy`` (a .pol file or a compiled policy) on ``workload`` (a file, a
    loaded workload, or None: the bundled trace, or ``options.state``'s jobs).

    A workload given loaded is simulated as it is (no capacities, limit or transform)."""
    return prepare_run(policy, workload, options, cache).run()


@frozen
class PreparedRun:
    """A run whose policy, params, workload and machine are checked, not yet simulated:
    `schedc compare` prepares all its runs before the first simulation, so that a mistake in
    the last is reported at once."""

    policy_file: str
    policy: RuntimePolicy
    workload: Workload
    options: RunOptions
    provenance: Provenance
    cluster: Cluster | None = None  # fresh: its background loads are drawn as the run goes
    initial: InitialState | None = None  # a state replayed (`--state`)
    warnings: tuple[Diagnostic, ...] = ()  # likely mistakes (runtime/run_warnings.py)

    def run(self) -> RunResult:
        where = self.options.state if self.initial is not None else self.workload.source
        how: dict[str, Any] = ({"initial": self.initial} if self.initial is not None
                               else {"cluster": self.cluster})
        schedule, wall = _simulate(self.policy, self.workload, self.options,
                                   Path(where or "").name, **how)
        from schedc.runtime.run_warnings import departure_warnings

        # a preemptive run's passes outside what schedc verify's proofs assume
        warnings = (*self.warnings, *departure_warnings(schedule.departures,
                                                        self.policy_file))
        return RunResult(policy_file=self.policy_file, policy=self.policy,
                         workload=self.workload, schedule=schedule,
                         cluster=self.cluster.describe() if self.cluster else None,
                         wall=wall, provenance=self.provenance, warnings=warnings,
                         measure=self.options.metric_options())


def prepare_run(policy: str | Path | ir.Policy, workload: str | Path | Workload | None = None,
                options: RunOptions | None = None,
                cache: WorkloadCache | None = None) -> PreparedRun:
    """Everything `run_policy` does before simulating; user mistakes raise here."""
    from schedc.runtime.engine.from_ir import to_runtime
    from schedc.runtime.engine.simulator import machine_for

    options = options or RunOptions()
    if options.state is not None:
        return _prepare_state(policy, options)
    from schedc.runtime.run_warnings import run_warnings

    texts: dict[str, str] = {}
    policy_ir = compiled(policy, options, texts)
    runtime = to_runtime(policy_ir, dict(options.params))
    check_knowledge(policy_ir, options.params, options.knowledge)
    capacities_for(runtime, options.capacities)  # a wrong capacity before a wrong cluster
    if runtime.preemption is not None and options.speeds is not None:
        raise OptionError(f"policy {runtime.name} preempts, and a heterogeneous cluster "
                          "(--speeds) does not run preemptive policies yet",
                          help="drop --speeds, or run a policy without `preempt when`")
    cluster = make_cluster(options)
    if isinstance(workload, str | Path) or workload is None:
        path = str(workload) if workload is not None else str(bundled_trace())
        loaded = load_for(runtime, path, options, cache,
                          cpus=len(cluster.speeds) if cluster is not None else None)
        given = {"file": str(workload)} if workload is not None else {
            "file": f"bundled {BUNDLED_TRACE}", "path": path}
    else:
        loaded = workload
        given = {"file": loaded.source}
    machine_for(runtime, loaded, cluster=cluster)
    _check_measure(options, loaded)
    facts = _provenance(policy, policy_ir, texts, options, {
        **given, **_workload_facts(given.get("path", given["file"]), loaded)}, options.params,
        overrun=loaded.overrun)
    return PreparedRun(_file_of(policy), runtime, loaded, options, facts, cluster=cluster,
                       warnings=run_warnings(policy_ir, loaded))


def compiled(policy: str | Path | ir.Policy, options: RunOptions,
             texts: dict[str, str] | None = None, select_help: str = "pass --policy NAME"
             ) -> ir.Policy:
    """The policy's IR on the machine the options ask for; ``texts`` gets the text of every
    file compiled (for the provenance); ``select_help`` says how to name one policy of a
    file that defines several."""
    from schedc.dsl import compile_file

    if isinstance(policy, str | Path):
        require_file(policy, "policy")
        policy = compile_file(policy, options.policy_name, loaded=texts,
                              select_help=select_help)
    return on_resources(policy, options.resources)


def prepared_policy(policy: str | Path | ir.Policy, options: RunOptions) -> RuntimePolicy:
    """The policy compiled, on its resources, with its params bound."""
    from schedc.runtime.engine.from_ir import to_runtime

    return to_runtime(compiled(policy, options), dict(options.params))


def check_knowledge(policy: ir.Policy, params: Mapping[str, str], knowledge: str) -> None:
    """The policy, its params bound, reads nothing that ``knowledge`` withholds (one located
    diagnostic per read otherwise)."""
    from schedc.dsl import knowledge as known

    if knowledge not in known.KNOWLEDGE:
        raise OptionError(f"--knowledge {knowledge}: no such knowledge",
                          help=f"one of {', '.join(known.KNOWLEDGE)}")
    known.check(policy, params, knowledge)


def on_resources(policy: ir.Policy, spec: int | str | tuple[str, ...] | None) -> ir.Policy:
    """The policy on its machine's resources and more (`--resources K|NAMES`)."""
    from schedc.dsl.machines import extend_machine, with_resources

    if spec is None:
        return policy
    shown = ",".join(spec) if isinstance(spec, tuple) else str(spec)
    try:
        if isinstance(spec, int):
            return with_resources(policy, spec)
        if isinstance(spec, str) and spec.strip().isascii() and spec.strip().isdigit():
            return with_resources(policy, int(spec))
        names = spec if isinstance(spec, tuple) else spec.split(",")
        return extend_machine(policy, [n.strip() for n in names])
    except ValueError as exc:
        own = ",".join(r.name for r in policy.machine.resources)
        raise OptionError(f"--resources {shown}: {exc}",
                          help=f"list the machine's own first, e.g. --resources {own},memory"
                          ) from None


def make_cluster(options: RunOptions) -> Cluster | None:
    """A fresh heterogeneous cluster (its background loads are drawn as the run goes)."""
    from schedc.runtime.engine.cluster import Cluster

    if options.speeds is None:
        return None
    return Cluster(options.speeds, options.background_load, options.load_seed)


def capacities_for(policy: RuntimePolicy, given: Mapping[str, int]) -> dict[str, int | None]:
    """The options' capacities override the policy's machine block, which overrides the
    trace's (None: the trace's)."""
    from schedc.runtime.workloads.workload import choices_help

    for name in given:
        if name not in policy.resources:
            raise OptionError(
                f"--capacity {name}: the policy's machine has no resource `{name}`",
                help=choices_help(name, policy.resources, "its resources are"),
            )
    return {name: given.get(name, cap)
            for name, cap in zip(policy.resources, policy.capacities, strict=True)}


def load_for(policy: RuntimePolicy, path: str, options: RunOptions,
             cache: WorkloadCache | None = None, cpus: int | None = None) -> Workload:
    """The workload file on ``policy``'s machine: read (or taken from ``cache``), cut to
    ``options.limit`` jobs, then transformed. ``cpus``: the cpus when nothing else says."""
    import attrs

    from schedc.runtime.workloads.load import load_workload
    from schedc.runtime.workloads.moldable import make_moldable
    from schedc.runtime.workloads.overrun import apply_overrun

    capacities = capacities_for(policy, options.capacities)
    if cpus is not None and capacities.get("cpus") is None:
        capacities["cpus"] = cpus  # one cpu per processor of the cluster
    require_file(path, "workload")
    # the user too: the metrics' per-user fairness reads it (one column more)
    labels = None if options.all_labels or policy.labels_read is None else (
        *policy.labels_read, "user")
    key = (path, policy.resources, tuple(capacities.items()), options.lenient, options.limit,
           labels, options.overrun)
    workload = (cache or {}).get(key)
    if workload is None:
        workload = load_workload(path, resources=policy.resources, capacities=capacities,
                                 lenient=options.lenient, labels=labels)
        if options.limit is not None:  # a prefix keeps jobs[i].index == i
            workload = attrs.evolve(workload, jobs=workload.jobs[:options.limit])
        workload = apply_overrun(workload, options.overrun)
        if cache is not None:  # read and in its overrun mode: each run molds its own copy
            cache[key] = workload
    if options.moldable is not None:
        workload = make_moldable(workload, options.moldable)
    return workload


def _prepare_state(policy: str | Path | ir.Policy, options: RunOptions) -> PreparedRun:
    """One machine state replayed; its params are defaults for the options' params."""
    from schedc.runtime.engine.from_ir import to_runtime
    from schedc.runtime.engine.preemptive import state_error
    from schedc.runtime.engine.simulator import machine_for
    from schedc.runtime.run_warnings import run_warnings
    from schedc.runtime.workloads.state_file import check_params, load_state, merged_params

    texts: dict[str, str] = {}
    policy_ir = compiled(policy, options, texts)
    assert options.state is not None
    require_file(options.state, "state")
    resources = tuple(r.name for r in policy_ir.machine.resources)
    state = load_state(options.state, resources)
    check_params(options.state, state, policy_ir.name, [p.name for p in policy_ir.params])
    bound = merged_params(state, dict(options.params))
    runtime = to_runtime(policy_ir, bound)
    check_knowledge(policy_ir, bound, options.knowledge)
    # a preempted job or a job's history needs the preemptive simulator, which needs each
    # job's phase to agree with its mechanism (``preemptive.state_problem``): an error at
    # the job (or field) in the state file
    error = state_error(runtime, state)
    if error is not None:
        raise error
    sizing = runtime.active(state.active)  # a dynP state's sizes are its candidate's
    if state.sizes and not sizing.size_fixed:
        raise OptionError(f"the state gives queued jobs a `size`, but policy {sizing.name} "
                          "chooses sizes at every pass",
                          help="kept sizes are for `size fixed` policies: remove the `size` "
                          "fields")
    machine_for(runtime, state.workload, initial=state)
    _check_measure(options, state.workload)
    facts = _provenance(policy, policy_ir, texts, options, {
        "state": options.state, **_workload_facts(options.state, state.workload)},
        bound, state_params=state.params)
    return PreparedRun(_file_of(policy), runtime, state.workload, options, facts,
                       initial=state, warnings=run_warnings(policy_ir, state.workload))


def _check_measure(options: RunOptions, workload: Workload) -> None:
    """The metrics' options against the workload, before the simulation: a threshold of no
    time, or a warm-up and cool-down that leave no job to measure, is found now."""
    from schedc.runtime.results.metrics import left_out

    if not options.bsld_tau > 0:
        raise OptionError(f"--bsld-tau {options.bsld_tau}: the threshold must be more than 0 s",
                          help="bounded slowdown divides by max(run time, tau), e.g. "
                          "--bsld-tau 10")
    keep, warm, cool = left_out(workload.jobs, options.metric_options(), workload.time_unit)
    if keep is not None and not any(keep):
        cuts = [f"{flag} {cut}" for flag, cut in (
            ("--warmup", options.warmup), ("--cooldown", options.cooldown)) if cut is not None]
        verb = "leave" if len(cuts) > 1 else "leaves"
        raise OptionError(f"{' and '.join(cuts)} {verb} out all {len(keep):,} jobs of the "
                          f"workload "
                          f"({warm:,} warm-up, {cool:,} cool-down): no job is left to measure",
                          help="give a shorter warm-up or cool-down")


def _workload_facts(path: str, workload: Workload) -> dict[str, Any]:
    from schedc.runtime.results.provenance import sha256_file
    from schedc.runtime.workloads.overrun import overrun_facts

    facts = {"sha256": sha256_file(path), "jobs": len(workload.jobs),
             "skipped": dict(sorted(workload.skipped.items()))}
    over = overrun_facts(workload)
    if over.over or over.no_estimate:  # what the file records that a run may not simulate
        facts["overrun"] = over.to_dict(workload.overrun)
    if workload.time_unit != 1:  # the jobs table's times (not the metrics) count these units
        facts["time_unit"] = f"{workload.time_unit} s"
    return facts


def _provenance(policy: str | Path | ir.Policy, policy_ir: ir.Policy, texts: dict[str, str],
                options: RunOptions, workload: dict[str, Any], bound: Mapping[str, str],
                state_params: Iterable[str] = (), overrun: str = "kill") -> Provenance:
    """What the run is made of: enough to run it again and to tell two results apart."""
    from schedc.runtime.engine.from_ir import bind_params
    from schedc.runtime.results.provenance import Provenance, param_facts, policy_facts
    from schedc.runtime.version import version

    file = _file_of(policy)
    values = bind_params(policy_ir, bound)
    moldable = options.moldable
    resources = options.resources
    return Provenance(
        schedc=version(), command=options.command,
        policy=policy_facts(policy_ir.name, file, texts),
        params=param_facts(values, options.params, state_params),
        workload=workload,
        options={
            "capacities": dict(sorted(options.capacities.items())),
            "resources": list(resources) if isinstance(resources, tuple) else resources,
            "limit": options.limit, "lenient": options.lenient,
            "range_factor": moldable.range_factor if moldable else None,
            "sigma": moldable.sigma if moldable else 0.0,
            "load_factor": moldable.load_factor if moldable else 100.0,
            "speeds": list(options.speeds) if options.speeds is not None else None,
            "background_load": options.background_load,
            "overrun": overrun,
            "knowledge": options.knowledge,  # the policy was checked to read no more
            # how the metrics measure it: bounded slowdown's threshold, jobs left out
            "bsld_tau": options.bsld_tau,
            "warmup": str(options.warmup) if options.warmup is not None else None,
            "cooldown": str(options.cooldown) if options.cooldown is not None else None,
        },
        seeds={"load_seed": options.load_seed})


def _simulate(policy: RuntimePolicy, workload: Workload, options: RunOptions, where: str,
              **how: Any) -> tuple[Schedule, float]:
    from schedc.runtime.engine.simulator import simulate

    progress = options.progress or (lambda label, total: nullcontext())
    with progress(f"{policy.name} on {where}", len(workload.jobs)) as update:
        started = time.perf_counter()
        if policy.preemption is not None:  # a preemptive policy has its own loop
            from schedc.runtime.engine.preemptive import simulate_preemptive

            schedule = simulate_preemptive(policy, policy.preemption, workload,
                                           progress=update, initial=how.get("initial"),
                                           max_passes=options.max_passes).schedule
        else:
            schedule = simulate(policy, workload, progress=update, **how)
        return schedule, time.perf_counter() - started


def _file_of(policy: str | Path | ir.Policy) -> str:
    return str(policy) if isinstance(policy, str | Path) else ""
