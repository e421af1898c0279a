"""No output ever replaces an input, and two outputs never share a file (issue 32): every
output flag of every command pointed at the trace, the policy, an imported file, a state
file or a sweep's spec ends in exit 2 before any work, with the input's bytes unchanged.
Standard output is one output however it is named; `/dev/stdout` and a pipe's `/dev/fd/N`
(a shell's `>(cmd)`) are streamed to; SIGTERM during a write leaves no temporary file; a
closed standard output or error is a message and exit 2. Files: `tests/corpus/outputs/`
(and its `cases.txt`, the command lines that showed each class)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from schedc.runtime.cli.main import main
from tests.support.repo import ROOT

CORPUS = ROOT / "tests" / "corpus" / "outputs"
CLI = [sys.executable, "-m", "schedc.runtime.cli.main"]

# The inputs, and how a command's diagnostic names each: (its flag, its path as given)
TRACE = ("--workload", "trace.swf")
POLICY = ("POLICY", "main.pol")
IMPORT = ("main.pol's import", "lib.pol")
STATE = ("--state", "state.json")

RUN = ["run", "main.pol", "--workload", "trace.swf"]
RUN_STATE = ["run", "main.pol", "--state", "state.json"]
COMPARE = ["compare", "main.pol", "--workload", "trace.swf"]
KRESOURCE = ["workload", "kresource", "--from", "trace.swf", "--baseline", "main.pol",
             "--resources", "2", "--mean-interarrival", "10"]

# (command line, its output flags, the inputs it reads)
COMMANDS = {
    "run": (RUN, ["--jobs-out", "--swf-out", "--switches-out", "--report"],
            [TRACE, POLICY, IMPORT]),
    "run --state": (RUN_STATE, ["--jobs-out", "--swf-out", "--switches-out", "--report"],
                    [STATE, POLICY, IMPORT]),
    "compare": (COMPARE, ["--csv", "--report"], [TRACE, POLICY, IMPORT]),
    "plot run": (["plot", "run", "main.pol", "--workload", "trace.swf"], ["-o"],
                 [TRACE, POLICY, IMPORT]),
    "plot run --state": (["plot", "run", "main.pol", "--state", "state.json"], ["-o"],
                         [STATE, POLICY, IMPORT]),
    "plot compare": (["plot", "compare", "main.pol", "--workload", "trace.swf"], ["-o"],
                     [TRACE, POLICY, IMPORT]),
    "workload kresource": (KRESOURCE, ["-o"], [("--from", "trace.swf"),
                                               ("--baseline", "main.pol"), IMPORT]),
    "sweep": (["sweep", "spec.toml"], ["--out", "--report"],
              [("SPEC.toml", "spec.toml"), ("the spec's policy", "main.pol"),
               IMPORT, ("the spec's workload", "trace.swf")]),
}
CASES = [(name, flag, source) for name, (_, flags, sources) in COMMANDS.items()
         for flag in flags for source in sources]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch) -> Path:
    """A copy of the corpus as the current directory (the corpus itself is never written)."""
    here = tmp_path / "in"
    shutil.copytree(CORPUS, here)
    monkeypatch.chdir(here)
    return here


@pytest.fixture
def no_work(monkeypatch) -> None:
    """Any simulation or sweep fails the test: the paths must be refused before."""
    from schedc.runtime import run
    from schedc.runtime.tools.sweep import execute

    def never(*args, **kwargs):
        raise AssertionError("the work started")

    for module, name in ((run, "run_policy"), (run, "prepare_run"), (execute, "execute")):
        monkeypatch.setattr(module, name, never)


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry of ``folder``: a file's bytes, a link's target."""
    return {p.name: os.readlink(p) if p.is_symlink() else p.read_bytes()
            for p in sorted(folder.iterdir()) if p.is_symlink() or p.is_file()}


def refused(capsys, argv: list[str]) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and "internal error" not in err
    lines = err.splitlines()
    assert len(lines) == 2 and lines[1].startswith("help: "), err
    return lines[0]


@pytest.mark.parametrize("name, flag, source", CASES,
                         ids=[f"{n}:{f}:{s[1]}" for n, f, s in CASES])
def test_an_output_on_an_input_is_refused_and_the_input_kept(name, flag, source, folder: Path,
                                                            capsys, no_work) -> None:
    argv, _, _ = COMMANDS[name]
    label, path = source
    target = path
    if flag == "-o" and name.startswith("plot"):  # a figure's name ends in .png: a link
        target = "input.png"
        os.symlink(path, folder / target)
    before = snapshot(folder)
    line = refused(capsys, [*argv, flag, target])
    assert line.startswith(f"error: {flag} {target} is the same file as {label}"), line
    assert line.endswith(f"{path}: an output never replaces an input"), line
    assert snapshot(folder) == before


@pytest.mark.parametrize("link", ["symbolic", "hard"])
@pytest.mark.parametrize("source", [TRACE, POLICY, IMPORT])
def test_a_link_to_an_input_is_the_input(link: str, source, folder: Path, capsys,
                                         no_work) -> None:
    label, path = source
    (os.symlink if link == "symbolic" else os.link)(path, folder / "out.swf")
    before = snapshot(folder)
    line = refused(capsys, [*RUN, "--swf-out", "out.swf"])
    assert line.startswith(f"error: --swf-out out.swf is the same file as {label} {path}")
    assert snapshot(folder) == before


@pytest.mark.parametrize("flags, message", [
    (["--jobs-out", "out.csv", "--swf-out", "out.csv"],
     "--jobs-out out.csv and --swf-out out.csv are the same file"),
    (["--jobs-out", "out.csv", "--swf-out", "./sub/../out.csv"],
     "--jobs-out out.csv and --swf-out ./sub/../out.csv are the same file"),
    (["--jobs-out", "old.csv", "--report", "old-link.csv"],
     "--jobs-out old.csv and --report old-link.csv are the same file"),
    (["--swf-out", "old.csv", "--switches-out", "old-hard.csv"],
     "--swf-out old.csv and --switches-out old-hard.csv are the same file")])
def test_two_outputs_on_one_file_are_refused(flags, message, folder: Path, capsys,
                                             no_work) -> None:
    (folder / "sub").mkdir()
    (folder / "old.csv").write_text("kept\n")
    os.symlink("old.csv", folder / "old-link.csv")
    os.link(folder / "old.csv", folder / "old-hard.csv")
    before = snapshot(folder)
    assert refused(capsys, [*RUN, *flags]).startswith(f"error: {message}")
    assert snapshot(folder) == before


def test_a_sweep_report_on_one_of_its_tables_is_refused(folder: Path, capsys,
                                                        no_work) -> None:
    (folder / "o").mkdir()
    line = refused(capsys, ["sweep", "spec.toml", "--out", "o", "--report", "o/summary.csv"])
    assert line == ("error: --out o/summary.csv and --report o/summary.csv are the same "
                    "file: one would replace the other")


@pytest.mark.parametrize("flags, message", [
    (["--jobs-out", "-", "--swf-out", "/dev/stdout"],
     "--jobs-out and --swf-out both write to standard output (- and /dev/stdout)"),
    (["--jobs-out", "/dev/fd/1", "--switches-out", "-"],
     "--jobs-out and --switches-out both write to standard output (/dev/fd/1 and -)"),
    (["--jobs-out", "stdout-link", "--swf-out", "-"],
     "--jobs-out and --swf-out both write to standard output (stdout-link and -)"),
    (["--json", "--jobs-out", "/dev/stdout"],
     "--jobs-out /dev/stdout and --json both write to standard output"),
    (["--json", "--report", "/dev/stdout"],
     "--report /dev/stdout and --json both write to standard output")])
def test_standard_output_is_one_output_however_named(flags, message, folder: Path, capsys,
                                                     no_work) -> None:
    os.symlink("/dev/stdout", folder / "stdout-link")
    assert refused(capsys, [*RUN, *flags]) == f"error: {message}"


def test_a_compare_csv_on_stdout_with_json_is_refused(folder: Path, capsys, no_work) -> None:
    line = refused(capsys, [*COMPARE, "--json", "--csv", "/dev/stdout"])
    assert line == "error: --csv /dev/stdout and --json both write to standard output"


@pytest.mark.parametrize("argv", [RUN + ["--json"], ["optimal", "main.pol", "--workload",
                                  "trace.swf", "--at", "1"], ["workload", "info", "trace.swf"]])
def test_standard_output_redirected_onto_an_input_is_refused(argv, folder: Path) -> None:
    """`schedc run ... >> trace.swf` would append the results to the trace."""
    before = snapshot(folder)
    with open(folder / "trace.swf", "ab") as trace:
        done = subprocess.run([*CLI, *argv], stdout=trace, stderr=subprocess.PIPE,
                              text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: standard output is redirected to ")
    assert "trace.swf: an output never replaces an input" in done.stderr
    assert snapshot(folder) == before


# --- standard output and pipes named as files ----------------------------------------------


def test_json_with_jobs_on_dev_stdout_into_a_file_loses_nothing(folder: Path) -> None:
    """The issue's `--json --jobs-out /dev/stdout > f` lost the JSON (the file was replaced
    by a rename): now refused; without --json the rows follow what was in the file."""
    out = folder / "f"
    with open(out, "wb") as handle:
        done = subprocess.run([*CLI, *RUN, "--json", "--jobs-out", "/dev/stdout"],
                              stdout=handle, stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == 2 and "both write to standard output" in done.stderr
    out.write_text("before\n")
    with open(out, "ab") as handle:
        done = subprocess.run([*CLI, *RUN, "--jobs-out", "/dev/stdout"], stdout=handle,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert text.startswith("before\n# schedc: ")  # appended to, not replaced
    assert text.count("\n1,") == 1 and "mean wait" in done.stderr  # the table: stderr


@pytest.mark.parametrize("flag", ["--swf-out", "--jobs-out", "--report"])
def test_a_pipe_named_by_dev_fd_is_streamed_to(flag: str, folder: Path) -> None:
    """`schedc run ... --swf-out >(gzip > s.gz)`: the shell passes /dev/fd/N of a pipe."""
    read, write = os.pipe()
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(os.read(read, 1 << 20) + _rest(read)))
    reader.start()
    try:
        done = subprocess.run([*CLI, *RUN, "--json", flag, f"/dev/fd/{write}"],
                              pass_fds=(write,), capture_output=True, text=True, timeout=120)
    finally:
        os.close(write)
        reader.join(30)
        os.close(read)
    assert done.returncode == 0, done.stderr
    first = {"--swf-out": b"; Version", "--jobs-out": b"# schedc", "--report": b"<!DOCTYPE"}
    assert got and got[0].startswith(first[flag]), got[:1]
    assert not list(folder.glob(".*.tmp"))


def _rest(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def test_dev_stdout_on_a_pipe_is_streamed_to(folder: Path) -> None:
    done = subprocess.run([*CLI, *RUN, "--swf-out", "/dev/stdout"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("; Version") and "mean wait" in done.stderr


def test_a_generated_workload_on_dev_stdout_keeps_its_summary_apart(capsys) -> None:
    assert main(["workload", "generate", "--utilisation", "0.5", "--jobs", "5",
                 "-o", "/dev/stdout"]) == 0
    out, err = capsys.readouterr()
    assert "wrote 5 jobs to /dev/stdout" in err and "wrote" not in out


# --- a folder given as a file ----------------------------------------------------------------


@pytest.mark.parametrize("path, reason", [
    ("newdir/", "the path ends in a separator: it names a folder"),
    ("newdir/.", "the path ends in a separator: it names a folder"),
    ("sub/", "it is a directory"), ("sub", "it is a directory")])
def test_a_report_path_naming_a_folder_is_refused(path: str, reason: str, folder: Path,
                                                  capsys, no_work) -> None:
    (folder / "sub").mkdir()
    before = snapshot(folder)
    assert refused(capsys, [*RUN, "--report", path]) == f"error: cannot write {path}: {reason}"
    assert snapshot(folder) == before and not (folder / "newdir").exists()


# --- SIGTERM while a file is written --------------------------------------------------------

WRITER = """\
import sys, time
from schedc.runtime.atomicio import open_atomic
with open_atomic(sys.argv[1]) as out:
    out.write("partial\\n" * 1000)
    out.flush()
    print("writing", flush=True)
    time.sleep(120)
"""

# `schedc run --jobs-out` whose writer stops half-way: the CLI's own path to the file
CLI_WRITER = """\
import sys, time
from schedc.runtime.results import metrics
from schedc.runtime.atomicio import open_atomic
from schedc.runtime.cli.main import main

def stuck(schedule, path, header):
    with open_atomic(path) as out:
        out.write("partial\\n")
        out.flush()
        print("writing", file=sys.stderr, flush=True)
        time.sleep(120)

metrics.write_jobs_csv = stuck
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
@pytest.mark.parametrize("program", ["writer", "cli"])
def test_a_signal_during_a_write_leaves_the_old_file_and_no_temporary(
        program: str, signum: int, folder: Path) -> None:
    target = folder / "out.csv"
    target.write_text("old\n")
    if program == "writer":
        argv = [sys.executable, "-c", WRITER, str(target)]
    else:
        argv = [sys.executable, "-c", CLI_WRITER, *RUN, "--json", "--jobs-out", str(target)]
    # the signal's default action in the child, as in a shell: a test run under `nohup`
    # (SIGHUP ignored, inherited) would leave it ignored, and no handler goes over that
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signum, signal.SIG_DFL))
    try:
        said = (child.stdout if program == "writer" else child.stderr).readline()
        assert said == "writing\n", child.stderr.read()
        assert len(list(folder.glob(".out.csv.*.tmp"))) == 1  # the write is under way
        child.send_signal(signum)
        assert child.wait(30) == -signum  # it still dies of the signal
    finally:
        child.kill()
        child.communicate()
    assert not list(folder.glob(".out.csv.*.tmp"))
    assert target.read_text() == "old\n"


def test_the_handler_is_ours_only_during_a_write_and_never_over_another(tmp_path) -> None:
    from schedc.runtime import atomicio

    # from the default action: a sweep test run earlier in this process may have armed it
    # for good, as a sweep's worker does (`remove_temporaries_at_termination`)
    before = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        _handler_only_during_writes(atomicio, tmp_path)
    finally:
        signal.signal(signal.SIGTERM, before)


def _handler_only_during_writes(atomicio, tmp_path) -> None:
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    with atomicio.open_atomic(tmp_path / "a.csv") as out:
        assert signal.getsignal(signal.SIGTERM) is atomicio._on_terminating_signal
        with atomicio.open_atomic(tmp_path / "b.csv"):  # nested: one handler
            pass
        assert signal.getsignal(signal.SIGTERM) is atomicio._on_terminating_signal
        out.write("x\n")
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL

    def own(signum, frame):
        raise SystemExit(3)

    previous = signal.signal(signal.SIGTERM, own)
    try:
        with atomicio.open_atomic(tmp_path / "c.csv"):
            assert signal.getsignal(signal.SIGTERM) is own
        assert signal.getsignal(signal.SIGTERM) is own
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert not list(tmp_path.glob(".*.tmp"))


def test_remove_temporaries_removes_what_is_being_written(tmp_path) -> None:
    from schedc.runtime import atomicio

    with pytest.raises(atomicio.OutputError), \
            atomicio.open_atomic(tmp_path / "a.csv") as out:
        out.write("x\n")
        (held,) = tmp_path.glob(".a.csv.*.tmp")
        atomicio.remove_temporaries()
        assert not held.exists()
    # the rename then fails, named by the user's path: the target was never made
    assert not (tmp_path / "a.csv").exists() and not list(tmp_path.glob(".*.tmp"))


# --- closed standard streams -----------------------------------------------------------------


@pytest.mark.parametrize("closed", ["stdout", "stderr", "both"])
def test_a_closed_standard_stream_is_a_message_and_exit_2(closed: str, folder: Path) -> None:
    redirect = {"stdout": ">&-", "stderr": "2>&-", "both": ">&- 2>&-"}[closed]
    done = subprocess.run(["sh", "-c", f'exec "$@" {redirect}', "sh", *CLI, *RUN],
                          capture_output=closed != "both", text=True, timeout=120)
    assert done.returncode == 2
    if closed == "stdout":
        assert done.stderr.startswith("error: standard output is closed: ")
        assert "\nhelp: " in done.stderr
    elif closed == "stderr":
        assert done.stdout.startswith("error: standard error is closed: ")
        assert "\nhelp: " in done.stdout


# --- the corpus -------------------------------------------------------------------------------


def _cases() -> list[tuple[list[str], str]]:
    lines = (CORPUS / "cases.txt").read_text(encoding="utf-8").splitlines()
    return [(argv.split(), said.strip()) for argv, _, said in
            (line.partition("|") for line in lines if line and not line.startswith("#"))]


@pytest.mark.parametrize("argv, said", _cases(), ids=[" ".join(a) for a, _ in _cases()])
def test_the_corpus_command_lines_replace_nothing(argv: list[str], said: str, folder: Path,
                                                  capsys, no_work) -> None:
    before = snapshot(folder)
    assert refused(capsys, argv).startswith(f"error: {said}")
    assert snapshot(folder) == before


@pytest.mark.parametrize("path", ["main.pol", "lib.pol"])
def test_compile_never_writes_over_its_policy_or_an_import(path: str, folder: Path,
                                                           capsys) -> None:
    before = snapshot(folder)
    line = refused(capsys, ["compile", "main.pol", "-o", path])
    assert "an output never replaces an input" in line
    assert snapshot(folder) == before


@pytest.mark.parametrize("flags", [["-o", "main.pol"], ["-o", "lib.pol"],
                                   ["--report", "main.pol"],
                                   ["--counterexamples", "lib.pol"]])
def test_verify_never_writes_over_its_policy_or_an_import(flags: list[str], folder: Path,
                                                          capsys) -> None:
    before = snapshot(folder)
    line = refused(capsys, ["verify", "main.pol", *flags])
    assert "an output never replaces an input" in line
    assert snapshot(folder) == before
