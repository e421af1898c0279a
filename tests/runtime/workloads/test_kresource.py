"""K-resource workloads (papers/004 section 3.1, runtime/workloads/kresource.py): the requirement
draws, the Poisson arrivals, the queue-length calibration, the job table with its capacity
line, `schedc workload kresource`, and the packed K-resource plan (``ProfileK``)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedc.dsl import compile_file
from schedc.dsl.machines import with_resources
from schedc.runtime.cli.main import main
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.packing import Packing
from schedc.runtime.engine.profile import Profile, ProfileK
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.jobs import Job, RunningJob
from schedc.runtime.results.metrics import compute_metrics
from schedc.runtime.tools import calibrate as cal
from schedc.runtime.workloads import kresource as kr
from schedc.runtime.workloads.load import load_workload
from schedc.runtime.workloads.workload import WorkloadError
from tests.support.repo import ROOT

EXAMPLES = ROOT / "examples"
SOURCE = tuple(kr.SourceJob(size, run, run + 10) for size, run in
               ((1, 50), (8, 100), (16, 30), (3, 400), (64, 20), (2, 5), (32, 900), (5, 60)))


# --- draws and arrivals ----------------------------------------------------------------


@pytest.mark.parametrize("distribution", kr.DISTRIBUTIONS)
@pytest.mark.parametrize("k", [1, 2, 4, 8])
def test_the_largest_requirement_is_the_size(distribution: str, k: int) -> None:
    draws = kr.draw(SOURCE, k, distribution, seed=7)
    for job, req in zip(SOURCE, draws.requests, strict=True):
        assert len(req) == k
        assert max(req) == job.size  # the job's dominant requirement is the trace's size
        assert all(1 <= r <= job.size for r in req)


def test_draws_are_seeded_and_the_distributions_differ() -> None:
    a = kr.draw(SOURCE * 50, 4, "uniform", seed=1)
    assert a == kr.draw(SOURCE * 50, 4, "uniform", seed=1)
    assert a != kr.draw(SOURCE * 50, 4, "uniform", seed=2)
    # exponential draws leave most requirements small next to the largest (the paper's
    # reason FF packs them well): a lower mean share of the size than uniform draws
    def mean_share(d: kr.Draws) -> float:
        return sum(sum(req) / (len(req) * job.size)
                   for job, req in zip(SOURCE * 50, d.requests, strict=True)) / len(d.requests)
    assert mean_share(kr.draw(SOURCE * 50, 4, "exponential", 1)) < mean_share(a) - 0.1


def test_bad_k_or_distribution_is_refused() -> None:
    with pytest.raises(ValueError, match="K must be"):
        kr.draw(SOURCE, 0, "uniform", 0)
    with pytest.raises(ValueError, match="unknown distribution `normal`"):
        kr.draw(SOURCE, 2, "normal", 0)
    with pytest.raises(ValueError, match="inter-arrival"):
        kr.workload(SOURCE, kr.draw(SOURCE, 2, "uniform", 0), 64, 0.0)


def test_arrivals_stretch_with_the_mean_gap() -> None:
    draws = kr.draw(SOURCE, 3, "uniform", seed=3)
    w1 = kr.workload(SOURCE, draws, 64, 100.0)
    w2 = kr.workload(SOURCE, draws, 64, 200.0)
    assert w1.resources == ("cpus", "r2", "r3") and w1.capacities == (64, 64, 64)
    assert [j.request for j in w1.jobs] == [j.request for j in w2.jobs]
    clock = 0.0
    for job, gap, j1, j2 in zip(SOURCE, draws.gaps, w1.jobs, w2.jobs, strict=True):
        clock += gap
        assert j1.submit == math.floor(clock * 100) and j2.submit == math.floor(clock * 200)
        assert (j1.run_time, j1.estimate) == (job.run_time, job.estimate)


# --- calibration --------------------------------------------------------------------------


@pytest.mark.parametrize("start", [1.0, 37.0, 5000.0])
def test_calibration_finds_the_gap_from_either_side(start: float) -> None:
    seen = []

    def queue(gap: float) -> float:  # a decreasing queue length, 128 at gap 50
        seen.append(gap)
        return 6400.0 / gap

    found = cal.calibrate(queue, 128, start, tolerance=0.01)
    assert abs(found.queue_length - 128) <= 1.28
    assert found.mean_interarrival == pytest.approx(50, rel=0.011)
    assert [s[0] for s in found.steps] == seen  # every simulation is recorded


def test_calibration_that_cannot_reach_the_target_says_so() -> None:
    with pytest.raises(ValueError, match=r"no arrival rate .* 64 in 30 simulations "
                       r"\(closest: 3 "):
        cal.calibrate(lambda gap: 3.0, 64, 100.0)


def test_calibrated_baseline_reaches_the_queue_length() -> None:
    source = tuple(kr.SourceJob(s, r, r) for s, r in
                   ((1 + (7 * i) % 16, 10 + (13 * i) % 90) for i in range(300)))
    draws = kr.draw(source, 2, "uniform", seed=0)
    ff = to_runtime(with_resources(compile_file(EXAMPLES / "ff-easy.pol"), 2))
    found = cal.calibrate_rate(ff, source, draws, 16, 20, tolerance=0.05)
    assert abs(found.queue_length - 20) <= 1.0
    again = simulate(ff, kr.workload(source, draws, 16, found.mean_interarrival))
    assert compute_metrics(again).mean_queue == found.queue_length


# --- the job table ----------------------------------------------------------------------


def test_table_round_trips_with_its_capacity_line(tmp_path: Path) -> None:
    w = kr.workload(SOURCE, kr.draw(SOURCE, 3, "exponential", 5), 64, 30.0)
    path = tmp_path / "k3.csv"
    kr.write_table(w, path, comment="made by a test")
    lines = path.read_text().splitlines()
    assert lines[:3] == ["# made by a test", "# capacity cpus=64 r2=64 r3=64",
                         "id,submit,run_time,estimate,cpus,r2,r3"]
    back = load_workload(path, ("cpus", "r2", "r3"))  # no capacities given: the line's
    assert back.capacities == (64, 64, 64)
    assert [(j.submit, j.run_time, j.estimate, j.request) for j in back.jobs] == \
        [(j.submit, j.run_time, j.estimate, j.request) for j in w.jobs]
    # an explicit capacity overrides the line
    assert load_workload(path, ("cpus", "r2", "r3"), {"r2": 100}).capacities == (64, 100, 64)


def test_bad_capacity_line_points_at_the_word(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("# a comment\n# capacity cpus=16 r2=lots\nid,submit,run_time,estimate,cpus\n")
    with pytest.raises(WorkloadError) as caught:
        load_workload(path)
    err = caught.value
    assert (err.line, err.col) == (2, 20) and "bad capacity `r2=lots`" in err.message
    # a bad row's line number counts the comment lines too
    path.write_text("# capacity cpus=16\nid,submit,run_time,estimate,cpus\n1,0,5,5,x\n")
    with pytest.raises(WorkloadError) as caught:
        load_workload(path)
    assert caught.value.line == 3


# --- the command line -------------------------------------------------------------------


def _swf(tmp_path: Path) -> Path:
    rows = [f"{i} {i * 7} -1 {20 + (i * 37) % 200} {1 + (i * 5) % 16} -1 -1 "
            f"{1 + (i * 5) % 16} 300 -1 1 1 1 1 1 -1 -1 -1" for i in range(1, 121)]
    path = tmp_path / "small.swf"
    path.write_text("; MaxProcs: 16\n" + "\n".join(rows) + "\n")
    return path


def test_cli_generates_a_calibrated_workload_that_runs(tmp_path: Path, capsys) -> None:
    out = tmp_path / "k4.csv"
    code = main(["workload", "kresource", "-o", str(out), "--from", str(_swf(tmp_path)),
                 "--resources", "4", "--distribution", "exponential", "--queue-length", "8",
                 "--tolerance", "0.1", "--seed", "3"])
    text = capsys.readouterr().out
    assert code == 0, text
    assert "wrote 120 jobs on 4 resources (exponential, capacity 16 each)" in text
    assert "ff_easy's mean queue length" in text
    assert out.read_text().splitlines()[1] == "# capacity cpus=16 r2=16 r3=16 r4=16"
    code = main(["compare", str(EXAMPLES / "ff-easy.pol"), str(EXAMPLES / "bb-easy.pol"),
                 "--workload", str(out), "--resources", "4", "--json"])
    import json
    result = json.loads(capsys.readouterr().out)
    assert code == 0
    ff = result["policies"][0]["metrics"]
    assert ff["jobs"] == 120 and abs(ff["mean_queue"] - 8) <= 0.8
    # the table shows papers/004's measures on K >= 2 resources
    code = main(["compare", str(EXAMPLES / "ff-easy.pol"), "--workload", str(out),
                 "--resources", "4"])
    table = capsys.readouterr().out
    assert code == 0 and "queue" in table and "w. resp." in table
    main(["compare", str(EXAMPLES / "ff-easy.pol"), "--workload", str(out)])  # cpus only
    assert "w. resp." not in capsys.readouterr().out
    # the same command, the same bytes
    again = tmp_path / "again.csv"
    main(["workload", "kresource", "-o", str(again), "--from", str(_swf(tmp_path)),
          "--resources", "4", "--distribution", "exponential", "--queue-length", "8",
          "--tolerance", "0.1", "--seed", "3"])
    capsys.readouterr()
    assert again.read_bytes() == out.read_bytes()


@pytest.mark.parametrize(("argv", "message"), [
    (["--resources", "0", "--mean-interarrival", "5"], "--resources must be at least 1"),
    (["--resources", "2", "--mean-interarrival", "-1"], "--mean-interarrival must be"),
    (["--resources", "2", "--queue-length", "8", "--baseline", "nope.pol"],
     "policy file not found: nope.pol"),
    (["--resources", "2", "--queue-length", "8", "--baseline",
      str(EXAMPLES / "easy-memory.pol")], "the policy's machine has resources cpus, memory"),
    (["--resources", "2", "--mean-interarrival", "5", "--from", "missing.swf"],
     "trace file not found"),
    (["--resources", "2", "--mean-interarrival", "5", "--jobs", "0"],
     "--jobs must be at least 1"),
    (["--resources", "2", "--queue-length", "100000", "--tolerance", "0.01"],
     "no arrival rate gave a mean queue length"),
])
def test_cli_mistakes(tmp_path: Path, capsys, argv: list[str], message: str) -> None:
    source = ["--from", str(_swf(tmp_path))] if "--from" not in argv else []
    code = main(["workload", "kresource", "-o", str(tmp_path / "w.csv"), *source, *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "help:" in err and "Traceback" not in err
    assert not (tmp_path / "w.csv").exists()


# --- the packed plan ----------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(st.data(), st.integers(2, 5))
def test_packed_profile_answers_as_the_plain_one(data, k: int) -> None:
    caps = tuple(data.draw(st.sampled_from([1, 7, 16, 1000, 2**25])) for _ in range(k))
    running = []
    for i in range(data.draw(st.integers(0, 5))):
        # at most 5 jobs of c // 5 each: the machine is not overcommitted (a packed field
        # below zero borrows from its guard, which no simulator state does)
        alloc = tuple(data.draw(st.integers(0, c // 5)) for c in caps)
        job = Job(i, i, 0, 5, data.draw(st.integers(1, 30)), alloc)
        running.append(RunningJob(job, 0, alloc))
    running.sort(key=lambda r: r.expected_end)
    free = [c - sum(r.alloc[x] for r in running) for x, c in enumerate(caps)]
    plain, packed = Profile(0, free, running), ProfileK(0, free, running, Packing(caps))
    for _ in range(data.draw(st.integers(1, 8))):
        req = tuple(data.draw(st.integers(0, c)) for c in caps)
        est = data.draw(st.integers(1, 40))
        at = data.draw(st.integers(0, len(plain.times) - 1))
        assert packed.fits_at(at, est, req) == plain.fits_at(at, est, req)
        start = plain.earliest(est, req)
        assert packed.earliest(est, req) == start
        plain.add(start, start + est, req)
        packed.add(start, start + est, req)
        assert packed.times == plain.times
        assert [packed.pack(f) for f in plain.free] == packed.free


def test_cli_malformed_source_is_located(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.swf"
    bad.write_text("; MaxProcs: 16\n1 0 -1 20 4 -1 -1 4 30 -1 1 1 1 1 1 -1 -1 -1\n2 x\n")
    code = main(["workload", "kresource", "-o", str(tmp_path / "w.csv"), "--from", str(bad),
                 "--resources", "2", "--mean-interarrival", "5"])
    err = capsys.readouterr().err
    assert code == 2 and f"{bad}:3:" in err and "Traceback" not in err
    assert not (tmp_path / "w.csv").exists()
