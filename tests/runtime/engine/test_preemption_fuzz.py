"""Random preemptive policies (tests/support/preemption_fuzz.py) compile and run on random
workloads under the monitor with exact books, deterministically, and as the rigid
simulator where no job can be preempted; a longer campaign is benchmarks/fuzz_preemption.py."""

from __future__ import annotations

import pytest

from tests.support.preemption_fuzz import comparable, fuzz_one, generate


@pytest.mark.parametrize("chunk", range(4))
def test_random_preemptive_policies_keep_every_promise(chunk: int) -> None:
    failures = [f for seed in range(chunk * 15, chunk * 15 + 15) for f in fuzz_one(seed)]
    assert not failures, "\n".join(f"seed {f.seed}: {f.what} ({f.workload})" for f in failures)


def test_the_generator_covers_every_clause() -> None:
    texts = [generate(seed) for seed in range(60)]
    for word in ("preempt by order", "preempt when", "mechanism suspend", "mechanism requeue",
                 "mechanism checkpoint", "mechanism none", "victims order", "keep ",
                 "cost dispatch", "cost resume", "cost checkpoint", "limit preemptions",
                 "quantum", "resident", "backfill none"):
        assert any(word in t for t in texts), word
    assert any(comparable(t) for t in texts) and not all(comparable(t) for t in texts)


@pytest.mark.parametrize("seed", [1858, 2360])
def test_a_suspended_job_claiming_cpus_being_checkpointed_stays_in_the_books(seed: int) -> None:
    # found by a campaign: preempting by order, a suspended job whose own cpus were being
    # checkpointed claimed them and then fell out of the waiting jobs at the next pass,
    # its held memory booked by no one
    assert fuzz_one(seed) == []
