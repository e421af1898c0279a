"""Speedup models for moldable parallel jobs.

S(n) is the speedup on n >= 1 processors, with S(1) = 1:

* ``linear``: S(n) = n.
* ``amdahl(f)``: serial fraction f in [0, 1]; S(n) = 1 / (f + (1 - f) / n).
* ``downey(A, sigma)``: Downey, "A model for speedup of parallel programs", UC Berkeley
  CSD-97-933, 1997. A >= 1 is the average parallelism, sigma >= 0 its variance.

  sigma <= 1 (low variance)::

      S(n) = A n / (A + sigma (n - 1) / 2)             1 <= n <= A
      S(n) = A n / (sigma (A - 1/2) + n (1 - sigma/2))  A <= n <= 2A - 1
      S(n) = A                                          n >= 2A - 1

  sigma >= 1 (high variance)::

      S(n) = n A (sigma + 1) / (sigma (n + A - 1) + A)  1 <= n <= A + A sigma - sigma
      S(n) = A                                          beyond

  The pieces meet at every breakpoint, and both branches agree at sigma = 1. sigma = 0 is
  linear speedup capped at A.
* ``measured(n:t, ...)``: a table of measured run times, interpolated (see `Measured`).

Srinivasan et al., Cluster 2003 (papers/000) use Downey's model with A = the job's maximum
size, and the effective sequential time L = T(p) * S(p) from the recorded size p; that is
what `time_at` computes: T(n) = T(p) * S(p) / S(n) = L / S(n).

`parse_speedup` reads the compact spec shown in the bullets above (job-table cells, CLI
options) and `format_speedup` writes it back, so that the two round-trip exactly.
"""

from __future__ import annotations

import difflib
import math
import re
from bisect import bisect_left

from attrs import frozen

MODELS = ("linear", "amdahl", "downey", "measured")
USAGE = "models: linear, amdahl(f), downey(A, sigma), measured(n:t, ...)"


class SpeedupError(ValueError):
    """A bad speedup spec or model parameter; the message says what was expected."""

    @property
    def help(self) -> str:
        """A help line that does not repeat the message (which may list the models)."""
        return "for example downey(32, 1)" if USAGE in str(self) else USAGE


def _check_n(n: float, what: str = "n") -> None:
    # `not >=` also rejects NaN
    if not n >= 1:
        raise SpeedupError(f"speedup needs {what} >= 1 processors, got {n!r}")


def _check_time(t: float) -> None:
    if not (math.isfinite(t) and t >= 0):
        raise SpeedupError(f"time_at needs a finite base_time >= 0, got {t!r}")


@frozen(cache_hash=True)  # hashed at every cached time lookup (jobs.py)
class Linear:
    """Perfect speedup: S(n) = n."""

    def speedup(self, n: int) -> float:
        _check_n(n)
        return float(n)

    def time_at(self, base_time: float, base_size: int, n: int) -> float:
        return _rescale(self, base_time, base_size, n)


@frozen(cache_hash=True)
class Amdahl:
    """Amdahl's law: a fraction `serial` of the sequential work never parallelizes."""

    serial: float  # f in [0, 1]

    def __attrs_post_init__(self) -> None:
        # `not (0 <= f <= 1)` also rejects NaN
        if not 0 <= self.serial <= 1:
            raise SpeedupError(f"amdahl needs 0 <= f <= 1, got {self.serial!r}")

    def speedup(self, n: int) -> float:
        _check_n(n)
        f = self.serial
        return 1.0 / (f + (1.0 - f) / n)

    def time_at(self, base_time: float, base_size: int, n: int) -> float:
        return _rescale(self, base_time, base_size, n)


def downey_speedup(A: float, sigma: float, n: float) -> float:
    """Downey's S(n) for a real n >= 1 (exposed so tests can probe the breakpoints)."""
    if sigma <= 1:
        if n <= A:
            return A * n / (A + sigma * (n - 1) / 2)
        if n <= 2 * A - 1:
            return A * n / (sigma * (A - 0.5) + n * (1 - sigma / 2))
        return float(A)
    if n <= A + A * sigma - sigma:
        return n * A * (sigma + 1) / (sigma * (n + A - 1) + A)
    return float(A)


@frozen(cache_hash=True)
class Downey:
    """Downey's 1997 model: average parallelism A, variance of parallelism sigma."""

    A: float  # average parallelism, >= 1; also the speedup's ceiling
    sigma: float  # >= 0; 0 is linear up to A, larger bends the curve earlier

    def __attrs_post_init__(self) -> None:
        # finite checks: an infinite A would make every piece inf/inf
        for name, x in (("A", self.A), ("sigma", self.sigma)):
            if not math.isfinite(x):
                raise SpeedupError(f"downey needs a finite {name}, got {x!r}")
        if not self.A >= 1:
            raise SpeedupError(f"downey needs A >= 1, got {self.A!r}")
        if not self.sigma >= 0:
            raise SpeedupError(f"downey needs sigma >= 0, got {self.sigma!r}")

    def speedup(self, n: int) -> float:
        _check_n(n)
        return downey_speedup(self.A, self.sigma, n)

    def time_at(self, base_time: float, base_size: int, n: int) -> float:
        return _rescale(self, base_time, base_size, n)


@frozen(cache_hash=True)
class Measured:
    """Measured run times per processor count.

    T(n) is linearly interpolated between the two nearest measured sizes and clamped outside
    the table: below the smallest size it is the smallest size's time, above the largest the
    largest's (no extrapolation: we do not guess how a program scales where nobody ran it).
    S(n) = T(1) / T(n), so if the table starts above 1, S(n) = 1 up to its first size.
    """

    points: tuple[tuple[int, float], ...]  # (size, seconds), sizes strictly increasing

    def __attrs_post_init__(self) -> None:
        if not self.points:
            raise SpeedupError("measured needs at least one size:time pair")
        prev = 0
        for n, t in self.points:
            # bool is an int subclass, but True processors is surely a mistake
            if not isinstance(n, int) or isinstance(n, bool) or n < 1:
                raise SpeedupError(f"measured sizes must be integers >= 1, got {n!r}")
            if not (math.isfinite(t) and t > 0):
                raise SpeedupError(f"measured times must be finite and > 0, got {t!r} at {n}")
            if n == prev:
                raise SpeedupError(f"measured size {n} appears twice; sizes must be distinct")
            if n < prev:
                raise SpeedupError(
                    f"measured sizes must be sorted increasing, got {n} after {prev}")
            prev = n

    def table_time(self, n: float) -> float:
        """The table's run time at n: exact at table sizes, interpolated, clamped outside."""
        sizes = [p[0] for p in self.points]
        i = bisect_left(sizes, n)
        if i < len(sizes) and sizes[i] == n:
            return float(self.points[i][1])
        if i == 0:
            return float(self.points[0][1])
        if i == len(sizes):
            return float(self.points[-1][1])
        (n0, t0), (n1, t1) = self.points[i - 1], self.points[i]
        return t0 + (t1 - t0) * (n - n0) / (n1 - n0)

    def speedup(self, n: int) -> float:
        _check_n(n)
        return self.table_time(1) / self.table_time(n)

    def time_at(self, base_time: float, base_size: int, n: int) -> float:
        """The table scaled to pass through (base_size, base_time), read at n."""
        _check_time(base_time)
        _check_n(base_size, "base_size")
        _check_n(n)
        if n == base_size:
            return float(base_time)  # exact, not base_time * T / T
        # the ratio first: it is exactly 1.0 when base_time is the table's own time, so a
        # table point then comes back exactly
        return self.table_time(n) * (base_time / self.table_time(base_size))


Speedup = Linear | Amdahl | Downey | Measured


def _rescale(model: Linear | Amdahl | Downey, base_time: float, base_size: int, n: int) -> float:
    # T(n) = T(p) S(p) / S(n); the ratio first so that n == p gives base_time exactly
    _check_time(base_time)
    _check_n(base_size, "base_size")
    _check_n(n)
    return base_time * (model.speedup(base_size) / model.speedup(n))


_SPEC = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?")


def _number(model: str, what: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise SpeedupError(f"{model}: {what} must be a number, got `{text}`") from None


def _args(model: str, inner: str | None, names: str, count: int) -> list[str]:
    example = {"amdahl": "amdahl(0.05)", "downey": "downey(32, 1.0)"}[model]
    if inner is None:
        raise SpeedupError(f"{model} needs ({names}), e.g. {example}")
    args = [a.strip() for a in inner.split(",")] if inner.strip() else []
    if len(args) != count:
        raise SpeedupError(
            f"{model} takes {count} argument{'s' * (count > 1)} ({names}), got {len(args)}")
    return args


def _measured(inner: str | None) -> Measured:
    if inner is None or not inner.strip():
        raise SpeedupError("measured needs at least one size:time pair, e.g. measured(1:1000)")
    points = []
    for pair in inner.split(","):
        size, colon, time = pair.strip().partition(":")
        if not colon:
            raise SpeedupError(f"measured pair `{pair.strip()}` is not size:time, e.g. 4:280")
        try:
            n = int(size.strip())
        except ValueError:
            raise SpeedupError(
                f"measured sizes must be integers >= 1, got `{size.strip()}`") from None
        points.append((n, _number("measured", "time", time.strip())))
    return Measured(tuple(points))


def parse_speedup(text: str) -> Speedup:
    """Read `linear`, `amdahl(f)`, `downey(A, sigma)` or `measured(n:t, ...)`."""
    spec = text.strip()
    if not spec:
        raise SpeedupError(f"empty speedup spec; {USAGE}")
    m = _SPEC.fullmatch(spec)
    if m is None:
        raise SpeedupError(f"bad speedup spec `{spec}`; expected name or name(args); {USAGE}")
    name, inner = m.group(1), m.group(2)
    if name not in MODELS:
        close = difflib.get_close_matches(name, MODELS, n=1)
        hint = f"; did you mean `{close[0]}`?" if close else ";"
        raise SpeedupError(f"unknown speedup model `{name}`{hint} {USAGE}")
    if name == "linear":
        if inner is not None:
            raise SpeedupError(f"linear takes no arguments, got `{spec}`; write `linear`")
        return Linear()
    if name == "amdahl":
        (f,) = _args(name, inner, "f", 1)
        return Amdahl(_number(name, "f", f))
    if name == "downey":
        a, s = _args(name, inner, "A, sigma", 2)
        return Downey(_number(name, "A", a), _number(name, "sigma", s))
    return _measured(inner)


def _num(x: float) -> str:
    # integral values print as ints ("32", not "32.0"); everything else as repr, which
    # float() reads back to the same value
    if isinstance(x, int) or (math.isfinite(x) and x.is_integer() and abs(x) < 1e15):
        return str(int(x))
    return repr(float(x))


def format_speedup(model: Speedup) -> str:
    """The spec text of `model`; parse_speedup(format_speedup(m)) == m."""
    match model:
        case Linear():
            return "linear"
        case Amdahl(serial=f):
            return f"amdahl({_num(f)})"
        case Downey(A=a, sigma=s):
            return f"downey({_num(a)}, {_num(s)})"
        case Measured(points=points):
            return "measured(" + ", ".join(f"{n}:{_num(t)}" for n, t in points) + ")"
    raise TypeError(f"not a speedup model: {model!r}")
