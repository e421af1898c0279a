"""Synthetic workloads (paper 002's model): determinism, bounds, moments, eq. 9, table I/O."""

from __future__ import annotations

import math
import random
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedc.runtime.workloads.synthetic import (
    SyntheticJob,
    SyntheticSpec,
    generate,
    hyperexponential,
    interarrival_for_utilisation,
    offered_utilisation,
    read_synthetic_table,
    total_computing_power,
    variate,
    write_csv_table,
)


def spec(**changes) -> SyntheticSpec:
    # Paper 002 table 1 defaults (D = 16, CV_s = 4, CV_a = 1, Pmax 1..32).
    base = dict(jobs=200, mean_interarrival=30.0, cv_interarrival=1.0, mean_demand=16.0,
                cv_demand=4.0, pmax_low=1, pmax_high=32, seed=7)
    return SyntheticSpec(**(base | changes))


def mean_cv(xs: list[float]) -> tuple[float, float]:
    m = statistics.fmean(xs)
    return m, statistics.pstdev(xs, m) / m


specs = st.builds(
    lambda n, ia, cva, d, cvd, lo, width, seed: spec(
        jobs=n, mean_interarrival=ia, cv_interarrival=cva, mean_demand=d, cv_demand=cvd,
        pmax_low=lo, pmax_high=lo + width, seed=seed),
    st.integers(1, 60),
    st.floats(0.01, 1e4),
    st.sampled_from([0.3, 1.0, 2.5]),
    st.floats(1e-3, 1e5),
    st.sampled_from([0.5, 1.0, 4.0]),
    st.integers(1, 64),
    st.integers(0, 64),
    st.integers(-(2**40), 2**40),
)


# --- determinism and shape ---------------------------------------------------------------


def test_same_seed_same_jobs_and_same_bytes(tmp_path):
    a, b = generate(spec()), generate(spec())
    assert a == b
    write_csv_table(a, tmp_path / "a.csv")
    write_csv_table(b, tmp_path / "b.csv")
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


def test_different_seeds_differ():
    a, b = generate(spec(seed=1)), generate(spec(seed=2))
    assert [j.submit for j in a] != [j.submit for j in b]
    assert [j.demand for j in a] != [j.demand for j in b]
    assert [j.pmax for j in a] != [j.pmax for j in b]


def test_arrival_sweep_keeps_demands_and_pmax():
    # Separate streams: changing only the arrival process leaves the jobs' sizes alone.
    a = generate(spec(mean_interarrival=10.0))
    b = generate(spec(mean_interarrival=50.0, cv_interarrival=3.0))
    assert [(j.demand, j.pmax) for j in a] == [(j.demand, j.pmax) for j in b]


@settings(max_examples=60, deadline=None)
@given(specs)
def test_jobs_are_well_formed(s):
    jobs = generate(s)
    assert [j.id for j in jobs] == list(range(1, s.jobs + 1))
    submits = [j.submit for j in jobs]
    assert all(isinstance(t, int) for t in submits)
    assert submits[0] >= 0
    assert submits == sorted(submits)
    assert all(j.demand > 0 and math.isfinite(j.demand) for j in jobs)
    assert all(s.pmax_low <= j.pmax <= s.pmax_high for j in jobs)


def test_pmax_roughly_uniform():
    jobs = generate(spec(jobs=4000, pmax_low=3, pmax_high=10))
    counts = {p: 0 for p in range(3, 11)}
    for j in jobs:
        counts[j.pmax] += 1  # KeyError if out of range
    assert all(400 <= c <= 600 for c in counts.values()), counts  # 500 expected, sd ~21


def test_pmax_single_value():
    assert {j.pmax for j in generate(spec(pmax_low=5, pmax_high=5))} == {5}


# --- moments -------------------------------------------------------------------------------


@pytest.mark.parametrize("cv", [1.0, 4.0])
def test_hyperexponential_moments(cv):
    rng = random.Random(2024)
    m, c = mean_cv([hyperexponential(rng, 10.0, cv) for _ in range(200_000)])
    assert m == pytest.approx(10.0, rel=0.04)
    assert c == pytest.approx(cv, rel=0.05)


def test_hyperexponential_rejects_cv_below_one():
    with pytest.raises(ValueError, match=r"hyperexponential cv: got 0\.5, needs"):
        hyperexponential(random.Random(0), 1.0, 0.5)


@pytest.mark.parametrize("cv", [0.25, 0.5, 0.9, 2.0])
def test_variate_moments(cv):
    rng = random.Random(99)
    m, c = mean_cv([variate(rng, 5.0, cv) for _ in range(50_000)])
    assert m == pytest.approx(5.0, rel=0.03)
    assert c == pytest.approx(cv, rel=0.05)


@pytest.mark.parametrize("cv_demand, tol", [(1.0, 0.03), (4.0, 0.08)])
def test_generated_demand_moments(cv_demand, tol):
    jobs = generate(spec(jobs=40_000, cv_demand=cv_demand, seed=3))
    m, c = mean_cv([j.demand for j in jobs])
    assert m == pytest.approx(16.0, rel=tol)
    assert c == pytest.approx(cv_demand, rel=tol)


@pytest.mark.parametrize("cv_a", [1.0, 3.0, 0.5])
def test_generated_interarrival_moments(cv_a):
    # A mean of 1000 s makes the rounding to whole seconds negligible.
    jobs = generate(spec(jobs=30_000, mean_interarrival=1000.0, cv_interarrival=cv_a, seed=5))
    submits = [0] + [j.submit for j in jobs]
    m, c = mean_cv([b - a for a, b in zip(submits, submits[1:], strict=False)])
    assert m == pytest.approx(1000.0, rel=0.05)
    assert c == pytest.approx(cv_a, rel=0.06)


# --- eq. 9 ---------------------------------------------------------------------------------


def test_offered_utilisation_paper_example():
    # Table 1: D = 16 on 64 processors; 80% utilisation (section 6.2) needs lambda = 3.2 / s.
    t = interarrival_for_utilisation(0.8, 16.0, 64)
    assert t == pytest.approx(16.0 / (0.8 * 64))
    assert offered_utilisation(spec(mean_interarrival=t), 64) == pytest.approx(0.8)


@given(st.floats(0.01, 5.0), st.floats(1e-2, 1e6), st.floats(0.5, 1e5))
def test_utilisation_round_trip(u, d, power):
    t = interarrival_for_utilisation(u, d, power)
    assert offered_utilisation(spec(mean_interarrival=t, mean_demand=d), power) == (
        pytest.approx(u, rel=1e-12))


def test_total_computing_power():
    bpus = [1.0] * 32 + [2.0] * 32
    assert total_computing_power(bpus) == 96.0
    assert total_computing_power([1.0, 2.0], [0.5, 0.25]) == 2.0
    with pytest.raises(ValueError, match=r"local_loads\[1\]: got 1\.0"):
        total_computing_power([1.0, 2.0], [0.0, 1.0])
    with pytest.raises(ValueError, match="one per processor"):
        total_computing_power([1.0, 2.0], [0.0])


@pytest.mark.parametrize("bad", [0, -1.0, math.inf, math.nan])
def test_utilisation_rejects_bad_power(bad):
    with pytest.raises(ValueError, match="total_power: got"):
        offered_utilisation(spec(), bad)
    with pytest.raises(ValueError, match="total_power: got"):
        interarrival_for_utilisation(0.5, 16.0, bad)


# --- table I/O -----------------------------------------------------------------------------


def test_write_read_round_trip(tmp_path):
    jobs = generate(spec(jobs=500, mean_demand=1e-3))
    path = tmp_path / "w.csv"
    write_csv_table(jobs, path)
    assert path.read_text().splitlines()[0] == "id,submit,demand,pmax"
    assert read_synthetic_table(path) == jobs
    assert [p.name for p in tmp_path.iterdir()] == ["w.csv"]  # no temp file left behind


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(min_value=5e-324, max_value=1e300, allow_nan=False,
                          allow_infinity=False), min_size=1, max_size=20))
def test_demand_floats_round_trip_exactly(tmp_path_factory, demands):
    jobs = tuple(SyntheticJob(i, i // 3, d, 1 + i % 4) for i, d in enumerate(demands, 1))
    path = tmp_path_factory.mktemp("rt") / "t.csv"
    write_csv_table(jobs, path)
    back = read_synthetic_table(path)
    assert back == jobs
    assert [d.demand.hex() for d in back] == [d.hex() for d in demands]


def test_failed_write_keeps_old_file(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("old\n")

    def broken():
        yield SyntheticJob(1, 0, 1.0, 1)
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        write_csv_table(broken(), path)
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["t.csv"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("", r":1: expected header 'id,submit,demand,pmax', got an empty file"),
        ("id,submit,run_time,pmax\n", r":1: expected header .*got 'id,submit,run_time,pmax'"),
        ("id,submit,demand,pmax\n1,0,2.5\n", r":2: expected 4 columns .*found 3"),
        ("id,submit,demand,pmax\n1,0,2.5,4\n2,x,1.0,1\n", r":3: submit 'x' is not an integer"),
        ("id,submit,demand,pmax\n1,0,abc,4\n", r":2: demand 'abc' is not a number"),
        ("id,submit,demand,pmax\n1,0,0.0,4\n", r":2: demand '0\.0' must be a finite number > 0"),
        ("id,submit,demand,pmax\n1,0,nan,4\n", r":2: demand 'nan' must be"),
        ("id,submit,demand,pmax\n0,0,1.0,4\n", r":2: id 0 must be >= 1"),
        ("id,submit,demand,pmax\n1,-1,1.0,4\n", r":2: submit -1 must be >= 0"),
        ("id,submit,demand,pmax\n1,0,1.0,0\n", r":2: pmax 0 must be >= 1"),
        ("id,submit,demand,pmax\n1,5,1.0,1\n2,4,1.0,1\n", r":3: submit 4 is before .* 5"),
        ("id,submit,demand,pmax\n1,5,1.0,1\n1,6,1.0,1\n", r":3: duplicate id 1"),
        ("id,submit,demand,pmax\n1,5,1.0,1\n\n", r":3: expected 4 columns"),
    ],
)
def test_read_errors(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"^" + str(path).replace("\\", "\\\\") + message):
        read_synthetic_table(path)


# --- validation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(jobs=0), "SyntheticSpec.jobs: got 0, needs an integer >= 1"),
        (dict(jobs=2.0), "SyntheticSpec.jobs: got 2.0, needs an integer >= 1"),
        (dict(jobs=True), "SyntheticSpec.jobs: got True, needs an integer >= 1"),
        (dict(mean_interarrival=0.0),
         "SyntheticSpec.mean_interarrival: got 0.0, needs a finite number > 0"),
        (dict(mean_interarrival=math.inf),
         "SyntheticSpec.mean_interarrival: got inf, needs a finite number > 0"),
        (dict(cv_interarrival=-1.0),
         "SyntheticSpec.cv_interarrival: got -1.0, needs a finite number > 0"),
        (dict(mean_demand=math.nan),
         "SyntheticSpec.mean_demand: got nan, needs a finite number > 0"),
        (dict(cv_demand=0), "SyntheticSpec.cv_demand: got 0, needs a finite number > 0"),
        (dict(cv_demand="4"), "SyntheticSpec.cv_demand: got '4', needs a finite number > 0"),
        (dict(pmax_low=0), "SyntheticSpec.pmax_low: got 0, needs an integer >= 1"),
        (dict(pmax_high=0), "SyntheticSpec.pmax_high: got 0, needs an integer >= 1"),
        (dict(pmax_low=8, pmax_high=4),
         "SyntheticSpec.pmax_high: got 4, needs an integer >= pmax_low (8)"),
        (dict(seed=1.5), "SyntheticSpec.seed: got 1.5, needs an integer"),
    ],
)
def test_spec_validation(changes, message):
    with pytest.raises(ValueError) as err:
        spec(**changes)
    assert str(err.value) == message


def test_spec_is_keyword_only_and_frozen():
    with pytest.raises(TypeError):
        SyntheticSpec(10, 1.0, 1.0, 16.0, 4.0, 1, 32)  # type: ignore[misc]
    s = spec()
    with pytest.raises(AttributeError):
        s.jobs = 3  # type: ignore[misc]
