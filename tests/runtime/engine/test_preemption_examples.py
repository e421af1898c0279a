"""Every preemption example (``examples/preemption/``) compiles and runs on a workload of its
kind under the loop's monitor (capacity, held memory, claims, residents re-derived each
pass), completes every job with its work done exactly once, and does preempt; and, through
the whole compile-and-run path, a policy that preempts by its order but whose jobs can never
be preempted runs the rigid schedule of the same policy without preemption."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import attrs
import pytest

from schedc.dsl import compile_file, compile_source
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.preemptive import simulate_preemptive
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.workloads import parsons_sevcik
from schedc.runtime.workloads.load import load_workload
from schedc.runtime.workloads.workload import Workload
from tests.support.shared_traces import TRACES, any_real_workload

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted((ROOT / "examples" / "preemption").glob("*.pol"))
# the Slurm examples preempt by queue numbers, which only LANL-CM5 records
LANL = ("slurm-suspend.pol", "slurm-requeue.pol")


def head(load: Workload, n: int) -> Workload:
    return attrs.evolve(load, jobs=load.jobs[:n])


def paper003(tmp_path: Path) -> Workload:
    """papers/003's workload (section 6.1) at a load of 0.8."""
    spec = parsons_sevcik.ParsonsSevcikSpec(
        jobs=400, mean_interarrival=parsons_sevcik.interarrival_for_load(0.8), seed=3)
    path = tmp_path / "ps.csv"
    parsons_sevcik.write_table(parsons_sevcik.generate(spec), path)
    return load_workload(str(path), resources=("cpus",), capacities={})


# papers/003's disciplines run on its workload (moldable jobs); run to completion: never
# preempt (LSF-RTC is not even preemptive: the rigid loop runs it)
PAPER003 = ("lsf-rtc.pol", "rtc-ad.pol", "rtc-adsubset.pol", "lsf-preempt.pol",
            "preempt-ad.pol", "lsf-mig.pol", "mig-ad.pol", "mig-adsubset.pol", "mall-ad.pol",
            "mall-adsubset.pol")
RUN_TO_COMPLETION = ("lsf-rtc.pol", "rtc-ad.pol", "rtc-adsubset.pol")


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_each_preemption_example_runs_and_preempts(path: Path, tmp_path: Path) -> None:
    policy = to_runtime(compile_file(path))
    if path.name == "lsf-rtc.pol":
        assert policy.preemption is None
        schedule = simulate(policy, paper003(tmp_path))
        assert all(r.end - r.start == r.job.run_time for r in schedule.records)
        return
    if path.name in LANL:
        trace = TRACES / "LANL-CM5-1994-4.1-cln.swf.gz"
        if not trace.exists():
            pytest.skip(f"{trace} is not here: the Slurm examples need its queue numbers")
        declared = {r: c for r, c in zip(policy.resources, policy.capacities, strict=True)
                    if c is not None}
        load = head(load_workload(str(trace), resources=policy.resources,
                                  capacities=declared), 4000)
    elif path.name in PAPER003:
        load = paper003(tmp_path)
    else:
        load = head(any_real_workload("KTH-SP2-1996-2.1-cln.swf.gz"), 2500)
    assert policy.preemption is not None
    run = simulate_preemptive(policy, policy.preemption, load, monitor=True)
    assert (run.preemptions == 0) == (path.name in RUN_TO_COMPLETION)
    resized = 0
    for life in run.lives:
        assert life.phase == "completed" and life.done == Fraction(1)
        sizes = {len(s.processors) for s in life.segments if s.phase == "running"}
        # its work, done exactly once: the runs kept, each at its size's speed, add up to
        # its whole work, the last ending at the first whole second where it is done
        # (a requeue throws runs away: then its area at its one size says it)
        runs = [s for s in life.segments if s.phase == "running"]
        if not life.lost and all(life.time_at(len(s.processors)) for s in runs):
            work = sum(Fraction(s.end - s.start, life.time_at(len(s.processors)))
                       for s in runs)
            assert 1 <= work < 1 + Fraction(1, life.time_at(len(runs[-1].processors)))
        if sizes == {life.job.procs}:
            assert life.acquired - life.lost == life.job.run_time * life.job.procs
        resized += sizes != {life.job.procs}
    if policy.preemption.size is not None:
        assert resized  # the adaptive disciplines do size jobs
    else:
        assert not resized


FIRSTFIT = """
policy p {
  order     job.estimate asc
  reserve   0
  backfill  first_fit
  %s
}
"""


def test_preempting_by_order_jobs_that_are_never_preempted_is_the_rigid_policy() -> None:
    load = head(any_real_workload("KTH-SP2-1996-2.1-cln.swf.gz"), 1500)
    rigid = to_runtime(compile_source(FIRSTFIT % "", "<rigid>"))
    for clauses in ("mechanism none\n  preempt by order",
                    "mechanism checkpoint\n  keep true\n  preempt by order\n  quantum 60",
                    "mechanism suspend\n  preempt when false"):
        pre = to_runtime(compile_source(FIRSTFIT % clauses, "<preemptive>"))
        assert pre.preemption is not None
        got = simulate_preemptive(pre, pre.preemption, load).schedule
        want = simulate(rigid, load)
        assert [(r.start, r.end) for r in got.records] == [
            (r.start, r.end) for r in want.records], clauses


def test_the_figures_of_the_preemption_how_to(capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path) -> None:
    """docs/how-to/preemption.md's LSF-MIG paragraph: its commands, its numbers."""
    import json

    from schedc.runtime.cli.main import main

    jobs = tmp_path / "jobs.csv"
    assert main(["workload", "parsons-sevcik", "-o", str(jobs), "--jobs", "2000",
                 "--load", "0.7"]) == 0
    capsys.readouterr()
    figures = []
    for argv in (["examples/firstfit.pol"], ["examples/preemption/lsf-mig.pol"],
                 ["examples/preemption/lsf-mig.pol", "--param", "demand=true"]):
        assert main(["run", str(ROOT / argv[0]), *argv[1:], "--workload", str(jobs),
                     "--json"]) == 0
        result = json.loads(capsys.readouterr().out)
        figures.append((round(result["metrics"]["mean_response"]),
                        (result.get("preemption") or {}).get("checkpoints")))
    assert figures == [(8958, None), (1360, 384), (1099, 331)]
    page = (ROOT / "docs" / "how-to" / "preemption.md").read_text(encoding="utf-8")
    assert "8,958 s by first fit, 1,360 s by\nLSF-MIG (384 checkpoints) and 1,099 s" in page
    # the adaptive paragraph: papers/003's disciplines with no knowledge
    adaptive = []
    for name in ("lsf-rtc", "rtc-ad", "rtc-adsubset", "lsf-preempt", "preempt-ad", "lsf-mig",
                 "mig-ad", "mig-adsubset", "mall-ad", "mall-adsubset"):
        assert main(["run", str(ROOT / "examples" / "preemption" / f"{name}.pol"),
                     "--workload", str(jobs), "--json"]) == 0
        adaptive.append(f"{round(json.loads(capsys.readouterr().out)['metrics']['mean_response']):,}")
    assert adaptive == ["8,958", "5,056", "5,560", "8,495", "700", "1,360", "947", "1,457",
                        "868", "1,129"]
    text = " ".join(page.split())
    for figure, name in zip(adaptive, ("LSF-RTC,", "LSF-RTC-AD,", "LSF-RTC-ADSUBSET,",
                                       "LSF-PREEMPT,", "LSF-PREEMPT-AD,", "LSF-MIG,",
                                       "LSF-MIG-AD,",
                                       "LSF-MIG-ADSUBSET,", "LSF-MALL-AD and",
                                       "LSF-MALL-ADSUBSET:"), strict=True):
        assert f"{figure} s by {name}" in text, (figure, name)
