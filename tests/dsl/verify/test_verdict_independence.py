"""A property's verdict does not depend on which other properties are asked (issue 31).

The facts a check may use are learned before any property, the same whatever is asked, and
each property runs on a fresh solver (``_learn_pass_facts`` in ``dsl/verify/prover.py``,
``Checker.start`` in ``dsl/verify/checker.py``): verifying a policy with every property and
with each property alone (`--property NAME`) gives the same status, property by property.
"""

from __future__ import annotations

import pytest

from schedc.dsl import compile_source
from schedc.dsl.machines import with_resources
from schedc.dsl.verify.prover import verify_policy
from schedc.dsl.verify.verdict import Bounds, Limits
from schedc.dsl.verify.vocabulary import PROPERTIES

# (text, resources or None): a fair share that needs the learned use of the running jobs,
# a utilisation that needs no step to overcommit, roots and logs, a two-resource EASY
POLICIES = {
    "multifactor": ("""\
param w_age: real in [0, 100000] = 1000
param w_fs: real in [0, 100000] = 10000
def user_cpus(j) = sum(r in running where r.user == j.user: r.procs)
def fs_factor(j) = 1 - user_cpus(j) / machine.capacity.cpus
def prio(j) = w_age * min(j.wait / 7d, 1) + w_fs * fs_factor(j)
policy multifactor {
  order    prio(job) desc, job.submit asc
  reserve  1
  backfill first_fit
  invariant prio(job) >= 0
  invariant fs_factor(job) >= 0
}
""", None),
    "util": ("""\
policy util {
  order sum(r in resources: r.util) * job.procs asc
  reserve 1
  backfill best by sum(r in resources: job.request[r] * r.free) desc
  invariant machine.util.cpus <= 1
}
""", 3),
    "roots": ("""\
policy roots {
  order    sqrt(job.procs * job.estimate) asc
  reserve  2
  backfill first_fit
  invariant log(job.estimate) >= 0
  invariant sqrt(job.estimate) <= job.estimate
  invariant sqrt(job.procs) >= 1
}
""", None),
    "easy-memory": ("""\
machine m { resource cpus resource memory }
policy easy_memory {
  machine  m
  order    job.submit asc
  reserve  1
  backfill first_fit
  invariant job.request.memory <= machine.capacity.memory
}
""", None),
}

SELECTIONS = [*PROPERTIES, "invariant"]


def _statuses(policy, only) -> dict[str, str]:
    verdicts = verify_policy(policy, Bounds(4, 4), Limits(), only=only)
    return {v.property: v.status for v in verdicts}


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_each_verdict_is_the_same_alone_and_with_every_property(name: str) -> None:
    text, resources = POLICIES[name]
    policy = compile_source(text, f"{name}.pol")
    if resources:
        policy = with_resources(policy, resources)
    together = _statuses(policy, None)
    alone: dict[str, str] = {}
    for selection in SELECTIONS:
        alone.update(_statuses(policy, [selection]))
    assert alone == together
