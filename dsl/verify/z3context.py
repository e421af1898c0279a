"""One Z3 context per verification, so that a verdict does not depend on what ran before.

Z3 numbers every term in a context and its search follows those numbers (the order of
case splits, of arguments of `+`). In the one context a process shares by default, a
verification's terms would be numbered after everything made before it (another policy's
verification in a test run, an earlier sweep point), and a proof that takes 1 s from the
command line could run out of its resource limit there. The z3 module makes every term
without an explicit context in its "main" context; ``fresh_context`` swaps in a new one for
the duration of a block, so the same policy and bounds always meet the same search."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import z3
import z3.z3 as _core


@contextmanager
def fresh_context() -> Iterator[z3.Context]:
    """A new main context for the block (the previous one is back after it). Terms made
    inside belong to it: nothing made inside may be mixed with terms made outside."""
    saved = _core._main_ctx
    _core._main_ctx = z3.Context()
    try:
        yield _core._main_ctx
    finally:
        _core._main_ctx = saved


@contextmanager
def entered(context: z3.Context) -> Iterator[z3.Context]:
    """``context`` as the main one for the block: terms made inside (a constant, ``True``)
    belong to it, beside terms made there before."""
    saved = _core._main_ctx
    _core._main_ctx = context
    try:
        yield context
    finally:
        _core._main_ctx = saved
