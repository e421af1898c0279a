"""`reserve D per KEY or when COND` (papers/000 section 4.3): one reservation per job category
and one for any job whose Xfactor passes a threshold, from syntax to schedules on a trace.
"""

from __future__ import annotations

from functools import cache

import pytest

from schedc.dsl import check_source, compile_source, ir
from schedc.dsl.ir_json import policy_to_json
from schedc.dsl.syntax.parser import parse
from schedc.dsl.syntax.printer import module
from schedc.runtime.engine import one_resource
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.jobs import Job
from schedc.runtime.run import bundled_trace
from schedc.runtime.workloads.load import load_workload
from schedc.runtime.workloads.workload import Workload
from tests.support.variants import VARIANTS


def policy(clauses: str):
    return to_runtime(compile_source(f"policy p {{ {clauses} }}", "<test>"))


def starts(pol, w: Workload, **kw) -> list[int]:
    return [r.start for r in simulate(pol, w, **kw).records]


def wl(*specs: tuple[int, int, int], cpus: int = 4) -> Workload:
    """specs: (submit, procs, run time = estimate), ids 1.. in order."""
    return Workload(tuple(Job(i + 1, i, s, r, r, (p,)) for i, (s, p, r) in enumerate(specs)),
                    ("cpus",), (cpus,))


@cache
def trace_head(n: int = 3000) -> Workload:
    full = load_workload(str(bundled_trace()))
    return Workload(full.jobs[:n], full.resources, full.capacities)


# -- syntax, types, IR -----------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "reserve 1 per weight_category(job) or when esrt_xfactor(job) > xfactor_limit",
    "reserve 2 per job.procs > 8",
    "reserve 0 or when job.wait >= 1h",
    "reserve d per job.procs div 4 or when job.xfactor > 2 or job.procs == 1",
])
def test_parses_prints_and_round_trips(text: str) -> None:
    src = f"param d: int in [0, 4] = 1 policy p {{ {text} backfill first_fit }}"
    printed = module(parse(src, "x.pol"))
    assert parse(printed, "y.pol") == parse(src, "x.pol")
    assert check_source(src, "x.pol").ok


def test_reserve_when_alone_is_depth_zero() -> None:
    a = compile_source("policy p { reserve when job.wait > 5 backfill first_fit }", "x.pol")
    b = compile_source("policy p { reserve 0 or when job.wait > 5 backfill first_fit }",
                       "x.pol")
    assert a.depth == 0 and a.reserve_per is None and a.reserve_when is not None
    assert policy_to_json(a) == policy_to_json(b)


def test_or_when_is_one_word_so_or_still_joins_keys() -> None:
    p = compile_source("policy p { reserve 1 per job.procs > 2 or job.estimate > 9 "
                       "or\n  when job.wait > 1 backfill first_fit }", "x.pol")
    assert isinstance(p.reserve_per, ir.Binary) and p.reserve_per.op == "or"
    assert p.reserve_when is not None


def test_the_condition_that_reads_the_time_turns_off_continuations() -> None:
    assert policy("reserve 1 per job.procs > 2 backfill first_fit").state_free
    assert not policy("reserve 1 or when job.wait > 5 backfill first_fit").state_free
    assert not one_resource.eligible(policy("reserve 1 per 0 backfill first_fit"), 1)


@pytest.mark.parametrize("clauses, message", [
    ("reserve all per job.procs backfill first_fit", "`reserve all` already reserves"),
    ("reserve 1 or when job.procs backfill first_fit",
     "a reservation condition must be bool, but this is int"),
    ("reserve 1 per job.xfactor backfill first_fit",
     "a reservation key must be int or bool, but this is real"),
    ("reserve 1 per job.procs", "need `backfill first_fit`, but this policy has `backfill none`"),
    ("reserve 1 per job.procs backfill best by job.estimate", "has `backfill best`"),
    ("reserve 1 per job.siz backfill first_fit", "a job has `id`, `submit`"),  # no `size` here
    ("reserve 1 per job.procs.cpus backfill first_fit", "only `request` takes a resource"),
])
def test_mistakes_are_diagnosed(clauses: str, message: str) -> None:
    result = check_source(f"policy p {{ {clauses} }}", "bad.pol")
    assert not result.ok
    text = "\n".join(f"{d.message} {d.help}" for d in result.diagnostics)
    assert message in text, text
    assert all(d.file == "bad.pol" and d.line == 1 and d.col for d in result.diagnostics)


def test_or_without_when_is_a_syntax_error_with_a_caret() -> None:
    result = check_source("policy p { reserve 1 or job.procs > 2 }", "bad.pol")
    d = result.diagnostics[0]
    assert not result.ok and (d.line, d.col) == (1, 22) and "unexpected `or`" in d.message
    assert "`or when`" in d.help and "`per`" in d.help


# -- a hand-checked schedule -------------------------------------------------------------------

# 4 cpus. A: 3 cpus [0, 100). At t=1: B 2 cpus / 100 s (short), C 4 cpus / 500 s (long),
# D 1 cpu / 1000 s (long).
# EASY: B reserved at 100; C waits; D fits around B's reservation (at 100: 2 + 1 <= 4), starts
#   at 1; B starts at 100; C needs the whole machine: after D, at 1001.
# One reservation per category (long = estimate >= 500): C is reserved too, at 200 (after B);
#   D would hold a cpu at 200 (4 + 1 > 4): it waits. At 100 B starts, C is reserved at 200
#   again, D waits; C runs [200, 700); D starts at 700.
PER_CATEGORY_CASE = wl((0, 3, 100), (1, 2, 100), (1, 4, 500), (1, 1, 1000))


def test_one_reservation_per_category_protects_the_long_job() -> None:
    easy = policy("reserve 1 backfill first_fit")
    per = policy("reserve 1 per job.estimate >= 500 backfill first_fit")
    assert starts(easy, PER_CATEGORY_CASE) == [0, 100, 1001, 1]
    for kw in VARIANTS:
        assert starts(per, PER_CATEGORY_CASE, **kw) == [0, 100, 200, 700]


def test_a_reservation_by_condition_alone() -> None:
    # Depth 0, C (the only 4-cpu job) reserved by its condition: at t=1 C is reserved at 100
    # (B is not reserved: nothing protects it), so D waits; at 100 B starts first (visited
    # before C), C is reserved at 200, D still waits; then C at 200 and D at 700.
    when = policy("reserve 0 or when job.procs == 4 backfill first_fit")
    assert starts(when, PER_CATEGORY_CASE) == [0, 100, 200, 700]
    # without the condition: first fit, D starts at once and C waits for it
    assert starts(policy("reserve 0 backfill first_fit"), PER_CATEGORY_CASE)[3] == 1


# -- policies that must coincide, on the first 3000 jobs of the bundled trace ------------------

@pytest.mark.parametrize("selective, plain", [
    ("reserve 1 per 0", "reserve 1"),  # one key: the depth counts every reservation
    ("reserve 2 per job.procs > 1000", "reserve 2"),  # a key no job of the trace has
    ("reserve 2 or when false", "reserve 2"),
    ("reserve 0 or when true", "reserve all"),  # every blocked job reserved: conservative
    ("reserve 1 per job.id", "reserve all"),  # a key per job: conservative again
])
def test_selective_forms_that_must_equal_a_plain_depth(selective: str, plain: str) -> None:
    w = trace_head()
    expected = starts(policy(f"{plain} backfill first_fit"), w)
    got = starts(policy(f"{selective} backfill first_fit"), w, incremental=False)
    assert got == expected


def test_per_category_differs_from_easy_and_conservative_and_is_stable() -> None:
    w = trace_head()
    clauses = "reserve 1 per weight_category(job) backfill first_fit"
    runs = [starts(policy(clauses), w, **kw) for kw in VARIANTS]
    assert all(r == runs[0] for r in runs)
    assert runs[0] != starts(policy("reserve 1 backfill first_fit"), w)
    assert runs[0] != starts(policy("reserve all backfill first_fit"), w)


def test_xfactor_reservations_are_monitored_on_a_trace() -> None:
    # The monitor re-checks every pass (capacity, reservations not delayed) independently.
    w = trace_head(2000)
    clauses = ("reserve 1 per weight_category(job) or when esrt_xfactor(job) > xfactor_limit "
               "backfill first_fit")
    a = starts(policy(clauses), w)
    assert a == starts(policy(clauses), w, fast=False)
    assert a != starts(policy("reserve 1 per weight_category(job) backfill first_fit"), w)
