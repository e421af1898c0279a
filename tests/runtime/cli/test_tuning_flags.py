"""`--switches-out` and `--timing` belong to self-tuning dynP policies: on any other policy
they are a located user error (exit 2), reported before the run."""

from __future__ import annotations

import pytest

from schedc.runtime.cli.main import main
from tests.support.repo import EXAMPLES


@pytest.mark.parametrize("flags", [["--switches-out", "s.csv"], ["--timing"]])
def test_tuning_flags_on_a_policy_that_does_not_tune(flags, tmp_path, capsys, monkeypatch):
    from schedc.runtime import run

    def never(*args, **kwargs):
        raise AssertionError("the run started")

    monkeypatch.setattr(run, "run_policy", never)
    monkeypatch.chdir(tmp_path)
    policy = str(EXAMPLES / "conservative.pol")
    assert main(["run", policy, *flags]) == 2
    err = capsys.readouterr().err
    assert f"error: {flags[0]}: policy conservative is not self-tuning" in err
    assert "conservative.pol:5:8" in err and "policy conservative {" in err and "^^^" in err
    assert "help:" in err
    assert not (tmp_path / "s.csv").exists()


def test_switches_out_path_is_checked_first(tmp_path, capsys):
    policy = str(EXAMPLES / "conservative.pol")
    assert main(["run", policy, "--switches-out", str(tmp_path / "no" / "s.csv")]) == 2
    assert "s.csv" in capsys.readouterr().err
