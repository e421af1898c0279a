"""A sweep run's key: SHA-256 over a canonical JSON of everything that determines its result
(the policy's name, the hashes of its file's text and of every import's, the param values
bound, the workload file's hash, the transforms, capacities and options, the seed, and the
schedc version). Paths are not in it: a moved or cloned folder keeps its keys; changing any
text a run reads, or any input, changes the key."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

KEY_FORMAT = 1  # bump when the facts below change meaning


def run_key(facts: Mapping[str, Any]) -> str:
    """The SHA-256 of ``facts`` as canonical JSON (sorted keys, no spaces, ASCII)."""
    text = json.dumps({"key_format": KEY_FORMAT, **facts}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def policy_hashes(name: str, file: str, texts: Mapping[str, str]) -> dict[str, Any]:
    """The policy's name, its own text's hash and its imports' hashes (sorted), without
    their paths (see `runtime/results/provenance.py`'s `policy_facts`)."""
    from schedc.runtime.results.provenance import policy_facts

    facts = policy_facts(name, file, texts)
    return {"name": name, "sha256": facts["sha256"],
            "imports": sorted(i["sha256"] for i in facts["imports"])}
