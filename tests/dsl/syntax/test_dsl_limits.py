"""Inputs at the language's limits end in a located diagnostic, never a crash: formulas nested
past MAX_NESTING (directly or through defs), a byte-order mark; formulas at the limit compile,
run and verify."""

from __future__ import annotations

import pytest

from schedc.dsl import check_source, compile_source
from schedc.dsl.syntax.ast import MAX_NESTING


def policy(order: str, defs: str = "") -> str:
    return f"{defs}policy p {{\n  order {order} asc\n  reserve 1\n  backfill first_fit\n}}\n"


def terms(n: int) -> str:
    return " + ".join(["job.procs"] * n)


def only_error(source: str):
    result = check_source(source, "p.pol")
    assert len(result.diagnostics) >= 1
    return result.diagnostics[0]


@pytest.mark.parametrize("n", [MAX_NESTING + 50, 400, 2000])
def test_a_sum_too_long_is_a_diagnostic_at_the_formula(n: int) -> None:
    d = only_error(policy(terms(n)))
    assert d.message == f"this formula nests more than {MAX_NESTING} levels deep"
    assert (d.line, d.col) == (2, 9)
    assert "parentheses" in d.help


def test_defs_that_nest_too_deep_once_written_out_point_at_the_use() -> None:
    defs = (f"def a(job) = {terms(60)}\n"
            f"def b(job) = a(job) + {terms(60)}\n")
    d = only_error(policy("b(job)", defs))
    assert d.message.startswith("this formula, with its defs written out, nests more than")
    assert d.line == 2 and d.col == 14  # `a(job)` in b: where the nesting passes the limit


@pytest.mark.parametrize("order", [
    terms(MAX_NESTING),  # a sum at the limit
    " + ".join(f"({terms(MAX_NESTING - 5)})" for _ in range(4)),  # long, grouped
    "(" * 300 + "job.procs" + ")" * 300,  # parentheses do not nest formulas
    "if job.procs > 1 then " * 90 + "job.procs" + " else 0" * 90,
    "-" * 90 + "job.procs",
])
def test_formulas_at_the_limit_compile_run_and_verify(order: str) -> None:
    from schedc.dsl.verify.prover import verify_policy
    from schedc.dsl.verify.verdict import Bounds
    from schedc.runtime.engine.from_ir import to_runtime
    from schedc.runtime.engine.simulator import simulate
    from schedc.runtime.jobs import Job
    from schedc.runtime.workloads.workload import Workload

    compiled = compile_source(policy(order), "p.pol")
    jobs = tuple(Job(i + 1, i, i, 10, 10, (1 + i % 3,)) for i in range(6))
    schedule = simulate(to_runtime(compiled), Workload(jobs, ("cpus",), (4,), {}))
    assert len(schedule.records) == 6
    verdicts = verify_policy(compiled, Bounds(2, 2), only=("capacity",))
    assert [v.status for v in verdicts] == ["proved"]


def test_a_byte_order_mark_is_not_part_of_the_file() -> None:
    assert not check_source("\ufeff" + policy("job.procs"), "p.pol").diagnostics
    d = only_error("\ufeff" + policy("job.procs").replace("backfill", "backfil"))
    assert (d.line, d.col) == (4, 3)  # columns as the editor shows them
