"""A preemptive run stops within the bound the user sets (issue 44): `--max-passes N` of
`run`, `compare` and `plot` ends a run whose passes go past N with one line
naming the bound, the simulated time reached and how to raise it, exit status 3, and no
output written; a run within the bound is the same whatever the bound."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedc.runtime.cli.errors import EXIT_UNKNOWN
from schedc.runtime.cli.main import main
from schedc.runtime.engine.preemptive import PassLimit, simulate_preemptive
from schedc.runtime.run import MAX_PASSES, RunOptions

# first come first served, with a pass every second while a job waits: job 2 waits for job
# 1 from 0 to 50, a pass each second (51), and then runs alone (no pass)
POLICY = """policy fcfs {
  order     job.submit asc
  reserve   0
  backfill  first_fit
  mechanism suspend
  preempt   by order
  quantum   1
}
"""
JOBS = "# capacity cpus=1\nid,submit,run_time,estimate,cpus\n1,0,50,50,1\n2,0,50,50,1\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    policy, jobs = tmp_path / "fcfs.pol", tmp_path / "jobs.csv"
    policy.write_text(POLICY)
    jobs.write_text(JOBS)
    return policy, jobs


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def passes_of(capsys, policy: Path, jobs: Path, *more: str) -> int:
    code, out, _ = run_cli(capsys, "run", policy, "--workload", jobs, "--json", *more)
    assert code == 0
    return json.loads(out)["passes"]


def test_a_run_within_the_bound_is_the_same_whatever_the_bound(capsys, files) -> None:
    policy, jobs = files
    n = passes_of(capsys, policy, jobs)
    assert n > 50  # a pass every second of the 100 s
    for bound in (n, 0):  # the bound is inclusive; 0 is none
        code, out, _ = run_cli(capsys, "run", policy, "--workload", jobs, "--json",
                               "--max-passes", bound)
        assert code == 0 and json.loads(out)["passes"] == n


def test_a_run_past_the_bound_stops_with_one_line_and_writes_nothing(capsys, files,
                                                                     tmp_path: Path) -> None:
    policy, jobs = files
    out_csv = tmp_path / "out.csv"
    out_csv.write_text("before\n")  # an output from before stays as it was
    code, out, err = run_cli(capsys, "run", policy, "--workload", jobs, "--max-passes", 10,
                             "--jobs-out", out_csv, "--swf-out", tmp_path / "out.swf")
    assert code == EXIT_UNKNOWN == 3 and out == ""
    message, help_line = err.strip().splitlines()
    # the 11th pass, at t=10: job 1 has run 10 of its 50 s
    assert message == ("error: policy fcfs stopped at t=10: it reached --max-passes 10 with 0 of "
                       "2 jobs completed; nothing written")
    assert help_line.startswith("help: give a larger --max-passes N, or 0 for no bound")
    assert out_csv.read_text() == "before\n" and not (tmp_path / "out.swf").exists()


def test_compare_stops_at_the_bound_before_any_table(capsys, files, tmp_path: Path) -> None:
    policy, jobs = files
    code, out, err = run_cli(capsys, "compare", policy, policy, "--workload", jobs,
                             "--max-passes", 10, "--csv", tmp_path / "c.csv")
    assert code == 3 and out == "" and "it reached --max-passes 10" in err
    assert not (tmp_path / "c.csv").exists()


def test_a_negative_bound_is_refused_on_the_command_line(capsys, files) -> None:
    policy, jobs = files
    code, _, err = run_cli(capsys, "run", policy, "--workload", jobs, "--max-passes", -1)
    assert code == 2 and "'-1' is negative (0: no bound)" in err


def test_the_default_bound_is_the_options(capsys, files) -> None:
    assert RunOptions().max_passes == MAX_PASSES
    from schedc.runtime.cli.main import build_parser

    policy, jobs = files
    args = build_parser().parse_args(["run", str(policy)])
    assert args.max_passes == MAX_PASSES


def test_the_loop_raises_at_the_pass_past_the_bound() -> None:
    from schedc.dsl import compile_source
    from schedc.runtime.engine.from_ir import to_runtime
    from schedc.runtime.jobs import Job
    from schedc.runtime.workloads.workload import Workload

    policy = to_runtime(compile_source(POLICY))
    assert policy.preemption is not None
    load = Workload((Job(1, 0, 0, 50, 50, (1,)), Job(2, 1, 0, 50, 50, (1,))), ("cpus",), (1,))
    whole = simulate_preemptive(policy, policy.preemption, load)
    n = whole.schedule.passes
    assert simulate_preemptive(policy, policy.preemption, load, max_passes=n
                               ).schedule == whole.schedule
    with pytest.raises(PassLimit) as stop:
        simulate_preemptive(policy, policy.preemption, load, max_passes=n - 1)
    assert (stop.value.limit, stop.value.completed, stop.value.jobs) == (n - 1, 1, 2)
