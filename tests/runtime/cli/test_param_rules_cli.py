"""`check`, `verify` and `run` give one verdict on a policy's params (dsl/params.py): what
`run` rejects for the defaults, `check` and `verify` reject too; never "proved" for a policy
that cannot run. Every rejection: a located diagnostic, exit 2, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedc.runtime.cli.main import main

VERIFY = ["--queued", "1", "--running", "1", "--property", "progress"]


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize(("decl", "ok"), [
    ("param d: int = -1", False),
    ("param d: int in [-1, 4] = 0", False),
    ("param d: int = 2", True),
    ("param d: int in [0, 4] = 4", True),
])
def test_check_verify_and_run_agree_on_the_defaults(tmp_path: Path, three_jobs: Path, capsys,
                                                    decl: str, ok: bool):
    pol = tmp_path / "p.pol"
    pol.write_text(decl + "\npolicy p { reserve d backfill first_fit }\n")
    statuses = []
    for argv in (["check", str(pol)], ["verify", str(pol), *VERIFY],
                 ["run", str(pol), "--workload", str(three_jobs), "--json"]):
        status, _, err = _run(argv, capsys)
        statuses.append(status)
        assert "Traceback" not in err
        if not ok:
            assert f"--> {pol}:1:" in err and "help:" in err  # at the param
    assert statuses == ([0, 0, 0] if ok else [2, 2, 2])


@pytest.mark.parametrize(("value", "words"), [
    ("-1", "value -1 for param `d` is outside its domain [0, 8]"),
    ("9", "outside its domain [0, 8]"),
    ("1.5", "bad value `1.5` for param `d`: it is int"),
    ("2x", "bad value `2x`"),
])
def test_bad_param_values_are_located_at_the_declaration(tmp_path: Path, three_jobs: Path,
                                                         capsys, value: str, words: str):
    pol = tmp_path / "p.pol"
    pol.write_text("param d: int in [0, 8] = 1\npolicy p { reserve d backfill first_fit }\n")
    status, out, err = _run(["run", str(pol), "--workload", str(three_jobs), "--param",
                             f"d={value}"], capsys)
    assert status == 2 and out == "" and words in err
    assert f"--> {pol}:1:1" in err and "1 | param d: int in [0, 8] = 1" in err
    assert "help:" in err and "Traceback" not in err


def test_a_depth_without_domain_rejects_a_negative_value_at_run(tmp_path: Path,
                                                                three_jobs: Path, capsys):
    pol = tmp_path / "p.pol"
    pol.write_text("param d: int = 1\npolicy p { reserve d backfill first_fit }\n")
    status, _, err = _run(["run", str(pol), "--workload", str(three_jobs), "--param", "d=-2"],
                          capsys)
    assert status == 2 and "value -2 for param `d` is negative" in err


def test_param_accepts_durations_reals_and_bools(tmp_path: Path, three_jobs: Path, capsys):
    pol = tmp_path / "p.pol"
    pol.write_text("param limit: int = 1h\nparam w: real = 0.5\nparam flip: bool = false\n"
                   "policy p { order (if flip then job.estimate > limit else false), "
                   "job.procs * w }\n")
    for values in (["limit=30min", "w=1/3", "flip=true"], ["limit=90s", "w=2e3"],
                   ["limit=2h", "flip=false"], ["limit=1d"]):
        argv = ["run", str(pol), "--workload", str(three_jobs), "--json"]
        for v in values:
            argv += ["--param", v]
        status, out, err = _run(argv, capsys)
        assert status == 0, err
