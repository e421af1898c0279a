"""A policy on a larger machine: its own resources, then more (for proofs over any K, and for
runs on workloads with more resources than the policy's machine declares)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

from schedc.dsl import ir

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def extend_machine(policy: ir.Policy, names: Sequence[str]) -> ir.Policy:
    """The policy on a machine of the resources ``names``: the machine's own first, in its
    order, then the others, with capacities from the workload, the CLI or left symbolic.
    Rules over `resources` aggregates read them all; every fit test checks them all."""
    own = [r.name for r in policy.machine.resources]
    names = list(names)
    if names[:len(own)] != own:
        raise ValueError(f"the resources must begin with the machine `{policy.machine.name}`'s "
                         f"own: {', '.join(own)}")
    if len(set(names)) != len(names):
        raise ValueError("a resource is named twice")
    bad = [n for n in names if not _NAME.fullmatch(n)]
    if bad:
        raise ValueError(f"`{bad[0]}` is not a resource name (letters, digits, _)")
    extra = tuple(ir.Resource(n, None) for n in names[len(own):])
    if not extra:
        return policy
    machine = attrs.evolve(policy.machine, name=f"{policy.machine.name}+{len(extra)}",
                           resources=(*policy.machine.resources, *extra))
    return attrs.evolve(policy, machine=machine)


def with_resources(policy: ir.Policy, k: int) -> ir.Policy:
    """The policy on a machine of ``k`` resources: its own, then generic ones (`r2`, ...)."""
    own = [r.name for r in policy.machine.resources]
    if k < len(own):
        raise ValueError(f"the machine `{policy.machine.name}` already has {len(own)} "
                         f"resources: {', '.join(own)}")
    names = list(own)
    i = len(own) + 1
    while len(names) < k:
        if f"r{i}" not in names:
            names.append(f"r{i}")
        i += 1
    return extend_machine(policy, names)
