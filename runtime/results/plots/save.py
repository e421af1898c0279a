"""Figures written as PNG or SVG: atomic, and the same bytes for the same figure (no date
or software version in the metadata, a fixed SVG hash salt)."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import TYPE_CHECKING

from schedc.runtime.atomicio import open_atomic

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FORMATS = {".png": "png", ".svg": "svg"}
DPI = 100  # modest: README figures stay small
_SALT = "schedc"  # SVG element ids derive from it: fixed, so the same figure, the same text


class FigureFormatError(ValueError):
    """A path whose suffix is neither .png nor .svg."""


def figure_format(path: str | os.PathLike[str]) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise FigureFormatError(f"{path}: a figure is written as .png or .svg, not "
                                f"{suffix or 'a file without suffix'!r}")
    return FORMATS[suffix]


def _metadata(fmt: str) -> dict[str, None]:
    return {"Date": None, "Creator": None} if fmt == "svg" else {"Software": None}


def save_figure(fig: Figure, path: str | os.PathLike[str]) -> None:
    """``fig`` as PNG or SVG by the suffix of ``path``, whole or not at all."""
    import matplotlib

    fmt = figure_format(path)
    with matplotlib.rc_context({"svg.hashsalt": _SALT}), \
            open_atomic(path, binary=True) as out:
        fig.savefig(out, format=fmt, dpi=DPI, metadata=_metadata(fmt))


def figure_svg(fig: Figure) -> str:
    """The figure as inline SVG text (no XML declaration), for an HTML page."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": _SALT}):
        fig.savefig(buffer, format="svg", dpi=DPI, metadata=_metadata("svg"))
    text = buffer.getvalue()
    start = text.find("<svg")
    return text[start:] if start >= 0 else text
