"""The installed schedc's version (for --version and SARIF reports)."""

from __future__ import annotations

from functools import cache


@cache  # read from the installed metadata: 2 ms, once per run of a sweep's worker otherwise
def version() -> str:
    from importlib import metadata

    try:
        return metadata.version("schedc")
    except metadata.PackageNotFoundError:  # running from a checkout that is not installed
        return "unknown"
