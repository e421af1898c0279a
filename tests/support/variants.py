"""The option combinations of ``simulate`` that must all give the same schedule: the
optimisations (``incremental`` continuation, ``fast`` plans and kernel) on and off."""

from __future__ import annotations

from typing import Any

VARIANTS: list[dict[str, Any]] = [dict(), dict(incremental=False), dict(fast=False),
                                  dict(incremental=False, fast=False)]
