"""A differential fuzzer between `schedc verify` and the simulator's runtime monitor.

The project's promise: a property that `verify` proves never makes the runtime monitor stop
a run, and every counterexample of a violated property replays (the monitor stops for it).
This module tests that promise on random policies, as Cedar tests its Rust code against its
Lean model:

* ``generate(seed)``: a random, well-typed policy (`.pol` text), biased toward the edges
  where the two sides may disagree (a literal equal to a param's domain bound, real
  arithmetic that is exactly 0 in rationals, counts compared with capacities, inputs the
  verifier assumes away);
* ``fuzz_policy(text)``: verifies it with small bounds, simulates it on small random
  workloads and a prefix of the bundled KTH-SP2 trace with param values at both domain
  bounds, replays every counterexample, and reports each disagreement with its evidence
  (a workload or a state that `schedc run` replays, the params, the monitor's message) and a
  triage class.

No pytest here: `tests/test_fuzz_verify.py` and `benchmarks/fuzz_verify.py` import it.
Everything is deterministic for a seed: budgets count policy calls, Z3 work (rlimit) and
replays; wall-clock limits are far-away guards only.
"""

from __future__ import annotations

import json
import math
import random
import re
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from attrs import frozen

from schedc.dsl import DiagnosticError, compile_source, ir, render_diagnostics
from schedc.dsl.ir import DECIDERS, TUNING_METRICS, TUNING_STEPS
from schedc.dsl.tuning import candidate_policies
from schedc.dsl.verify.pass_encoding import Bounds
from schedc.dsl.verify.prover import verify_policy
from schedc.dsl.verify.verdict import Limits, Verdict
from schedc.runtime.engine import simulator
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.monitor import MonitorViolation
from schedc.runtime.engine.policy import PassState, RuntimePolicy
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.jobs import Job, Moldable, RunningJob
from schedc.runtime.replay import replayer
from schedc.runtime.run import bundled_trace
from schedc.runtime.speedup import format_speedup, parse_speedup

# -- the generator ----------------------------------------------------------------------------
from schedc.runtime.workloads.load import load_workload
from schedc.runtime.workloads.moldable import MoldableSpec, make_moldable
from schedc.runtime.workloads.state_file import (
    InitialState,
    merged_params,
    param_text,
    state_from_data,
)
from schedc.runtime.workloads.workload import Workload, WorkloadError

# -- the generator ----------------------------------------------------------------------------

# Edge templates (see _Gen.edge_base): where verifier and simulator are likely to part.
PATTERNS = ("bound", "residue", "count", "ids", "inputs")
# Drawn only when asked (`--patterns ...,rank`): a seed of the default patterns keeps its
# policy. "rank": a job's place in the queue, `count(y in queue where y.submit < job.submit)`,
# compared with a constant a queue of N slots may not reach (the class of proofs that held
# for the first N queued jobs only, which a longer queue refuted)
MORE_PATTERNS = ("rank",)
RESOURCE_NAMES = ("cpus", "r2", "r3", "r4")
FIXED_CAPACITIES = (1, 2, 3, 4, 8, 16, 64, 100, 128)
# Decimal points for real domains and literals: most are not binary fractions (0.1, 0.3,
# 0.9), so a literal and a domain bound written alike may differ if the two sides read them
# differently.
REAL_POINTS = ("0.0", "0.1", "0.2", "0.25", "0.3", "0.5", "0.7", "0.8", "0.9", "1.0", "1.5",
               "2.0")
PRELUDE_SIZES = ("ap2_size", "map_size", "equi_size", "fair_share_size", "sqrt_share_size",
                 "sqrt_share_corrected_size", "hap_size", "ihap_size")
JOB_INTS = ("id", "submit", "estimate", "procs", "wait", "area", "min_size", "max_size", "work",
            "user", "group", "executable", "queue", "partition")
LABELS = ("user", "group", "executable", "queue", "partition")
RUNNING_INTS = ("start", "elapsed", "remaining", "end")


@frozen
class GenConfig:
    patterns: tuple[str, ...] = PATTERNS  # the edge templates the generator may use
    edge_rate: float = 0.3  # chance that a formula slot is built around an edge template
    depth: int = 3  # nesting of random expressions
    max_resources: int = 4
    # chance that the file's policy is a self-tuning dynP policy over 2-3 generated planning
    # candidates (papers/001). 0 by default, so that a seed names the same policy as in the
    # campaigns run before dynP existed (`fuzz_verify.py --tuned-rate` draws them)
    tuned_rate: float = 0.0
    # chance that a plain policy that reserves with `backfill first_fit` or `when` gets a
    # `slack` clause (relaxed backfilling); 0 by default for the same reason (no draw)
    slack_rate: float = 0.0
    # chance that a dynP candidate sizing `size fixed` by a formula states that its kept size
    # is its own rule's (`invariant job.size == RULE`): broken where another candidate's kept
    # size is started (one table of kept sizes); 0 by default for the same reason
    kept_rate: float = 0.0


@frozen
class GeneratedPolicy:
    seed: int
    text: str
    features: tuple[str, ...]  # what the policy uses (for campaign statistics)
    name: str  # the policy under test (a dynP file also defines its candidates)


def generate(seed: int, config: GenConfig | None = None) -> GeneratedPolicy:
    """The policy of ``seed`` (same seed and config, same text)."""
    gen = _Gen(random.Random(seed), config or GenConfig(), f"fuzz{seed}")
    return GeneratedPolicy(seed, gen.program(), tuple(sorted(gen.features)), gen.name)


@frozen
class _E:
    """A generated expression: its text and type; ``atom`` needs no parentheses."""

    text: str
    type: str  # int | real | bool
    atom: bool = False

    @property
    def op(self) -> str:  # as an operand
        return self.text if self.atom else f"({self.text})"


@frozen
class _Param:
    name: str
    type: str
    lo: str | None  # domain bounds as written (None: no domain)
    hi: str | None
    default: str


@frozen
class _Scope:
    job: bool = True  # `job` is in scope
    size: bool = False  # `job.size` (invariants only)
    fits: bool = False  # evaluated for a job that fits now (backfill score and condition)
    vars: tuple[tuple[str, str], ...] = ()  # aggregate variables: (name, queue|running|resource)

    def with_var(self, name: str, kind: str) -> _Scope:
        return attrs.evolve(self, vars=(*self.vars, (name, kind)))

    def jobs(self) -> list[tuple[str, str]]:
        """Job-valued names: `job` (a queued job) and job variables."""
        own = [("job", "queue")] if self.job else []
        return own + [(n, k) for n, k in self.vars if k != "resource"]

    def resource_vars(self) -> list[str]:
        return [n for n, k in self.vars if k == "resource"]


class _Gen:
    """One policy file: params, defs, a machine and a policy, from ``rng``."""

    def __init__(self, rng: random.Random, config: GenConfig, name: str) -> None:
        self.rng, self.cfg, self.name = rng, config, name
        self.params: list[_Param] = []
        self.defs: list[tuple[str, str, bool]] = []  # (name, type, takes a job)
        self.resources: list[str] = []
        self.capacities: list[int | None] = []
        self.features: set[str] = set()
        self.fresh = 0

    # -- helpers
    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def pick(self, seq: Sequence[Any]) -> Any:
        return seq[self.rng.randrange(len(seq))]

    def one_of(self, options: Sequence[tuple[float, Callable[[], _E | None]]]) -> _E:
        """A weighted choice among builders; a builder that cannot apply (None) is redrawn."""
        live = [o for o in options if o[0] > 0]
        while live:
            total = sum(w for w, _ in live)
            x = self.rng.random() * total
            for i, (w, fn) in enumerate(live):
                x -= w
                if x <= 0 or i == len(live) - 1:
                    made = fn()
                    if made is not None:
                        return made
                    del live[i]
                    break
        raise AssertionError("no builder applied")  # every caller offers a literal

    def var(self, prefix: str) -> str:
        self.fresh += 1
        return f"{prefix}{self.fresh}"

    # -- the file
    def program(self) -> str:
        self.machine()
        self.make_params()
        self.make_defs()
        machine = self.machine_text()
        policy = self.policy_text()  # may declare a param (a reservation depth)
        parts = [self.param_text(p) for p in self.params]
        parts += [*self.def_texts, machine, policy]
        return "\n".join(p for p in parts if p) + "\n"

    def machine(self) -> None:
        k = self.pick([1, 1, 2, 2, 3, 4][: 2 * self.cfg.max_resources])
        k = min(k, self.cfg.max_resources)
        self.resources = list(RESOURCE_NAMES[:k])
        self.capacities = [self.pick(FIXED_CAPACITIES) if self.chance(0.35) else None
                           for _ in range(k)]
        if any(c is not None for c in self.capacities):
            self.features.add("machine:fixed")
        self.features.add(f"resources:{k}")

    def machine_text(self) -> str:
        if len(self.resources) == 1 and self.capacities[0] is None and self.chance(0.5):
            self.own_machine = False
            return ""
        self.own_machine = True
        body = " ".join(f"resource {r}" + (f" = {c}" if c is not None else "")
                        for r, c in zip(self.resources, self.capacities, strict=True))
        return f"machine m {{ {body} }}"

    def make_params(self) -> None:
        n = self.pick([0, 1, 1, 2, 3])
        if "bound" in self.cfg.patterns and self.cfg.patterns != PATTERNS:
            n = max(n, 1)  # a targeted run needs a domain to aim at
        for i in range(n):
            self.params.append(self.make_param(f"p{i + 1}", force_domain=i == 0 and (
                "bound" in self.cfg.patterns and self.cfg.patterns != PATTERNS)))

    def make_param(self, name: str, force_domain: bool = False) -> _Param:
        typ = "real" if force_domain else self.pick(["int", "real", "real", "bool"])
        if typ == "bool":
            return _Param(name, "bool", None, None, self.pick(["true", "false"]))
        if typ == "int":
            if not force_domain and self.chance(0.15):
                return _Param(name, "int", None, None, str(self.rng.randint(0, 5)))
            lo = self.pick([0, 0, 1, 1, 2, 3])
            hi = lo + self.pick([1, 2, 3, 4, 8, 64])
            return _Param(name, "int", str(lo), str(hi), str(self.rng.randint(lo, hi)))
        if not force_domain and self.chance(0.15):
            return _Param(name, "real", None, None, self.pick(REAL_POINTS))
        i, j = sorted(self.rng.sample(range(len(REAL_POINTS)), 2))
        default = self.pick(REAL_POINTS[i:j + 1])
        return _Param(name, "real", REAL_POINTS[i], REAL_POINTS[j], default)

    @staticmethod
    def param_text(p: _Param) -> str:
        domain = f" in [{p.lo}, {p.hi}]" if p.lo is not None else ""
        return f"param {p.name}: {p.type}{domain} = {p.default}"

    def make_defs(self) -> None:
        self.def_texts: list[str] = []
        for i in range(self.pick([0, 0, 1, 1, 2])):
            arg = self.chance(0.5)  # a function of one job, or a name
            scope = _Scope(job=False, vars=(("j", "queue"),)) if arg else _Scope()
            want = self.pick(["int", "num", "num", "bool"])
            body = self.boolean(scope, 2) if want == "bool" else self.num(scope, 2, want)
            name = f"f{i + 1}" if arg else f"d{i + 1}"
            self.def_texts.append(f"def {name}{'(j)' if arg else ''} = {body.text}")
            self.defs.append((name, body.type, arg))
        if self.defs:
            self.features.add("defs")

    # -- the policy
    def policy_text(self) -> str:
        # no draw at rate 0: every seed keeps the policy it generated before tuning existed
        if self.cfg.tuned_rate and self.chance(self.cfg.tuned_rate):
            return self.tuned_text()
        return self.plain_text()

    def tuned_text(self) -> str:
        """2-3 random planning candidates (`reserve all`, a backfill other than none), then
        the dynP policy over them, named as the file's policy, last."""
        names = [f"{self.name}_c{i + 1}" for i in range(self.pick([2, 2, 3]))]
        parts = []
        for name in names:
            # with kept_rate, most candidates keep sizes: a kept size then often comes from
            # another candidate (the class kept_rate is for)
            size_kind = self.pick(["none"] * 6 + ["expr", "prelude", "choose", "fixed"]
                                  + ["fixed"] * (10 if self.cfg.kept_rate else 0))
            backfill = "first_fit" if size_kind in ("choose", "fixed") else \
                self.pick(["first_fit", "first_fit", "best", "when"])
            clauses = ["machine m"] if self.own_machine else []
            # (the draws in this order: a seed names the policy it named before kept_rate)
            clauses += [self.order_clause(), "reserve all", self.backfill_clause(backfill)]
            size = self.size_clause(size_kind)
            clauses += [size, *self.invariant_clauses(size_kind != "none")]
            # drawn last, only at a rate above 0: every other seed keeps its policy
            if (self.cfg.kept_rate and size_kind == "fixed" and not size.startswith(
                    "size fixed choose") and self.chance(self.cfg.kept_rate)):
                rule = size.removeprefix("size fixed ")
                if rule.startswith("if "):  # `if` binds loosest: `job.size == if ...` is no
                    rule = f"({rule})"      # expression
                clauses.append(f"invariant job.size == {rule}")
                self.features.add("kept-invariant")
            body = "\n".join(f"  {c}" for c in clauses if c)
            parts.append(f"policy {name} {{\n{body}\n}}")
        clauses = ["candidates " + ", ".join(names),
                   f"metric {self.pick(TUNING_METRICS)}"]
        if self.chance(0.7):
            clauses.append(f"decider {self.pick(DECIDERS)}")
        if self.chance(0.7):
            clauses.append(f"step {self.pick(TUNING_STEPS)}")
        clauses += self.invariant_clauses(True)
        self.features.update({"tuned", f"tuned:{len(names)}"})
        body = "\n".join(f"  {c}" for c in clauses)
        return "\n".join([*parts, f"policy {self.name} {{\n{body}\n}}"])

    def plain_text(self) -> str:
        size_kind = self.pick(["none"] * 8 + ["expr"] * 3 + ["prelude"] * 3 + ["choose"] * 3
                              + ["fixed"] * 2 + ["fixed_choose"] * 1)
        if size_kind in ("choose", "fixed_choose"):
            backfills = ["none", "first_fit", "first_fit"]
        elif size_kind == "fixed":
            backfills = ["none", "first_fit", "first_fit", "when"]
        else:
            backfills = ["none", "first_fit", "first_fit", "best", "best", "when"]
        backfill = self.pick(backfills)
        clauses = ["machine m"] if self.own_machine else []
        clauses.append(self.order_clause())
        clauses.append(self.reserve_clause(backfill == "first_fit"))
        clauses.append(self.backfill_clause(backfill))
        clauses.append(self.size_clause(size_kind))
        clauses += self.invariant_clauses(size_kind != "none")
        self.features.update({f"backfill:{backfill}", f"size:{size_kind}"})
        # drawn last, and only at a rate above 0: every other seed keeps its policy
        reserves = next((c for c in clauses if c.startswith("reserve")), "")
        if (self.cfg.slack_rate and backfill in ("first_fit", "when")
                and reserves not in ("", "reserve 0") and self.chance(self.cfg.slack_rate)):
            clauses.append(f"slack {self.slack_formula().text}")
            self.features.add("slack")
        body = "\n".join(f"  {c}" for c in clauses if c)
        return f"policy {self.name} {{\n{body}\n}}"

    def formula(self, scope: _Scope, want: str, depth: int | None = None) -> _E:
        """A top-level formula: often built around an edge template."""
        if self.chance(self.cfg.edge_rate):
            edged = self.edge(scope, want)
            if edged is not None:
                return edged
        if want == "bool":
            return self.boolean(scope, self.cfg.depth if depth is None else depth)
        return self.num(scope, self.cfg.depth if depth is None else depth, want)

    def order_clause(self) -> str:
        if "rank" in self.cfg.patterns and self.chance(0.6):
            # first come, first served (the default order, or keys that tie): a job's rank
            # by submit time is then its place in the pass, which N slots bound
            return self.pick(["", "order job.submit asc", "order job.id asc",
                              "order job.submit asc, job.procs desc"])
        n = self.pick([0, 1, 1, 1, 2, 3])
        keys = []
        for _ in range(n):
            key = self.formula(_Scope(), self.pick(["num", "num", "int", "bool"]))
            keys.append(key.text + self.pick(["", " asc", " desc"]))
        if keys:
            self.features.add("order")
        return "order " + ", ".join(keys) if keys else ""

    def reserve_clause(self, first_fit: bool) -> str:
        kinds = ["omit", "n", "n", "all", "param"]
        if first_fit:
            kinds += ["per", "or_when", "per_or_when", "when_only"]
        kind = self.pick(kinds)
        self.features.add(f"reserve:{kind}")
        n = self.pick(["0", "1", "1", "2", "3"])
        if kind == "omit":
            return ""
        if kind == "n":
            return f"reserve {n}"
        if kind == "all":
            return "reserve all"
        if kind == "param":
            return f"reserve {self.depth_param()}"
        if kind == "when_only":
            return f"reserve when {self.formula(_Scope(), 'bool', 2).text}"
        text = f"reserve {self.pick(['0', '1', '1', '2'])}" if kind == "or_when" else \
            f"reserve {self.pick(['1', '1', '2'])}"
        if kind in ("per", "per_or_when"):
            text += f" per {self.reserve_key().text}"
        if kind in ("or_when", "per_or_when"):
            text += f" or when {self.formula(_Scope(), 'bool', 2).text}"
        return text

    def slack_formula(self) -> _E:
        """A slack: a fraction of the reserved job's estimate or wait, a constant, or any
        number (negative ones count as 0)."""
        return self.one_of([
            (2, lambda: _E(f"job.estimate / {self.pick([2, 3, 10])}", "real")),
            (1, lambda: _E(f"job.wait div {self.pick([1, 2])}", "int")),
            (1, lambda: _E(str(self.pick([0, 1, 5, 20])), "int", True)),
            (2, lambda: self.formula(_Scope(), "num", 2)),
        ])

    def depth_param(self) -> str:
        for p in self.params:
            if p.type == "int" and p.lo is not None and int(p.lo) >= 0:
                return p.name
        p = _Param(f"p{len(self.params) + 1}", "int", "0", str(self.pick([1, 2, 4])), "1")
        self.params.append(p)
        return p.name

    def reserve_key(self) -> _E:
        return self.one_of([
            (2, lambda: _E("weight_category(job)", "int", True)),
            (1, lambda: _E("job.procs > 4", "bool")),
            (1, lambda: _E(f"job.id % {self.pick([2, 3])}", "int")),
            (2, lambda: self.formula(_Scope(), "int", 2)),
            (1, lambda: self.boolean(_Scope(), 2)),
        ])

    def backfill_clause(self, kind: str) -> str:
        fits = _Scope(fits=True)
        if kind == "best":
            score = self.formula(fits, self.pick(["num", "num", "int", "bool"]))
            return f"backfill best by {score.text}" + self.pick(["", " asc", " desc"])
        if kind == "when":
            if "rank" in self.cfg.patterns and self.chance(0.5):
                # a job far enough back in the queue backfills anywhere: only a job past
                # the proof's slots may delay a reservation
                return (f"backfill when {self.rank()} {self.pick(['>=', '>'])} "
                        f"{self.pick([2, 3, 4, 5, 9])}")
            return f"backfill when {self.formula(fits, 'bool').text}"
        return f"backfill {kind}"

    def size_clause(self, kind: str) -> str:
        if kind == "none":
            return ""
        fixed = "fixed " if kind.startswith("fixed") else ""
        if kind in ("choose", "fixed_choose"):
            low = "job.min_size" if self.chance(0.8) else "max(1, job.min_size div 2)"
            n = self.pick([1, 2, 3, 4, 12])
            return f"size {fixed}choose {n} in [{low}, {self.size_formula().text}]"
        if kind == "prelude":
            return f"size {fixed}{self.pick(PRELUDE_SIZES)}(job)"
        return f"size {fixed}{self.size_formula().text}"

    def size_formula(self) -> _E:
        raw = self.one_of([
            (2, lambda: self.formula(_Scope(), "int", 2)),
            (1, lambda: _E("job.procs", "int", True)),
            (1, lambda: _E("min(job.procs, machine.free.cpus)", "int", True)),
            (1, lambda: _E(f"{self.pick(PRELUDE_SIZES)}(job)", "int", True)),
            (1, lambda: _E("job.max_size", "int", True)),
        ])
        if self.chance(0.6):  # kept in the job's range, as the prelude's sizes are
            return _E(f"max(job.min_size, min(job.max_size, {raw.text}))", "int", True)
        return raw

    def invariant_clauses(self, sized: bool) -> list[str]:
        scope = _Scope(size=True)
        templates: list[tuple[float, Callable[[], _E | None]]] = [
            (3 if sized else 0, lambda: _E("job.size >= job.min_size and job.size <= "
                                           "job.max_size", "bool")),
            (0 if sized else 3, lambda: _E("job.size == job.procs", "bool")),
            (1, lambda: _E("machine.used.cpus <= machine.capacity.cpus", "bool")),
            (1, lambda: _E("running.count >= 1", "bool")),
            (1, lambda: _E("job.wait <= 1h", "bool")),
            (1, lambda: _E("now >= job.submit", "bool")),
            (1 if "count" in self.cfg.patterns else 0,
             lambda: _E(f"queue.count <= {self.pick([3, 4, 8, 50])}", "bool")),
            (1 if "ids" in self.cfg.patterns else 0,
             lambda: _E("count(k in running where k.id == job.id) == 1", "bool")),
            (6 if "rank" in self.cfg.patterns else 0,
             lambda: _E(f"{self.rank()} {self.pick(['<=', '<'])} {self.pick([2, 3, 4, 5, 9])}",
                        "bool")),
            (3, lambda: self.formula(scope, "bool", 2)),
        ]
        out = list(dict.fromkeys(f"invariant {self.one_of(templates).text}"
                                 for _ in range(self.pick([0, 0, 1, 1, 2]))))
        if out:
            self.features.add("invariant")
        return out

    # -- expressions
    def num(self, s: _Scope, depth: int, want: str) -> _E:
        """A number: ``want`` int (an int), or num (an int or a real)."""
        if depth <= 0 or self.chance(0.25):
            return self.num_leaf(s, want)
        d = depth - 1
        any_num = lambda: self.pick(["int", "num"])  # noqa: E731
        options: list[tuple[float, Callable[[], _E | None]]] = [
            (3, lambda: self.arith(s, d, want)),
            (1, lambda: self.int_div(s, d)),
            (1.5 if want != "int" else 0, lambda: self.real_div(s, d)),
            (0.5, lambda: self.unary_minus(s, d, want)),
            (1, lambda: self.minmax(s, d, want)),
            (0.5, lambda: self.call1("abs", self.num(s, d, want))),
            (1, lambda: _E(f"{self.pick(['ceil', 'floor'])}({self.num(s, d, 'num').text})",
                           "int", True)),
            (1 if want != "int" else 0,
             lambda: _E(f"sqrt({self.num(s, d, any_num()).text})", "real", True)),
            (0.3 if want != "int" else 0,
             lambda: _E(f"log({self.num(s, d, any_num()).text})", "real", True)),
            (1, lambda: self.if_num(s, d, want)),
            (0.7, lambda: self.power(s, d, want)),
            (1.5, lambda: self.aggregate(s, d, want)),
            (self.cfg.edge_rate, lambda: self.edge(s, want)),
        ]
        return self.one_of(options)

    def arith(self, s: _Scope, d: int, want: str) -> _E:
        op = self.pick(["+", "-", "*"])
        a = self.num(s, d, want)
        b = self.num(s, d, want if want == "int" else self.pick(["int", "num"]))
        return _E(f"{a.op} {op} {b.op}", promote(a.type, b.type))

    def power(self, s: _Scope, d: int, want: str) -> _E:
        a = self.num(s, d, want)
        self.features.add("power")
        return _E(f"{a.op} ^ {self.pick(['0', '1', '2', '2', '3'])}", a.type)

    def int_div(self, s: _Scope, d: int) -> _E:
        a, b = self.num(s, d, "int"), self.num(s, d, "int")
        return _E(f"{a.op} {self.pick(['div', '%'])} {b.op}", "int")

    def real_div(self, s: _Scope, d: int) -> _E:
        a, b = self.num(s, d, "num"), self.num(s, d, "num")
        return _E(f"{a.op} / {b.op}", "real")

    @staticmethod
    def call1(fn: str, a: _E) -> _E:
        return _E(f"{fn}({a.text})", a.type, True)

    def unary_minus(self, s: _Scope, d: int, want: str) -> _E:
        a = self.num(s, d, want)
        return _E(f"-{a.op}", a.type)

    def minmax(self, s: _Scope, d: int, want: str) -> _E:
        args = [self.num(s, d, want) for _ in range(self.pick([2, 2, 3]))]
        typ = "int" if all(a.type == "int" for a in args) else "real"
        return _E(f"{self.pick(['min', 'max'])}({', '.join(a.text for a in args)})", typ, True)

    def if_num(self, s: _Scope, d: int, want: str) -> _E:
        c, a, b = self.boolean(s, d), self.num(s, d, want), self.num(s, d, want)
        return _E(f"if {c.text} then {a.text} else {b.text}", promote(a.type, b.type))

    def aggregate(self, s: _Scope, d: int, want: str) -> _E | None:
        if len(s.vars) >= 2:
            return None  # nesting deeper costs the verifier much and adds little
        domain = self.pick(["queue", "queue", "running", "resources"])
        kind = "resource" if domain == "resources" else domain
        name = self.var("s" if kind == "resource" else "x")
        inner = s.with_var(name, kind)
        where = f" where {self.boolean(inner, min(d, 1)).text}" if self.chance(0.4) else ""
        fns = ["count", "sum", "min", "max"] + (["avg"] if want != "int" else [])
        fn = self.pick(fns)
        self.features.add(f"aggregate:{domain}")
        if fn == "count":
            return _E(f"count({name} in {domain}{where})", "int", True)
        body = self.num(inner, min(d, 1), want)
        typ = "real" if fn == "avg" else body.type
        default = ""
        if fn in ("min", "max", "avg") and (domain != "resources" or where):
            other = self.num_leaf(s, want)  # evaluated outside the variable's scope
            default = f" else {other.text}"
            typ = typ if fn == "avg" else promote(typ, other.type)
        return _E(f"{fn}({name} in {domain}{where}: {body.text}{default})", typ, True)

    def num_leaf(self, s: _Scope, want: str) -> _E:
        return self.one_of([
            (3, lambda: self.int_literal()),
            (2 if want != "int" else 0, lambda: _E(self.pick(REAL_POINTS), "real", True)),
            (2, lambda: self.param_ref("int")),
            (2 if want != "int" else 0, lambda: self.param_ref("real")),
            (4, lambda: self.job_int(s)),
            (3, lambda: self.state_int(s)),
            (2 if want != "int" else 0, lambda: self.state_real(s)),
            (1, lambda: self.def_ref(s, want)),
        ])

    def int_literal(self) -> _E:
        values = ["0", "1", "1", "2", "3", "4", "5", "10", "60", "100", "1h", "30s"]
        values += [str(c) for c in self.capacities if c is not None]
        values += [b for p in self.params if p.type == "int" for b in (p.lo, p.hi) if b]
        return _E(self.pick(values), "int", True)

    def param_ref(self, typ: str) -> _E | None:
        names = [p.name for p in self.params if p.type == typ]
        if typ == "real" and self.chance(0.2):
            names += ["adaptive_f", "xfactor_limit", "gap_factor"]
        if typ == "int" and self.chance(0.1):
            names.append("bl_window")
        return _E(self.pick(names), typ, True) if names else None

    def job_int(self, s: _Scope) -> _E | None:
        jobs = s.jobs()
        options: list[tuple[float, Callable[[], _E | None]]] = []
        if jobs:
            name, kind = self.pick(jobs)
            attrs_ = JOB_INTS + (RUNNING_INTS if kind == "running" else ())
            options.append((4, lambda: _E(f"{name}.{self.pick(attrs_)}", "int", True)))
            options.append((1, lambda: _E(f"{name}.request.{self.pick(self.resources)}",
                                          "int", True)))
            if s.resource_vars():
                options.append((2, lambda: _E(f"{name}.request[{self.pick(s.resource_vars())}]",
                                              "int", True)))
        if s.size:
            options.append((2, lambda: _E("job.size", "int", True)))
        if s.resource_vars():
            r = self.pick(s.resource_vars())
            options.append((2, lambda: _E(f"{r}.{self.pick(['capacity', 'free', 'used'])}",
                                          "int", True)))
        return self.one_of(options) if options else None

    def state_int(self, s: _Scope) -> _E:
        r = self.pick(self.resources)
        return self.pick([
            _E("now", "int", True), _E("queue.count", "int", True),
            _E("running.count", "int", True),
            _E(f"machine.{self.pick(['capacity', 'free', 'used'])}.{r}", "int", True),
        ])

    def state_real(self, s: _Scope) -> _E:
        r = self.pick(self.resources)
        options = [_E(f"machine.util.{r}", "real", True), _E("utilisation", "real", True)]
        jobs = s.jobs()
        if jobs:
            name = self.pick(jobs)[0]
            options.append(_E(f"{name}.xfactor", "real", True))
            if name == "job" or self.chance(0.5):
                options.append(_E(f"{self.pick(['load_after', 'fullness', 'esrt_xfactor'])}"
                                  f"({name})", "real", True))
        if s.resource_vars():
            options.append(_E(f"{self.pick(s.resource_vars())}.util", "real", True))
        if self.chance(0.1):
            options.append(_E(f"machine.{self.pick(['bpu', 'power'])}.cpus", "real", True))
        return self.pick(options)

    def def_ref(self, s: _Scope, want: str) -> _E | None:
        """A def of the wanted type: int, num (int or real) or bool."""
        ok = {"int": ("int",), "num": ("int", "real"), "bool": ("bool",)}[want]
        fits = [(n, t, arg) for n, t, arg in self.defs if t in ok]
        if not fits:
            return None
        name, typ, arg = self.pick(fits)
        if not arg:
            return _E(name, typ, True) if s.job else None
        jobs = s.jobs()
        return _E(f"{name}({self.pick(jobs)[0]})", typ, True) if jobs else None

    def boolean(self, s: _Scope, depth: int) -> _E:
        if depth <= 0 or self.chance(0.2):
            return self.one_of([
                (4, lambda: self.compare(s, 0)),
                (1, lambda: _E(self.pick(["true", "false"]), "bool", True)),
                (1, lambda: self.param_ref("bool")),
                (1, lambda: self.def_ref(s, "bool")),
            ])
        d = depth - 1
        return self.one_of([
            (4, lambda: self.compare(s, d)),
            (1, lambda: _E(f"{self.boolean(s, d).op} {self.pick(['and', 'or'])} "
                           f"{self.boolean(s, d).op}", "bool")),
            (0.5, lambda: _E(f"not {self.boolean(s, d).op}", "bool")),
            (0.3, lambda: _E(f"if {self.boolean(s, d).text} then {self.boolean(s, d).text} "
                             f"else {self.boolean(s, d).text}", "bool")),
            (self.cfg.edge_rate, lambda: self.edge(s, "bool")),
        ])

    def compare(self, s: _Scope, d: int) -> _E:
        a = self.num(s, d, "num")
        b = self.bound_literal_for(a) or self.num(s, d, "num")
        return _E(f"{a.op} {self.pick(['<', '<=', '>', '>=', '==', '!='])} {b.op}", "bool")

    def bound_literal_for(self, a: _E) -> _E | None:
        """Compare a param with a literal equal to one of its domain bounds (class 1)."""
        for p in self.params:
            if a.text == p.name and p.lo is not None and self.chance(0.7):
                return _E(self.pick([p.lo, p.hi]), p.type, True)
        return None

    # -- edge templates
    def edge(self, s: _Scope, want: str) -> _E | None:
        """An expression built on a base that reaches 0 (or below) exactly at an edge: as a
        divisor, under sqrt or log, or compared."""
        base = self.edge_base(s, self.pick(self.cfg.patterns))
        if base is None:
            return None
        x = self.pick(["1", "job.procs", "10"]) if s.job else "1"
        if want == "bool":
            form = self.pick([f"{x} / {base.op} > 0", f"sqrt({base.text}) >= 0",
                              f"{base.op} >= 0"])
            return _E(form, "bool")
        if want == "int" and base.type == "int":
            return _E(f"{x} {self.pick(['div', '%'])} {base.op}", "int")
        if want == "int":
            return _E(f"ceil({x} / {base.op})", "int", True)
        forms = [_E(f"{x} / {base.op}", "real"), _E(f"sqrt({base.text})", "real", True)]
        if self.chance(0.2):  # rarely: a violation under `log` is reported unknown
            forms.append(_E(f"log({base.text})", "real", True))
        return self.pick(forms)

    def edge_base(self, s: _Scope, pattern: str) -> _E | None:
        self.features.add(f"edge:{pattern}")
        if pattern == "bound":
            ps = [p for p in self.params if p.lo is not None]
            if not ps:
                return None
            p = self.pick(ps)
            return self.pick([_E(f"{p.hi} - {p.name}", p.type), _E(f"{p.name} - {p.lo}", p.type),
                              _E(f"if {p.name} == {self.pick([p.lo, p.hi])} then 0 else 1",
                                 "int")])
        if pattern == "residue":
            r = self.pick(self.resources)
            forms = [f"1 - machine.util.{r} - machine.free.{r} / machine.capacity.{r}",
                     f"machine.free.{r} / machine.capacity.{r} - (1 - machine.util.{r})",
                     "min(s0 in resources: 1 - s0.util - s0.free / s0.capacity)"]
            if s.fits and s.job:
                forms += ["1 - machine.util.cpus - job.procs / machine.capacity.cpus"] * 2
            return _E(self.pick(forms), "real")
        if pattern == "count":
            cap = [str(c) for c in self.capacities[:1] if c is not None]
            c = self.pick(cap + ["4", "5", "9"])
            return self.pick([
                _E(f"{c} - queue.count", "int"),
                _E("machine.capacity.cpus div (queue.count + 1)", "int"),
                _E(f"{self.pick(cap + ['machine.capacity.cpus'])} - running.count", "int"),
                _E(f"count(y0 in queue where y0.procs <= 2) - {c}", "int"),
            ])
        if pattern == "ids" and s.job:
            return self.pick([
                _E("2 - count(y0 in queue where y0.id == job.id)", "int"),
                _E("1 - count(y0 in running where y0.id == job.id)", "int"),
                _E("count(y0 in queue where y0.id < job.id) + 1", "int"),
            ])
        if pattern == "rank" and s.job:
            c = self.pick(["2", "3", "4", "5", "9"])
            return self.pick([_E(f"{c} - {self.rank()}", "int"),
                              _E(f"{self.rank()} - {c}", "int")])
        if pattern == "inputs":
            j = "job" if s.job else None
            forms = ["now", "now + 1"] + ([f"{j}.submit", f"{j}.id", f"{j}.submit + 1"]
                                          if j else [])
            return _E(self.pick(forms), "int")
        return None


    def rank(self) -> str:
        """The visited job's place in the queue: how many waiting jobs come before it (by
        submit time: the order of most policies), or a variant by id or width."""
        self.features.add("rank")
        y = self.var("y")
        return self.pick([f"count({y} in queue where {y}.submit < job.submit)",
                          f"count({y} in queue where {y}.submit <= job.submit and "
                          f"{y}.id != job.id)",
                          f"count({y} in queue where {y}.id < job.id)",
                          f"count({y} in queue where {y}.procs > job.procs)"])


def promote(a: str, b: str) -> str:
    return "int" if a == b == "int" else "real"


# -- workloads --------------------------------------------------------------------------------

SPEEDUPS = ("linear", "amdahl(0.1)", "amdahl(0.5)", "downey(8, 1)", "downey(32, 0.5)")


def random_workload(rng: random.Random, resources: Sequence[str],
                    fixed: Sequence[int | None], kind: str, moldable: bool) -> Workload:
    """Jobs the CSV reader would accept, on ``resources`` (``fixed`` capacities kept):

    * ``tiny``: a machine of a few units, 15 to 40 jobs in bursts, zero run times: the
      instants where a pass sees a full machine, an exact fit, an empty queue;
    * ``long``: 100 cpus (unless fixed) and 130 to 180 jobs, mostly of one cpu, arriving
      within a minute for hours: a queue of 100+ jobs, as many running jobs as cpus;
    * ``odd``: a tiny workload with inputs the verifier assumes away (repeated or negative
      ids, negative submit times): the readers reject them, or skip and count them under
      `--lenient` (``through_reader``).

    ``moldable``: every job gets a range around its request and a speedup model (a job table
    is all moldable or all rigid)."""
    small = kind in ("tiny", "odd")
    caps = tuple(f if f is not None else (rng.choice((1, 2, 3, 4, 8)) if small else
                                          (100 if k == 0 else rng.choice((64, 100, 128))))
                 for k, f in enumerate(fixed))
    n = rng.randint(15, 40) if small else rng.randint(130, 180)
    jobs, t = [], 0
    for i in range(n):
        if small:
            t += rng.choice((0, 0, 0, 1, 2, 5, 30))
            est = rng.choice((1, 2, 3, 5, 10, 60, 100, 1000))
            procs = min(rng.randint(1, caps[0]), rng.randint(1, caps[0]))
            submit = t
        else:
            est = rng.choice((100, 600, 3600, 7200))
            procs = 1 if rng.random() < 0.7 else rng.randint(1, min(caps[0], 16))
            submit = rng.randint(0, 60)
        run = est if rng.random() < 0.5 else rng.randint(0, est)
        request = (procs, *(rng.randint(0, c) if rng.random() < 0.7 else 0 for c in caps[1:]))
        shape = None
        if moldable:
            lo, hi = rng.randint(1, procs), rng.randint(procs, caps[0])
            shape = Moldable(lo, hi, parse_speedup(rng.choice(SPEEDUPS)))
        # labels by position, not drawn: a seed's other draws stay as they were; few values,
        # so that `x.user == job.user` often holds
        jobs.append(Job(i + 1, i, submit, run, est, request, shape, user=i % 3 - 1,
                        group=i % 2, queue=i % 4 - 1, partition=(i // 5) % 2))
    if kind == "odd":
        jobs = _odd_inputs(rng, jobs)
    return Workload(tuple(jobs), tuple(resources), caps, source=f"<{kind}>")


def _odd_inputs(rng: random.Random, jobs: list[Job]) -> list[Job]:
    """Repeated ids, and sometimes negative ids or submit times."""
    n = len(jobs)
    shift = -rng.randint(1, 100) if rng.random() < 0.3 else 0
    sign = -1 if rng.random() < 0.3 else 1
    return [attrs.evolve(j, id=sign * rng.randint(1, max(1, n // 3)), submit=j.submit + shift)
            for j in jobs]


def through_reader(w: Workload) -> Workload:
    """``w`` as `schedc run --workload TABLE --lenient` reads it from a job table: a job that
    breaks an input assumption is skipped and counted (ids renumbered by position)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "w.csv"
        path.write_text(workload_csv(w))
        return load_workload(str(path), w.resources, lenient=True)


def has_odd_inputs(w: Workload) -> bool:
    ids = [j.id for j in w.jobs]
    return len(set(ids)) != len(ids) or min(ids, default=0) < 0 or \
        min((j.submit for j in w.jobs), default=0) < 0


def normalised(w: Workload) -> Workload:
    """``w`` with distinct ids 1..n and submit times from 0 (what the verifier assumes)."""
    first = min((j.submit for j in w.jobs), default=0)
    shift = -first if first < 0 else 0
    jobs = tuple(attrs.evolve(j, id=j.index + 1, submit=j.submit + shift) for j in w.jobs)
    return attrs.evolve(w, jobs=jobs)


_TRACE: list[Workload] = []


def trace_prefix(resources: Sequence[str], fixed: Sequence[int | None], n: int,
                 moldable: bool = False) -> Workload:
    """The first ``n`` jobs of the bundled KTH-SP2 trace that fit the machine (as the reader
    skips the others), on ``resources`` (requests 0 beyond cpus); moldable as papers/000
    makes a trace (range factor 2, Downey sigma 0.5)."""
    if not _TRACE:
        _TRACE.append(load_workload(str(bundled_trace())))
    base = _TRACE[0]
    cap0 = fixed[0] if fixed[0] is not None else base.capacities[0]
    zeros = (0,) * (len(resources) - 1)
    jobs: list[Job] = []
    for j in base.jobs:
        if len(jobs) == n:
            break
        if j.procs <= cap0:
            jobs.append(attrs.evolve(j, index=len(jobs), request=(j.procs, *zeros)))
    caps = (cap0, *(f if f is not None else 100 for f in fixed[1:]))
    w = Workload(tuple(jobs), tuple(resources), caps, source=f"<KTH-SP2 first {len(jobs)}>")
    return make_moldable(w, MoldableSpec(2, 0.5)) if moldable else w


def workload_csv(w: Workload) -> str:
    """``w`` as a job table that `schedc run --workload` reads back to the same jobs."""
    moldable = bool(w.jobs) and w.jobs[0].moldable is not None
    caps = " ".join(f"{r}={c}" for r, c in zip(w.resources, w.capacities, strict=True))
    cols = ["id", "submit", "run_time", "estimate", *w.resources]
    cols += ["min_size", "max_size", "speedup"] if moldable else []
    cols += LABELS
    lines = [f"# capacity {caps}", ",".join(cols)]
    for j in w.jobs:
        row = [str(v) for v in (j.id, j.submit, j.run_time, j.estimate, *j.request)]
        if moldable:
            m = j.moldable
            row += [str(m.min_procs), str(m.max_procs), f'"{format_speedup(m.speedup)}"']
        row += [str(getattr(j, a)) for a in LABELS]
        lines.append(",".join(row))
    return "\n".join(lines) + "\n"


# -- running the simulator with a deterministic budget ----------------------------------------


class OutOfBudget(BaseException):
    """A simulation made more policy calls than its budget. A BaseException: the monitor
    turns every Exception a policy callable raises into a violation."""


class _Probe:
    """Wraps a runtime policy's callables: counts calls against a budget (deterministic),
    with a far-away wall-clock guard, and keeps the state of the last call (at a failure:
    the state the failing formula saw)."""

    def __init__(self, calls: int, seconds: float) -> None:
        self.left = calls
        self.deadline = time.monotonic() + seconds
        self.state: PassState | None = None

    def wrap(self, fn: Callable | None) -> Callable | None:
        if fn is None:
            return None

        def probed(job: Job, state: PassState) -> Any:
            self.left -= 1
            if self.left < 0 or (self.left & 4095 == 0 and time.monotonic() > self.deadline):
                raise OutOfBudget
            self.state = state
            return fn(job, state)

        return probed

    def progress(self, done: int, total: int) -> None:
        if time.monotonic() > self.deadline:
            raise OutOfBudget

    def policy(self, rt: RuntimePolicy) -> RuntimePolicy:
        w = self.wrap
        return attrs.evolve(
            rt, order_key=w(rt.order_key), score=w(rt.score), size=w(rt.size),
            size_low=w(rt.size_low), backfill_when=w(rt.backfill_when),
            reserve_key=w(rt.reserve_key), reserve_when=w(rt.reserve_when), slack=w(rt.slack),
            invariants=tuple(attrs.evolve(i, check=w(i.check)) for i in rt.invariants))


@frozen
class Outcome:
    status: str  # ok | stop | budget | error | rejected (a state or params the reader refused)
    message: str = ""
    queued: int | None = None  # what the last policy call saw (a failing formula's state)
    running: int | None = None


def run_simulation(rt: RuntimePolicy, workload: Workload, initial: InitialState | None,
                   calls: int, seconds: float) -> Outcome:
    probe = _Probe(calls, seconds)
    try:
        simulate(probe.policy(rt), workload, probe.progress, initial=initial)
    except MonitorViolation as exc:
        seen = probe.state
        return Outcome("stop", str(exc), len(seen.queue) if seen else None,
                       len(seen.running) if seen else None)
    except OutOfBudget:
        return Outcome("budget")
    except Exception as exc:  # a simulator bug (or a workload this module got wrong)
        return Outcome("error", f"{type(exc).__name__}: {exc}")
    return Outcome("ok")


def stop_property(message: str, invariants: Sequence[str]) -> str:
    """The property a monitor stop is about (as `verify` names it); "crash" for a failure
    that is none of them (a Python error in generated code, say)."""
    if " failed for job " in message:
        tail = message.split(" failed for job ", 1)[1]
        if ": SizeError: " in tail:  # a size outside its range (numbers.SizeError)
            return "size-bounds"
        if ": EvaluationError: " not in tail:
            return "crash"
        error = tail.split(": EvaluationError: ", 1)[1]
        if error.startswith("size ") and ("is outside" in error or "is not a whole" in error):
            return "size-bounds"
        return "well-defined"
    if "overcommitted" in message:
        return "capacity"
    if "reservation of job" in message and "delayed" in message:
        return "reservation-safety"
    if "no progress" in message or "simulation ended with" in message:
        return "progress"
    for text in invariants:
        if f"invariant `{text}`" in message and " violated" in message:
            return f"invariant `{text}`"
    if "is not an integer in" in message:
        return "size-bounds"
    return "crash"


def signature(message: str, prop: str) -> str:
    """What must stay the same while a failing state is shrunk: the property, and for a
    formula that failed, which formula and how (numbers left out)."""
    if prop != "well-defined":
        return prop
    tail = message.split(": ", 2)[-1]  # after "t=...: policy NAME: "
    return re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "#", tail)


# -- the harness ------------------------------------------------------------------------------


@frozen
class HarnessConfig:
    bounds: tuple[int, int] = (3, 3)  # N queued, R running job slots of the proofs
    rlimit: int = 4_000_000  # Z3 work per property (deterministic)
    timeout_ms: int = 60_000  # a far-away guard; the rlimit decides
    sim_calls: int = 400_000  # policy calls per simulation (deterministic budget)
    sim_seconds: float = 30.0  # a far-away guard
    trace_jobs: int = 600  # the KTH-SP2 prefix
    odd_inputs: float = 0.3  # chance of a workload with repeated ids or negative times
    triage: bool = True  # extract, shrink and classify each disagreement's failing state
    shrink_runs: int = 60  # replays a shrink may make


@frozen
class VerdictRecord:
    property: str
    status: str  # proved | violated | unknown
    seconds: float
    reason: str | None = None
    caveats: tuple[str, ...] = ()  # a proof's limits, as the report states them


@frozen
class Evidence:
    source: str  # what was simulated: a workload, the trace, a counterexample
    params: dict[str, Any]  # the param values of the run
    message: str  # the monitor's (or the error's); "" when the run ended normally
    workload_csv: str | None = None  # a job table `schedc run --workload` reads
    state: dict[str, Any] | None = None  # a state `schedc run --state` replays
    queued: int | None = None  # jobs waiting and running where it failed (state or call)
    running: int | None = None


# The category of a stop with more jobs than a proof's slots, where the verdict states that
# it covers no more (its caveat says which bound to raise): reported, not a disagreement
STATED_BOUNDS = "beyond-stated-bounds"


@frozen
class Disagreement:
    kind: str  # proved-but-stopped | counterexample | crash
    # constant-vs-bound | real-arithmetic | bounds | input-assumption | counterexample |
    # counterexample-masked (the replay stops first for another property, also not proved) |
    # outside-pass | crash | other
    category: str
    property: str
    evidence: Evidence
    note: str = ""  # why the triage chose the category


@frozen
class Stop:
    """A monitor stop seen in a run, and the verifier's verdict on its property."""

    source: str
    property: str
    verdict: str  # proved | violated | unknown | "" (no verdict: a crash)
    message: str


@frozen
class PolicyResult:
    seed: int | None
    name: str
    text: str
    features: tuple[str, ...]
    verdicts: tuple[VerdictRecord, ...]
    disagreements: tuple[Disagreement, ...]
    simulations: int  # runs made (workloads, trace, counterexample replays)
    out_of_budget: int  # runs stopped by their budget (no conclusion)
    agreed_stops: int  # monitor stops for a property the verifier did not prove
    seconds: float
    compile_error: str | None = None
    stops: tuple[Stop, ...] = ()

    @property
    def unknown(self) -> int:
        return sum(v.status == "unknown" for v in self.verdicts)

    def status(self, prop: str) -> str | None:
        """The verdict on ``prop`` (None: not verified)."""
        return next((v.status for v in self.verdicts if v.property == prop), None)


def fuzz_seed(seed: int, gen: GenConfig | None = None,
              config: HarnessConfig | None = None) -> PolicyResult:
    """Generate the policy of ``seed`` and fuzz it."""
    g = generate(seed, gen)
    return fuzz_policy(g.text, seed, config, g.features, g.name)


def fuzz_policy(text: str, seed: int | None = None, config: HarnessConfig | None = None,
                features: tuple[str, ...] = (), name: str | None = None) -> PolicyResult:
    """Verify the policy ``name`` of ``text`` (or its only one), simulate it, replay its
    counterexamples, and report every disagreement between the verdicts and the runtime
    monitor."""
    started = time.perf_counter()
    cfg = config or HarnessConfig()
    try:
        policy = compile_source(text, "<fuzz>", name)
    except DiagnosticError as exc:
        return PolicyResult(seed, "?", text, features, (), (), 0, 0, 0,
                            time.perf_counter() - started,
                            compile_error=render_diagnostics(exc.diagnostics))
    h = _Harness(policy, cfg, seed or 0)
    h.run()
    return PolicyResult(seed, policy.name, text, features, h.verdicts,
                        tuple(h.found.values()), h.simulations, h.budget, h.agreed,
                        time.perf_counter() - started, stops=tuple(h.stops))


@frozen
class _Case:
    """One run: a workload (or a state) and param values."""

    source: str
    params: dict[str, Any]
    workload: Workload | None = None
    state: dict[str, Any] | None = None


class _Harness:
    def __init__(self, policy: ir.Policy, cfg: HarnessConfig, seed: int) -> None:
        self.policy, self.cfg = policy, cfg
        self.rng = random.Random(seed * 7919 + 17)  # the workloads' and params' draws
        self.resources = tuple(r.name for r in policy.machine.resources)
        self.fixed = tuple(r.capacity for r in policy.machine.resources)
        # a dynP policy's passes are its candidates', each checking its own invariants too
        self.invariants = tuple(dict.fromkeys(
            i.text for c in candidate_policies(policy) for i in c.invariants))
        self.verdicts: tuple[VerdictRecord, ...] = ()
        self.status: dict[str, str] = {}
        self.found: dict[tuple[str, str], Disagreement] = {}
        self.simulations = self.budget = self.agreed = 0
        self.stops: list[Stop] = []
        self._runtime: dict[tuple, RuntimePolicy | str] = {}

    # -- the steps
    def run(self) -> None:
        verdicts = self.verify()
        for case in self.cases():
            self.judge(case, self.simulate(case))
        for v in verdicts:
            if v.status == "violated" and v.counterexample is not None:
                state = {k: x for k, x in v.counterexample.items() if k != "pass"}
                if v.candidate is not None:  # a dynP verdict: that candidate's pass replays
                    state["active"] = v.candidate
                case = _Case(f"counterexample of {v.property}", dict(state["params"]),
                             state=state)
                self.judge(case, self.simulate(case), expected=v.property)

    def verify(self) -> list[Verdict]:
        n, r = self.cfg.bounds
        try:
            limits = Limits(rlimit=self.cfg.rlimit, timeout_ms=self.cfg.timeout_ms)
            # a dynP policy's counterexamples replay with their candidate's pass
            verdicts = verify_policy(self.policy, Bounds(n, r), limits,
                                     replay_for=replayer) if self.policy.tuning else \
                verify_policy(self.policy, Bounds(n, r), limits, replay=replayer(self.policy))
        except Exception as exc:  # a verifier bug
            ev = Evidence("verify_policy", {}, f"{type(exc).__name__}: {exc}")
            self.found[("crash", "verify")] = Disagreement("crash", "crash", "verify", ev)
            return []
        self.verdicts = tuple(VerdictRecord(v.property, v.status, round(v.seconds, 3),
                                            v.reason, v.caveats) for v in verdicts)
        self.status = {v.property: v.status for v in verdicts}
        return verdicts

    def cases(self) -> list[_Case]:
        """Small random workloads and the trace prefix, each with params at their bounds."""
        rng, sized = self.rng, self.policy.size is not None
        settings = param_settings(self.policy, rng)
        w = {
            "tiny": random_workload(rng, self.resources, self.fixed, "tiny", False),
            "tiny moldable" if sized else "tiny 2": random_workload(
                rng, self.resources, self.fixed, "tiny", sized and rng.random() < 0.7),
            "long queue": random_workload(rng, self.resources, self.fixed, "long",
                                          sized and rng.random() < 0.5),
            "KTH-SP2": trace_prefix(self.resources, self.fixed, self.cfg.trace_jobs,
                                    sized and rng.random() < 0.5),
        }
        if rng.random() < self.cfg.odd_inputs:  # what `--lenient` leaves of them
            w["odd inputs"] = through_reader(
                random_workload(rng, self.resources, self.fixed, "odd", False))
        plan = {"tiny": ("lo", "hi"), "tiny moldable": ("mixed",), "tiny 2": ("mixed",),
                "long queue": ("hi", "lo"), "KTH-SP2": ("lo", "hi"),
                "odd inputs": ("default",)}
        out, seen = [], set()
        for label, workload in w.items():
            for which in plan[label]:
                params = settings[which]
                key = (label, tuple(sorted(params.items())))
                if key not in seen:  # params at lo and hi may be the same run
                    seen.add(key)
                    src = f"{label} workload ({workload.source}), params at {which}"
                    out.append(_Case(src, params, workload=workload))
        return out

    def runtime(self, params: Mapping[str, str]) -> RuntimePolicy | str:
        """The runtime policy for param values as text (or the binder's complaint)."""
        key = tuple(sorted(params.items()))
        if key not in self._runtime:
            try:
                self._runtime[key] = to_runtime(self.policy, params)
            except DiagnosticError as exc:
                self._runtime[key] = "; ".join(d.message for d in exc.diagnostics)
        return self._runtime[key]

    def prepare(self, case: _Case) -> tuple[RuntimePolicy, Workload, InitialState | None] \
            | Outcome:
        """What `schedc run` would simulate: a workload with --param values, or a state
        whose params are defaults that the case's override (`run --state`)."""
        given = {k: param_text(v) for k, v in case.params.items()}
        if case.state is None:
            rt = self.runtime(given)
            return Outcome("error", f"params rejected: {rt}") if isinstance(rt, str) \
                else (rt, case.workload, None)
        try:
            state = state_from_data(case.state, self.resources, "<state>")
        except WorkloadError as exc:
            return Outcome("rejected", f"state rejected: {exc.message}")
        rt = self.runtime(merged_params(state, given))
        if isinstance(rt, str):
            return Outcome("rejected", f"params rejected: {rt}")
        if state.sizes and not rt.active(state.active).size_fixed:
            return Outcome("rejected", "state rejected: kept sizes for a policy without "
                           "`size fixed`")
        return rt, state.workload, state

    def simulate(self, case: _Case) -> Outcome:
        self.simulations += 1
        return self.execute(case)

    def execute(self, case: _Case) -> Outcome:
        prepared = self.prepare(case)
        if isinstance(prepared, Outcome):
            return prepared
        out = run_simulation(*prepared, self.cfg.sim_calls, self.cfg.sim_seconds)
        self.budget += out.status == "budget"
        return out

    # -- judging
    def judge(self, case: _Case, out: Outcome, expected: str | None = None) -> None:
        """Record the disagreement ``out`` shows, if any. ``expected``: the violated
        property whose counterexample ``case`` is."""
        prop = stop_property(out.message, self.invariants) if out.status == "stop" else None
        if prop is not None:
            self.stops.append(Stop(case.source, prop, self.status.get(prop, ""),
                                   out.message[:300]))
        if out.status == "error" or prop == "crash":
            self.record("crash", "crash", case, out)
        elif prop is not None and self.status.get(prop) == "proved":
            self.record("proved-but-stopped", prop, case, out)
        elif prop is not None and prop != expected:
            self.agreed += 1
        if expected is None:
            return
        if prop == expected:
            self.agreed += 1
        elif out.status != "budget":
            self.record("counterexample", expected, case, out)

    def record(self, kind: str, prop: str, case: _Case, out: Outcome) -> None:
        key = (kind, prop)
        if key in self.found:
            return  # one witness per disagreement and policy
        ev = Evidence(case.source, dict(case.params), out.message,
                      workload_csv(case.workload) if case.workload is not None else None,
                      case.state, out.queued, out.running)
        d = Disagreement(kind, "crash" if kind == "crash" else
                         "counterexample" if kind == "counterexample" else "other", prop, ev)
        if kind == "proved-but-stopped" and self.cfg.triage:
            d = _Triage(self, case, out, prop).classify(d)
            stated = [c for v in self.verdicts if v.property == prop for c in v.caveats
                      if "raise --queued" in c or "raise --running" in c]
            if d.category == "bounds" and stated:
                # the proof said it covers at most N queued or R running jobs, and the run
                # failed with more: what the verdict promised, not a disagreement
                d = attrs.evolve(d, category=STATED_BOUNDS)
        elif kind == "counterexample":
            other = stop_property(out.message, self.invariants) if out.status == "stop" \
                else None
            masked = other is not None and self.status.get(other) in ("violated", "unknown")
            bound = None if out.status == "stop" else _literal_bound(self.policy, case.params)
            category = "counterexample-masked" if masked else \
                "constant-vs-bound" if bound else d.category
            note = _why_no_replay(out, self.invariants) + (f"; {bound}" if bound else "")
            d = attrs.evolve(d, category=category, note=note)
        self.found[key] = d


def param_settings(policy: ir.Policy, rng: random.Random) -> dict[str, dict[str, Any]]:
    """Param values: every param at its default, at the low end of its domain, at the high
    end (both bounds exactly as declared), and a random mix of those."""
    low, high, default, mixed = {}, {}, {}, {}
    for p in policy.params:
        if p.type == "bool":
            lo, hi = False, True
        elif p.lo is not None:
            lo, hi = p.lo, p.hi
        else:  # no domain: the verifier takes every value; try 0 and one above the default
            lo, hi = (0, p.default + 1) if p.type == "int" else (0.0, p.default + 1.0)
        if p.type == "real":
            lo, hi = float(lo), float(hi)
        dflt = float(p.default) if p.type == "real" else p.default
        low[p.name], high[p.name], default[p.name] = lo, hi, dflt
        mixed[p.name] = rng.choice((lo, hi, dflt))
    return {"lo": low, "hi": high, "default": default, "mixed": mixed}


def _literal_bound(policy: ir.Policy, params: Mapping[str, Any]) -> str | None:
    """A real param of the counterexample at a domain bound that the policy also writes
    as a literal: the verifier may read the two as different numbers (class 1)."""
    for p in policy.params:
        v = params.get(p.name)
        if p.type == "real" and p.lo is not None and v in (float(p.lo), float(p.hi)) and \
                any(isinstance(n, ir.Const) and n.value == v
                    for e in _exprs(policy) for n in ir.walk(e)):
            return f"{p.name} = {v!r} is a domain bound and a literal of the policy"
    return None


def _exprs(policy: ir.Policy) -> list[ir.Expr]:
    found = [k.expr for k in policy.order] + [i.expr for i in policy.invariants]
    return found + [e for e in (policy.size, policy.size_low, policy.backfill.score,
                                policy.backfill.condition, policy.reserve_per,
                                policy.reserve_when, policy.slack) if e is not None]


def _why_no_replay(out: Outcome, invariants: Sequence[str]) -> str:
    if out.status == "stop":
        return f"the replay stopped for {stop_property(out.message, invariants)} instead"
    if out.status == "rejected":
        return out.message
    if out.status == "error":
        return f"the replay crashed: {out.message}"
    return "the replay ran to the end without a monitor stop"


# -- triage -----------------------------------------------------------------------------------


MAX_RECHECK = 6  # a bounds disagreement is re-verified with up to this many job slots


class _Triage:
    """Why a proved property failed in a simulation: the state at the start of the failing
    pass, shrunk, then the first test that explains it:

    * real-arithmetic: the message shows a rounding residue (|x| < 1e-9) or an overflow;
    * constant-vs-bound: a real param at a domain bound fails, the next float inside does
      not (a literal and a bound read as two values);
    * input-assumption: the workload has repeated or negative ids or negative times, and
      with distinct ids 1..n and times from 0 it does not fail;
    * bounds: the failing state holds more queued or running jobs than the proof's slots
      (if it is small, the property is verified again with as many slots: proved there is
      "other", the verifier missing a state within its bounds);
    * outside-pass: the formula fails where the simulator evaluates it outside a pass (an
      order key at a job's submission), in a state the verifier's pass never sees;
    * other: none of these (a verifier or simulator bug to look at)."""

    def __init__(self, h: _Harness, case: _Case, out: Outcome, prop: str) -> None:
        self.h, self.case, self.out, self.prop = h, case, out, prop
        self.sig = signature(out.message, prop)
        self.where = ""  # "pass" or "submission": where the failing state was taken

    def same(self, out: Outcome) -> bool:
        return out.status == "stop" and signature(
            out.message, stop_property(out.message, self.h.invariants)) == self.sig

    def classify(self, d: Disagreement) -> Disagreement:
        case = self.case
        state = self.failing_state()
        ev = d.evidence
        if state is None:
            d = attrs.evolve(d, note="no state at a pass's start replays it")
        else:
            case = _Case(f"the failing pass's state ({case.source})", dict(case.params),
                         state=state)
            ev = attrs.evolve(ev, state=state, queued=len(state["queue"]),
                              running=len(state["running"]))
        d = attrs.evolve(d, evidence=ev)
        for test in (self.residue, lambda: self.at_bound(case), lambda: self.odd(case),
                     lambda: self.beyond_bounds(ev), self.outside_pass):
            found = test()
            if found is not None:
                return attrs.evolve(d, category=found[0], note=found[1])
        return d

    def residue(self) -> tuple[str, str] | None:
        for m in re.finditer(r"-?\d+\.\d+(?:e[-+]?\d+)?|-?\d+e[-+]?\d+", self.out.message):
            x = float(m.group())
            if 0 < abs(x) < 1e-9:
                return "real-arithmetic", f"a rounding residue {x!r}: exactly 0 in rationals"
        if re.search(r"\b(inf|nan)\b", self.out.message) or "too large" in self.out.message:
            return "real-arithmetic", "a float overflow"
        return None

    def at_bound(self, case: _Case) -> tuple[str, str] | None:
        for p in self.h.policy.params:
            if p.type != "real" or p.lo is None or p.lo == p.hi:
                continue
            lo, hi = float(p.lo), float(p.hi)
            v = case.params.get(p.name)
            if v not in (lo, hi):
                continue
            inward = math.nextafter(v, hi if v == lo else lo)
            nudged = attrs.evolve(case, params={**case.params, p.name: inward})
            if not self.same(self.h.execute(nudged)):
                return "constant-vs-bound", (f"fails with {p.name} = {v!r} (a bound of its "
                                             f"domain), not with {inward!r}")
        return None

    def odd(self, case: _Case) -> tuple[str, str] | None:
        w = case.workload
        if w is None or not has_odd_inputs(w):
            return None
        if not self.same(self.h.execute(attrs.evolve(case, workload=normalised(w)))):
            return "input-assumption", ("fails with repeated or negative ids or negative "
                                        "times, not with ids 1..n and times from 0")
        return None

    def outside_pass(self) -> tuple[str, str] | None:
        if self.where == "submission":
            return "outside-pass", ("fails where the simulator evaluates the formula at a "
                                    "job's submission, before it joins the queue: a state "
                                    "no pass sees")
        return None

    def beyond_bounds(self, ev: Evidence) -> tuple[str, str] | None:
        """More jobs than the proof's slots. A shrunk state small enough is re-verified
        with as many slots: violated there confirms the bounds; proved there means the
        verifier misses a state within its bounds (other)."""
        n, r = self.h.cfg.bounds
        q, run = ev.queued or 0, ev.running or 0
        if q <= n and run <= r:
            return None
        how = "in a shrunk state" if ev.state is not None else "at the failing call"
        note = f"fails with {q} queued and {run} running jobs {how}; the proof had N={n}, R={r}"
        stated = [c for v in self.h.verdicts if v.property == self.prop for c in v.caveats]
        note += f" (the report says: {'; '.join(stated)})" if stated else ""
        if ev.state is None or max(q, run) > MAX_RECHECK:
            return "bounds", note
        status = self.recheck(max(q, n), max(run, r))
        if status == "proved":
            return "other", note + f"; proved again with N={max(q, n)}, R={max(run, r)}: " \
                "the verifier misses this state"
        return "bounds", note + f"; with N={max(q, n)}, R={max(run, r)} it is {status}"

    def recheck(self, n: int, r: int) -> str:
        only = "invariant" if self.prop.startswith("invariant") else self.prop
        try:
            verdicts = verify_policy(self.h.policy, Bounds(n, r),
                                     Limits(rlimit=self.h.cfg.rlimit,
                                            timeout_ms=self.h.cfg.timeout_ms), only=[only],
                                     replay=replayer(self.h.policy))
        except Exception as exc:  # a verifier crash: the report still stands
            return f"not rechecked ({type(exc).__name__})"
        return next((v.status for v in verdicts if v.property == self.prop), "unknown")

    def failing_state(self) -> dict[str, Any] | None:
        """The state at the start of the failing pass, if it fails alike when replayed,
        shrunk (jobs removed while it still does)."""
        prepared = self.h.prepare(self.case)
        if isinstance(prepared, Outcome):
            return None
        snap = record_failing_pass(*prepared, self.h.cfg.sim_calls, self.h.cfg.sim_seconds)
        if snap is None:
            return None
        *snap, self.where = snap
        data = state_data(*snap, self.h.resources, self.case.params, prepared[0].size_fixed)
        if not self.same(self.h.execute(_Case("", {}, state=data))):
            return None
        return self.shrink(data)

    def shrink(self, data: dict[str, Any]) -> dict[str, Any]:
        items = [("running", j) for j in data["running"]] + [("queue", j) for j in data["queue"]]

        def build(kept: list[tuple[str, dict]]) -> dict[str, Any]:
            return {**data, "running": [j for k, j in kept if k == "running"],
                    "queue": [j for k, j in kept if k == "queue"]}

        runs = self.h.cfg.shrink_runs
        chunk = max(1, len(items) // 2)
        while runs > 0:
            i = 0
            while i < len(items) and runs > 0:
                trial = items[:i] + items[i + chunk:]
                runs -= 1
                if trial and self.same(self.h.execute(_Case("", {}, state=build(trial)))):
                    items = trial
                else:
                    i += chunk
            if chunk == 1:
                break
            chunk = max(1, chunk // 2)
        return build(items)


def record_failing_pass(rt: RuntimePolicy, workload: Workload, initial: InitialState | None,
                        calls: int, seconds: float) -> tuple | None:
    """(now, queue, running, kept sizes, capacities, "pass" or "submission"): the state at
    the start of the pass, or at the submission, where the monitor stops; None if it does
    not. The simulator has no hook for a pass's start state, so this test
    tool subclasses its private ``_Simulation`` for one run (without the optimisations, which
    never change a schedule)."""
    snap: list[tuple] = []
    where: list[str] = []
    base = simulator._Simulation

    class Recording(base):  # type: ignore[misc, valid-type]
        def _full_pass(self, now: int) -> None:
            m = self.machine
            snap[:] = [(now, tuple(m.queue), tuple(m.running), dict(m.fixed_sizes), m.cap)]
            where[:] = ["pass"]
            super()._full_pass(now)

        def _submit(self, job: Job, old: int) -> bool:
            # a dynamic order key is also evaluated here, before the job joins the queue
            init = self.initial
            now = init.now if init is not None and job.submit <= init.now else job.submit
            m = self.machine
            snap[:] = [(now, (*m.queue, job), tuple(m.running), dict(m.fixed_sizes), m.cap)]
            where[:] = ["submission"]
            return super()._submit(job, old)

    probe = _Probe(calls, seconds)
    simulator._Simulation = Recording
    try:
        simulate(probe.policy(rt), workload, probe.progress, initial=initial,
                 incremental=False, fast=False)
    except MonitorViolation:
        return (*snap[0], where[0]) if snap else None
    except (OutOfBudget, Exception):
        return None
    finally:
        simulator._Simulation = base
    return None


def state_data(now: int, queue: Sequence[Job], running: Sequence[RunningJob],
               sizes: Mapping[int, tuple[int, ...]], cap: Sequence[int],
               resources: Sequence[str], params: Mapping[str, Any],
               size_fixed: bool) -> dict[str, Any]:
    """A state file (runtime/workloads/state_file.py) of a simulator's state between passes."""
    def request(v: Sequence[int]) -> dict[str, int]:
        return dict(zip(resources, v, strict=True))

    run = [{"id": rj.job.id, "submit": rj.job.submit, "start": rj.start,
            "estimate": rj.job.estimate, "run_time": rj.job.run_time,
            "request": request(rj.alloc)}
           for rj in sorted(running, key=lambda rj: rj.job.index)]
    waiting = []
    for j in sorted(queue, key=lambda j: j.index):  # file order: ties break as they did
        item: dict[str, Any] = {"id": j.id, "submit": j.submit, "estimate": j.estimate,
                                "run_time": j.run_time, "request": request(j.request)}
        if j.moldable is not None:
            item |= {"min_size": j.moldable.min_procs, "max_size": j.moldable.max_procs,
                     "speedup": format_speedup(j.moldable.speedup)}
        if size_fixed and j.index in sizes:
            item["size"] = sizes[j.index][0]
        waiting.append(item)
    return {"now": now, "capacity": request(cap), "params": dict(params), "running": run,
            "queue": waiting}


# -- reports ----------------------------------------------------------------------------------


def evidence_name(d: Disagreement) -> str | None:
    """The file the evidence is written to (next to ``policy.pol``)."""
    if d.evidence.state is not None:
        return "state.json"
    return "workload.csv" if d.evidence.workload_csv is not None else None


def commands(d: Disagreement, config: HarnessConfig | None = None,
             policy: str = "policy.pol", name: str | None = None) -> list[str]:
    """The `schedc` commands that show the disagreement (run from the evidence folder).
    ``name``: the policy to pick when the file defines several (a dynP policy's)."""
    cfg = config or HarnessConfig()
    if name is not None:
        policy += f" --policy {name}"
    n, r = cfg.bounds
    verify = f"schedc verify {policy} --queued {n} --running {r} --rlimit {cfg.rlimit}"
    ev = d.evidence
    if d.kind == "counterexample":
        verify += " --counterexamples cex"
    if ev.state is not None:
        run = f"schedc run {policy} --state state.json"
    elif ev.workload_csv is not None:
        run = f"schedc run {policy} --workload workload.csv" + "".join(
            f" --param {k}={param_text(v)}" for k, v in sorted(ev.params.items()))
    else:
        return [verify]
    return [verify, run]


def describe(result: PolicyResult, d: Disagreement, config: HarnessConfig | None = None,
             with_policy: bool = True) -> str:
    """One disagreement, for a person: what disagrees, the evidence, how to see it."""
    ev = d.evidence
    verdict = result.status(d.property) or "-"
    lines = [f"[{d.category}] {d.kind}: {d.property} (verdict: {verdict})",
             f"  seed: {result.seed}  policy: {result.name}",
             f"  run: {ev.source}", f"  params: {ev.params}",
             f"  monitor: {ev.message or '(no stop)'}"]
    if d.note:
        lines.append(f"  triage: {d.note}")
    if ev.queued is not None:
        lines.append(f"  at the failure: {ev.queued} queued, {ev.running} running")
    several = "tuned" in result.features  # the file defines the candidates too
    lines += [f"  $ {c}" for c in commands(d, config, name=result.name if several else None)]
    if with_policy:
        lines += ["  policy.pol:"] + [f"    {x}" for x in result.text.rstrip().splitlines()]
    if ev.state is not None:
        text = json.dumps(ev.state)
        lines.append("  state.json: " + (text if len(text) <= 2000 else text[:2000] + " ..."))
    elif ev.workload_csv is not None:
        head = ev.workload_csv.splitlines()
        lines += ["  workload.csv (head):"] + [f"    {x}" for x in head[:8]]
        if len(head) > 8:
            lines.append(f"    ... {len(head) - 8} more lines")
    return "\n".join(lines)


def report(result: PolicyResult, config: HarnessConfig | None = None) -> str:
    """Every disagreement of ``result`` (the policy printed once)."""
    if result.compile_error:
        return f"seed {result.seed}: the generator made an invalid policy\n{result.text}\n" \
            f"{result.compile_error}"
    parts = [f"seed {result.seed}: {len(result.disagreements)} disagreement(s)",
             result.text.rstrip()]
    parts += [describe(result, d, config, with_policy=False) for d in result.disagreements]
    return "\n\n".join(parts)


def write_evidence(folder: Path, result: PolicyResult, d: Disagreement,
                   config: HarnessConfig | None = None) -> None:
    """``folder``/policy.pol, the evidence (state.json or workload.csv) and README.txt."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "policy.pol").write_text(result.text)
    name = evidence_name(d)
    if name == "state.json":
        (folder / name).write_text(json.dumps(d.evidence.state, indent=2) + "\n")
    elif name == "workload.csv":
        (folder / name).write_text(d.evidence.workload_csv or "")
    (folder / "README.txt").write_text(describe(result, d, config, with_policy=False) + "\n")


def tally(results: Sequence[PolicyResult]) -> dict[str, Any]:
    """Campaign figures: verdicts by property and status, disagreements by category."""
    verdicts: dict[str, dict[str, int]] = {}
    categories: dict[str, int] = {}
    for r in results:
        for v in r.verdicts:
            name = "invariant" if v.property.startswith("invariant") else v.property
            row = verdicts.setdefault(name, {"proved": 0, "violated": 0, "unknown": 0})
            row[v.status] = row.get(v.status, 0) + 1
        for d in r.disagreements:
            categories[d.category] = categories.get(d.category, 0) + 1
    # a stop beyond the bounds a proof states is reported, not counted as a disagreement
    counted = [d for r in results for d in r.disagreements if d.category != STATED_BOUNDS]
    return {
        "policies": len(results),
        "invalid": sum(r.compile_error is not None for r in results),
        "verdicts": verdicts,
        "unknown": sum(r.unknown for r in results),
        "disagreements": len(counted),
        "policies_disagreeing": len({id(r) for r in results for d in r.disagreements
                                     if d.category != STATED_BOUNDS}),
        "beyond_stated_bounds": categories.get(STATED_BOUNDS, 0),
        "by_category": dict(sorted(categories.items())),
        "simulations": sum(r.simulations for r in results),
        "out_of_budget": sum(r.out_of_budget for r in results),
        "agreed_stops": sum(r.agreed_stops for r in results),
    }
