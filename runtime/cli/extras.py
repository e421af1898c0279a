"""The optional parts of schedc and the packages each needs. `pip install schedc` is the
core (check, compile, run, compare, verify); the heavy packages come as extras, and a command
that needs a missing one says which extra to install, before any work (exit status 2)."""

from __future__ import annotations

import importlib.util

from schedc.runtime.cli.errors import UserError

# extra -> the top-level modules it installs (pyproject.toml's optional-dependencies)
EXTRAS: dict[str, tuple[str, ...]] = {
    "optimal": ("ortools",),
    "sweep": ("dask", "distributed", "pyarrow", "matplotlib"),
    "plot": ("matplotlib",),
}


def require(extra: str, what: str) -> None:
    """Raise a one-line error naming ``extra`` if a module of it is not installed."""
    missing = [m for m in EXTRAS[extra] if not _installed(m)]
    if missing:
        raise UserError(f"{what} needs {', '.join(missing)}, which this installation of "
                        f"schedc lacks", help=f"pip install 'schedc[{extra}]' (or "
                        "'schedc[all]' for every optional part)")


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken installation is not one to run
        return False
