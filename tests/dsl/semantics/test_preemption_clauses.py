"""The preemption clauses (papers/003): what they compile to, how a `.pol` policy runs through
the preemptive loop, and every mistake they can be written with."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedc.dsl import DiagnosticError, compile_source, ir
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.preemptive import simulate_preemptive
from schedc.runtime.jobs import Job
from schedc.runtime.workloads.workload import Workload

SS = """
param sf: real in [1, 10] = 2
policy ss {
  order     job.xfactor desc
  reserve   0
  backfill  first_fit
  mechanism suspend
  preempt   when cand.xfactor >= sf * victim.xfactor
  keep      job.since_start < 10
}
"""


def compiled(text: str) -> ir.Policy:
    return compile_source(text, "t.pol")


def errors(text: str) -> list[str]:
    with pytest.raises(DiagnosticError) as err:
        compile_source(text, "t.pol")
    return [d.message for d in err.value.diagnostics]


def workload(*jobs: tuple[int, int, int, int], cpus: int = 4) -> Workload:
    """(submit, run, estimate, procs) per job."""
    return Workload(tuple(Job(i + 1, i, s, r, e, (p,)) for i, (s, r, e, p) in enumerate(jobs)),
                    ("cpus",), (cpus,))


def by_id(run) -> dict[int, tuple[int, int]]:
    return {r.job.id: (r.start, r.end) for r in run.schedule.records}


def run(text: str, load: Workload, params: dict[str, str] | None = None):
    policy = to_runtime(compiled(text), params)
    assert policy.preemption is not None
    return simulate_preemptive(policy, policy.preemption, load)


def test_the_clauses_compile_to_the_policys_preemption() -> None:
    p = compiled(SS).preemption
    assert p is not None
    assert [m.kind for m in p.mechanisms] == ["suspend"] and p.keep is not None
    assert {n.var for n in ir.walk(p.rule) if isinstance(n, ir.JobAttr)} == {"cand", "victim"}
    runtime = to_runtime(compiled(SS))
    assert runtime.preemption is not None and runtime.preemption.limit is None


def test_a_short_job_suspends_a_long_one_by_expansion_factor() -> None:
    # A (4 cpus, 1000 s) runs from 0; B (4 cpus, estimate 10) arrives at 100: at 100 B's
    # xfactor is (0 + 10) / 10 = 1, A's (100 + 1000) / 1000 = 1.1: no; B's grows by 0.1 a
    # second, and the first pass after it reaches 2.2 (A's then 1.2)... passes come at
    # events only: with no quantum, B waits for A
    load = workload((0, 1000, 1000, 4), (100, 10, 10, 4))
    assert by_id(run(SS, load)) == {1: (0, 1000), 2: (1000, 1010)}
    # with a 20 s quantum the pass at 120 finds B at 3 >= 2 x 1.12: A is suspended
    quantum = SS.replace("keep ", "quantum 20s\n  keep ")
    assert by_id(run(quantum, load)) == {1: (0, 1010), 2: (120, 130)}


def test_a_job_protected_by_keep_is_not_suspended() -> None:
    load = workload((0, 1000, 1000, 4), (1, 10, 10, 4))
    hard = SS.replace("sf * victim.xfactor", "0 * victim.xfactor")  # any job may preempt
    assert by_id(run(hard, load)) == {1: (0, 1000), 2: (1000, 1010)}  # 1 s < 10 s: kept
    # past its 10 s, the pass at B's arrival suspends it
    assert by_id(run(hard, workload((0, 1000, 1000, 4), (20, 10, 10, 4)))) == {
        1: (0, 1010), 2: (20, 30)}


def test_mechanisms_are_chosen_per_job_at_submission() -> None:
    text = SS.replace("mechanism suspend", "mechanism none when job.procs == 4\n"
                      "  mechanism requeue").replace("sf * victim.xfactor", "0")
    load = workload((0, 100, 100, 4), (0, 100, 100, 2), (20, 10, 10, 2), cpus=6)
    result = run(text, load)
    # job 1 (4 cpus) is never preempted; job 2 (2 cpus) is requeued for job 3 at 20
    assert by_id(result) == {1: (0, 100), 2: (0, 130), 3: (20, 30)}
    assert result.lives[1].lost == 40 and result.lives[1].preemptions["requeue"] == 1


def test_costs_limits_and_victims_order() -> None:
    text = """
    policy p {
      order     job.submit asc
      backfill  first_fit
      mechanism suspend
      preempt   when cand.procs < victim.procs
      victims   order victim.procs desc
      cost      dispatch 2s
      cost      resume 1s
      limit     preemptions 1
    }"""
    load = workload((0, 100, 100, 2), (0, 100, 100, 1), (10, 10, 10, 1), (50, 10, 10, 1),
                    cpus=3)
    result = run(text, load)
    # job 3 suspends job 1 (the widest victim) at 10; job 1 resumes when job 3 ends at 22
    # (2 s dispatch + 10 s), ready at 23; job 4 at 50 may not suspend it again (limit 1)
    # and its cpu is busy: it waits for job 2 (ends at 102)
    records = by_id(result)
    assert records[3] == (10, 22) and records[4] == (102, 114)
    assert result.lives[0].preemptions.total() == 1
    assert records[1] == (0, 2 + 8 + (22 - 10) + 1 + 92)


# -- mistakes -----------------------------------------------------------------------------------

PREEMPTIVE = "policy p {{ backfill first_fit mechanism suspend preempt when {rule} {extra} }}"


@pytest.mark.parametrize(("rule", "extra", "message"), [
    ("job.procs > 1", "", "`job` is not available here"),
    ("cand.procs", "", "the preemption rule"),
    ("true", "leftover equal", "`leftover` needs `preempt by order`"),
    ("true", "subset 5", "`subset` needs `preempt by order`"),
    ("true", "keep job.procs", "`keep`"),
    ("true", "limit preemptions now", "`limit preemptions` is a constant"),
    ("true", "resident job.procs", "`job` is not available here"),
    ("true", "quantum 1.5", "`quantum`"),
    ("true", "mechanism requeue when now > 5", "a mechanism's condition reads the job and "
     "params only"),
    ("true", "keep true keep false", "`keep` is given twice"),
    ("true", "cost dispatch 1 cost dispatch 2", "`cost dispatch` is given twice"),
    ("true", "reserve 1", "a preemptive policy makes no reservations yet"),
    ("true", "size job.procs", "`size` does not work with `preempt when` yet"),
    ("true", "invariant true", "a preemptive policy's invariants are not checked yet"),
    ("victim.start > 0", "", "exists only for running jobs"),
])
def test_a_mistake_in_a_preemptive_policy_is_located(rule: str, extra: str,
                                                      message: str) -> None:
    assert any(message in m for m in errors(PREEMPTIVE.format(rule=rule, extra=extra)))


def test_a_policy_needs_a_mechanism_and_clauses_need_the_rule() -> None:
    assert any("needs a `mechanism`" in m for m in errors(
        "policy p { preempt when cand.procs < victim.procs }"))
    for clause in ("mechanism suspend", "keep true", "cost resume 1", "limit preemptions 2",
                   "quantum 60", "resident 5", "victims order victim.procs asc",
                   "leftover equal", "subset 5"):
        assert any("needs `preempt when`" in m for m in errors(f"policy p {{ {clause} }}")), \
            clause


def test_what_a_job_has_run_is_known_only_to_a_preemptive_policy() -> None:
    assert any("known only to a preemptive policy" in m for m in errors(
        "policy p { order job.acquired asc }"))
    assert compiled("policy p { order job.acquired asc mechanism suspend "
                    "preempt when cand.acquired * 2 < victim.acquired }").preemption


def test_the_examples_compile() -> None:
    from schedc.dsl import compile_file

    root = Path(__file__).parents[3] / "examples" / "preemption"
    for path in sorted(root.glob("*.pol")):  # LSF-RTC runs to completion: not preemptive
        assert (compile_file(path).preemption is None) == (path.name == "lsf-rtc.pol"), path


def test_a_mechanism_after_one_for_every_job_is_a_warning() -> None:
    policy = compiled("policy p { mechanism suspend mechanism requeue when job.queue == 3 "
                      "preempt when true }")
    [warning] = policy.warnings
    assert warning.message.startswith("`mechanism requeue` is never used")
    assert not compiled("policy p { mechanism requeue when job.queue == 3 mechanism suspend "
                        "preempt when true }").warnings


BY_ORDER = "policy p {{ order job.acquired asc mechanism checkpoint preempt by order {extra} }}"


@pytest.mark.parametrize(("extra", "message"), [
    ("victims order victim.procs asc", "`victims` does not work with `preempt by order`"),
    ("cost checkpoint job.procs > 1", "`cost checkpoint` must be int or real"),
    ("backfill best by job.procs", "`backfill best` does not work with `preempt by order` "
     "yet"),
])
def test_a_mistake_in_a_policy_preempting_by_its_order_is_located(extra: str,
                                                                    message: str) -> None:
    assert any(message in m for m in errors(BY_ORDER.format(extra=extra)))


def test_preempting_by_order_compiles_to_a_selection_with_its_costs() -> None:
    from schedc.runtime.engine.from_ir import to_runtime

    policy = compiled(BY_ORDER.format(extra="cost checkpoint 60 + job.procs quantum 600"))
    assert policy.preemption is not None and policy.preemption.rule is None
    rules = to_runtime(policy).preemption
    assert rules is not None and rules.select and rules.quantum == 600


ADAPTIVE = "policy p {{ backfill first_fit mechanism malleable preempt by order {extra} }}"


@pytest.mark.parametrize(("extra", "message"), [
    ("leftover equal when true", "`leftover equal` takes no condition"),
    ("leftover efficient when job.procs > 2", "`job` is not available here"),
    ("leftover efficient when now > 2", "`leftover`'s condition is a constant"),
    ("leftover efficient when 3", "`leftover`'s condition"),
    ("subset job.procs", "`job` is not available here"),
    ("subset 1.5", "`subset`"),
    ("size fixed job.min_size", "`size fixed` and `size choose` do not work with `preempt by "
     "order` yet"),
    ("size choose 4 in [job.min_size, job.max_size]", "`size fixed` and `size choose`"),
    ("size 2.5", "`size`"),
    ("leftover equal leftover efficient", "`leftover` is given twice"),
])
def test_a_mistake_in_an_adaptive_policy_is_located(extra: str, message: str) -> None:
    assert any(message in m for m in errors(ADAPTIVE.format(extra=extra)))


def test_adaptive_clauses_compile_to_the_rules() -> None:
    text = """
    param speedup: bool = false
    param delta: int in [1, 100] = 5
    policy p {
      backfill  first_fit
      size      job.min_size
      mechanism malleable
      preempt   by order
      leftover  efficient when speedup
      subset    delta
    }"""
    policy = compiled(text)
    assert policy.preemption.leftover == "efficient" and policy.preemption.subset is not None
    assert to_runtime(policy).preemption.leftover == "equal"  # speedup is false
    rules = to_runtime(policy, {"speedup": "true", "delta": "3"}).preemption
    assert (rules.leftover, rules.subset, rules.size is not None) == ("efficient", 3, True)


def test_a_subset_below_one_is_refused_at_its_clause() -> None:
    text = "policy p { backfill first_fit mechanism none preempt by order subset 0 }"
    with pytest.raises(DiagnosticError) as err:
        to_runtime(compiled(text))
    [d] = err.value.diagnostics
    assert "`subset` is 0" in d.message and d.line == 1
