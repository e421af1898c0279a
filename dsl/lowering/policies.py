"""Checking a whole program and building the IR of its policies.

Every param, machine, def and policy of every loaded file is checked, so all mistakes come
out at once; policies are lowered with their effective machine after `extends` is resolved.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from attrs import frozen

from schedc.dsl import ir
from schedc.dsl.diagnostics import Diagnostic, Reporter, did_you_mean
from schedc.dsl.lowering.expressions import NUMERIC, Lowerer, Scope, Var
from schedc.dsl.lowering.names import Symbols
from schedc.dsl.lowering.tuning import is_tuned, lower_tuned
from schedc.dsl.number_text import MAX_CAPACITY, range_problem, show
from schedc.dsl.params import SETTINGS, domain_problem, value_problem
from schedc.dsl.semantics.evaluate import Env, EvaluationError, evaluate
from schedc.dsl.semantics.pass_state import CONSTANT_STATE
from schedc.dsl.syntax import ast
from schedc.dsl.syntax.loader import Program
from schedc.dsl.verify.vocabulary import (
    ALL_PROPERTIES,
    KEPT,
    PREEMPTIVE_PROPERTIES,
    PROPERTIES,
)

_JOB = Var("job", "queue")
_ACTIVE_JOB = Var("job", "active")  # a preemptive policy's job: what it has run so far too
_CLAUSE_NAMES = {
    ast.MachineClause: "machine", ast.OrderClause: "order", ast.ReserveClause: "reserve",
    ast.BackfillClause: "backfill", ast.SizeClause: "size", ast.CandidatesClause: "candidates",
    ast.SlackClause: "slack", ast.MechanismClause: "mechanism", ast.PreemptClause: "preempt",
    ast.VictimsClause: "victims", ast.LeftoverClause: "leftover",
}
_REPEATABLE = ("invariant", "mechanism")  # every clause of the kind counts, in order
MAX_SIZE_CHOICES = 32  # `size choose N`: the symbolic pass encodes one earliest fit per choice


@frozen
class _Located:
    """A clause and the file it is written in (an inherited clause keeps its own file);
    whether the policy compiled states it (``own``, not inherited), and the clause of its
    kind that it replaces, stated by a policy it extends (``replaces``)."""

    clause: ast.Clause
    file: str
    own: bool = True
    replaces: ast.Clause | None = None


class Compiler:
    def __init__(self, program: Program, report: Reporter):
        self.program = program
        self.report = report
        self.symbols = Symbols(program, report)
        self.lowerer = Lowerer(self.symbols)
        self.params: dict[str, ir.Param] = {}
        self.param_decls: dict[str, ast.Param] = {}  # the declarations of `params`
        self.machines: dict[str, ir.Machine] = {}
        # policies compiled so far by declaration (a dynP policy's candidates are compiled
        # once); a policy being compiled maps to None (a cycle through candidates stops)
        self.done: dict[int, ir.Policy | None] = {}
        self.compiling: set[int] = set()  # only a dynP policy compiles others meanwhile

    # -- whole program
    def check_all(self) -> dict[str, ir.Policy]:
        """Check every item; return the policies that compiled (by name)."""
        for sym in self.symbols.table["value"].values():
            if isinstance(sym.item, ast.Param):
                self.param(sym.item, sym.file)
        for sym in self.symbols.table["machine"].values():
            self.machine(sym.item)
        for sym in self.symbols.table["value"].values():
            if isinstance(sym.item, ast.Def):
                self.def_alone(sym.item, sym.file)
        policies = {}
        for sym in self.symbols.table["policy"].values():
            pol = self.compiled(sym.item, sym.file)
            if pol is not None:
                policies[sym.name] = pol
        return policies

    # -- params
    def const(self, e: ast.Expr, file: str, what: str):
        out = self.lowerer.lower(e, Scope(file, None))
        if out is None:
            return None
        if ir.dependencies(out):
            self.report.error(e.span, f"{what} must be a constant",
                              "write a number, a duration or true/false")
            return None
        try:
            return out.type, evaluate(out, Env(CONSTANT_STATE))
        except EvaluationError as err:
            self.report.error(e.span, f"{what} has no value: {err}")
            return None

    def param(self, p: ast.Param, file: str) -> None:
        types = NUMERIC if p.type == "real" else (p.type,)
        values = []
        for e, what in ((p.lo, "the lower bound"), (p.hi, "the upper bound"),
                        (p.default, "the default")):
            if e is None:
                values.append(None)
                continue
            got = self.const(e, file, f"{what} of `{p.name}`")
            if got is not None and got[0] not in types:
                self.report.error(e.span, f"{what} of `{p.name}` must be {p.type}, "
                                  f"but this is {got[0]}")
                got = None
            values.append(None if got is None else got[1])
            if got is None:
                return
        lo, hi, default = values
        if p.type == "real":
            # exact: the bound 0.9 is the same number as the literal 0.9 in a formula
            lo, hi, default = (None if v is None else Fraction(v) for v in (lo, hi, default))
        if p.type == "bool" and p.lo is not None:
            self.report.error(p.lo.span, f"bool param `{p.name}` cannot have a domain",
                              "remove `in [...]`")
            return
        if lo is not None and lo > hi:
            self.report.error(p.lo.span, f"the domain of `{p.name}` is empty: {lo} > {hi}")
            return
        if lo is not None and not lo <= default <= hi:
            self.report.error(p.default.span,
                              f"the default {_show(default)} of `{p.name}` is outside its "
                              f"domain [{_show(lo)}, {_show(hi)}]",
                              "change the default or widen the domain")
            return
        self.params[p.name] = ir.Param(p.name, p.type, lo, hi, default, span=p.span)
        self.param_decls[p.name] = p

    # -- machines
    def machine(self, m: ast.Machine) -> None:
        seen: dict[str, ast.Resource] = {}
        ok = True
        for r in m.resources:
            if r.name in seen:
                self.report.error(r.span, f"resource `{r.name}` is declared twice")
                ok = False
            if r.capacity is not None and r.capacity < 1:
                self.report.error(r.span, f"resource `{r.name}` needs a positive capacity")
                ok = False
            elif r.capacity is not None and r.capacity > MAX_CAPACITY:
                self.report.error(r.span, range_problem(r.capacity, 1, MAX_CAPACITY,
                                                        f"the capacity of `{r.name}`"),
                                  "schedc holds capacities from 1 to 10^15 "
                                  "(docs/reference/limits.md)")
                ok = False
            seen[r.name] = r
        if "cpus" not in seen:
            self.report.error(m.span, f"machine `{m.name}` has no `cpus` resource",
                              "add `resource cpus`: processors are resource 0 of every machine")
            ok = False
        if ok:
            # cpus always comes first; the others keep their order.
            rs = [seen["cpus"]] + [r for r in m.resources if r.name != "cpus"]
            self.machines[m.name] = ir.Machine(
                m.name, tuple(ir.Resource(r.name, r.capacity) for r in rs)
            )

    # -- defs
    def def_alone(self, d: ast.Def, file: str) -> None:
        """A def is checked once on its own (so an unused one is checked too); resource
        names are checked at each use, against the machine of the policy using it."""
        if not self.lowerer.def_fits(d):
            return
        vars_ = {"job": _JOB}
        if d.arg is not None:
            vars_[d.arg] = Var(d.arg, "any")
        scope = Scope(file, None, vars_, size_ok=True, defs=(d.name,))
        self.lowerer.lower(d.body, scope)

    # -- policies
    def compiled(self, p: ast.Policy, file: str) -> ir.Policy | None:
        """``p``'s IR, compiled once (its problems are reported once)."""
        if id(p) not in self.done:
            self.done[id(p)] = None
            self.compiling.add(id(p))
            self.done[id(p)] = self.policy(p, file)
            self.compiling.discard(id(p))
        return self.done[id(p)]

    def scope(self, loc: _Located, machine: ir.Machine, size_ok: bool = False) -> Scope:
        return Scope(loc.file, machine, {"job": _JOB}, size_ok=size_ok)

    def chain(self, p: ast.Policy, file: str) -> list[tuple[ast.Policy, str]] | None:
        """The policy and its ancestors, child first; None after reporting a problem."""
        out = [(p, file)]
        while out[-1][0].extends is not None:
            child, cfile = out[-1]
            sym = self.symbols.lookup("policy", child.extends, cfile)
            if sym is None:
                self.symbols.not_found("policy", child.extends, cfile, child.span,
                                       "policy")
                return None
            if any(q is sym.item for q, _ in out):
                names = " -> ".join([q.name for q, _ in out] + [sym.name])
                self.report.error(p.name_span, f"policy `{p.name}` extends itself ({names})")
                return None
            out.append((sym.item, sym.file))
        return out

    def clauses(self, chain: list[tuple[ast.Policy, str]]) -> dict[str, list[_Located]]:
        """Effective clauses: a child's clause kind replaces the parent's (invariants too)."""
        eff: dict[str, list[_Located]] = {}
        for pol, file in reversed(chain):
            mine: dict[str, list[_Located]] = {}
            for c in pol.clauses:
                # `waive P` and `promise P` are one kind per property: a child's `promise`
                # replaces the parent's `waive`
                kind = (c.kind if isinstance(c, ast.TuningClause) else
                        c.name if isinstance(c, ast.PreemptSetting) else
                        f"waive {c.property}"
                        if isinstance(c, ast.WaiveClause | ast.PromiseClause)
                        else _CLAUSE_NAMES.get(type(c), "invariant"))
                if kind not in _REPEATABLE and kind in mine:
                    self.report.error(c.span, *_twice(kind, mine[kind][0].clause, c, pol.name))
                    continue
                mine.setdefault(kind, []).append(_Located(
                    c, file, own=pol is chain[0][0],
                    replaces=eff[kind][0].clause if kind in eff else None))
            eff.update(mine)
        return eff

    def policy(self, p: ast.Policy, file: str) -> ir.Policy | None:
        chain = self.chain(p, file)
        if chain is None:
            return None
        n_errors = len(self.report.diagnostics)
        eff = self.clauses(chain)
        if is_tuned(eff):
            return lower_tuned(self, p, file, eff)
        machine = self.policy_machine(eff, file)
        if machine is None:
            return None
        preemptive = "preempt" in eff
        job = {"job": _ACTIVE_JOB if preemptive else _JOB}

        def scope(loc: _Located, size_ok: bool = False) -> Scope:
            return Scope(loc.file, machine, job, size_ok=size_ok)

        order = []
        for loc in eff.get("order", []):
            for k in loc.clause.keys:
                e = self.lowerer.lower(k.expr, scope(loc))
                order.append(None if e is None else ir.OrderKey(e, k.descending))
        depth = self.depth(eff.get("reserve"))
        reserve_per = reserve_when = None
        if "reserve" in eff:
            loc = eff["reserve"][0]
            r: ast.ReserveClause = loc.clause
            if r.per is not None:
                reserve_per = self.lowerer.expect(r.per, scope(loc), ("int", "bool"),
                                                  "a reservation key",
                                                  "use a category number, e.g. "
                                                  "`weight_category(job)`")
            if r.when is not None:
                reserve_when = self.lowerer.expect(r.when, scope(loc), ("bool",),
                                                   "a reservation condition",
                                                   "compare it, e.g. `job.xfactor > 4`")
            if depth is None and (r.per is not None or r.when is not None):
                self.report.error(r.span, "`reserve all` already reserves every job that "
                                  "does not fit: `per` and `or when` add nothing",
                                  "write `reserve 1 per KEY` or `reserve N or when COND`")
        backfill = ir.Backfill("none")
        if "backfill" in eff:
            loc = eff["backfill"][0]
            c: ast.BackfillClause = loc.clause
            score = condition = None
            if c.kind == "best":
                score = self.lowerer.expect(c.score, scope(loc), ("int", "real", "bool"),
                                            "a backfill score")
            if c.kind == "when":
                condition = self.lowerer.expect(c.condition, scope(loc), ("bool",),
                                                "a backfill condition",
                                                "compare it, e.g. `job.estimate <= 3600`")
            backfill = ir.Backfill(c.kind, score, c.descending, condition, span=c.span)
        if (reserve_per is not None or reserve_when is not None) and backfill.kind != "first_fit":
            r = eff["reserve"][0].clause
            self.report.error(r.span, "`per` and `or when` reservations need "
                              f"`backfill first_fit`, but this policy has `backfill "
                              f"{backfill.kind}`",
                              "add `backfill first_fit`: with `none` no job is ever reserved, "
                              "and `best` and `when` act after a global depth")
        slack = None
        if "slack" in eff:
            loc = eff["slack"][0]
            sl: ast.SlackClause = loc.clause
            slack = self.lowerer.expect(sl.expr, scope(loc), ("int", "real"), "`slack`",
                                        "a number of seconds, e.g. `job.estimate / 10`")
            if backfill.kind not in ("first_fit", "when"):
                self.report.error(sl.span, "`slack` needs `backfill first_fit` or `when`, but "
                                  f"this policy has `backfill {backfill.kind}`",
                                  "a slack lets backfilled jobs delay reservations: add "
                                  "`backfill first_fit`")
            elif depth == 0 and reserve_when is None:
                self.report.error(sl.span, "`slack` needs reservations, but this policy "
                                  "makes none (`reserve 0`)",
                                  "add `reserve 1` (EASY) or `reserve all`")
        size = size_low = size_choices = None
        size_fixed = False
        if "size" in eff:
            loc = eff["size"][0]
            sc: ast.SizeClause = loc.clause
            size = self.lowerer.expect(sc.expr, scope(loc), ("int",), "`size`",
                                       "round it with `ceil(...)` or `floor(...)`")
            size_fixed = sc.fixed
            if sc.fixed and backfill.kind == "best":
                self.report.error(sc.span, "`size fixed` does not work with `backfill best` "
                                  "yet", "use `backfill first_fit` (the papers' submit-time "
                                  "schemes plan conservatively: `reserve all`)")
            if sc.choices is not None:
                size_choices = sc.choices
                size_low = self.lowerer.expect(sc.low, scope(loc), ("int",), "`size`",
                                               "round it with `ceil(...)` or `floor(...)`")
                if not 1 <= sc.choices <= MAX_SIZE_CHOICES:
                    self.report.error(sc.span, f"`size choose {sc.choices}`: the number of "
                                      f"choices must be in [1, {MAX_SIZE_CHOICES}]",
                                      "papers/000 uses 12")
                if backfill.kind not in ("first_fit", "none"):
                    self.report.error(sc.span, "`size choose` needs `backfill first_fit` or "
                                      f"`none`, but this policy has `backfill {backfill.kind}`",
                                      "a choice reads the plan of the pass, which `best` and "
                                      "`when` leave behind")
        invariants = []
        for loc in eff.get("invariant", []):
            c = loc.clause
            e = self.lowerer.expect(c.expr, scope(loc, size_ok=True), ("bool",),
                                    "an invariant")
            invariants.append(None if e is None else ir.Invariant(e, c.text, c.span))
        preemption = self.preemption(eff, machine) if preemptive else None
        if not preemptive:
            self.not_preemptive(eff)
        elif not invariants:  # its pass must be one the preemptive loop runs
            self.preemptive_pass(eff, depth, backfill)
        else:
            self.report.error(eff["invariant"][0].clause.span, "a preemptive policy's "
                              "invariants are not checked yet",
                              "drop the invariant, or `preempt when` to check it on a "
                              "run-to-completion policy")
        waivers = self.waivers(eff, "preemptive" if preemptive else
                               "reserving" if depth != 0 and backfill.kind != "none" else
                               "rigid")
        if len(self.report.diagnostics) > n_errors:
            return None
        exprs = [k.expr for k in order] + [i.expr for i in invariants]
        exprs += [e for e in (size, backfill.score, backfill.condition, reserve_per,
                              reserve_when, size_low, slack) if e is not None]
        if preemption is not None:
            exprs += preemption.exprs()
        used = {n.name for e in exprs for n in ir.walk(e) if isinstance(n, ir.ParamRef)}
        if isinstance(depth, ir.ParamRef):
            used.add(depth.name)
        params = tuple(
            self.params[n] for n in sorted(used, key=self.symbols.order.__getitem__)
            if n in self.params
        )
        if len(params) != len(used):
            return None  # a param with a faulty declaration (already reported)
        return ir.Policy(p.name, file, machine, params, tuple(order), depth, backfill, size,
                         tuple(invariants), reserve_per, reserve_when, size_choices, size_low,
                         size_fixed, warnings=self.lint(eff, depth, backfill), slack=slack,
                         preemption=preemption, waivers=waivers)

    # -- waive
    def waivers(self, eff: dict[str, list[_Located]], kind: str) -> tuple[ir.Waiver, ...]:
        """The policy's `waive` clauses, each naming a property `schedc verify` checks of a
        policy of this ``kind`` (see ``_WAIVABLE``) with a reason that says something."""
        out = []
        for key, locs in eff.items():
            if not key.startswith("waive "):
                continue
            c = locs[0].clause
            if isinstance(c, ast.PromiseClause):
                if c.property not in _PROPERTY_NAMES:
                    self.report.error(c.property_span or c.span, *_unknown_property(
                        c.property, _PROPERTY_NAMES,
                        f"the properties are: {', '.join(_PROPERTY_NAMES)}"))
                continue
            problem = _waive_problem(c.property, kind)
            if problem is not None and not locs[0].own and c.property in _PROPERTY_NAMES:
                # a parent's waiver of a property `verify` does not check of this policy
                # (the child makes no reservations, or preempts): there is nothing to waive
                continue
            if problem is not None:
                self.report.error(c.property_span or c.span, *problem)
            elif not c.reason.strip():
                self.report.error(c.span, f"`waive {c.property}` gives no reason",
                                  "say why the policy lets the property fail, e.g. `waive "
                                  'progress "jobs of mechanism none may hold every '
                                  'processor"`')
            else:
                out.append(ir.Waiver(c.property, c.reason, span=c.span))
        return tuple(out)

    def promise_warnings(self, eff: dict[str, list[_Located]]) -> list[Diagnostic]:
        """`promise P` where no policy this one extends waives P (none does, or the nearest
        that states either promises it already): it changes nothing."""
        out = []
        for key, locs in eff.items():
            c = locs[0].clause
            if (key.startswith("waive ") and isinstance(c, ast.PromiseClause) and locs[0].own
                    and c.property in _PROPERTY_NAMES
                    and not isinstance(locs[0].replaces, ast.WaiveClause)):
                out.append(self.report.warning(
                    c.span, f"`promise {c.property}` changes nothing: no policy this one "
                    f"extends waives `{c.property}`",
                    "drop it: a policy promises every property it does not waive"))
        return out

    # -- preemption
    def preemption(self, eff: dict[str, list[_Located]], machine: ir.Machine
                   ) -> ir.Preemption | None:
        """The rules of a preemptive policy (`preempt when` and the clauses around it)."""
        def scope(loc: _Located, **vars_: Var) -> Scope:
            return Scope(loc.file, machine, vars_)

        loc = eff["preempt"][0]
        by_order = loc.clause.condition is None
        rule = None if by_order else self.lowerer.expect(loc.clause.condition, scope(
            loc, cand=Var("cand", "active"), victim=Var("victim", "active")), ("bool",),
            "the preemption rule", "compare the two jobs, e.g. `cand.xfactor >= 2 * "
            "victim.xfactor`")
        if by_order:
            for kind, why in (("victims", "a job is preempted when jobs ahead of it in the "
                               "policy's `order` take its place: the order says who goes"),):
                for at in eff.get(kind, []):
                    self.report.error(at.clause.span, f"`{_SETTING_TEXT.get(kind, kind)}` "
                                      "does not work with `preempt by order`", why)
        mechanisms = []
        for m in eff.get("mechanism", []):
            c: ast.MechanismClause = m.clause
            when = None
            if c.when is not None:
                when = self.lowerer.expect(c.when, scope(m, job=_JOB), ("bool",),
                                           "a mechanism's condition",
                                           "compare a job's attribute, e.g. `job.queue == 2`")
                if when is not None and not ir.dependencies(when) <= {"job", "param"}:
                    self.report.error(c.when.span, "a mechanism's condition reads the job and "
                                      "params only", "a job's mechanism is chosen once, at its "
                                      "submission: drop what reads the machine or the time")
            mechanisms.append(ir.MechanismRule(c.kind, when, span=c.span))
        if not mechanisms:
            self.report.error(loc.clause.span, "a preemptive policy needs a `mechanism`",
                              "say how its jobs are preempted: `mechanism suspend` or "
                              "`mechanism requeue` (`mechanism none when COND` exempts jobs)")
        victims = []
        for v in eff.get("victims", []):
            for k in v.clause.keys:
                e = self.lowerer.lower(k.expr, scope(v, victim=Var("victim", "active")))
                if e is not None and e.type == "bool":
                    e = ir.IfThenElse(e, ir.Const(1, "int"), ir.Const(0, "int"), "int",
                                      span=e.span)
                victims.append(None if e is None else ir.OrderKey(e, k.descending))
        settings: dict[str, ir.Expr | None] = {}
        for name, types, what, help_ in _SETTINGS:
            if name not in eff:
                continue
            at = eff[name][0]
            c: ast.PreemptSetting = at.clause
            if name in _CONSTANT_SETTINGS:
                e = self.lowerer.expect(c.expr, scope(at), types, what, help_)
                if e is not None and not ir.dependencies(e) <= {"param"}:
                    self.report.error(c.expr.span, f"{what} is a constant (params allowed)",
                                      help_)
            else:
                e = self.lowerer.expect(c.expr, scope(at, job=_ACTIVE_JOB), types, what,
                                        help_)
            if e is not None and name in SETTINGS and ir.dependencies(e) <= {"param"}:
                # rule 4 of dsl/params.py, over the params' domains
                problem = domain_problem(SETTINGS[name], e, self.params)
                if problem is not None:
                    self.report.error(c.expr.span, *problem)
            settings[name] = e
        leftover = leftover_when = None
        if "leftover" in eff:
            at = eff["leftover"][0]
            lc: ast.LeftoverClause = at.clause
            leftover = lc.kind
            if lc.when is not None:
                leftover_when = self.lowerer.expect(lc.when, scope(at), ("bool",),
                                                    "`leftover`'s condition",
                                                    "a param, e.g. `leftover efficient when "
                                                    "speedup`")
                if leftover_when is not None and not ir.dependencies(leftover_when) <= {
                        "param"}:
                    self.report.error(lc.when.span, "`leftover`'s condition is a constant "
                                      "(params allowed)", "it chooses how a whole pass gives "
                                      "out processors: name a bool param, e.g. `leftover "
                                      "efficient when speedup`")
                elif leftover_when is not None:  # rule 4 of dsl/params.py: it has a value
                    problem = domain_problem(SETTINGS["leftover_when"], leftover_when,
                                             self.params)
                    if problem is not None:
                        self.report.error(lc.when.span, *problem)
                if lc.kind == "equal":
                    self.report.error(lc.when.span, "`leftover equal` takes no condition",
                                      "write `leftover efficient when COND`: where COND is "
                                      "false, processors are given out equally")
        if not by_order:
            for kind in ("leftover", "subset"):
                for at in eff.get(kind, []):
                    self.report.error(at.clause.span, f"`{kind}` needs `preempt by order`",
                                      "the processors a pass leaves free are given out by its "
                                      "selection: write `preempt by order` (`mechanism none` "
                                      "for run-to-completion jobs)")
        if (rule is None and not by_order) or None in victims:
            return None
        return ir.Preemption(rule, tuple(mechanisms), tuple(victims), span=loc.clause.span,
                             leftover=leftover, leftover_when=leftover_when,
                             **settings)  # type: ignore[arg-type]

    def not_preemptive(self, eff: dict[str, list[_Located]]) -> None:
        """Preemption clauses in a policy without `preempt when` would do nothing."""
        for kind in ("mechanism", "victims", "leftover", *(s[0] for s in _SETTINGS)):
            for loc in eff.get(kind, []):
                self.report.error(loc.clause.span, f"`{_SETTING_TEXT.get(kind, kind)}` needs "
                                  "`preempt when` or `preempt by order` in the policy",
                                  "a policy preempts only by a rule (`preempt when COND`, "
                                  "over `cand` and `victim`) or by its order (`preempt by "
                                  "order`): add one, or drop this clause")

    def preemptive_pass(self, eff: dict[str, list[_Located]], depth, backfill: ir.Backfill
                        ) -> None:
        """What the preemptive loop runs: rigid jobs, first fit or strict order, no
        reservations (runtime/engine/preemptive.py)."""
        at = eff["preempt"][0].clause.span
        how = "`preempt by order`" if eff["preempt"][0].clause.condition is None else (
            "`preempt when`")
        by_order = eff["preempt"][0].clause.condition is None
        for kind in ("size", "slack", "candidates"):
            if kind in eff and not (kind == "size" and by_order):
                self.report.error(eff[kind][0].clause.span, f"`{kind}` does not work with "
                                  f"{how} yet", "a preemptive policy runs rigid jobs "
                                  "by first fit: drop this clause" if kind != "size" else
                                  "`preempt by order` sizes jobs: write it instead of `preempt "
                                  "when`, or drop the `size`")
        if by_order and "size" in eff:
            sc: ast.SizeClause = eff["size"][0].clause
            if sc.fixed or sc.choices is not None:
                self.report.error(sc.span, "`size fixed` and `size choose` do not work with "
                                  "`preempt by order` yet", "write `size EXPR`, evaluated "
                                  "when the job is selected to start (e.g. `size "
                                  "job.min_size` with `leftover equal`)")
        if depth != 0 and "reserve" in eff:
            self.report.error(eff["reserve"][0].clause.span, "a preemptive policy makes no "
                              "reservations yet", "write `reserve 0`: the pass starts jobs by "
                              "first fit, then preempts for the jobs left waiting")
        if backfill.kind not in ("none", "first_fit"):
            self.report.error(backfill.span or at, f"`backfill {backfill.kind}` does not work "
                              f"with {how} yet", "use `backfill first_fit` (first fit) "
                              "or `backfill none` (strict order)")

    def lint(self, eff: dict[str, list[_Located]], depth, backfill: ir.Backfill
             ) -> tuple[Diagnostic, ...]:
        """Warnings: clauses that compile but do nothing, so the policy is not what it says."""
        out = []
        if "reserve" in eff and depth != 0 and backfill.kind == "none":
            # `backfill none` ends the pass at the first job that does not fit (walk.py):
            # no reservation is ever made
            c = eff["reserve"][0].clause
            text = "all" if depth is None else (depth.name if isinstance(depth, ir.ParamRef)
                                                else str(depth))
            out.append(self.report.warning(
                c.span, f"`reserve {text}` does nothing without a backfill clause: jobs start "
                "strictly in queue order and the pass stops at the first that does not fit, "
                "so no job is ever reserved",
                "add `backfill first_fit` (with `reserve 1`: EASY backfilling), or write "
                "`reserve 0` to mean strict order"))
        out += self.promise_warnings(eff)
        catch_all = None  # a `mechanism` without `when` holds for every job
        for loc in eff.get("mechanism", []):
            c: ast.MechanismClause = loc.clause
            if catch_all is not None:
                out.append(self.report.warning(
                    c.span, f"`mechanism {c.kind}` is never used: `mechanism "
                    f"{catch_all.kind}` at {catch_all.span.location()} already holds for "
                    "every job", "the first clause that holds gives a job's mechanism: put "
                    "the clauses with `when` first"))
            elif c.when is None:
                catch_all = c
        return tuple(out)

    def policy_machine(self, eff: dict[str, list[_Located]], file: str) -> ir.Machine | None:
        if "machine" not in eff:
            return self.machines.get("default")
        loc = eff["machine"][0]
        name = loc.clause.name
        sym = self.symbols.lookup("machine", name, loc.file)
        if sym is None:
            self.symbols.not_found("machine", name, loc.file, loc.clause.span, "machine")
            return None
        return self.machines.get(name)  # None: its declaration is faulty (already reported)

    def depth(self, locs: list[_Located] | None) -> int | None | ir.ParamRef:
        if not locs:
            return 0
        c: ast.ReserveClause = locs[0].clause
        if not c.is_name:
            return None if c.value == "all" else c.value
        sym = self.symbols.lookup("value", c.value, locs[0].file)
        if sym is None:
            self.symbols.not_found("value", c.value, locs[0].file, c.span, "param",
                                   extra=["all"])
            return 0
        if not isinstance(sym.item, ast.Param) or sym.item.type != "int":
            what = "a def" if isinstance(sym.item, ast.Def) else f"a {sym.item.type} param"
            self.report.error(c.span, f"`reserve` needs an int param, but `{c.value}` is {what}",
                              "write `reserve N`, `reserve all` or name an int param")
            return 0
        p = self.params.get(c.value)
        if p is not None:  # rule 3 of dsl/params.py, on the domain and the default
            decl = self.param_decls[c.value]
            where = f"`reserve {c.value}` at {c.span.location()}" if c.span else "`reserve`"
            if p.lo is not None and p.lo < 0:
                self.report.error(decl.lo.span, f"param `{c.value}` is a reservation depth "
                                  f"({where}), but its domain allows {show(p.lo)}",
                                  f"declare `{c.value}` with a domain `in [0, ...]`")
            elif value_problem(p, p.default, depth=True) is not None:
                self.report.error(decl.default.span, f"param `{c.value}` is a reservation "
                                  f"depth ({where}), but its default {show(p.default)} is "
                                  "negative", "a depth is at least 0: give a default >= 0 "
                                  "(and a domain `in [0, ...]`)")
        return ir.ParamRef(c.value, "int", span=c.span)


# the settings of a preemptive policy: (clause kind, types, what it is, help)
_SETTINGS = (
    ("keep", ("bool",), "`keep`", "a condition on a running job, e.g. "
     "`job.since_start < 10min`"),
    ("dispatch", ("int", "real"), "`cost dispatch`", "seconds, e.g. `30s`"),
    ("resume", ("int", "real"), "`cost resume`", "seconds, e.g. `5s`"),
    ("checkpoint", ("int", "real"), "`cost checkpoint`", "seconds, e.g. `1min`"),
    ("limit", ("int",), "`limit preemptions`", "a whole number, e.g. `3`"),
    ("quantum", ("int",), "`quantum`", "a whole number of seconds, e.g. `5min`"),
    ("resident", ("int",), "`resident`", "a whole number of jobs, e.g. `5`"),
    ("subset", ("int",), "`subset`", "the paper's delta, a whole number >= 1, e.g. `5`"),
)
_CONSTANT_SETTINGS = ("limit", "quantum", "resident", "subset")
_SETTING_TEXT = {"dispatch": "cost dispatch", "resume": "cost resume",
                 "checkpoint": "cost checkpoint",
                 "limit": "limit preemptions"}


# the properties `schedc verify` checks of a policy of each kind (`waive` names one of
# them): a preemptive policy's, a rigid one's, and with reservations (as
# dsl/verify/across.py's `makes_reservations`) the property across passes too
# (a dynP policy's: the one-pass properties, which hold iff every candidate has them)
_WAIVABLE = {"preemptive": PREEMPTIVE_PROPERTIES, "rigid": PROPERTIES,
             "reserving": (*PROPERTIES, KEPT), "tuned": PROPERTIES}


_PROPERTY_NAMES = (*ALL_PROPERTIES, KEPT)


def _twice(kind: str, first: ast.Clause, again: ast.Clause, policy: str) -> tuple[str, str]:
    """The message and help of a clause kind given twice in one policy."""
    if isinstance(first, ast.PromiseClause) != isinstance(again, ast.PromiseClause):
        name = kind.removeprefix("waive ")
        return (f"policy `{policy}` both waives and promises `{name}`",
                "keep one: `waive` if the policy lets it fail, `promise` to drop the "
                "`waive` of a policy it extends")
    text = f"promise {kind.removeprefix('waive ')}" if isinstance(again, ast.PromiseClause) \
        else _SETTING_TEXT.get(kind, kind)
    return f"`{text}` is given twice in policy `{policy}`", "keep one"


def _waive_problem(name: str, kind: str) -> tuple[str, str] | None:
    """Why `waive NAME` is refused in a policy of ``kind`` (message, help), or None."""
    if name in _WAIVABLE[kind]:
        return None
    listed = f"the properties `verify` checks here are: {', '.join(_WAIVABLE[kind])}"
    if name in _PROPERTY_NAMES:
        why = ("a preemptive pass makes no reservations"
               if kind == "preemptive" else
               "a dynP policy may switch candidates between two passes (waive it in a "
               "candidate, verified as a policy of its own)" if kind == "tuned" and name == KEPT
               else
               "this policy makes no reservations (`reserve 0`, or `backfill none`)"
               if name == KEPT else "it is a property of preemptive policies only, and "
               "this one runs every job to completion")
        return f"`waive {name}`: {why}, so `verify` does not check it", f"drop it; {listed}"
    if name == "invariant" or name.startswith("invariant"):
        return ("an invariant cannot be waived: it is the policy's own promise",
                "drop the `invariant` clause instead")
    return _unknown_property(name, _WAIVABLE[kind], listed)


def _unknown_property(name: str, here: Sequence[str], listed: str) -> tuple[str, str]:
    """The message and help of a name that is no property: the closest of ``here`` (else
    of every property), then ``listed``."""
    close = did_you_mean(name, here) or did_you_mean(name, _PROPERTY_NAMES)
    return f"unknown property `{name}`", (f"{close} " if close else "") + listed


def _show(v) -> str:
    return str(v).lower() if isinstance(v, bool) else show(v)
