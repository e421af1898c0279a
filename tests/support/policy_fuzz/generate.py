"""The random policy generator: ``generate(seed)`` gives a well-typed `.pol` file, biased
toward the edges where verifier and simulator may disagree (``_Gen`` and its constants)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import attrs
from attrs import frozen

from schedc.dsl.ir import DECIDERS, TUNING_METRICS, TUNING_STEPS

from .kinds import KindRates, preemptive_case

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
    # chance that the seed's policy is a random preemptive one (papers/003: `preempt when`
    # or `preempt by order`; ``preemptive_agreement.encodable_policy``) instead of a rigid
    # one. Decided by a stream of its own (``is_preemptive``): a seed that stays rigid names
    # the same rigid policy at any rate; 0 by default for the same reason as above
    preemptive_rate: float = 0.0
    # the classes of issue 44 drawn onto a preemptive policy, each at its rate (``kinds.py``:
    # bad settings, job.progress, failing mechanisms, --overrun extend, P from 4 to 16);
    # ``kinds.NO_KINDS``: the preemptive policies of earlier campaigns
    preemptive_kinds: KindRates = KindRates()


@frozen
class GeneratedPolicy:
    seed: int
    text: str
    features: tuple[str, ...]  # what the policy uses (for campaign statistics)
    name: str  # the policy under test (a dynP file also defines its candidates)


def generate(seed: int, config: GenConfig | None = None) -> GeneratedPolicy:
    """The policy of ``seed`` (same seed and config, same text): a preemptive one (feature
    "preemptive" and the kinds drawn, the text of ``kinds.preemptive_case``) if
    ``is_preemptive`` chooses the seed, else a rigid one."""
    config = config or GenConfig()
    if is_preemptive(seed, config):
        case = preemptive_case(seed, config.preemptive_kinds)
        return GeneratedPolicy(seed, case.text, ("preemptive", *case.kinds), "fuzz")
    gen = _Gen(random.Random(seed), config, f"fuzz{seed}")
    return GeneratedPolicy(seed, gen.program(), tuple(sorted(gen.features)), gen.name)


def is_preemptive(seed: int, config: GenConfig | None = None) -> bool:
    """Whether the policy of ``seed`` is a preemptive one: a draw below
    ``config.preemptive_rate`` from a stream of the seed's own, apart from the rigid
    generator's (``random.Random(seed)``), so that the rigid policy of a seed that stays
    rigid is the one it is at rate 0, and a seed preemptive at rate P stays so at any rate
    above P. Never at rate 0, always at rate 1."""
    rate = (config or GenConfig()).preemptive_rate
    return rate > 0 and random.Random(f"preemptive {seed}").random() < rate


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
