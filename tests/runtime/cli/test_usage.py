"""Small things a new user meets (issue 13, item 9): an unknown flag gets the command's own
usage and a did-you-mean, located on the command line; `verify`'s bound errors quote the
real defaults; SARIF paths are relative to the repository root; `.gz` inputs that are not
whole gzip streams get a help line."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from schedc.dsl.verify.reports import SRCROOT, artifact, source_root
from schedc.runtime.cli.main import build_parser, main
from tests.support.repo import EXAMPLES, ROOT

EASY = str(EXAMPLES / "easy.pol")


def _main(argv: list[str], capsys) -> tuple[int, str, str]:
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize(("argv", "usage", "message", "help", "caret"), [
    (["run", "x.pol", "--worklaod", "t"], "usage: schedc run ", "`schedc run` has no option "
     "`--worklaod`", "did you mean `--workload`?", "schedc run x.pol --worklaod t\n"
     "  |                  ^^^^^^^^^^\n"),
    (["verify", "--queud=3", "x.pol"], "usage: schedc verify ", "`schedc verify` has no "
     "option `--queud`", "did you mean `--queued`?", "  |               ^^^^^^^\n"),
    (["workload", "generate", "-o", "x.csv", "--jobz", "3", "--utilisation", "0.5"],
     "usage: schedc workload generate ", "`schedc workload generate` has no option `--jobz`",
     "did you mean `--jobs`?", None),
    (["compare", "a.pol", "--zzzzzz"], "usage: schedc compare ", "`schedc compare` has no "
     "option `--zzzzzz`", "see `schedc compare --help` for its options", None),
    (["run", "a.pol", "b.pol"], "usage: schedc run ", "`schedc run` does not take the "
     "argument `b.pol`", "see `schedc run --help`", "schedc run a.pol b.pol\n"
     "  |                  ^^^^^\n"),
])
def test_an_unknown_argument_gets_the_command_s_usage_and_a_suggestion(
        capsys, argv: list[str], usage: str, message: str, help: str, caret: str | None):
    status, out, err = _main(argv, capsys)
    assert status == 2 and out == "" and "Traceback" not in err
    assert err.startswith(usage) and "usage: schedc [-h]" not in err
    assert f"error: {message}\n  --> <command line>:1:" in err and f"help: {help}" in err
    if caret:
        assert caret in err


@pytest.mark.parametrize("flag", ["--queued", "--running"])
def test_a_bad_verify_bound_quotes_the_parser_s_default(capsys, flag: str):
    parser = build_parser()
    default = parser.parse_args(["verify", "x.pol"]).__dict__[flag[2:]]
    status, _, err = _main(["verify", flag, "0", EASY], capsys)
    # not given: each kind of pass its default (a preemptive pass's are fewer)
    assert status == 2 and "(default 8)" in err and default is None


def test_sarif_locations_are_relative_to_the_repository_root(tmp_path: Path):
    assert source_root(ROOT / "examples") == ROOT
    inside = artifact(str(EXAMPLES / "easy.pol"), ROOT)
    assert inside == {"uri": "examples/easy.pol", "uriBaseId": SRCROOT}
    spaced = tmp_path / "a b.pol"
    assert artifact(str(spaced), tmp_path) == {"uri": "a%20b.pol", "uriBaseId": SRCROOT}
    outside = artifact(str(spaced), ROOT)
    assert outside == {"uri": spaced.resolve().as_uri()} and "uriBaseId" not in outside
    assert artifact("<prelude>/std.pol", ROOT) == {"uri": "<prelude>/std.pol"}


def test_verify_sarif_names_its_base(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    status, out, _ = _main(["verify", "examples/broken/easy-freeprocs.pol", "--format",
                            "sarif", "--property", "reservation-safety", "--queued", "2",
                            "--running", "2"], capsys)
    assert status == 1
    run = json.loads(out)["runs"][0]
    assert run["originalUriBaseIds"] == {SRCROOT: {"uri": ROOT.as_uri() + "/"}}
    (result,) = run["results"]
    where = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert where == {"uri": "examples/broken/easy-freeprocs.pol", "uriBaseId": SRCROOT}


SWF = "; MaxProcs: 8\n1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 1 1 -1 -1 -1\n"
CSV = "# capacity cpus=8\nid,submit,run_time,estimate,cpus\n1,0,1,1,1\n"


@pytest.mark.parametrize("kind", ["swf", "csv", "state"])
@pytest.mark.parametrize("damage", ["not gzip", "truncated"])
def test_a_gz_input_that_is_not_a_whole_gzip_stream_has_help(tmp_path: Path, capsys,
                                                             kind: str, damage: str):
    text = {"swf": SWF, "csv": CSV, "state": "{}"}[kind]
    data = text.encode() if damage == "not gzip" else gzip.compress(text.encode())[:15]
    path = tmp_path / f"w.{'json' if kind == 'state' else kind}.gz"
    path.write_bytes(data)
    flag = "--state" if kind == "state" else "--workload"
    status, out, err = _main(["run", EASY, flag, str(path)], capsys)
    assert status == 2 and out == "" and f"--> {path}" in err
    assert "help: the file ends in .gz but is not a whole gzip stream" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(("word", "help"), [("runn", "did you mean `run`?"),
                                            ("frobnicate", "the commands are check, compile, "
                                             "run, compare, verify, workload, optimal, plot, "
                                             "sweep")])
def test_an_unknown_command_gets_the_closest_one(capsys, word: str, help: str):
    status, out, err = _main([word, "x.pol"], capsys)
    assert status == 2 and out == "" and err.startswith("usage: schedc [-h]")
    assert f"error: no command `{word}`\n  --> <command line>:1:8" in err
    assert f"help: {help}" in err and "Traceback" not in err


# argparse's own complaints (a bad or missing value, a missing argument, a bad choice) are
# diagnostics too: located on the command line, with the option's help line
@pytest.mark.parametrize(("argv", "message", "caret_under", "help_"), [
    (["run", "p.pol", "--range-factor", "x"], "argument --range-factor: 'x' is not a number",
     "x", "--range-factor: make the jobs moldable"),
    (["run", "p.pol", "--load-factor=nan"], "'nan' is not a finite number",
     "--load-factor=nan", "--load-factor: scale inter-arrival times"),
    (["run", "p.pol", "--range-factor"], "argument --range-factor: expected one argument",
     "--range-factor", "--range-factor: make the jobs moldable"),
    (["verify", "p.pol", "--format", "xml"], "argument --format: invalid choice: 'xml'",
     "xml", "--format: report format (default: text)"),
    (["verify", "p.pol", "--queued", "two"], "argument --queued: invalid int value: 'two'",
     "two", "--queued: queued-job slots of the symbolic state (default 8; a preemptive "
     "policy's waiting slots: 3)"),
    (["run"], "the following arguments are required: POLICY", None, "see `schedc run --help`"),
])
def test_argparse_mistakes_are_located_diagnostics(capsys, argv, message, caret_under,
                                                   help_) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: schedc ") and "Traceback" not in err
    assert message in err and f"help: {help_}" in err
    lines = err.splitlines()
    at = next(i for i, s in enumerate(lines) if s.startswith("  --> <command line>:1:"))
    shown, caret = lines[at + 2], lines[at + 3]
    assert shown == "1 | schedc " + " ".join(argv)
    start = caret.index("^")
    if caret_under is None:  # nothing to point at: just past the end of the line
        assert start == len(shown)
    else:
        assert shown[start:start + len(caret_under)] == caret_under
        assert caret.count("^") == len(caret_under)


@pytest.mark.parametrize(("argv", "help"), [
    (["run", EASY, "--trace", "t.swf"], "did you mean `--workload`?"),  # not `--state`
    (["compare", EASY, "--swf=t.swf"], "did you mean `--workload`?"),
    (["run", EASY, "--cpus", "128"], "did you mean `--capacity`?"),
    (["run", EASY, "--seed", "3"], "did you mean `--load-seed`?"),
    (["sweep", "s.toml", "--output-dir", "o"], "did you mean `--out`?"),
    (["verify", EASY, "--properties", "capacity"], "did you mean `--property`?"),
])
def test_a_common_wrong_name_suggests_the_option_meant(argv, help, capsys) -> None:
    status, _, err = _main(argv, capsys)
    assert status == 2
    assert f"help: {help}" in err


def test_an_alias_is_suggested_only_where_the_command_has_the_option(capsys) -> None:
    # `check` reads no workload: an alias must not point at an option the command lacks
    status, _, err = _main(["check", EASY, "--trace", "t.swf"], capsys)
    assert status == 2 and "--workload" not in err
