"""The limits of docs/reference/limits.md hold (issue 32): an input past one ends in a located
diagnostic with exit 2, quickly, never in an internal error (70) or a hang.

The small odd inputs are in tests/corpus/inputs/ (copied to a temporary folder per test);
the big ones (thousands of digits, 2,000 imports, a gzip that expands to gigabytes) are
made here. Inputs that hung run in a subprocess with a timeout; the others run the CLI in
process (tests/support/input_fuzz.py's ``run_cli``), timed.
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.input_fuzz import run_cli
from tests.support.repo import ROOT

CORPUS = ROOT / "tests" / "corpus" / "inputs"
CLI = [sys.executable, "-m", "schedc.runtime.cli.main"]
QUICK = 5.0  # seconds: each input is refused well within this
HANG = 30.0  # a subprocess still running after this hangs


@pytest.fixture
def inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "inputs"
    shutil.copytree(CORPUS, folder)
    monkeypatch.chdir(folder)
    return folder


def refused(argv: list[str], where: str, message: str, subprocess_: bool = False) -> str:
    """Run ``schedc ARGV`` here; assert exit 2 within QUICK seconds with ``message`` at
    ``where`` (file:line:col, or the file) and a help line; return standard error."""
    start = time.perf_counter()
    if subprocess_:
        try:
            done = subprocess.run([*CLI, *argv], capture_output=True, text=True, timeout=HANG)
        except subprocess.TimeoutExpired:
            pytest.fail(f"schedc {' '.join(argv)} still runs after {HANG} s")
        code, stderr = done.returncode, done.stderr
    else:
        outcome = run_cli(argv)
        assert outcome.error is None, outcome.error
        code, stderr = outcome.code, outcome.stderr
    took = time.perf_counter() - start
    assert code == 2, f"exit {code}\n{stderr}"
    assert f"--> {where}" in stderr, stderr
    assert message in stderr, stderr
    assert "help:" in stderr and "Traceback" not in stderr
    assert took < QUICK, f"{took:.1f} s"
    return stderr


# --- work that explodes ---------------------------------------------------------------

def test_defs_that_double_are_an_error_at_the_def(inputs: Path) -> None:
    """40 lines of `def dN = dN-1 + dN-1` never compiled (2^40 nodes written out)."""
    err = refused(["check", "defs40.pol"], "defs40.pol:15:1",
                  "`d13` has 16,383 nodes with its defs written out: more than 10,000",
                  subprocess_=True)
    assert "def d13 = d12 + d12" in err and err.count("error:") == 1


def test_a_formula_of_many_defs_is_an_error_at_the_formula(inputs: Path) -> None:
    lines = ["def d0 = job.procs"] + [f"def d{i} = d{i - 1} + d{i - 1}" for i in range(1, 13)]
    (inputs / "sum.pol").write_text("\n".join(lines) + "\npolicy p { order d12 + d12 asc }\n")
    refused(["check", "sum.pol"], "sum.pol:14:18",
            "this formula has 16,383 nodes with its defs written out")


@pytest.mark.parametrize("argv", [
    ["check", "exponent.pol"],
    ["run", "param.pol", "--workload", "trace.swf", "--param", "k=1e999999999"],
    ["compare", "param.pol", "--workload", "trace.swf", "--vary", "k=1,1e999999999"],
    ["run", "param.pol", "--workload", "time-unit.csv"],
], ids=["literal", "param", "vary", "time-unit"])
def test_a_huge_exponent_is_refused_not_built(inputs: Path, argv: list[str]) -> None:
    where = {"exponent.pol": "exponent.pol:2:30", "time-unit.csv": "time-unit.csv:1:1"}.get(
        argv[1] if argv[0] == "check" else argv[3], "param.pol:1:1")
    refused(argv, where, "the exponent of `1e999999999` is out of range: schedc reads "
            "exponents from -400 to 400", subprocess_=True)


def test_a_huge_exponent_in_a_sweep_param(inputs: Path) -> None:
    refused(["sweep", "spec-param-exponent.toml", "--out", "out"],
            "spec-param-exponent.toml:4:10", "the exponent of `1e999999999` is out of range",
            subprocess_=True)


# --- numbers beyond what the engine holds -------------------------------------------------

DIGITS = "9" * 5000  # past Python's 4,300-digit int-str limit


@pytest.mark.parametrize(("name", "text", "where"), [
    ("int.pol", f"policy p {{ order job.procs * {DIGITS} asc }}\n", "int.pol:1:30"),
    ("duration.pol", f"policy p {{ order job.procs * {DIGITS}s asc }}\n", "duration.pol:1:30"),
    ("reserve.pol", f"policy p {{ order job.procs asc reserve {DIGITS} }}\n", "reserve.pol:1:40"),
])
def test_a_literal_of_thousands_of_digits(inputs: Path, name: str, text: str,
                                          where: str) -> None:
    (inputs / name).write_text(text)
    refused(["check", name], where, "has 5,000 digits: schedc reads at most 1,000")


def test_a_param_of_thousands_of_digits(inputs: Path) -> None:
    refused(["run", "param.pol", "--workload", "trace.swf", "--param", f"k={DIGITS}"],
            "param.pol:1:1", "has 5,000 digits: schedc reads at most 1,000")


@pytest.mark.parametrize(("name", "text", "where", "message"), [
    ("maxprocs.swf", f"; MaxProcs: {DIGITS}\n1 0 -1 5 1 -1 -1 1 5 -1 1 1 1 1 1 -1 -1 -1\n",
     "maxprocs.swf:1:13", "MaxProcs: the capacity of `cpus` has 5,000 digits"),
    ("capacity.csv", f"# capacity cpus={DIGITS}\nid,submit,run_time,estimate,cpus\n1,0,5,5,1\n",
     "capacity.csv:1:12", "the capacity of `cpus` has 5,000 digits"),
    ("submit.csv", f"# capacity cpus=4\nid,submit,run_time,estimate,cpus\n1,{DIGITS},5,5,1\n",
     "submit.csv:3:3", "column `submit` has 5,000 digits: outside the supported range"),
])
def test_a_workload_number_of_thousands_of_digits(inputs: Path, name: str, text: str,
                                                  where: str, message: str) -> None:
    (inputs / name).write_text(text)
    refused(["run", "param.pol", "--workload", name], where, message)


def test_a_sweep_param_of_thousands_of_digits(inputs: Path) -> None:
    (inputs / "spec.toml").write_text('policies = ["depth.pol"]\nworkloads = ["trace.swf"]\n'
                                      f"[params]\ndepth = [{DIGITS}]\n")
    refused(["sweep", "spec.toml", "--out", "out"], "spec.toml:4:10",
            "a number of 5,000 digits: schedc reads at most 1,000")


@pytest.mark.parametrize(("workload", "where", "message"), [
    ("run-time-1e400.swf", "run-time-1e400.swf:2:9",
     "field 4 is 10000000000000000000000…: outside the supported range [-10^15, 10^15]"),
    ("estimate-1e309.csv", "estimate-1e309.csv:3:9",
     "column `estimate` is 10000000000000000000000…: outside the supported range"),
    ("capacity-1e16.csv", "capacity-1e16.csv:1:12",
     "the capacity of `cpus` is 10000000000000000: outside the supported range [1, 10^15]"),
    ("time-unit-tiny.csv", "time-unit-tiny.csv:1:1",
     "the time unit is 1e-300: outside the supported range [10^-12, 10^12]"),
])
def test_values_past_the_engine_range_are_located(inputs: Path, workload: str, where: str,
                                                  message: str) -> None:
    refused(["run", "param.pol", "--workload", workload], where, message)


def test_a_machine_capacity_past_the_range(inputs: Path) -> None:
    refused(["check", "machine-capacity.pol"], "machine-capacity.pol:1:13",
            "the capacity of `cpus` is 10000000000000000: outside the supported range")


def test_capacity_and_speeds_checks_for_the_command_line() -> None:
    """`--capacity` and `--speeds` are checked by these before the CLI builds anything."""
    from schedc.runtime.workloads.workload import capacity_problem, speeds_problem

    assert capacity_problem("cpus", 10**400).startswith("the capacity of `cpus` is 1000")
    assert capacity_problem("cpus", 10**15) is None
    assert "300,000,000 processors, more than the 65,536" in speeds_problem("300000000x1")
    assert "outside the supported range (0, 10^6]" in speeds_problem("4x" + "9" * 400)
    assert speeds_problem("32x1,32x2") is None


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--mean-interarrival", "1e308", "mean_interarrival: got 1e+308, needs a number in "
     "(0, 10^15]"),
    ("--cv-demand", "1e300", "cv_demand: got 1e+300, needs a number in (0, 1000]"),
])
def test_generate_refuses_values_past_the_range(tmp_path: Path, option: str, value: str,
                                               message: str) -> None:
    argv = ["workload", "generate", "--jobs", "10", "-o", str(tmp_path / "g.csv"),
            "--mean-interarrival", "5", option, value]
    outcome = run_cli(argv)
    assert outcome.code == 2 and outcome.error is None
    assert message in outcome.stderr and not (tmp_path / "g.csv").exists()


@pytest.mark.parametrize(("spec", "where", "message"), [
    ("spec-load-factor.toml", "spec-load-factor.toml:4:16",
     "load_factor 1e-300: outside the supported range [1, 10000]"),
    ("spec-limit.toml", "spec-limit.toml:4:10", "limit is 10000000000000000000000…: outside "
     "the supported range [1, 10^15]"),
    ("spec-speeds.toml", "spec-speeds.toml:4:11",
     "300,000,000 processors, more than the 65,536"),
])
def test_sweep_transforms_past_the_range_are_found_before_the_runs(
        inputs: Path, spec: str, where: str, message: str) -> None:
    refused(["sweep", spec, "--out", "out"], where, message, subprocess_=True)


# --- unbounded reads ------------------------------------------------------------------

def _fifo(folder: Path, name: str) -> str:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    os.mkfifo(folder / name)
    return name


@pytest.mark.parametrize("kind", ["policy", "import", "workload", "spec"])
def test_a_fifo_or_a_device_is_refused(inputs: Path, kind: str) -> None:
    fifo = _fifo(inputs, f"fifo.{ {'workload': 'swf', 'spec': 'toml'}.get(kind, 'pol')}")
    if kind == "policy":
        argv, where = ["check", fifo], fifo
    elif kind == "import":
        (inputs / "main.pol").write_text(f'import "{fifo}"\npolicy p {{ order job.procs asc }}\n')
        argv, where = ["check", "main.pol"], fifo
    elif kind == "workload":
        argv, where = ["run", "param.pol", "--workload", fifo], fifo
    else:
        argv, where = ["sweep", fifo, "--out", "out"], fifo
    refused(argv, where, "is a FIFO (a named pipe), not a file", subprocess_=True)


@pytest.mark.parametrize("argv", [
    ["check", "/dev/zero"], ["run", "param.pol", "--workload", "zero.swf"],
    ["sweep", "/dev/urandom", "--out", "out"], ["check", "imports-zero.pol"],
])
def test_dev_zero_and_urandom_are_refused(inputs: Path, argv: list[str]) -> None:
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero here")
    (inputs / "zero.swf").symlink_to("/dev/zero")
    (inputs / "imports-zero.pol").write_text('import "/dev/urandom"\n')
    where = {"zero.swf": "zero.swf", "imports-zero.pol": "/dev/urandom"}.get(argv[-1], argv[1])
    refused(argv, where, "is a character device, not a file", subprocess_=True)


def test_a_gzip_that_expands_past_the_limit(inputs: Path, monkeypatch) -> None:
    """An 8 MB gzip expanding to 8 GiB is stopped at the limit (here lowered to 1 MiB, so
    that the test reads little): never decompressed whole."""
    from schedc.runtime.workloads import workload

    monkeypatch.setitem(workload.MAX_BYTES, "workload", 1 << 20)
    member = gzip.compress(b"0" * (1 << 24), 1)
    (inputs / "bomb.swf.gz").write_bytes(member * 512)  # 8 GiB expanded
    refused(["run", "param.pol", "--workload", "bomb.swf.gz"], "bomb.swf.gz",
            "expands to more than 1 MiB, the most schedc reads in a workload")


def test_a_policy_larger_than_the_limit(inputs: Path) -> None:
    (inputs / "big.pol").write_text("// padding\n" * 100_000)
    refused(["check", "big.pol"], "big.pol", "holds more than 1 MiB, the most schedc reads "
            "in a policy")


# --- depth ----------------------------------------------------------------------------

def test_a_chain_of_2000_imports(inputs: Path) -> None:
    for i in range(2000):
        (inputs / f"m{i}.pol").write_text((f'import "m{i + 1}.pol"\n' if i < 1999 else "")
                                          + f"def v{i} = {i}\n")
    (inputs / "m0.pol").write_text('import "m1.pol"\npolicy p { order job.procs asc }\n')
    refused(["check", "m0.pol"], "m63.pol:1:1", "imports chain more than 64 files deep")


def test_a_spec_nested_500_deep(inputs: Path) -> None:
    (inputs / "deep.toml").write_text('policies = ["depth.pol"]\nx = ' + "[" * 500 + "]" * 500
                                      + "\n")
    refused(["sweep", "deep.toml", "--out", "out"], "deep.toml:2:37",
            "arrays and tables nest more than 32 levels deep")


def test_a_symlink_loop_in_a_spec_path(inputs: Path) -> None:
    os.symlink("loop2", inputs / "loop1")
    os.symlink("loop1", inputs / "loop2")
    (inputs / "loop.toml").write_text('policies = ["depth.pol"]\nworkloads = ["loop1/t.swf"]\n')
    refused(["sweep", "loop.toml", "--out", "out"], "loop.toml:2:14", "cannot resolve "
            "`loop1/t.swf`")


# --- smaller --------------------------------------------------------------------------

@pytest.mark.parametrize(("workload", "where", "message"), [
    ("underscore.swf", "underscore.swf:2:3", "field 2 is not an integer: `1_000`"),
    ("arabic-digits.swf", "arabic-digits.swf:2:3", "field 2 is not an integer: `\u0661\u0662`"),
    ("repeated-column.csv", "repeated-column.csv:2:34",
     "column `cpus` is named twice (columns 5 and 6)"),
])
def test_numbers_and_columns_python_would_take(inputs: Path, workload: str, where: str,
                                              message: str) -> None:
    refused(["run", "param.pol", "--workload", workload], where, message)


def test_a_csv_cell_past_the_csv_limit(inputs: Path) -> None:
    (inputs / "cell.csv").write_text("# capacity cpus=4\nid,submit,run_time,estimate,cpus,user\n"
                                     f'1,0,5,5,1,"{"x" * 140_000}"\n')
    refused(["run", "param.pol", "--workload", "cell.csv"], "cell.csv:3:1",
            "field larger than field limit (131072)")


@pytest.mark.parametrize(("spec", "where", "message"), [
    ("spec-bool-param.toml", "spec-bool-param.toml:4:13",
     "depth.pol: bad value `true` for param `depth`: it is int"),
    ("spec-unknown-capacity.toml", "spec-unknown-capacity.toml:4:1",
     "depth.pol: the machine of policy depth2 has no resource `gpus`"),
    ("spec-empty.toml", "spec-empty.toml:1:1", "the spec runs nothing"),
    ("spec-dotted-key.toml", "spec-dotted-key.toml:3:1", "unknown key `foo`"),
])
def test_sweep_specs_are_checked_before_the_runs(inputs: Path, spec: str, where: str,
                                                message: str) -> None:
    refused(["sweep", spec, "--out", "out"], where, message)


def test_a_short_campaign_past_the_limits(tmp_path: Path) -> None:
    """`python -m benchmarks.fuzz_inputs --limits` runs long ones."""
    from tests.support.input_fuzz import limits_campaign

    runnable = [ROOT / "examples" / f"{name}.pol" for name in ("easy", "fairshare", "depth2")]
    for outcome in limits_campaign(runnable, ROOT / "examples" / "depth2.pol",
                                   ROOT / "examples" / "firstfit.pol", tmp_path, 40, 1):
        assert not outcome.bad, f"{outcome.argv[:4]}: exit {outcome.code}\n" \
                                f"{outcome.error or outcome.stderr[-2000:]}"


@pytest.mark.parametrize("flag, message", [
    ("--speeds=300000000x1", "300,000,000 processors, more than the 65,536"),
    ("--capacity=cpus=1_000", "the capacity must be a whole number"),
    ("--capacity=cpus=١٢", "the capacity must be a whole number"),
    (f"--capacity=cpus={10**400}", "outside the supported range [1, 10^15]"),
    (f"--capacity=cpus={10**16}", "outside the supported range [1, 10^15]"),
])
def test_run_flags_beyond_the_engine_are_refused_at_the_flag(flag: str, message: str) -> None:
    # (a cluster of 300 million floats was built before any check)
    start = time.perf_counter()
    done = subprocess.run([*CLI, "run", str(ROOT / "examples" / "easy.pol"), flag],
                          capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"error: {flag.split('=')[0]} ") and message in done.stderr
    assert "help:" in done.stderr and "Traceback" not in done.stderr
    assert time.perf_counter() - start < HANG


STATE = ('{{"now": {now}, "capacity": {{"cpus": 4}}, "running": [], "queue": [{{"id": 1, '
         '"submit": 0, "estimate": {estimate}, "run_time": 5, "request": {{"cpus": 1}}}}]}}')


@pytest.mark.parametrize("now, estimate, where, message", [
    ("1" * 5000, "10", "now", "has 5,000 digits: schedc reads at most 1,000"),
    ("0", "1e999999999", "queue[0].estimate", "schedc reads exponents from -400 to 400"),
    ("0", "10000000000000000", "queue[0].estimate", "outside the supported range"),
    ("0", "1e308", "queue[0].estimate", "is not an integer"),
])
def test_state_file_numbers_beyond_the_engine_are_located(now: str, estimate: str, where: str,
                                                          message: str, tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    state.write_text(STATE.format(now=now, estimate=estimate))
    start = time.perf_counter()
    done = subprocess.run([*CLI, "run", str(ROOT / "examples" / "easy.pol"), "--state",
                           str(state)], capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 2, done.stderr
    first = done.stderr.splitlines()[0]
    assert first.startswith(f"error: {where}") and message in first, done.stderr
    assert f"--> {state}:1:" in done.stderr and "help:" in done.stderr
    assert time.perf_counter() - start < QUICK + 5


def test_an_unknown_state_param_is_located(inputs: Path) -> None:
    """It was named without its place ("policy `depth2` has no param `dpeth`")."""
    err = refused(["run", "depth.pol", "--state", "state-unknown-param.json"],
                  "state-unknown-param.json:2:34",
                  "params.dpeth: policy `depth2` has no param `dpeth`")
    assert "did you mean `depth`" in err


@pytest.mark.parametrize(("state", "message"), [
    # the slice bound packs a group of cpus in 24 bits: it looped forever past them
    ("state-wide-machine.json", "the machine has 20,000,000 cpus: the solvers plan at most "
     "16,777,215"),
    # CP-SAT's int64 objective overflowed (an internal error past the time limit)
    ("state-long-jobs.json", "the solvers' objective holds at most 2^53"),
])
def test_optimal_refuses_an_instance_its_solvers_cannot_hold(inputs: Path, state: str,
                                                            message: str) -> None:
    done = subprocess.run([*CLI, "optimal", "--state", state, "--time-limit", "1",
                           str(ROOT / "examples" / "conservative.pol")],
                          capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert "help:" in done.stderr and "Traceback" not in done.stderr


def test_generate_refuses_times_past_the_range_before_writing(tmp_path: Path) -> None:
    """Each mean within range, their sum over the jobs past it: refused, not written for a
    run to refuse later."""
    out = tmp_path / "g.csv"
    outcome = run_cli(["workload", "generate", "--jobs", "20", "-o", str(out),
                       "--mean-interarrival", "1e15"])
    assert outcome.code == 2 and outcome.error is None, outcome.stderr
    assert "past 10^15, the largest time schedc holds" in outcome.stderr
    assert not out.exists()


def test_a_spec_run_timeout_is_read_and_bounded(inputs: Path) -> None:
    refused(["sweep", "spec-run-timeout.toml", "--out", "out"], "spec-run-timeout.toml:3:1",
            "run_timeout = 1e+300: give a positive number of seconds, at most 2,592,000")
    assert not (inputs / "out").exists()  # a spec refused makes no folder
    from schedc.runtime.tools.sweep.spec import read_spec

    (inputs / "ok.toml").write_text('policies = ["depth.pol"]\nrun_timeout = 60\n')
    assert read_spec("ok.toml").run_timeout == 60.0
    assert read_spec("spec-empty.toml".replace("empty", "bool-param")).run_timeout is None
