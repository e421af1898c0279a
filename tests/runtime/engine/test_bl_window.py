"""Backfill Lowest with a window (papers/004 section 2.2, the prelude's `bl_window`): a job is
a hit if at least w resources are both among the w least utilised and among its w largest
shares (ranks with lenient ties); w = 1 is the paper's BL."""

from __future__ import annotations

import functools

import pytest
import z3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedc.dsl import compile_file, compile_source
from schedc.dsl.machines import with_resources
from schedc.dsl.semantics.evaluate import Env, evaluate
from schedc.dsl.verify.pass_encoding.encoder import encode_pass
from schedc.dsl.verify.verdict import Bounds
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.policy import PassState
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.jobs import Job
from schedc.runtime.workloads.state_file import InitialState, param_text, state_from_data
from schedc.runtime.workloads.workload import Workload
from tests.support.pass_agreement import (
    EXAMPLES,
    concrete_decisions,
    invariant_values,
    policy_order,
    small,
    summary,
    symbolic_decisions,
    symbolic_invariants,
)
from tests.support.repo import ROOT

POLICIES = ROOT / "examples"
NAMES = ("cpus", "r2", "r3", "r4")

# Backfill Lowest as it was before the window (window 1 only), to compare with.
OLD_HIT = """
def old_hit(j) = count(r in resources where r.util == min(s in resources: s.util)
                       and j.request[r] / r.capacity
                           == max(s in resources: j.request[s] / s.capacity)) > 0
"""


def machine(k: int) -> str:
    return "machine m { " + " ".join(f"resource {n}" for n in NAMES[:k]) + " }"


@functools.cache
def score_fn(expr: str, k: int, window: int | None = None):
    """`backfill best by EXPR` on a machine of k resources: (IR, the simulator's score)."""
    policy = compile_source(f"{OLD_HIT} {machine(k)} policy p {{ machine m reserve 1 "
                            f"backfill best by {expr} }}", "<bl>")
    params = {} if window is None else {"bl_window": str(window)}
    return policy, to_runtime(policy, params).score


def hit(job: Job, used, cap, window: int) -> bool:
    _, fn = score_fn("if bl_hit(job) then 1 else 0", len(cap), window)
    return fn(job, PassState(0, (), (), tuple(cap), list(used))) == 1


# -- hand-checked scores ------------------------------------------------------------------------

CAP3 = (10, 10, 10)
USED3 = (4, 2, 0)  # utilisations .4, .2, 0: least utilised r3, then r2, then cpus
A = Job(2, 2, 1, 50, 50, (3, 0, 6))  # shares .3, 0, .6: largest r3, then cpus
B = Job(3, 3, 1, 50, 50, (1, 6, 5))  # shares .1, .6, .5: largest r2, then r3


def test_window_1_hits_the_job_whose_largest_share_is_on_the_idlest_resource() -> None:
    assert hit(A, USED3, CAP3, 1) and not hit(B, USED3, CAP3, 1)


def test_window_2_hits_the_job_whose_two_largest_are_the_two_idlest() -> None:
    # lowest two {r3, r2}; A's largest two {r3, cpus} share only r3, B's {r2, r3} both
    assert not hit(A, USED3, CAP3, 2) and hit(B, USED3, CAP3, 2)


@pytest.mark.parametrize("window", [0, 3, 5])
def test_window_0_and_at_least_k_make_every_job_a_hit(window: int) -> None:
    # 0: nothing to match; K (and more, clamped to K): every resource is in both windows
    assert hit(A, USED3, CAP3, window) and hit(B, USED3, CAP3, window)
    _, fn = score_fn("bl_score(job)", 3, window)
    assert fn(B, PassState(0, (), (), CAP3, list(USED3))) == 0


def test_ties_are_lenient_on_four_resources() -> None:
    cap, used = (8, 8, 8, 8), (4, 0, 0, 6)  # r2 and r3 tie for the least utilised
    job = Job(1, 0, 0, 1, 1, (1, 2, 4, 4))  # r3 and r4 tie for the largest share
    # w = 1: r3 is least utilised (with r2) and largest (with r4)
    assert hit(job, used, cap, 1)
    # w = 2: lowest {r2, r3}, largest {r3, r4}: one in common, two needed
    assert not hit(job, used, cap, 2)
    # w = 3: lowest {r2, r3, cpus}, largest {r3, r4, r2}: r2 and r3, three needed
    assert not hit(job, used, cap, 3)
    # w = 2 with r4 idle too: lowest {r2, r3, r4} (all tie at 0), largest {r3, r4}
    assert hit(job, (4, 0, 0, 0), cap, 2)


# -- the window in a run: FCFS/BL-EASY picks different backfill jobs ---------------------------

def three_resources(name: str, window: int | None = None):
    params = {} if window is None else {"bl_window": str(window)}
    return to_runtime(with_resources(compile_file(POLICIES / name), 3), params)


def bl_workload() -> Workload:
    # job 0 holds (4, 2, 0) of (10, 10, 10) until 100; job 1 (7, 1, 1) is reserved at 100.
    # At 1, A and B fit now and end by 100, but not together (r3: 6 + 5 > 10). Window 1
    # starts A (a hit; B scores its fullness, 0.4), window 2 starts B (a hit; A scores 0.5);
    # the other starts at 51, when the first ends (it fits job 1's reservation at 100).
    jobs = (Job(0, 0, 0, 100, 100, (4, 2, 0)), Job(1, 1, 1, 100, 100, (7, 1, 1)), A, B)
    return Workload(jobs, NAMES[:3], CAP3)


def starts(rpolicy) -> list[int]:
    return [r.start for r in simulate(rpolicy, bl_workload()).records]


def test_window_1_and_2_backfill_different_jobs() -> None:
    assert starts(three_resources("bl-easy.pol")) == [0, 100, 1, 51]  # default: window 1
    assert starts(three_resources("bl-easy.pol", 1)) == [0, 100, 1, 51]
    assert starts(three_resources("bl-easy.pol", 2)) == [0, 100, 51, 1]


@pytest.mark.parametrize("window", [0, 3])
def test_a_window_where_every_job_hits_is_first_fit(window: int) -> None:
    # every score 0: ties go by queue order, which `backfill best` makes first fit
    ff = starts(three_resources("ff-easy.pol"))
    assert ff == [0, 100, 1, 51]
    assert starts(three_resources("bl-easy.pol", window)) == ff


# -- window 1 is the old definition -------------------------------------------------------------

@st.composite
def pass_states(draw):
    k = draw(st.integers(1, 4))
    cap = tuple(draw(st.integers(1, 6)) for _ in range(k))
    used = [draw(st.integers(0, c)) for c in cap]
    request = tuple([draw(st.integers(1, cap[0]))]
                    + [draw(st.integers(0, c)) for c in cap[1:]])
    return Job(1, 0, 0, 1, 1, request), PassState(5, (), (), cap, used)


@settings(max_examples=200, deadline=None)
@given(case=pass_states())
def test_window_1_is_the_old_backfill_lowest(case) -> None:
    job, state = case
    k = len(state.capacity)
    new_ir, new = score_fn("if bl_hit(job) then 1 else 0", k, 1)
    old_ir, old = score_fn("if old_hit(job) then 1 else 0", k)
    assert new(job, state) == old(job, state)
    # the reference interpreter agrees with the generated code
    params = {"bl_window": 1}
    assert evaluate(new_ir.backfill.score, Env(state, job, params)) == new(job, state)
    assert evaluate(old_ir.backfill.score, Env(state, job)) == old(job, state)



@settings(max_examples=200, deadline=None)
@given(case=pass_states(), window=st.integers(0, 5))
def test_the_reference_interpreter_agrees_on_every_window(case, window: int) -> None:
    # nested aggregates: the inner ones read the outer resource variable
    job, state = case
    ir_, fn = score_fn("bl_score(job)", len(state.capacity), window)
    assert evaluate(ir_.backfill.score, Env(state, job, {"bl_window": window})) == fn(job, state)

# -- the simulator and the symbolic pass agree on window 2, 3 resources -------------------------

def request(values) -> dict[str, int]:
    return dict(zip(NAMES, values, strict=False))


@st.composite
def states3(draw) -> InitialState:
    """A random small state on 3 resources, with `bl_window` = 2, shaped so that the score
    decides often: a running job, a queue head as wide as the machine (it is reserved), then
    candidates for the backfill."""
    caps = [draw(st.integers(2, 8)) for _ in range(3)]
    now = draw(st.integers(0, 40))
    ids = iter(draw(st.permutations(range(1, 10))))
    left, running = list(caps), []
    for _ in range(draw(st.integers(1, 2))):
        if left[0] < 1:
            break
        req = [draw(small(1, left[0]))] + [draw(small(0, c)) for c in left[1:]]
        left = [c - r for c, r in zip(left, req, strict=True)]
        estimate = draw(st.integers(1, 40))
        start = draw(st.integers(max(0, now - estimate + 1), now))
        running.append({"id": next(ids), "submit": draw(st.integers(0, start)), "start": start,
                        "estimate": estimate, "run_time": estimate, "request": request(req)})
    queue = [{"id": next(ids), "submit": 0, "estimate": 40, "run_time": 40,
              "request": request([caps[0]] + [draw(small(0, c)) for c in caps[1:]])}]
    for _ in range(draw(st.integers(2, 3))):
        estimate = draw(st.integers(1, 40))
        # each fits now on its own, most of what is free: two of them often conflict
        req = [draw(small(1, max(1, left[0])))] + [draw(st.integers(c // 2, c))
                                                   for c in left[1:]]
        queue.append({"id": next(ids), "submit": draw(st.integers(0, now)),
                      "estimate": estimate, "run_time": estimate, "request": request(req)})
    return state_from_data({"now": now, "capacity": request(caps), "running": running,
                            "queue": queue, "params": {"bl_window": 2}}, NAMES[:3])


def bl_easy_3():
    return with_resources(compile_file(POLICIES / "bl-easy.pol"), 3)


@functools.cache
def encoded3():
    """The pass of bl_easy on 3 resources (4 queued, 2 running), encoded once; the window
    is symbolic, pinned per state."""
    sym = encode_pass(bl_easy_3(), Bounds(queued=4, running=2))
    invariants = symbolic_invariants(sym)
    solver = z3.Solver()
    solver.add(*(a.formula for a in sym.assumptions), *sym.definitions.all())
    return sym, solver, invariants


def agree(state: InitialState):
    """The first pass's (started, reserved), the same in the simulator and in Z3."""
    rpolicy = to_runtime(bl_easy_3(), {k: param_text(v) for k, v in state.params.items()})
    ordered = policy_order(rpolicy, state)
    record = concrete_decisions(rpolicy, state)
    concrete = record, invariant_values(rpolicy, state, ordered, record)
    sym, solver, invariants = encoded3()
    symbolic = symbolic_decisions(sym, solver, state, ordered, invariants)
    assert symbolic == concrete, (state, symbolic, concrete)
    return summary(record)


@pytest.mark.parametrize("window, started", [(1, {2: (3, 0, 6)}), (2, {3: (1, 6, 5)}),
                                             (0, {2: (3, 0, 6)})])
def test_the_symbolic_pass_backfills_as_the_run(window: int, started: dict) -> None:
    # the run above at t = 1 (job 1 reserved at 100, A and B candidates)
    state = state_from_data({
        "now": 1, "capacity": request(CAP3), "params": {"bl_window": window},
        "running": [{"id": 0, "submit": 0, "start": 0, "estimate": 100, "run_time": 100,
                     "request": request((4, 2, 0))}],
        "queue": [{"id": j.id, "submit": j.submit, "estimate": j.estimate,
                   "run_time": j.run_time, "request": request(j.request)}
                  for j in (Job(1, 1, 1, 100, 100, (7, 1, 1)), A, B)]}, NAMES[:3])
    assert agree(state) == (started, {1: 100})


# SCHEDC_AGREEMENT_EXAMPLES=500 for a longer hunt, as in test_dsl_agreement
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(state=states3())
def test_simulator_and_symbolic_pass_agree_with_window_2_on_3_resources(state) -> None:
    agree(state)
