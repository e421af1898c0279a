"""A run's provenance: what `--json` prints under "provenance" and the CSVs carry as their
`# KEY: VALUE` header, enough to tell which settings gave a result."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from schedc.runtime.cli.main import main
from schedc.runtime.results.provenance import header_lines, read_csv
from schedc.runtime.run import BUNDLED_TRACE, RunOptions, bundled_trace, run_policy
from schedc.runtime.version import version
from tests.support.repo import ROOT
from tests.support.tiny_traces import THREE_JOBS_SWF

EXAMPLES = ROOT / "examples"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_json(capsys, *argv: object) -> dict:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)["provenance"]


def test_run_json_names_version_policy_params_workload_options_and_seeds(
        capsys, tmp_path: Path) -> None:
    trace = tmp_path / "three.swf"
    trace.write_text(THREE_JOBS_SWF)
    argv = ("run", EXAMPLES / "depth2.pol", "--workload", trace, "--json", "--load-factor",
            "125", "--capacity", "cpus=12")
    facts = run_json(capsys, *argv)
    assert facts["schedc"] == version()
    assert facts["command"] == [str(a) for a in argv]
    assert facts["policy"] == {"name": "depth2", "file": str(EXAMPLES / "depth2.pol"),
                               "sha256": sha256(EXAMPLES / "depth2.pol"), "imports": []}
    assert facts["params"] == {"depth": {"value": 2, "from": "default"}}
    assert facts["workload"] == {"file": str(trace), "sha256": sha256(trace), "jobs": 3,
                                 "skipped": {}}
    assert facts["options"] == {
        "capacities": {"cpus": 12}, "resources": None, "limit": None, "lenient": False,
        "range_factor": None, "sigma": 0.0, "load_factor": 125.0, "speeds": None,
        "background_load": 0.0, "overrun": "estimate", "knowledge": "both", "bsld_tau": 10,
        "warmup": None, "cooldown": None}
    assert facts["seeds"] == {"load_seed": 0}
    given = run_json(capsys, *argv, "--param", "depth=4")
    assert given["params"] == {"depth": {"value": 4, "from": "given"}}


def test_the_hashes_follow_the_policy_and_its_imports(capsys, tmp_path: Path) -> None:
    trace = tmp_path / "three.swf"
    trace.write_text(THREE_JOBS_SWF)
    base = tmp_path / "base.pol"
    base.write_text("policy base { reserve 1 backfill first_fit }\n")
    child = tmp_path / "child.pol"
    child.write_text('import "base.pol"\npolicy child extends base { order job.submit asc }\n')

    def facts() -> dict:
        return run_json(capsys, "run", child, "--workload", trace, "--json")["policy"]

    first = facts()
    assert first["sha256"] == sha256(child)
    assert first["imports"] == [{"file": str(base), "sha256": sha256(base)}]
    base.write_text("// a comment changes no schedule, but the text\n" + base.read_text())
    second = facts()
    assert second["sha256"] == first["sha256"]
    assert second["imports"][0]["sha256"] == sha256(base) != first["imports"][0]["sha256"]
    child.write_text(child.read_text() + "// edited\n")
    assert facts()["sha256"] == sha256(child) != first["sha256"]


def test_the_seed_and_cluster_of_a_heterogeneous_run(capsys, tmp_path: Path) -> None:
    trace = tmp_path / "three.swf"
    trace.write_text(THREE_JOBS_SWF)
    facts = run_json(capsys, "run", EXAMPLES / "firstfit.pol", "--workload", trace, "--json",
                     "--speeds", "5x1,5x2", "--background-load", "0.25", "--load-seed", "7")
    assert facts["seeds"] == {"load_seed": 7}
    assert facts["options"]["speeds"] == [1, 1, 1, 1, 1, 2, 2, 2, 2, 2]
    assert facts["options"]["background_load"] == 0.25


def test_the_bundled_trace_is_named_with_its_path_and_hash() -> None:
    result = run_policy(str(EXAMPLES / "fcfs.pol"), options=RunOptions(limit=20))
    assert result.provenance is not None
    workload = result.provenance.to_json()["workload"]
    assert workload["file"] == f"bundled {BUNDLED_TRACE}"
    assert workload["path"] == str(bundled_trace())
    assert workload["sha256"] == sha256(bundled_trace())
    assert workload["jobs"] == 20 and sum(workload["skipped"].values()) >= 1
    assert "command" not in result.provenance.to_json()  # not run from the command line


def test_a_replayed_state_names_the_state_and_its_params(capsys, tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    state.write_text(json.dumps({
        "now": 2, "capacity": {"cpus": 10}, "params": {"depth": 0},
        "running": [{"id": 1, "submit": 0, "start": 0, "estimate": 100, "run_time": 100,
                     "request": {"cpus": 6}}],
        "queue": [{"id": 2, "submit": 1, "estimate": 100, "run_time": 100,
                   "request": {"cpus": 10}}]}))
    facts = run_json(capsys, "run", EXAMPLES / "depth2.pol", "--state", state, "--json")
    assert facts["workload"] == {"state": str(state), "sha256": sha256(state), "jobs": 2,
                                 "skipped": {}}
    assert facts["params"] == {"depth": {"value": 0, "from": "state"}}


def test_the_jobs_csv_header_is_the_json_provenance(capsys, tmp_path: Path) -> None:
    trace = tmp_path / "three.swf"
    trace.write_text(THREE_JOBS_SWF)
    jobs = tmp_path / "jobs.csv"
    facts = run_json(capsys, "run", EXAMPLES / "easy.pol", "--workload", trace, "--json",
                     "--jobs-out", jobs)
    header, rows = read_csv(jobs)
    # and the machine, which makes the file a job table `--workload` reads back
    assert header.pop("capacity") == {"cpus": 10}
    assert header == facts and len(rows) == 3
    lines = jobs.read_text().splitlines()
    assert lines[0] == f'# schedc: "{version()}"'
    assert lines[len(header) + 1].startswith("job_id,")


def test_header_lines_read_back_whatever_they_hold(tmp_path: Path) -> None:
    facts = {"policy": {"file": "dir with space/ü: x.pol", "sha256": None},
             "params": {"target": {"value": "1/3 (about 0.333333)", "from": "given"}}}
    path = tmp_path / "t.csv"
    path.write_text("".join(header_lines(facts)) + "a,b\n1,2\n")
    assert read_csv(path) == (facts, [{"a": "1", "b": "2"}])


def test_the_docs_show_what_run_json_prints(monkeypatch) -> None:
    import re

    from schedc.runtime.run import prepare_run
    from schedc.runtime.workloads.moldable import MoldableSpec
    from tests.support.docs_text import DOCS

    page = (DOCS / "reference" / "formats" / "provenance.md").read_text(encoding="utf-8")
    block = re.search(r'```json\n\s*("provenance": \{.*?\n\s*\})\n\s*```', page, re.DOTALL)
    assert block, "the provenance page shows no provenance block"
    shown = json.loads("{" + block.group(1) + "}")["provenance"]
    command = ("run", "examples/depth2.pol", "--param", "depth=4", "--range-factor", "2",
               "--json")
    options = RunOptions(params={"depth": "4"}, moldable=MoldableSpec(2.0), command=command)
    monkeypatch.chdir(ROOT)
    facts = prepare_run("examples/depth2.pol", options=options).provenance.to_json()
    assert shown["workload"].pop("path").endswith("/runtime/data/" + BUNDLED_TRACE)
    assert facts["workload"].pop("path") == str(bundled_trace())
    assert shown == facts


def test_a_table_in_other_time_units_names_them(capsys, tmp_path: Path) -> None:
    """Metrics are converted to seconds; the jobs table keeps the workload's units, so its
    header says which."""
    table = tmp_path / "t.csv"
    table.write_text("# time-unit 1/100 s\n# capacity cpus=4\n"
                     "id,submit,run_time,estimate,cpus\n1,0,250,300,1\n")
    facts = run_json(capsys, "run", EXAMPLES / "easy.pol", "--workload", table, "--json")
    assert facts["workload"]["time_unit"] == "1/100 s"
    seconds = tmp_path / "s.csv"
    seconds.write_text("# capacity cpus=4\nid,submit,run_time,estimate,cpus\n1,0,250,300,1\n")
    facts = run_json(capsys, "run", EXAMPLES / "easy.pol", "--workload", seconds, "--json")
    assert "time_unit" not in facts["workload"]


def test_the_swf_out_header_carries_the_provenance_and_reads_back(capsys,
                                                                  tmp_path: Path) -> None:
    trace = tmp_path / "three.swf"
    trace.write_text(THREE_JOBS_SWF)
    out = tmp_path / "out.swf"
    facts = run_json(capsys, "run", EXAMPLES / "depth2.pol", "--workload", trace, "--json",
                     "--swf-out", out)
    header = {}
    for line in out.read_text().splitlines():
        if line.startswith("; Schedc-"):
            key, _, value = line.removeprefix("; Schedc-").partition(": ")
            header[key] = json.loads(value)
    assert header.pop("Version") == facts.pop("schedc")
    assert header == facts
    # the schedule is itself a trace schedc reads: the extra header lines change nothing
    again = run_policy(str(EXAMPLES / "depth2.pol"), str(out), RunOptions())
    assert len(again.workload.jobs) == 3
