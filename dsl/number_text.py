"""Exact numbers as text: reals are exact rationals (``semantics/numbers``), read and shown
exactly."""

from __future__ import annotations

import re
from fractions import Fraction

__all__ = ["MAX_CAPACITY", "MAX_DIGITS", "MAX_EXPONENT", "MAX_TIME", "MAX_VALUE", "RANGE_HELP",
           "bound_text", "decimal_text", "json_number", "number_problem", "number_text",
           "parse_real", "range_problem", "read_int", "short", "show"]

# The numbers schedc reads (docs/reference/limits.md), checked on the text before Python
# converts it:
# `Fraction("1e999999999")` builds a billion-digit integer (it never ends), and `int()`
# refuses more than 4,300 digits with an error that names no place.
MAX_DIGITS = 1000  # digits of one number as written
MAX_EXPONENT = 400  # |e| of a decimal exponent: 1e400 and 1e-400 are read, 1e401 is not
# What the engine holds: every integer of a workload (times, requests, ids, labels) and a
# machine's capacities lie within +-MAX_VALUE; a float holds each exactly (2^53 > 10^15).
MAX_VALUE = 10**15
MAX_TIME = MAX_VALUE  # seconds, or a job table's time units
MAX_CAPACITY = MAX_VALUE  # units of one resource
RANGE_HELP = "schedc reads numbers of up to 1,000 digits with exponents from -400 to 400"
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?")
_INT = re.compile(r"[ \t]*[+-]?([0-9]+)[ \t]*")


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


def short(text: str, width: int = 24) -> str:
    """``text`` cut to ``width`` characters for a message (a number may have thousands)."""
    return text if len(text) <= width else text[:width - 1] + "…"


def number_problem(text: str) -> str | None:
    """Why a number written in ``text`` (each one, in a formula such as `1/3` or `2e3 * x`)
    is beyond what schedc reads: more than MAX_DIGITS digits or an exponent past
    MAX_EXPONENT; None if every number in it is within."""
    for found in _NUMBER.finditer(text):
        mantissa, _, exponent = found.group().lower().partition("e")
        digits = sum(c.isdigit() for c in mantissa)
        if digits > MAX_DIGITS:
            return (f"the number `{short(found.group())}` has {digits:,} digits: schedc reads "
                    f"at most {MAX_DIGITS:,}")
        power = exponent.lstrip("+-").lstrip("0")
        if len(power) > 4 or (power and int(power) > MAX_EXPONENT):
            return (f"the exponent of `{short(found.group())}` is out of range: schedc reads "
                    f"exponents from -{MAX_EXPONENT} to {MAX_EXPONENT}")
    return None


def read_int(text: str) -> int | None:
    """``text`` as an integer if it is ASCII digits with an optional sign (and blanks
    around), of at most MAX_DIGITS digits; else None. Stricter than ``int``, which also takes
    `1_000` and other scripts' digits (`١٢٣`), and fails past 4,300 digits."""
    found = _INT.fullmatch(text)
    if found is None or len(found.group(1)) > MAX_DIGITS:
        return None
    return int(text)


def range_problem(value: int | Fraction | float, low: int | Fraction, high: int | Fraction,
                  what: str) -> str | None:
    """A message if ``value`` lies outside [low, high] (``what`` names it), else None."""
    if low <= value <= high:
        return None
    shown = short(str(value)) if isinstance(value, int) else _approx(value)
    return f"{what} is {shown}: outside the supported range [{bound_text(low)}, {bound_text(high)}]"


def _approx(x: Fraction | float) -> str:
    """A value out of range, shortly: 1e-300, not three hundred zeros."""
    try:
        return f"{float(x):.6g}"
    except OverflowError:
        return short(show(x))


def bound_text(x: int | Fraction) -> str:
    """A limit as people write it: 10^15, -10^15, 2^63 - 1, 10^-12."""
    if isinstance(x, Fraction) and x.denominator != 1:
        if x.numerator == 1 and bound_text(x.denominator).startswith("10^"):
            return bound_text(x.denominator).replace("^", "^-")
        return show(x)
    size, sign = abs(int(x)), "-" if x < 0 else ""
    for tail, whole in (("", size), (" - 1", size + 1)):
        for base, n in ((10, len(str(whole)) - 1), (2, whole.bit_length() - 1)):
            if n > 3 and base ** n == whole:
                return f"{sign}{base}^{n}{tail}"
    return str(x)


def parse_real(text: str) -> Fraction | None:
    """A real written as a decimal (`0.9`, `2.5e-3`, `4`) or a fraction (`1/3`), exactly;
    None if the text is not one (`inf`, `nan`, words) or is beyond what schedc reads
    (``number_problem``)."""
    if number_problem(text) is not None:
        return None
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
