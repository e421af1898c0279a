"""The installed schedc's version (for --version and SARIF reports)."""

from __future__ import annotations


def version() -> str:
    from importlib import metadata

    try:
        return metadata.version("schedc")
    except metadata.PackageNotFoundError:  # running from a checkout that is not installed
        return "unknown"
