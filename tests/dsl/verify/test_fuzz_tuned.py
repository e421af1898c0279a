"""Random dynP policies (tests/support/policy_fuzz/, ``tuned_rate``): they compile, and
the verifier's verdict on each property is the worst of its candidates' verdicts, each
candidate verified on its own with the tuned invariants (dsl/verify/tuning.py).
The verify-and-simulate harness runs them too (its counterexample states name their
candidate, `"active"`): tests/runtime/engine/test_dynp_mixed.py, and
`python -m benchmarks.fuzz_verify --tuned-rate P` for campaigns."""

from __future__ import annotations

import pytest

from schedc.dsl import compile_source
from schedc.dsl.tuning import candidate_policies
from schedc.dsl.verify.prover import verify_policy
from schedc.dsl.verify.verdict import Bounds, Limits
from schedc.runtime.replay import replayer
from tests.support.policy_fuzz import GenConfig, generate

TUNED = GenConfig(tuned_rate=1.0)
RANK = {"violated": 0, "unknown": 1, "proved": 2}


def test_generated_dynp_policies_compile() -> None:
    features: set[str] = set()
    for seed in range(30):
        g = generate(seed, TUNED)
        policy = compile_source(g.text, "<fuzz>", f"fuzz{seed}")
        assert policy.tuning is not None and 2 <= len(policy.tuning.candidates) <= 3
        features.update(g.features)
        features.update({f"metric:{policy.tuning.metric}",
                         f"decider:{policy.tuning.decider}", f"step:{policy.tuning.step}"})
    # the generator reaches every choice of the language
    assert {"tuned:2", "tuned:3", "decider:simple", "decider:advanced", "step:submit",
            "step:change", "metric:artww", "metric:sldwa"} <= features


def test_the_default_generator_is_unchanged() -> None:
    assert all("candidates" not in generate(seed).text for seed in range(40))


@pytest.mark.parametrize("seed", [1, 2, 5, 7])
def test_tuned_verdict_is_the_worst_candidates(seed: int) -> None:
    policy = compile_source(generate(seed, TUNED).text, "<fuzz>", f"fuzz{seed}")
    bounds, limits = Bounds(2, 2), Limits(rlimit=4_000_000, timeout_ms=3_600_000)
    tuned = verify_policy(policy, bounds, limits, replay_for=replayer)
    alone = {c.name: {v.property: v.status for v in verify_policy(
        c, bounds, limits, replay=replayer(c))} for c in candidate_policies(policy)}
    for v in tuned:
        statuses = [(name, props[v.property]) for name, props in alone.items()
                    if v.property in props]
        assert v.candidates == tuple(statuses), v.property
        worst = min(statuses, key=lambda ns: RANK[ns[1]])
        assert v.status == worst[1], v.property
        assert v.candidate == (None if v.status == "proved" else worst[0])


@pytest.mark.parametrize("seed", [96, 111])
def test_kept_sizes_of_other_candidates_agree_with_the_monitor(seed: int) -> None:
    """`kept_rate`: dynP candidates that keep sizes and state their kept size is their own
    rule's. These seeds disagreed (a proof the monitor refuted: a job started on a size
    another candidate kept) before kept sizes were assumed to satisfy only the invariants
    every `size fixed` candidate has; now the verifier and the monitor agree."""
    from tests.support.policy_fuzz import fuzz_seed

    result = fuzz_seed(seed, GenConfig(tuned_rate=1.0, kept_rate=1.0))
    assert "kept-invariant" in result.features
    assert result.compile_error is None and not result.disagreements, result.disagreements

