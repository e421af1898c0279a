"""A test's Z3 terms and cached encodings kept to itself: a solver cached across the tests an
xdist worker runs makes a check's search depend on the checks made before it
(`test_state_keys_params_and_invariants_agree[wfp]`, 0.6 s alone, sat in one check for over
20 minutes after other tests)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from schedc.dsl.verify.z3context import fresh_context


@contextmanager
def own_z3_context(*caches: Any) -> Iterator[None]:
    """A fresh Z3 context for the block, and ``caches`` (``functools.cache`` functions that
    hold its terms) emptied before and after it."""
    for cache in caches:
        cache.cache_clear()
    try:
        with fresh_context():
            yield
    finally:
        for cache in caches:
            cache.cache_clear()
