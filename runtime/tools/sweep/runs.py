"""A spec's runs: policies x their params' values (as `compare --vary`: a policy runs once per
combination of the params it declares) x workloads x transforms x seeds, plus the explicit
`[[run]]` tables; each run checked before anything is submitted (its policy compiles, its
params bind, its transforms fit together: a located diagnostic otherwise) and given its key.
What can only fail while running (a workload's contents, a machine that does not fit)
fails that run alone, recorded in the results."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import attrs
from attrs import frozen

from schedc.dsl.diagnostics import Diagnostic, DiagnosticError, did_you_mean
from schedc.runtime.run import BUNDLED_TRACE, RunOptions
from schedc.runtime.tools.sweep.keys import policy_hashes, run_key
from schedc.runtime.tools.sweep.locate import Path_
from schedc.runtime.tools.sweep.spec import (
    MAX_RUNS,
    TRANSFORMS,
    PolicyRef,
    Scalar,
    Spec,
    Transforms,
    WorkloadRef,
)
from schedc.runtime.workloads.overrun import DEFAULT as OVERRUN_DEFAULT


@frozen
class RunDesc:
    """Everything a worker needs to make one run, with absolute paths."""

    key: str
    policy: str  # the column: the policy's name (its spec text if two files share a name)
    workload: str  # the column: the file's name (its spec text if two share a name)
    policy_file: str
    policy_name: str | None
    workload_file: str
    params: tuple[tuple[str, Scalar], ...]
    transforms: Transforms
    seed: int
    capacities: tuple[tuple[str, int], ...] = ()
    lenient: bool = False
    measure: tuple[tuple[str, Scalar], ...] = ()  # the spec's `[metrics]`
    # the params' column values where the spec wrote a number as text ("1h": 3600), so that
    # the tables hold numbers that plot and sort by value; the text stays in `param.N.text`
    values: tuple[tuple[str, Scalar], ...] = ()

    def options(self) -> RunOptions:
        """The `RunOptions` of this run: the seed is the background loads' `load_seed`."""
        from schedc.runtime.engine.cluster import parse_speeds
        from schedc.runtime.workloads.moldable import MoldableSpec

        t = self.transforms
        moldable = None
        if t.range_factor is not None or t.load_factor not in (None, 100):
            moldable = MoldableSpec(t.range_factor, t.sigma or 0.0,
                                    100.0 if t.load_factor is None else t.load_factor)
        return RunOptions(
            policy_name=self.policy_name, params={n: text(v) for n, v in self.params},
            capacities=dict(self.capacities), lenient=self.lenient, resources=t.resources,
            moldable=moldable, limit=t.limit,
            speeds=tuple(parse_speeds(t.speeds)) if t.speeds is not None else None,
            background_load=t.background_load or 0.0, load_seed=self.seed,
            overrun=t.overrun or OVERRUN_DEFAULT, **measure_options(self.measure))

    def inputs(self, params: Sequence[str], transforms: Sequence[str],
               labels: Sequence[str] = ()) -> dict[str, Any]:
        """The run's input columns, in the tables' order (``labels``: the params whose
        spec text gets a column `param.N.text` after their value's)."""
        mine, values = dict(self.params), dict(self.values)
        columns: dict[str, Any] = {"policy": self.policy, "workload": self.workload}
        for n in params:
            columns[f"param.{n}"] = values.get(n, mine.get(n))
            if n in labels:
                columns[f"param.{n}{LABEL}"] = text(mine[n]) if n in mine else None
        return {**columns, **{n: getattr(self.transforms, n) for n in transforms},
                "seed": self.seed}

    def submit_order(self) -> tuple:
        """Runs on the same workload file and cut next to each other: a worker's cache of
        loaded workloads is reused."""
        t = self.transforms
        return (self.workload_file, str(t.resources), t.limit or 0, self.policy_file,
                self.policy_name or "", self.key)


def measure_options(measure: Sequence[tuple[str, Scalar]]) -> dict[str, Any]:
    """A spec's `[metrics]` as `RunOptions` fields (read as the run flags read them)."""
    from schedc.runtime.results.metrics import parse_cut, parse_tau

    given = dict(measure)
    out: dict[str, Any] = {}
    if "bsld_tau" in given:
        out["bsld_tau"] = parse_tau(str(given["bsld_tau"]))
    for name in ("warmup", "cooldown"):
        if name in given:
            out[name] = parse_cut(str(given[name]))
    return out


@frozen
class Plan:
    """The runs of a spec (unique keys, in submission order) and the tables' columns."""

    runs: tuple[RunDesc, ...]
    params: tuple[str, ...]  # every param name, in the spec's order
    transforms: tuple[str, ...]  # every transform some run applies, in TRANSFORMS' order
    labels: tuple[str, ...] = ()  # the params some run gave as text read as a number ("1h")


def repeated_seeds(spec: Spec, plan: Plan) -> Diagnostic | None:
    """A warning at the spec's `seeds` when several seeds of a configuration with nothing
    random would repeat one simulation (a sweep's compute spent on identical runs)."""
    if len(spec.seeds) < 2:
        return None
    configurations: dict[tuple, list[RunDesc]] = {}
    for run in plan.runs:
        configurations.setdefault(attrs.evolve(run, key="", seed=0), []).append(run)
    same = [runs for runs in configurations.values() if len(runs) > 1
            and not runs[0].options().seeded()]
    if not same:
        return None
    seeds = max(len(runs) for runs in same)
    which = ("no configuration of the sweep has anything random" if len(same) == len(
        configurations) else f"{len(same)} of the {len(configurations)} configurations have "
        "nothing random")
    diagnostic = spec.locator.diagnostic(
        ("seeds",), f"{which}: the {seeds} seeds of each repeat the same simulation",
        help="a seed draws only the background loads of a heterogeneous cluster (`speeds` "
        "with `background_load`); without them one seed (`seeds = 1`) gives the same "
        "results")
    return attrs.evolve(diagnostic, severity="warning")


def text(value: Scalar) -> str:
    """A spec value as a param's text (`--param`): TOML's booleans, numbers as written."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def plan(spec: Spec) -> Plan:
    """Every run of ``spec``, checked; raises DiagnosticError with every mistake found."""
    planner = _Planner(spec)
    runs = planner.runs()
    if planner.errors:
        raise DiagnosticError(dict.fromkeys(planner.errors))
    unique = {r.key: r for r in runs}  # an explicit run may repeat one of the product's
    ordered = sorted(unique.values(), key=RunDesc.submit_order)
    params = tuple(dict.fromkeys(n for r in ordered for n, _ in r.params))
    used = {n for r in ordered for n, _ in r.transforms.items()}
    labelled = {n for r in ordered for n, _ in r.values}
    return Plan(tuple(ordered), params, tuple(n for n in TRANSFORMS if n in used),
                tuple(n for n in params if n in labelled))


LABEL = ".text"  # the suffix of a param's label column: its values as the spec wrote them


def is_label(column: str) -> bool:
    """Whether ``column`` is a param's label column (text beside the value column)."""
    return column.startswith("param.") and column.endswith(LABEL)


def column_value(written: Scalar, bound: object) -> Scalar | None:
    """A param's value in the tables when the spec wrote it as text that binds to a number
    (a duration "1h": 3600, "1/3": 0.333...); None: the value as written is the column's."""
    if not isinstance(written, str) or isinstance(bound, bool):
        return None
    if isinstance(bound, int):
        return bound
    if isinstance(bound, Fraction):
        return int(bound) if bound.denominator == 1 else float(bound)
    return None


class _Planner:
    def __init__(self, spec: Spec) -> None:
        from schedc.runtime.version import version

        self.spec = spec
        self.errors: list[Diagnostic] = []
        self.version = version()
        self.compiled: dict[tuple[str, str | None], tuple[Any, dict[str, Any]] | None] = {}
        self.bound: dict[tuple, dict[str, Any] | None] = {}
        self.raw: dict[tuple, dict[str, Any]] = {}  # the bound values, before JSON
        self.keeps: dict[tuple, bool] = {}
        self.machines: dict[tuple, bool] = {}  # (file, name, resources): capacities fit

    def fail(self, where: Path_, message: str, help: str | None = None,
             literal: object = None) -> None:
        self.errors.append(self.spec.locator.diagnostic(where, message, help, literal))

    def runs(self) -> list[RunDesc]:
        spec = self.spec
        policies = [(p, self.policy(p)) for p in spec.policies]
        explicit = [self.policy(r.policy) for r in spec.runs]
        if any(c is None for _, c in policies) or any(c is None for c in explicit):
            return []
        declared = {n for _, c in policies for n in (p.name for p in c[0].params)}
        for name, _ in spec.params:
            if name not in declared:
                known = sorted(declared)
                self.fail(("params", name), f"no policy of the sweep declares a param `{name}`",
                          help=did_you_mean(name, known) or
                          f"their params: {', '.join(known) or 'none'}")
        if self.too_many(policies):
            return []
        combos = self.transform_combinations()
        names = self.names([p for p, _ in policies] + [r.policy for r in spec.runs],
                           [w for w in spec.workloads] + [r.workload for r in spec.runs])
        out = []
        for ref, (ir, _) in policies:  # type: ignore[misc]
            mine = [(n, vs) for n, vs in spec.params if n in {p.name for p in ir.params}]
            for values in itertools.product(*(vs for _, vs in mine)):
                params = tuple(zip((n for n, _ in mine), values, strict=True))
                if not self.binds(ref, params, ("params",)):
                    continue
                for workload, transforms, seed in itertools.product(
                        spec.workloads, combos, spec.seeds):
                    if self.cluster_keeps(ref, params, transforms, ("transforms",)) and \
                            self.capacities_fit(ref, transforms):
                        out.append(self.desc(ref, workload, params, transforms, seed, names))
        for run in spec.runs:
            where = ("run", run.index)
            if not self.binds(run.policy, run.params, (*where, "params")):
                continue
            if not self.fits(run.transforms, where) or not self.cluster_keeps(
                    run.policy, run.params, run.transforms, where) or not self.capacities_fit(
                    run.policy, run.transforms):
                continue
            for seed in (spec.seeds if run.seed is None else (run.seed,)):
                out.append(self.desc(run.policy, run.workload, run.params, run.transforms,
                                     seed, names))
        return out

    def too_many(self, policies: list[tuple[PolicyRef, Any]]) -> bool:
        """Whether the spec asks for more than MAX_RUNS runs (an error then), counted before
        any product is made: a few long lists multiply to more than any machine holds."""
        spec = self.spec
        per_policy = len(spec.workloads) * len(spec.seeds) * math.prod(
            len(vs) for _, vs in spec.transforms)
        total = sum(len(spec.seeds) if r.seed is None else 1 for r in spec.runs)
        for _, (ir, _) in policies:
            declared = {p.name for p in ir.params}
            total += per_policy * math.prod(len(vs) for n, vs in spec.params if n in declared)
        if total <= MAX_RUNS:
            return False
        where = ("seeds",) if spec.locator.key(("seeds",)) else ("policies",)
        self.fail(where, f"the spec makes {total:,} runs: a sweep makes at most {MAX_RUNS:,}",
                  help="split it into several sweeps (by policy, workload or seeds)")
        return True

    def policy(self, ref: PolicyRef) -> tuple[Any, dict[str, Any]] | None:
        """The policy's IR and key facts, compiled once per file and name."""
        from schedc.runtime.run import compiled

        cache_key = (ref.file, ref.name)
        if cache_key not in self.compiled:
            texts: dict[str, str] = {}
            try:
                ir = compiled(ref.file, RunOptions(policy_name=ref.name), texts,
                              select_help=f"name one of them as {ref.text}:NAME")
            except DiagnosticError as error:
                # an error in the policy's text is where it is; one with no place there
                # (`FILE.pol:NAME` naming no policy of the file) is at the spec's entry
                self.errors.extend(d if d.line is not None else self.spec.locator.diagnostic(
                    ref.where, d.message, d.help, ref.text) for d in error.diagnostics)
                self.compiled[cache_key] = None
            else:
                self.compiled[cache_key] = (ir, policy_hashes(ir.name, ref.file, texts))
        return self.compiled[cache_key]

    def binds(self, ref: PolicyRef, params: tuple[tuple[str, Scalar], ...],
              where: Path_) -> bool:
        """Whether the values bind (the language's rules); located errors when not."""
        return self.bound_values(ref, params, where) is not None

    def bound_values(self, ref: PolicyRef, params: tuple[tuple[str, Scalar], ...],
                     where: Path_ = ("params",)) -> dict[str, Any] | None:
        from schedc.dsl.binding import bind
        from schedc.runtime.results.provenance import json_value

        cache_key = (ref.file, ref.name, _typed(params))
        if cache_key in self.bound:
            return self.bound[cache_key]
        ir, _ = self.compiled[(ref.file, ref.name)]  # type: ignore[misc]
        try:
            values = bind(ir, {n: text(v) for n, v in params})
            self.raw[cache_key] = values
            self.bound[cache_key] = {n: json_value(v) for n, v in sorted(values.items())}
        except DiagnosticError as together:
            self.bound[cache_key] = None
            alone = False
            for name, value in params:  # find which value, and say it at the spec's
                try:
                    bind(ir, {name: text(value)})
                except DiagnosticError as error:
                    alone = True
                    first = error.diagnostics[0]
                    self.fail((*where, name), f"{ref.text}: {first.message}", help=first.help,
                              literal=value)
            if not alone:  # only the combination fails (a setting reading two params)
                first = together.diagnostics[0]
                given = ", ".join(f"{n} = {text(v)}" for n, v in params)
                self.fail(where, f"{ref.text} with {given}: {first.message}",
                          help=first.help)
        return self.bound[cache_key]

    def transform_combinations(self) -> list[Transforms]:
        names = [n for n, _ in self.spec.transforms]
        combos = []
        for values in itertools.product(*(vs for _, vs in self.spec.transforms)):
            t = Transforms(**dict(zip(names, values, strict=True)))  # type: ignore[arg-type]
            if self.fits(t, ("transforms",)):
                combos.append(t)
        return combos

    def fits(self, t: Transforms, where: Path_) -> bool:
        if t.sigma not in (None, 0) and t.range_factor is None:
            self.fail((*where, "sigma"), "sigma needs range_factor",
                      help="sigma shapes the speedup of jobs made moldable: add range_factor")
            return False
        if t.background_load not in (None, 0) and t.speeds is None:
            self.fail((*where, "background_load"), "background_load needs speeds",
                      help='give the processors\' speeds, e.g. speeds = ["64x1"]')
            return False
        return True

    def cluster_keeps(self, ref: PolicyRef, params: tuple[tuple[str, Scalar], ...],
                      t: Transforms, where: Path_) -> bool:
        """Whether the policy can run on the heterogeneous cluster the transforms make (as
        the simulator checks before a run): one that reserves cannot, a located error."""
        if t.speeds is None:
            return True
        cache_key = (ref.file, ref.name, _typed(params), t.speeds, where)
        if cache_key not in self.keeps:
            from schedc.runtime.engine.from_ir import to_runtime
            from schedc.runtime.engine.simulator import reserves

            ir, _ = self.compiled[(ref.file, ref.name)]  # type: ignore[misc]
            self.keeps[cache_key] = not reserves(to_runtime(ir, {n: text(v) for n, v in params}))
            if not self.keeps[cache_key]:
                self.fail((*where, "speeds"), f"{ref.text}: policy {ir.name} makes "
                          "reservations, which a heterogeneous cluster (speeds) cannot keep: "
                          "a job's wall time is known only once its processors are chosen",
                          help="run it without speeds, or use a policy with `reserve 0` (the "
                          "paper's first fit) or `backfill none`", literal=t.speeds)
        return self.keeps[cache_key]

    def capacities_fit(self, ref: PolicyRef, t: Transforms) -> bool:
        """Whether every resource of the spec's `[capacity]` is one of the machine the run
        has (the policy's, with the `resources` transform's): found now, not per run."""
        if not self.spec.capacities:
            return True
        cache_key = (ref.file, ref.name, t.resources)
        if cache_key not in self.machines:
            from schedc.runtime.run import OptionError, on_resources
            from schedc.runtime.workloads.workload import choices_help

            ir, _ = self.compiled[(ref.file, ref.name)]  # type: ignore[misc]
            try:
                names = [r.name for r in on_resources(ir, t.resources).machine.resources]
            except OptionError:  # `resources` that do not fit the machine: the run says so
                names = None
            unknown = [n for n, _ in self.spec.capacities if names is not None
                       and n not in names]
            for name in unknown:
                self.fail(("capacity", name), f"{ref.text}: the machine of policy {ir.name} "
                          f"has no resource `{name}`",
                          help=choices_help(name, names or [], "its resources are"))
            self.machines[cache_key] = not unknown
        return self.machines[cache_key]

    def names(self, policies: Sequence[PolicyRef], workloads: Sequence[WorkloadRef]
              ) -> dict[str, str]:
        """The column value of each policy and workload file: its name, or its spec text
        where two different files would share a name."""
        out: dict[str, str] = {}
        by_policy: dict[str, set[tuple[str, str | None]]] = {}
        for ref in policies:
            compiled = self.compiled.get((ref.file, ref.name))
            if compiled is not None:
                by_policy.setdefault(compiled[0].name, set()).add((ref.file, ref.name))
        for ref in policies:
            compiled = self.compiled.get((ref.file, ref.name))
            if compiled is not None:
                name = compiled[0].name
                out[f"p:{ref.file}:{ref.name}"] = name if len(by_policy[name]) == 1 else ref.text
        by_file: dict[str, set[str]] = {}
        for w in workloads:
            by_file.setdefault(_file_name(w), set()).add(w.file)
        for w in workloads:
            out[f"w:{w.file}"] = _file_name(w) if len(by_file[_file_name(w)]) == 1 else w.text
        return out

    def desc(self, ref: PolicyRef, workload: WorkloadRef, params: tuple[tuple[str, Scalar], ...],
             transforms: Transforms, seed: int, names: Mapping[str, str]) -> RunDesc:
        from schedc.runtime.results.provenance import sha256_file

        _, hashes = self.compiled[(ref.file, ref.name)]  # type: ignore[misc]
        facts = {
            "schedc": self.version, "policy": hashes,
            "params": self.bound_values(ref, params),
            "workload": sha256_file(workload.file),
            "transforms": dict(transforms.items()),
            "capacities": dict(self.spec.capacities), "lenient": self.spec.lenient,
            "seed": seed,
            # the mode always: a store made before `--overrun` (jobs killed) is not reused
            "overrun": transforms.overrun or OVERRUN_DEFAULT,
            **({"metrics": dict(self.spec.measure)} if self.spec.measure else {}),
        }
        raw = self.raw[(ref.file, ref.name, _typed(params))]
        values = tuple((n, v) for n, written in params
                       if (v := column_value(written, raw.get(n))) is not None)
        return RunDesc(run_key(facts), names[f"p:{ref.file}:{ref.name}"],
                       names[f"w:{workload.file}"], ref.file, ref.name, workload.file,
                       params, transforms, seed, self.spec.capacities, self.spec.lenient,
                       measure=self.spec.measure, values=values)


def _typed(params: tuple[tuple[str, Scalar], ...]) -> tuple[tuple[str, type, Scalar], ...]:
    """Params as a cache key: `true`, `1` and `1.0` bind differently, though Python holds
    them equal."""
    return tuple((n, type(v), v) for n, v in params)


def _file_name(w: WorkloadRef) -> str:
    return BUNDLED_TRACE if w.text == "bundled" else Path(w.file).name

