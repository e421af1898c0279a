"""`size choose N in [LOW, HIGH]` (papers/000 sections 4.1 and 5): of N sizes spread over
[LOW, HIGH], the one with which the job completes first in the pass's plan.
"""

from __future__ import annotations

from functools import cache

import pytest

from schedc.dsl import check_source, compile_file, compile_source
from schedc.dsl.syntax.parser import parse
from schedc.dsl.syntax.printer import module
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.simulator import simulate, size_candidates
from schedc.runtime.jobs import Job, Moldable
from schedc.runtime.run import bundled_trace
from schedc.runtime.speedup import Linear, parse_speedup
from schedc.runtime.workloads.load import load_workload
from schedc.runtime.workloads.moldable import MoldableSpec, make_moldable
from schedc.runtime.workloads.workload import Workload

EASY = "order job.submit asc reserve 1 backfill first_fit"


def policy(clauses: str):
    return to_runtime(compile_source(f"policy p {{ {clauses} }}", "<test>"))


def run(pol, w: Workload, **kw) -> list[tuple[int, int]]:
    """(start, cpus) of every job."""
    return [(r.start, r.alloc[0]) for r in simulate(pol, w, **kw).records]


@cache
def trace_head(n: int = 2000, moldable: bool = True) -> Workload:
    full = load_workload(str(bundled_trace()))
    w = Workload(full.jobs[:n], full.resources, full.capacities)
    return make_moldable(w, MoldableSpec(range_factor=2, sigma=0.5, load_factor=125)) \
        if moldable else w


# -- the candidates ------------------------------------------------------------------------------

@pytest.mark.parametrize("low, high, n, expected", [
    (1, 4, 12, [1, 2, 3, 4]),  # at most n sizes: all of them
    (1, 100, 12, [1, 10, 19, 28, 37, 46, 55, 64, 73, 82, 91, 100]),
    (5, 7, 2, [5, 7]),
    (3, 9, 1, [9]),  # one choice: the largest
    (6, 2, 12, [6]),  # HIGH below LOW: LOW alone
])
def test_candidates_are_spread_evenly_with_both_ends(low, high, n, expected) -> None:
    assert size_candidates(low, high, n) == expected


# -- a hand-checked choice -------------------------------------------------------------------------

# 4 cpus. A: 2 cpus [0, 100). At t=1: B, moldable on 1..4 cpus with linear speedup, 100 s on
# its 4 requested cpus (so 400 s on 1, 200 s on 2, 134 s on 3: whole seconds, rounded up);
# C: 1 cpu for 50 s.
# B's candidates (choose 4 in [1, 4]): 1 cpu now, done at 401; 2 cpus now, done at 201;
# 3 cpus from 100 (A's end), done at 234; 4 cpus from 100, done at 200: the best. B waits for
# the whole machine (the choice is lazy) and EASY reserves it at 100 on 4 cpus; C fits
# before that and starts at once.
B = Moldable(1, 4, Linear())
CHOICE_CASE = Workload((Job(1, 0, 0, 100, 100, (2,)), Job(2, 1, 1, 100, 100, (4,), B),
                        Job(3, 2, 1, 50, 50, (1,))), ("cpus",), (4,))


def test_the_size_that_completes_first_even_if_it_waits() -> None:
    choose = policy(f"{EASY} size choose 4 in [job.min_size, job.max_size]")
    for kw in (dict(), dict(fast=False), dict(incremental=False)):
        assert run(choose, CHOICE_CASE, **kw) == [(0, 2), (100, 4), (1, 1)]


def test_fewer_choices_may_miss_the_best_size() -> None:
    # choose 2 in [1, 3]: sizes 1 and 3 only; 3 cpus from 100 end at 234, 1 cpu now at 401
    two = policy(f"{EASY} size choose 2 in [job.min_size, 3]")
    assert run(two, CHOICE_CASE) == [(0, 2), (100, 3), (1, 1)]
    # at most what is free now: B takes the 2 free cpus at 1 (done at 201), and C, with no
    # cpu left, is reserved at A's end and starts at 100
    now = policy(f"{EASY} size choose 4 in [job.min_size, min(job.max_size, "
                 "max(1, machine.free.cpus))]")
    assert run(now, CHOICE_CASE) == [(0, 2), (1, 2), (100, 1)]


def test_ties_go_to_the_smaller_size() -> None:
    # linear speedup: 4 cpus ends first; a job whose time does not shrink (measured flat):
    # every size ends together, and 1 cpu wins
    choose = policy("backfill none size choose 4 in [1, 4]")
    for speedup, cpus in ((Linear(), 4), (parse_speedup("measured(1:10, 4:10)"), 1)):
        w = Workload((Job(1, 0, 0, 10, 10, (4,), Moldable(1, 4, speedup)),), ("cpus",), (4,))
        assert run(choose, w) == [(0, cpus)]


# -- policies that must coincide ---------------------------------------------------------------

def test_one_choice_is_the_plain_size() -> None:
    w = trace_head()
    high = "max(job.min_size, fair_share_size(job))"
    plain = run(policy(f"{EASY} size {high}"), w)
    assert run(policy(f"{EASY} size choose 1 in [job.min_size, {high}]"), w) == plain


def test_rigid_jobs_have_one_candidate_their_request() -> None:
    w = trace_head(moldable=False)
    assert run(policy(f"{EASY} size choose 12 in [job.min_size, job.max_size]"), w) == \
        run(policy(EASY), w)


def test_choices_change_the_schedule_and_optimisations_do_not() -> None:
    w = trace_head()
    clauses = f"{EASY} size choose 12 in [job.min_size, fair_share_size(job)]"
    runs = [run(policy(clauses), w, **kw) for kw in (dict(), dict(fast=False))]
    assert runs[0] == runs[1]
    assert runs[0] != run(policy(f"{EASY} size fair_share_size(job)"), w)
    assert runs[0] != run(policy(clauses.replace("12", "3")), w)


# -- syntax and mistakes -----------------------------------------------------------------------

def test_parses_prints_and_round_trips() -> None:
    src = f"policy p {{ {EASY} size choose 12 in [job.min_size, fair_share_size(job)] }}"
    assert parse(module(parse(src, "x.pol")), "y.pol") == parse(src, "x.pol")
    p = compile_source(src, "x.pol")
    assert p.size_choices == 12 and p.size_low is not None


@pytest.mark.parametrize("clauses, message", [
    (f"{EASY} size choose 0 in [1, 2]", "the number of choices must be in [1, 32]"),
    (f"{EASY} size choose 33 in [1, 2]", "the number of choices must be in [1, 32]"),
    ("reserve 1 backfill best by job.estimate size choose 2 in [1, 2]",
     "needs `backfill first_fit` or `none`"),
    (f"{EASY} size choose 2 in [job.min_size / 2, 4]", "`size` must be int, but this is real"),
])
def test_mistakes_are_diagnosed(clauses: str, message: str) -> None:
    result = check_source(f"policy p {{ {clauses} }}", "bad.pol")
    assert not result.ok
    text = "\n".join(f"{d.message} {d.help}" for d in result.diagnostics)
    assert message in text, text
    assert all(d.file == "bad.pol" and d.line == 1 and d.help for d in result.diagnostics)


# -- `size fixed`: chosen at submission, kept (papers/000 section 3's submit-time schemes) --

# 4 cpus. A: 2 cpus, estimate 1000, ends at 10. At t=1: D 2 cpus for 50 s, then B moldable on
# 1..4 cpus (linear, 100 s on 4). Conservative (`reserve all`).
# At 1: D starts; B's plan: 2 cpus free from 51 (D's end) to 1000 (A's estimate): 1 cpu at 51
# ends 451, 2 cpus at 51 end 251, 3 or 4 cpus only at 1000: B takes 2, reserved at 51.
# At 10 A ends early. Chosen anew, 4 cpus from 51 end at 151 (2 now would end at 210): B
# waits for 51 on 4 cpus. Kept (`fixed`), B's 2 cpus fit now: it starts at 10, on 2.
FIXED_CASE = Workload((Job(1, 0, 0, 10, 1000, (2,)), Job(2, 1, 1, 50, 50, (2,)),
                       Job(3, 2, 1, 100, 100, (4,), Moldable(1, 4, Linear()))),
                      ("cpus",), (4,))


@pytest.mark.parametrize("fixed, expected", [
    ("", [(0, 2), (1, 2), (51, 4)]),
    ("fixed", [(0, 2), (1, 2), (10, 2)]),
])
def test_a_fixed_size_is_the_one_chosen_at_submission(fixed: str, expected) -> None:
    pol = policy(f"reserve all backfill first_fit size {fixed} choose 4 in "
                 "[job.min_size, job.max_size]")
    for kw in (dict(), dict(fast=False), dict(incremental=False)):
        assert run(pol, FIXED_CASE, **kw) == expected


def test_a_fixed_formula_is_evaluated_once() -> None:
    # `size fixed machine.free.cpus`-like: B sees 0 free cpus at its submission (clamped to
    # its minimum, 1) and keeps 1 cpu, though 2 are free at 10
    pol = policy("reserve all backfill first_fit size fixed "
                 "max(job.min_size, min(job.max_size, machine.free.cpus))")
    assert run(pol, FIXED_CASE) == [(0, 2), (1, 2), (10, 1)]
    moving = policy("reserve all backfill first_fit size "
                    "max(job.min_size, min(job.max_size, machine.free.cpus))")
    assert run(moving, FIXED_CASE) == [(0, 2), (1, 2), (10, 2)]


def test_fixed_needs_first_fit_or_none() -> None:
    result = check_source("policy p { reserve 1 backfill best by job.estimate size fixed "
                          "job.procs }", "bad.pol")
    assert not result.ok and "`size fixed` does not work with `backfill best`" in \
        result.diagnostics[0].message


def test_a_kept_size_that_breaks_an_invariant_is_found_and_replays(tmp_path, capsys) -> None:
    # Sized while no cpu is free, a job keeps its maximum: within its range, but the user's
    # invariant says a job never gets more than it asked. The job does not start in that
    # pass; the verifier proves invariants of the job and its size alone for every size
    # kept, and the monitor checks them when the size is chosen, so the state replays.
    src = tmp_path / "kept.pol"
    src.write_text("policy kept {\n  reserve all\n  backfill first_fit\n"
                   "  size fixed if machine.free.cpus > 0 then job.procs else job.max_size\n"
                   "  invariant job.size <= job.procs\n}\n")
    from schedc.dsl.verify.prover import verify_policy
    from schedc.dsl.verify.verdict import Bounds
    from schedc.runtime.cli.main import main

    verdicts = {v.property: v for v in verify_policy(compile_file(src), Bounds(3, 3))}
    bad = verdicts["invariant `job.size <= job.procs`"]
    assert bad.status == "violated"
    assert {v.status for p, v in verdicts.items() if p != bad.property} == {"proved"}
    assert main(["verify", str(src), "--queued", "3", "--running", "3",
                 "--counterexamples", str(tmp_path / "cx")]) == 1
    (state,) = (tmp_path / "cx").glob("*.json")
    capsys.readouterr()
    assert main(["run", str(src), "--state", str(state)]) == 1
    err = capsys.readouterr().err
    assert "violated by the size" in err and "kept for job" in err


def test_kept_sizes_replay_from_a_state_file(tmp_path, capsys) -> None:
    from schedc.runtime.cli.main import main

    pol = tmp_path / "p.pol"
    pol.write_text("policy p { reserve all backfill first_fit "
                   "size fixed choose 4 in [job.min_size, job.max_size] }")
    state = tmp_path / "s.json"
    state.write_text('{"now": 5, "capacity": {"cpus": 4}, "queue": [{"id": 1, "submit": 0, '
                     '"estimate": 100, "run_time": 100, "request": {"cpus": 4}, '
                     '"min_size": 1, "max_size": 4, "size": 3}]}')
    assert main(["run", str(pol), "--state", str(state), "--json"]) == 0
    assert '"jobs": 1' in capsys.readouterr().out
    # a size outside the job's range, and a kept size for a policy that keeps none
    state.write_text(state.read_text().replace('"size": 3', '"size": 5'))
    assert main(["run", str(pol), "--state", str(state)]) == 2
    assert "cannot have 5 cpus, its sizes are [1, 4]" in capsys.readouterr().err
    state.write_text(state.read_text().replace('"size": 5', '"size": 2'))
    pol.write_text("policy p { reserve all backfill first_fit size job.max_size }")
    assert main(["run", str(pol), "--state", str(state)]) == 2
    assert "chooses sizes at every pass" in capsys.readouterr().err
