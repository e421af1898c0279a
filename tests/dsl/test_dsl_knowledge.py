"""What a policy reads of its jobs' demand and speedup (dsl/knowledge.py): every kind of read
found and located, branches decided by params folded, prelude definitions read through
their bodies, and the diagnostics of a run that withholds what is read."""

from __future__ import annotations

from pathlib import Path

import pytest
from attrs import evolve
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedc.dsl import DiagnosticError, compile_file, compile_source, ir, render_diagnostics
from schedc.dsl import knowledge as kn
from schedc.dsl.binding import bind
from schedc.dsl.semantics.evaluate import Env, EvaluationError, evaluate
from schedc.dsl.syntax.loader import PRELUDE
from tests.support.ir_strategies import PARAMS, expr, jobs, states
from tests.support.policy_fuzz import generate
from tests.support.repo import EXAMPLES

LSF_MIG = EXAMPLES / "preemption" / "lsf-mig.pol"


def compiled(tmp_path: Path, text: str, name: str | None = None) -> ir.Policy:
    path = tmp_path / "p.pol"
    path.write_text(text)
    return compile_file(path, name)


def reads(policy: ir.Policy, **params: str) -> list[kn.Read]:
    return list(kn.reads(policy, bind(policy, params)))


def located(r: kn.Read) -> tuple[str, int, int, int]:
    assert r.span is not None
    return Path(r.span.file).name, r.span.line, r.span.col, r.span.end_col


# -- attributes ------------------------------------------------------------------------------


@pytest.mark.parametrize(("attr", "kinds"), [
    ("estimate", kn.DEMAND), ("area", kn.DEMAND), ("xfactor", kn.DEMAND),
    ("work", kn.DEMAND)])
def test_a_job_attribute_of_the_demand_is_a_read_at_its_place(tmp_path, attr, kinds):
    policy = compiled(tmp_path, f"policy p {{\n  order job.{attr} asc\n}}\n")
    (r,) = reads(policy)
    assert r.kinds == kinds and r.what == f"`job.{attr}`" and r.clause == "order"
    assert located(r) == ("p.pol", 2, 9, 13 + len(attr))


@pytest.mark.parametrize("attr", ["remaining", "end"])
def test_a_running_jobs_remaining_time_and_end_are_demand_reads(tmp_path, attr):
    policy = compiled(tmp_path, "policy p {\n  order sum(r in running: r."
                      f"{attr}) asc\n}}\n")
    (r,) = reads(policy)
    assert r.kinds == kn.DEMAND and r.what == f"`r.{attr}`"
    assert located(r)[1:3] == (2, 27)


def test_progress_reads_the_demand_and_the_speedup(tmp_path):
    policy = compiled(tmp_path, """policy p {
  order     (1 - job.progress) * job.work asc
  reserve   0
  backfill  first_fit
  mechanism checkpoint
  preempt   by order
}""")
    assert [(r.what, r.kinds) for r in reads(policy)] == [("`job.progress`", kn.BOTH),
                                                          ("`job.work`", kn.DEMAND)]


@pytest.mark.parametrize("attr", ["id", "submit", "procs", "wait", "min_size", "max_size",
                                  "user"])
def test_attributes_that_tell_nothing_of_demand_or_speedup_are_no_reads(tmp_path, attr):
    policy = compiled(tmp_path, f"policy p {{ order job.{attr} asc }}")
    assert reads(policy) == []


def test_every_clause_a_pass_decides_by_is_read_and_named(tmp_path):
    policy = compiled(tmp_path, """policy p {
  order    job.area asc
  reserve  1 per job.estimate > 1h or when job.xfactor > 4
  backfill first_fit
  size     max(1, min(job.procs, job.work))
}""")
    found = {(r.clause, r.what) for r in reads(policy) if r.clause is not None}
    assert found == {("order", "`job.area`"), ("reservation key", "`job.estimate`"),
                     ("reservation condition", "`job.xfactor`"), ("size", "`job.work`")}


def test_invariants_check_the_run_and_are_no_reads(tmp_path):
    policy = compiled(tmp_path, "policy p { invariant job.estimate >= 0 }")
    assert reads(policy) == []


def test_preemption_formulas_are_read_but_not_their_costs(tmp_path):
    policy = compiled(tmp_path, """policy p {
  order     job.acquired asc
  reserve   0
  backfill  first_fit
  mechanism checkpoint when job.estimate > 1h
  mechanism none
  cost      checkpoint job.estimate div 100
  keep      job.since_start < 10min
  preempt   when cand.xfactor > 2 * victim.xfactor
}""")
    found = [(r.clause, r.what) for r in reads(policy)]
    assert found == [("preemption rule", "`cand.xfactor`"),
                     ("preemption rule", "`victim.xfactor`"),
                     ("mechanism condition", "`job.estimate`")]


# -- plans -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("reserve", "read"), [
    ("reserve 1", True), ("reserve all", True), ("reserve 0", False),
    ("reserve 0 or when job.procs > 4", True), ("reserve 0 or when false", False)])
def test_reservations_are_planned_with_the_estimates(tmp_path, reserve, read):
    policy = compiled(tmp_path, f"policy p {{\n  {reserve}\n  backfill first_fit\n}}\n")
    plans = [r for r in reads(policy) if r.clause is None]
    assert len(plans) == read
    if read:
        assert plans[0].kinds == kn.DEMAND and f"`{reserve.split(' or')[0]}" in plans[0].what


def test_a_reservation_is_located_at_the_backfill_clause_or_the_reserve_param(tmp_path):
    easy = compile_file(EXAMPLES / "easy.pol")
    (r,) = reads(easy)
    assert located(r) == ("easy.pol", 8, 3, 21)  # `backfill first_fit`
    depth = compile_file(EXAMPLES / "depth2.pol")
    (r,) = reads(depth)
    assert located(r)[:3] == ("depth2.pol", 7, 3)  # `reserve depth`
    assert reads(depth, depth="0") == []  # a depth of 0 plans nothing


def test_without_backfill_a_reservation_depth_plans_nothing(tmp_path):
    policy = compiled(tmp_path, "policy p { reserve 2 }")  # a warning, and no plan
    assert reads(policy) == []


def test_slack_is_a_plan_with_the_estimates(tmp_path):
    policy = compiled(tmp_path, "policy p {\n  reserve 1\n  backfill first_fit\n"
                      "  slack 30min\n}\n")
    slack = [r for r in reads(policy) if "slack" in r.what]
    assert len(slack) == 1 and located(slack[0])[1:3] == (4, 9)


def test_size_choose_reads_the_run_times_at_each_size(tmp_path):
    policy = compiled(tmp_path, "policy p {\n  backfill first_fit\n"
                      "  size choose 4 in [job.min_size, job.max_size]\n}\n")
    (r,) = reads(policy)
    assert r.kinds == kn.BOTH and "`size choose 4`" in r.what
    assert located(r) == ("p.pol", 3, 21, 47)  # LOW to HIGH


def test_a_dynp_policy_measures_plans_and_reads_what_its_candidates_read():
    policy = compile_file(EXAMPLES / "dynp.pol")
    found = reads(policy)
    assert "`metric artww`" in found[0].what and located(found[0])[:2] == ("dynp.pol", 9)
    # the candidates share conservative's `reserve all`: one read, named by the first
    assert [(Path(r.span.file).name, r.clause) for r in found[1:]] == [
        ("conservative.pol", None), ("conservative-sjf.pol", "order"),
        ("conservative-ljf.pol", "order")]
    assert found[2].policy == "dynp (its candidate conservative_sjf)"


LEFTOVER = """param speedup: bool = true
policy ad {
  order     job.acquired asc
  reserve   0
  backfill  first_fit
  mechanism checkpoint
  preempt   by order
  leftover  %s
}
"""


def test_leftover_efficient_reads_the_speedups(tmp_path):
    (r,) = reads(compiled(tmp_path, LEFTOVER % "efficient"))
    assert r.kinds == kn.SPEEDUP and "`leftover efficient`" in r.what
    assert reads(compiled(tmp_path, LEFTOVER % "equal")) == []


def test_leftover_efficient_when_a_param_reads_them_only_where_it_holds(tmp_path):
    policy = compiled(tmp_path, LEFTOVER % "efficient when speedup")
    (r,) = reads(policy)
    assert located(r)[1:3] == (8, 28)  # the condition
    assert reads(policy, speedup="false") == []
    # and the same from the IR alone, whoever writes its clause
    pre = ir.Preemption(None, (ir.MechanismRule("checkpoint", None),), leftover="efficient",
                        leftover_when=ir.Const(False, "bool"))
    built = compile_source("policy q { reserve 0 }")
    assert kn.reads(evolve(built, preemption=pre), {}) == ()
    pre = evolve(pre, leftover_when=ir.Const(True, "bool"))
    assert [r.kinds for r in kn.reads(evolve(built, preemption=pre), {})] == [kn.SPEEDUP]


# -- branches decided by params ----------------------------------------------------------------


def test_a_branch_a_param_never_takes_reads_nothing():
    policy = compile_file(LSF_MIG)
    assert reads(policy) == []  # demand = false: least acquired service
    (r,) = reads(policy, demand="true")
    assert r.what == "`job.estimate`" and located(r)[:3] == ("lsf-mig.pol", 19, 29)


def test_a_condition_that_reads_the_state_keeps_both_branches(tmp_path):
    policy = compiled(tmp_path, "policy p { order (if job.procs > 1 then job.estimate "
                      "else job.area) asc }")
    assert [r.what for r in reads(policy)] == ["`job.estimate`", "`job.area`"]


@pytest.mark.parametrize(("formula", "on", "off"), [
    ("flag and job.estimate > 1h", "true", "false"),
    ("flag or job.estimate > 1h", "false", "true"),
    ("not flag or job.estimate > 1h", "true", "false"),
    ("(if flag then job.estimate else 0) > 1", "true", "false")])
def test_and_or_short_circuit_on_a_param(tmp_path, formula, on, off):
    policy = compiled(tmp_path, f"param flag: bool = true\npolicy p {{ order ({formula}) asc }}")
    assert len(reads(policy, flag=on)) == 1
    assert reads(policy, flag=off) == []


def test_a_condition_of_params_reads_its_bound_values(tmp_path):
    policy = compiled(tmp_path, "param k: int in [0, 10] = 2\n"
                      "policy p { order (if k * 2 > 5 then job.estimate else 0) asc }")
    assert reads(policy) == []
    assert len(reads(policy, k="3")) == 1


# -- prelude definitions -------------------------------------------------------------------


def test_a_prelude_function_is_read_through_its_body(tmp_path):
    policy = compiled(tmp_path, "policy p { order sjf_key(job) asc }")
    (r,) = reads(policy)
    assert r.span is not None and r.span.file == PRELUDE
    assert r.what == "`j.estimate` (in a prelude definition)"
    line = (Path(kn.__file__).parent / "prelude" / "std.pol").read_text().split("\n")[
        r.span.line - 1]
    assert line.startswith("def sjf_key(j)")


def test_a_prelude_size_reads_the_work_of_every_job_in_the_system(tmp_path):
    policy = compiled(tmp_path, "policy p { size fair_share_size(job) }")
    found = reads(policy)
    assert {r.what.split()[0] for r in found} == {"`j.work`", "`x.work`"}
    assert all(r.kinds == kn.DEMAND and r.clause == "size" for r in found)


# -- diagnostics ---------------------------------------------------------------------------


def test_a_withheld_read_is_a_located_diagnostic_with_a_caret_and_help():
    policy = compile_file(LSF_MIG)
    with pytest.raises(DiagnosticError) as err:
        kn.check(policy, {"demand": "true"}, "none")
    text = render_diagnostics(err.value.diagnostics)
    assert ("error: policy lsf_mig reads `job.estimate` in its order, the jobs' service "
            "demand, which this run withholds (--knowledge none)") in text
    assert "lsf-mig.pol:19:29" in text
    assert "|                             ^^^^^^^^^^^^\n" in text
    assert ("help: run with --knowledge demand (or both), or with --param demand=false"
            in text)


def test_every_withheld_read_is_reported():
    policy = compile_file(EXAMPLES / "easy-sjf.pol")
    found = kn.problems(policy, {}, "speedup")
    assert [(Path(d.file).name, d.line) for d in found] == [("easy-sjf.pol", 6),
                                                            ("easy.pol", 8)]
    assert all("--knowledge both" in d.help for d in found)
    assert kn.problems(policy, {}, "demand") == ()


def test_a_read_of_both_under_demand_names_the_speedup_it_depends_on(tmp_path):
    policy = compiled(tmp_path, "policy p {\n  backfill first_fit\n"
                      "  size choose 4 in [job.min_size, job.max_size]\n}\n")
    (d,) = kn.problems(policy, {}, "demand")
    assert d.message == ("policy p reads the jobs' run times at each size to choose one "
                         "(`size choose 4`), which depends on the jobs' speedup, withheld by "
                         "this run (--knowledge demand)")
    assert d.help == ("run with --knowledge both, or give the size by a formula "
                      "(`size EXPR`)")
    (d,) = kn.problems(policy, {}, "none")
    assert "the jobs' service demand and speedup, which this run withholds" in d.message


def test_the_papers_disciplines_read_no_more_than_their_knowledge_params_give():
    """papers/003's examples declare `demand` and `speedup`: bound as a case gives, each
    reads no more than that case (demand is the work on one processor, as the paper's)."""
    cases = {"none": (False, False), "demand": (True, False), "speedup": (False, True),
             "both": (True, True)}
    for path in sorted((EXAMPLES / "preemption").glob("*.pol")):
        policy = compile_file(path)
        names = {p.name for p in policy.params}
        if not names & {"demand", "speedup"}:
            continue
        for case, (demand, speedup) in cases.items():
            given = {k: str(v).lower() for k, v in (("demand", demand), ("speedup", speedup))
                     if k in names}
            assert kn.problems(policy, bind(policy, given), case) == (), (path.name, case)


def test_both_withholds_nothing_and_none_everything():
    assert kn.withheld("both") == frozenset() and kn.withheld("none") == kn.BOTH
    for name in ("robust-moldable.pol", "dynp.pol", "fairshare.pol"):
        kn.check(compile_file(EXAMPLES / name), {}, "both")


# -- properties ----------------------------------------------------------------------------


def _poisoned(e: ir.Expr, live: set[int]) -> ir.Expr:
    """``e`` with every demand read a pass never evaluates made a division by zero."""
    if isinstance(e, ir.JobAttr) and e.attr in kn.ATTR_KINDS and id(e) not in live:
        return ir.Binary("/" if e.type == "real" else "//", ir.Const(1, e.type),
                         ir.Const(0, e.type), e.type)
    match e:
        case ir.Unary(op=op, operand=x):
            return ir.Unary(op, _poisoned(x, live), e.type)
        case ir.Binary(op=op, left=a, right=b):
            return ir.Binary(op, _poisoned(a, live), _poisoned(b, live), e.type)
        case ir.Call(fn=fn, args=args):
            return ir.Call(fn, tuple(_poisoned(a, live) for a in args), e.type)
        case ir.IfThenElse(cond=c, then=t, otherwise=o):
            return ir.IfThenElse(_poisoned(c, live), _poisoned(t, live), _poisoned(o, live),
                                 e.type)
        case ir.Aggregate():
            parts = {k: None if v is None else _poisoned(v, live) for k, v in
                     (("where", e.where), ("body", e.body), ("default", e.default))}
            return ir.Aggregate(e.fn, e.var, e.domain, type=e.type, **parts)
    return e


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expr("real", depth=4), jobs, states(), st.booleans(), st.integers(-3, 3))
def test_a_folded_branch_is_never_evaluated(e, job, state, flag, k):
    """Soundness of the folding: a read left out is one evaluation never reaches, so
    poisoning it changes no value."""
    values = {**PARAMS, "flag": flag, "k": k}
    try:
        want = evaluate(e, Env(state, job=job, params=values))
    except EvaluationError:
        return
    live = {id(n) for n in kn.live(e, values)}
    assert evaluate(_poisoned(e, live), Env(state, job=job, params=values)) == want


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000))
def test_a_policy_accepted_under_no_knowledge_is_accepted_under_any(seed):
    gen = generate(seed)
    policy = compile_source(gen.text, f"<fuzz{seed}>", gen.name)
    values = bind(policy, {})
    refused = {k: kn.problems(policy, values, k) for k in kn.KNOWLEDGE}
    assert refused["both"] == ()
    for k in kn.KNOWLEDGE:  # more knowledge, fewer refusals: each one also refused with less
        for less in kn.KNOWLEDGE:
            if kn.gives(less) <= kn.gives(k):
                assert {(d.file, d.line, d.col) for d in refused[k]} <= {
                    (d.file, d.line, d.col) for d in refused[less]}
