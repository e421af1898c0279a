"""Speedup models: hand-computed values, Downey's shape, time_at, and the spec round trip."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedc.runtime.speedup import (
    Amdahl,
    Downey,
    Linear,
    Measured,
    SpeedupError,
    downey_speedup,
    format_speedup,
    parse_speedup,
)

TABLE = Measured(((1, 1000.0), (2, 520.0), (4, 280.0), (8, 170.0)))


# --- hand-computed values ----------------------------------------------------------------


@pytest.mark.parametrize(("sigma", "n", "expected"), [
    # sigma = 0: linear up to A = 8, then flat at 8
    (0.0, 1, 1.0), (0.0, 4, 4.0), (0.0, 8, 8.0), (0.0, 12, 8.0), (0.0, 100, 8.0),
    # sigma = 0.5, A = 8; first piece: 8n / (8 + 0.25 (n - 1))
    (0.5, 4, 128 / 35),   # 32 / 8.75
    (0.5, 8, 256 / 39),   # 64 / 9.75
    # second piece: 8n / (0.5 * 7.5 + 0.75 n) = 8n / (3.75 + 0.75 n)
    (0.5, 12, 128 / 17),  # 96 / 12.75
    (0.5, 15, 8.0),       # 2A - 1 = 15: 120 / 15
    (0.5, 100, 8.0),
    # sigma = 1, A = 8: every piece is 16n / (15 + n) up to n = 15
    (1.0, 5, 4.0),        # 80 / 20
    (1.0, 8, 128 / 23),
    (1.0, 15, 8.0),       # 240 / 30
    (1.0, 16, 8.0),
    # sigma = 2, A = 8: 24n / (2 (n + 7) + 8) = 12n / (n + 11) up to 8 + 16 - 2 = 22
    (2.0, 1, 1.0),        # 12 / 12
    (2.0, 11, 6.0),       # 132 / 22
    (2.0, 22, 8.0),       # 264 / 33
    (2.0, 30, 8.0),
])
def test_downey_hand_values(sigma, n, expected):
    assert Downey(8, sigma).speedup(n) == pytest.approx(expected, rel=1e-12)


def test_amdahl_and_linear_hand_values():
    assert Amdahl(0.25).speedup(4) == pytest.approx(16 / 7)  # 1 / (0.25 + 0.75 / 4)
    assert Amdahl(0.1).speedup(10) == pytest.approx(1 / 0.19)  # 1 / (0.1 + 0.09)
    assert Amdahl(0.0).speedup(64) == pytest.approx(64)
    assert Amdahl(1.0).speedup(64) == 1.0
    assert Linear().speedup(7) == 7.0


def test_measured_speedup_interpolates_and_clamps():
    assert TABLE.speedup(1) == 1.0
    assert TABLE.speedup(2) == 1000 / 520
    assert TABLE.table_time(3) == 400.0  # halfway between 520 and 280
    assert TABLE.table_time(6) == 225.0  # halfway between 280 and 170
    assert TABLE.table_time(16) == 170.0  # clamped above the table
    # a table that starts above 1: T(1) is clamped to T(2), so S = 1 up to 2
    late = Measured(((2, 600.0), (4, 300.0)))
    assert late.speedup(1) == late.speedup(2) == 1.0 and late.speedup(4) == 2.0


def test_processor_counts_below_one_are_rejected():
    for model in (Linear(), Amdahl(0.5), Downey(4, 1), TABLE):
        with pytest.raises(SpeedupError, match="needs n >= 1"):
            model.speedup(0)
        with pytest.raises(SpeedupError, match="needs base_size >= 1"):
            model.time_at(10.0, 0, 2)
        with pytest.raises(SpeedupError, match="base_time >= 0"):
            model.time_at(-1.0, 1, 2)


# --- Downey's shape ------------------------------------------------------------------------

A_ = st.floats(1, 256)
SIGMA = st.floats(0, 3)
N = st.integers(1, 1024)
TOL = 1e-9


# The paper's pieces, transcribed independently of the module.
def low1(A, s, n):
    return A * n / (A + s * (n - 1) / 2)


def low2(A, s, n):
    return A * n / (s * (A - 0.5) + n * (1 - s / 2))


def high(A, s, n):
    return n * A * (s + 1) / (s * (n + A - 1) + A)


def knees(A, s):
    return (A, 2 * A - 1) if s <= 1 else (A + A * s - s,)


@given(A_, SIGMA, N)
def test_downey_shape(A, sigma, n):
    m = Downey(A, sigma)
    s = m.speedup(n)
    assert m.speedup(1) == pytest.approx(1.0, rel=1e-12)
    assert m.speedup(n + 1) >= s * (1 - TOL)  # non-decreasing
    assert s <= n * (1 + TOL) and s <= A * (1 + TOL)
    if n >= knees(A, sigma)[-1]:
        assert s == A


@given(A_, SIGMA)
def test_downey_pieces_meet_at_the_breakpoints(A, sigma):
    if sigma <= 1:
        b1, b2 = knees(A, sigma)
        assert low1(A, sigma, b1) == pytest.approx(low2(A, sigma, b1), rel=TOL)
        assert low2(A, sigma, b2) == pytest.approx(A, rel=TOL)
    else:
        (b,) = knees(A, sigma)
        assert high(A, sigma, b) == pytest.approx(A, rel=TOL)
    # the module's function has no jump either: compare just below and just above each knee
    for b in knees(A, sigma):
        below = downey_speedup(A, sigma, math.nextafter(b, 0))
        above = downey_speedup(A, sigma, math.nextafter(b, math.inf))
        assert below == pytest.approx(above, rel=TOL)


@given(A_, st.floats(1, 1024))
def test_downey_branches_agree_at_sigma_one(A, n):
    piece = low1 if n <= A else low2 if n <= 2 * A - 1 else None
    if piece is not None:
        assert piece(A, 1.0, n) == pytest.approx(high(A, 1.0, n), rel=TOL)


@given(st.integers(1, 256), st.integers(0, 3), N)
def test_downey_matches_the_pieces_at_integral_knees(A, sigma, n):
    # with integers every knee is a processor count, so the discrete S hits it exactly
    m = Downey(A, sigma)
    for b in knees(A, sigma):
        assert m.speedup(int(b)) == pytest.approx(
            low1(A, sigma, b) if b == A and sigma <= 1 else A, rel=TOL)
    if sigma <= 1:
        expected = low1(A, sigma, n) if n <= A else low2(A, sigma, n) if n <= 2 * A - 1 else A
    else:
        expected = high(A, sigma, n) if n <= A + A * sigma - sigma else A
    assert m.speedup(n) == pytest.approx(expected, rel=TOL)


# --- time_at -------------------------------------------------------------------------------

MODELS = st.one_of(
    st.just(Linear()),
    st.builds(Amdahl, st.floats(0, 1)),
    st.builds(Downey, A_, SIGMA),
    st.just(TABLE),
)


@given(MODELS, st.floats(0, 1e7), N)
def test_time_at_its_own_size_is_the_base_time(model, t, p):
    assert model.time_at(t, p, p) == t


@given(st.floats(0, 1e7), st.integers(1, 512))
def test_linear_time_halves_on_twice_the_processors(t, p):
    assert Linear().time_at(t, p, 2 * p) == t / 2


def test_analytic_time_at_uses_the_sequential_time():
    # Amdahl f = 0.25: S(4) = 16/7, S(1) = 1, so L = 100 * 16/7 and T(1) = L
    assert Amdahl(0.25).time_at(100.0, 4, 1) == pytest.approx(1600 / 7)
    assert Downey(8, 2).time_at(60.0, 11, 22) == pytest.approx(45.0)  # 60 * 6 / 8


def test_measured_time_at_reproduces_interpolates_and_clamps():
    for p, tp in TABLE.points:
        for n, tn in TABLE.points:
            assert TABLE.time_at(tp, p, n) == tn  # exact, not approx
    assert TABLE.time_at(520.0, 2, 3) == 400.0
    assert TABLE.time_at(1040.0, 2, 4) == 560.0  # the table scaled by 2
    assert TABLE.time_at(1000.0, 1, 100) == 170.0  # clamped above
    late = Measured(((4, 300.0), (8, 200.0)))
    assert late.time_at(300.0, 4, 1) == 300.0  # clamped below
    assert late.time_at(150.0, 8, 2) == 225.0  # base clamped too: 300 * 150 / 200


# --- parse and format ----------------------------------------------------------------------

FINITE = {"allow_nan": False, "allow_infinity": False}
POINTS = st.dictionaries(
    st.integers(1, 10**6), st.floats(min_value=0, exclude_min=True, **FINITE),
    min_size=1, max_size=8,
).map(lambda d: Measured(tuple(sorted(d.items()))))
ANY_MODEL = st.one_of(
    st.just(Linear()),
    st.builds(Amdahl, st.floats(0, 1)),
    st.builds(Downey, st.floats(min_value=1, **FINITE), st.floats(min_value=0, **FINITE)),
    POINTS,
)


@given(ANY_MODEL)
def test_format_parse_round_trip(model):
    assert parse_speedup(format_speedup(model)) == model


def test_spec_examples():
    assert parse_speedup("linear") == Linear()
    assert parse_speedup("amdahl(0.05)") == Amdahl(0.05)
    assert parse_speedup("  downey ( 32 , 1.0 ) ") == Downey(32, 1.0)
    assert parse_speedup("measured(1:1000, 2 : 520,4:280)") == Measured(
        ((1, 1000.0), (2, 520.0), (4, 280.0)))
    assert format_speedup(Downey(32, 1.0)) == "downey(32, 1)"
    assert format_speedup(Amdahl(0.05)) == "amdahl(0.05)"
    assert format_speedup(TABLE) == "measured(1:1000, 2:520, 4:280, 8:170)"
    with pytest.raises(TypeError, match="not a speedup model"):
        format_speedup("linear")


@pytest.mark.parametrize(("text", "message"), [
    ("", "empty speedup spec; models: linear, amdahl"),
    ("   ", "empty speedup spec"),
    ("amdahl(0.05", r"bad speedup spec `amdahl\(0.05`; expected name or name\(args\)"),
    ("dowey(32, 1)", r"unknown speedup model `dowey`; did you mean `downey`\? models: linear"),
    ("Linear", r"unknown speedup model `Linear`; did you mean `linear`\?"),
    ("gustafson", r"unknown speedup model `gustafson`; models: linear, amdahl\(f\)"),
    ("linear(2)", r"linear takes no arguments, got `linear\(2\)`"),
    ("amdahl", r"amdahl needs \(f\), e.g. amdahl\(0.05\)"),
    ("amdahl()", r"amdahl takes 1 argument \(f\), got 0"),
    ("amdahl(0.1, 0.2)", r"amdahl takes 1 argument \(f\), got 2"),
    ("amdahl(x)", "amdahl: f must be a number, got `x`"),
    ("amdahl(1.5)", "amdahl needs 0 <= f <= 1, got 1.5"),
    ("amdahl(nan)", "amdahl needs 0 <= f <= 1, got nan"),
    ("downey", r"downey needs \(A, sigma\), e.g. downey\(32, 1.0\)"),
    ("downey(32)", r"downey takes 2 arguments \(A, sigma\), got 1"),
    ("downey(a, 1)", "downey: A must be a number, got `a`"),
    ("downey(32, s)", "downey: sigma must be a number, got `s`"),
    ("downey(0.5, 1)", "downey needs A >= 1, got 0.5"),
    ("downey(32, -1)", "downey needs sigma >= 0, got -1.0"),
    ("downey(inf, 1)", "downey needs a finite A, got inf"),
    ("downey(32, nan)", "downey needs a finite sigma, got nan"),
    ("measured", r"measured needs at least one size:time pair, e.g. measured\(1:1000\)"),
    ("measured( )", "measured needs at least one size:time pair"),
    ("measured(1-1000)", "measured pair `1-1000` is not size:time, e.g. 4:280"),
    ("measured(1:10,)", "measured pair `` is not size:time"),
    ("measured(1.5:100)", "measured sizes must be integers >= 1, got `1.5`"),
    ("measured(0:100)", "measured sizes must be integers >= 1, got 0"),
    ("measured(1:abc)", "measured: time must be a number, got `abc`"),
    ("measured(1:0)", "measured times must be finite and > 0, got 0.0 at 1"),
    ("measured(1:inf)", "measured times must be finite and > 0, got inf at 1"),
    ("measured(1:10, 1:20)", "measured size 1 appears twice; sizes must be distinct"),
    ("measured(2:10, 1:20)", "measured sizes must be sorted increasing, got 1 after 2"),
])
def test_parse_errors(text, message):
    with pytest.raises(SpeedupError, match=message) as err:
        parse_speedup(text)
    assert "\n" not in str(err.value)
    assert isinstance(err.value, ValueError)


def test_constructors_validate_too():
    with pytest.raises(SpeedupError, match="at least one"):
        Measured(())
    with pytest.raises(SpeedupError, match="integers >= 1, got True"):
        Measured(((True, 1.0),))
    with pytest.raises(SpeedupError, match="amdahl needs 0 <= f <= 1, got -0.1"):
        Amdahl(-0.1)
