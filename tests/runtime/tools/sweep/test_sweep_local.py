"""`schedc sweep` on a Dask LocalCluster shared by this module (`--scheduler` its address):
results equal to `run_policy` run one by one, the summary's intervals, Parquet equal to CSV,
a rerun that makes nothing and writes the same bytes, a failed run recorded while the sweep
goes on, and `--retry-failed`."""

from __future__ import annotations

import json
import logging
import math
import re
from pathlib import Path

import pytest

from schedc.runtime.results.student_t import t_quantile
from schedc.runtime.run import WorkloadCache, run_policy
from schedc.runtime.tools.sweep import read_summary
from schedc.runtime.tools.sweep.runs import plan
from schedc.runtime.tools.sweep.spec import read_spec
from schedc.runtime.tools.sweep.tables import metric_names, read_rows
from tests.support.sweep_specs import run_cli, write_spec

SPEC = """\
policies = ["@EXAMPLES/depth2.pol", "@EXAMPLES/easy.pol"]
seeds = 3

[params]
depth = [0, 2]

[transforms]
limit = [60]
load_factor = [100, 130]

[[run]]  # seeds change the background loads of a heterogeneous cluster
policy = "@EXAMPLES/firstfit.pol"
speeds = "50x1,50x2"
background_load = 0.5
limit = 60
"""


@pytest.fixture(scope="module")
def scheduler():
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0", scheduler_kwargs={"dashboard": False},
                      silence_logs=logging.ERROR) as cluster:
        yield cluster.scheduler_address


@pytest.fixture(scope="module")
def swept(scheduler, tmp_path_factory):
    folder = tmp_path_factory.mktemp("sweep")
    spec = write_spec(folder, SPEC)
    from schedc.runtime.cli.main import main

    code = main(["sweep", str(spec), "--scheduler", scheduler, "--json"])
    return spec, folder / "spec.out", code


def test_the_results_are_run_policy_s_one_by_one(swept) -> None:
    spec, out, code = swept
    assert code == 0
    runs = plan(read_spec(str(spec))).runs
    assert len(runs) == 2 * 2 * 3 + 2 * 3 + 3
    rows = {r["key"]: r for r in read_rows(str(out / "results.csv"))}
    assert set(rows) == {r.key for r in runs}
    cache: WorkloadCache = {}
    for desc in runs:
        expected = run_policy(desc.policy_file, desc.workload_file, desc.options(),
                              cache).metrics()
        row = rows[desc.key]
        assert row["status"] == "ok" and row["error"] is None
        assert (row["policy"], row["seed"]) == (desc.policy, desc.seed)
        for m in metric_names():
            assert row[m] == expected[m], (desc, m)


def test_the_summary_averages_seeds_with_t_intervals(swept) -> None:
    _, out, _ = swept
    rows = read_rows(str(out / "results.csv"))
    summary = read_summary(out)
    assert len(summary) == 2 * 2 + 2 + 1
    assert all(r["runs"] == 3 for r in summary)
    ff = [r for r in rows if r["policy"] == "firstfit"]
    (ff_summary,) = [r for r in summary if r["policy"] == "firstfit"]
    waits = [r["mean_wait"] for r in ff]
    assert len(set(waits)) > 1  # the seeds made different runs
    mean = math.fsum(waits) / 3
    half = t_quantile(0.975, 2) * math.sqrt(math.fsum((w - mean) ** 2 for w in waits) / 2 / 3)
    assert ff_summary["mean_wait_mean"] == pytest.approx(mean, rel=1e-12)
    assert ff_summary["mean_wait_ci_low"] == pytest.approx(mean - half, rel=1e-12)
    assert ff_summary["mean_wait_ci_high"] == pytest.approx(mean + half, rel=1e-12)
    easy = [r for r in summary if r["policy"] == "easy"]
    assert all(r["param.depth"] is None for r in easy)
    # nothing random in EASY: its seeds agree and the interval is the mean
    assert all(r["mean_wait_ci_low"] == r["mean_wait_mean"] == r["mean_wait_ci_high"]
               for r in easy)
    assert isinstance(summary[0]["runs"], int) and isinstance(summary[0]["jobs_mean"], float)


def test_parquet_holds_the_csv_rows(swept) -> None:
    import pyarrow.parquet as pq

    _, out, _ = swept
    for name in ("results", "categories", "classes"):
        table = pq.read_table(out / f"{name}.parquet")
        assert table.to_pylist() == read_rows(str(out / f"{name}.csv"))
        facts = json.loads(table.schema.metadata[b"schedc.provenance"])
        assert facts["runs"] == 21 and facts["sweep"] == "spec.toml"
    categories = read_rows(str(out / "categories.csv"))
    assert {c["category"] for c in categories} <= set(range(10))
    assert all(c["jobs"] > 0 for c in categories)


def test_the_width_length_categories_are_run_policy_s(swept) -> None:
    from schedc.runtime.results.metrics import CLASSES

    spec, out, _ = swept
    classes = read_rows(str(out / "classes.csv"))
    assert {c["class"] for c in classes} <= set(CLASSES) and all(c["jobs"] > 0 for c in classes)
    desc = plan(read_spec(str(spec))).runs[0]
    m = run_policy(desc.policy_file, desc.workload_file, desc.options()).metrics()
    mine = [c for c in classes if c["key"] == desc.key]
    assert [(c["class"], c["jobs"], c["mean_response"], c["mean_bounded_slowdown"])
            for c in mine] == [
        (name, n, m["class_mean_response"][k], m["class_mean_bounded_slowdown"][k])
        for k, (name, n) in enumerate(zip(CLASSES, m["class_jobs"], strict=True)) if n]
    assert not {"class_jobs", "category_jobs"} & set(metric_names())
    assert {"p95_wait", "user_bsld_std", "measured"} <= set(metric_names())


def test_a_rerun_makes_nothing_and_writes_the_same_bytes(swept, scheduler, capsys) -> None:
    spec, out, _ = swept
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    code, stdout, _ = run_cli(capsys, "sweep", spec, "--scheduler", scheduler, "--json")
    facts = json.loads(stdout)
    assert code == 0 and facts["made"] == 0 and facts["stored_before"] == 21
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    assert before["results.csv"].startswith(b"# schedc: ")


def test_seeds_repeating_a_simulation_are_warned_of(swept, scheduler, capsys) -> None:
    # the spec's 3 seeds change only the [[run]] on a heterogeneous cluster
    spec, out, _ = swept
    code, stdout, stderr = run_cli(capsys, "sweep", spec, "--scheduler", scheduler, "--json")
    assert code == 0 and "Traceback" not in stderr
    assert stderr.startswith("warning: 6 of the 7 configurations have nothing random: the 3 "
                             "seeds of each repeat the same simulation")
    assert f"{spec}:2:1" in stderr and "seeds = 3" in stderr
    assert json.loads(stdout)["warnings"] == [stderr.splitlines()[0][len("warning: "):]]


def test_a_failed_run_is_recorded_and_the_sweep_goes_on(tmp_path: Path, scheduler,
                                                        capsys) -> None:
    (tmp_path / "bad.swf").write_text("this is not a trace\n")
    spec = write_spec(tmp_path, 'policies = ["@EXAMPLES/easy.pol", "@EXAMPLES/fcfs.pol"]\n'
                      'workloads = ["bad.swf", "bundled"]\n[transforms]\nlimit = [30]\n')
    code, stdout, err = run_cli(capsys, "sweep", spec, "--scheduler", scheduler)
    assert code == 1 and "Traceback" not in err
    assert "4 runs, 4 made now, 0 stored before, 2 failed" in stdout
    assert "failed: easy on bad.swf" in stdout
    rows = read_rows(str(tmp_path / "spec.out" / "results.csv"))
    failed = [r for r in rows if r["status"] == "failed"]
    assert {r["workload"] for r in failed} == {"bad.swf"}
    assert all("bad.swf" in r["error"] and r["mean_wait"] is None for r in failed)
    assert all(r["status"] == "ok" for r in rows if r["workload"] != "bad.swf")
    code, stdout, _ = run_cli(capsys, "sweep", spec, "--scheduler", scheduler, "--json")
    assert code == 1 and json.loads(stdout)["made"] == 0
    code, stdout, _ = run_cli(capsys, "sweep", spec, "--scheduler", scheduler, "--json",
                              "--retry-failed")
    facts = json.loads(stdout)
    assert code == 1 and facts["made"] == 2 and facts["failed"] == 2


def test_an_unreachable_scheduler_is_a_user_error(tmp_path: Path, capsys, monkeypatch
                                                  ) -> None:
    import socket

    from schedc.runtime.tools.sweep import execute

    monkeypatch.setattr(execute, "SCHEDULER_TIMEOUT", "1s")

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    spec = write_spec(tmp_path, '[[run]]\npolicy = "@EXAMPLES/easy.pol"\nlimit = 5\n')
    code, _, err = run_cli(capsys, "sweep", spec, "--scheduler", f"tcp://127.0.0.1:{port}")
    assert code == 2 and "Dask scheduler" in err and "Traceback" not in err


def test_figures_and_the_report_page(swept, scheduler, tmp_path: Path, capsys) -> None:
    spec, out, _ = swept
    page = tmp_path / "sweep.html"
    code, stdout, _ = run_cli(capsys, "sweep", spec, "--scheduler", scheduler, "--json",
                              "--report", page)
    assert code == 0
    names = sorted(p.name for p in (out / "figures").glob("*.png"))
    workload = "KTH-SP2-1996-2.1-cln"
    assert names == sorted(f"{y}-vs-{x}-{workload}.png" for x in ("load_factor", "param.depth")
                           for y in ("mean_bounded_slowdown", "mean_wait"))
    assert set(json.loads(stdout)["files"]) >= set(names)
    first = {n: (out / "figures" / n).read_bytes() for n in names}
    html = page.read_text(encoding="utf-8")
    assert html.count("<svg") == len(names)
    for part in ("Best configurations", "Summary", "Provenance shared by the runs",
                 "mean_wait_ci_low", "21 runs: 0 made now, 21 stored before, 0 failed"):
        assert part in html
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # nothing loads
    stamp = out / "figures" / ".summary.sha256"
    drawn = {n: (out / "figures" / n).stat().st_mtime_ns for n in names}
    code, _, _ = run_cli(capsys, "sweep", spec, "--scheduler", scheduler)
    assert {n: (out / "figures" / n).stat().st_mtime_ns for n in names} == drawn  # not redrawn
    stamp.write_text("another summary")
    (out / "figures" / names[0]).unlink()
    code, _, _ = run_cli(capsys, "sweep", spec, "--scheduler", scheduler, "--no-figures")
    assert not (out / "figures" / names[0]).exists()
    code, _, _ = run_cli(capsys, "sweep", spec, "--scheduler", scheduler)
    assert stamp.read_text() != "another summary"
    assert {n: (out / "figures" / n).read_bytes() for n in names} == first  # the same bytes


def test_report_paths_are_checked_before_the_work(tmp_path: Path, capsys) -> None:
    spec = write_spec(tmp_path, '[[run]]\npolicy = "@EXAMPLES/easy.pol"\n')
    code, _, err = run_cli(capsys, "sweep", spec, "--report", "-")
    assert code == 2 and "--report -" in err
    code, _, err = run_cli(capsys, "sweep", spec, "--report", tmp_path / "no" / "r.html")
    assert code == 2 and "does not exist" in err and not (tmp_path / "spec.out").exists()


def test_ended_tasks_are_released_in_batches(tmp_path: Path, scheduler, monkeypatch) -> None:
    from distributed import Client

    from schedc.runtime.tools.sweep import execute

    monkeypatch.setattr(execute, "RELEASE_EVERY", 2)
    spec = write_spec(tmp_path, 'policies = ["@EXAMPLES/easy.pol", "@EXAMPLES/fcfs.pol"]\n'
                      "seeds = 3\n[transforms]\nlimit = [20]\n")
    runs = plan(read_spec(str(spec))).runs
    ended: list[str] = []
    made = execute.execute(runs, str(tmp_path / "out"), scheduler,
                           done=lambda desc, status: ended.append(desc.key))
    assert sorted(ended) == sorted(made) == sorted(r.key for r in runs)
    assert set(made.values()) == {"ok"}
    with Client(scheduler) as client:  # the cluster forgot every run's task
        assert not [k for k in client.run_on_scheduler(lambda dask_scheduler: list(
            dask_scheduler.tasks)) if str(k).startswith("schedc-run-")]


def test_the_sweep_allows_a_quick_exit_once_written(swept, scheduler, capsys, tmp_path: Path
                                                    ) -> None:
    from schedc.runtime.cli import exit as cli_exit

    spec, out, _ = swept
    try:
        cli_exit._quick = False
        code, _, _ = run_cli(capsys, "sweep", spec, "--scheduler", scheduler, "--json")
        assert code == 0 and cli_exit._quick  # main returned: only the entry point exits
        cli_exit._quick = False
        code, _, _ = run_cli(capsys, "sweep", tmp_path / "missing.toml")
        assert code == 2 and not cli_exit._quick
    finally:
        cli_exit._quick = False


def test_a_relative_out_is_named_as_given(tmp_path: Path, scheduler, capsys,
                                          monkeypatch) -> None:
    """The workers of an existing cluster run in their own folder: they are sent the
    absolute folder, and what the sweep prints names `--out` as the user gave it."""
    write_spec(tmp_path, 'policies = ["@EXAMPLES/easy.pol"]\nworkloads = ["bundled"]\n'
               '[transforms]\nlimit = [30]\n')
    monkeypatch.chdir(tmp_path)
    code, stdout, stderr = run_cli(capsys, "sweep", "spec.toml", "--scheduler", scheduler,
                                   "--out", "rel.out", "--no-figures")
    assert code == 0, stderr
    assert "wrote rel.out/results.csv, rel.out/results.parquet" in stdout
    assert len(list((tmp_path / "rel.out" / "runs").rglob("*.json"))) == 1
    code, stdout, _ = run_cli(capsys, "sweep", "spec.toml", "--scheduler", scheduler,
                              "--out", "rel.out", "--no-figures", "--json")
    facts = json.loads(stdout)
    assert code == 0 and facts["made"] == 0
    assert all(path.startswith("rel.out/") for path in facts["files"].values())
