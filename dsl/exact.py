"""Exact numbers as text: reals are exact rationals (``semantics/numbers``), read and shown
exactly."""

from __future__ import annotations

from fractions import Fraction

__all__ = ["decimal_text", "json_number", "number_text", "parse_real", "show"]


def show(x) -> str:
    """A number for a message: ints and exact decimals as written, others as a fraction
    with an approximate decimal."""
    if not isinstance(x, Fraction) or x.denominator == 1:
        return str(int(x)) if isinstance(x, Fraction) else str(x)
    text = decimal_text(x)
    if text is not None:
        return text
    try:
        return f"{x} (about {float(x):.6g})"
    except OverflowError:
        return str(x)


def decimal_text(x: Fraction) -> str | None:
    """The exact decimal text of ``x`` if it has one (its denominator divides a power of
    ten), with a point so that it reads back as a real literal; else None."""
    d, twos, fives = x.denominator, 0, 0
    while d % 2 == 0:
        d, twos = d // 2, twos + 1
    while d % 5 == 0:
        d, fives = d // 5, fives + 1
    if d != 1:
        return None
    places = max(twos, fives)
    digits = str(abs(x.numerator) * 10 ** places // x.denominator).rjust(places + 1, "0")
    whole, frac = digits[: len(digits) - places], digits[len(digits) - places:]
    return ("-" if x < 0 else "") + whole + "." + (frac.rstrip("0") or "0")


def number_text(x: int | Fraction) -> str:
    """``x`` as it reads back exactly: an int, an exact decimal, else `p/q`."""
    if isinstance(x, Fraction):
        return decimal_text(x) or f"{x.numerator}/{x.denominator}"
    return str(x)


def parse_real(text: str) -> Fraction | None:
    """A real written as a decimal (`0.9`, `2.5e-3`, `4`) or a fraction (`1/3`), exactly;
    None if the text is not one (`inf`, `nan`, words)."""
    try:
        return Fraction(text.strip().replace("_", "x"))  # no digit separators
    except (ValueError, ZeroDivisionError):
        return None


def json_number(x: int | Fraction | bool) -> int | float | str | bool:
    """A state file's number, read back exactly (``runtime/workloads/state_file.py`` reads
    JSON numbers as exact decimals): a float whose shortest text is ``x`` exactly (9/10 is
    0.9), else the text `p/q`."""
    if not isinstance(x, Fraction):
        return x
    if x.denominator == 1:
        return int(x)
    try:
        f = float(x)
    except OverflowError:
        f = None
    return f if f is not None and Fraction(repr(f)) == x else f"{x.numerator}/{x.denominator}"
