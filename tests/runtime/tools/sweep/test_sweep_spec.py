"""The sweep spec (runtime/tools/sweep/spec.py, runs.py): the example's runs, and every mistake a
located diagnostic (file:line:col, the source line, a caret, help) with exit status 2 and
no traceback, found before any run is submitted."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedc.runtime.tools.sweep.runs import plan, repeated_seeds
from schedc.runtime.tools.sweep.spec import read_spec
from tests.support.repo import ROOT
from tests.support.sweep_specs import DEPTH2, DEPTH_SJF, run_cli, write_spec

GOOD = """\
policies = ["@EXAMPLES/depth2.pol", "@EXAMPLES/easy.pol"]
seeds = 2

[params]
depth = [1, 2]

[transforms]
load_factor = [90, 110]
limit = [50]
"""


def _seeds_warning(tmp_path: Path, text: str):
    spec = read_spec(str(write_spec(tmp_path, text)))
    return repeated_seeds(spec, plan(spec))


def test_seeds_that_repeat_one_simulation_are_a_located_warning(tmp_path: Path) -> None:
    # GOOD's 6 configurations have nothing random: 2 seeds each are 6 runs for nothing
    warning = _seeds_warning(tmp_path, GOOD)
    assert warning.severity == "warning" and (warning.line, warning.col) == (2, 1)
    assert warning.message == ("no configuration of the sweep has anything random: the 2 "
                               "seeds of each repeat the same simulation")
    assert "background_load" in warning.help and "seeds = 1" in warning.help
    mixed = GOOD.replace("[transforms]", "[[run]]\npolicy = \"@EXAMPLES/firstfit.pol\"\n"
                         "speeds = \"50x1,50x2\"\nbackground_load = 0.5\nlimit = 20\n\n"
                         "[transforms]")
    assert _seeds_warning(tmp_path, mixed).message.startswith(
        "6 of the 7 configurations have nothing random: the 2 seeds of each")
    random = ('policies = ["@EXAMPLES/firstfit.pol"]\nseeds = 2\n[transforms]\nlimit = [50]\n'
              'speeds = ["50x1,50x2"]\nbackground_load = [0.5]\n')
    assert _seeds_warning(tmp_path, random) is None  # every seed draws other loads
    assert _seeds_warning(tmp_path, GOOD.replace("seeds = 2", "seeds = 1")) is None


def test_the_example_spec_makes_its_product(monkeypatch) -> None:
    monkeypatch.setenv("SCHEDC_TRACES", str(ROOT.parent / "shared" / "traces"))
    spec_file = ROOT / "examples" / "sweeps" / "easy-depth.toml"
    try:
        runs = plan(read_spec(str(spec_file)))
    except Exception as error:  # the shared traces are not beside this clone
        if "SCHEDC_TRACES" in str(error):
            pytest.skip("the shared traces are not here")
        raise
    assert len(runs.runs) == 2 * 5 * 3 * 3
    assert runs.params == ("depth",) and runs.transforms == ("load_factor", "limit")
    assert {r.policy for r in runs.runs} == {"depth2", "depth_sjf"}
    assert len({r.key for r in runs.runs}) == len(runs.runs)


def test_a_policy_without_the_param_runs_once_per_other_value(tmp_path: Path) -> None:
    runs = plan(read_spec(str(write_spec(tmp_path, GOOD))))
    by_policy = {p: [r for r in runs.runs if r.policy == p] for p in ("depth2", "easy")}
    assert len(by_policy["depth2"]) == 2 * 2 * 2  # depth x load x seeds
    assert len(by_policy["easy"]) == 2 * 2  # no depth param: once per load and seed
    assert all(r.params == () for r in by_policy["easy"])
    first = by_policy["depth2"][0].options()
    assert first.limit == 50 and first.moldable is not None
    assert first.moldable.load_factor in (90, 110) and first.load_seed in (0, 1)


def test_explicit_runs_join_the_product_once(tmp_path: Path) -> None:
    text = GOOD + """
[[run]]
policy = "@EXAMPLES/depth2.pol"
params = { depth = 1 }
load_factor = 90
limit = 50
seed = 0

[[run]]
policy = "@EXAMPLES/depth-sjf.pol:depth_sjf"
params = { depth = 3 }
"""
    runs = plan(read_spec(str(write_spec(tmp_path, text))))
    assert len(runs.runs) == 12 + 2  # the first [[run]] is one of the product's
    # (runs are submitted in an order their keys break ties in: compare by seed)
    sjf = sorted((r for r in runs.runs if r.policy == "depth_sjf"), key=lambda r: r.seed)
    assert [(r.params, r.seed) for r in sjf] == [((("depth", 3),), 0), ((("depth", 3),), 1)]
    assert sjf[0].policy_name == "depth_sjf" and sjf[0].policy_file == str(DEPTH_SJF)


def test_paths_are_relative_to_the_spec_and_read_variables(tmp_path: Path, monkeypatch
                                                           ) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "traces").mkdir()
    trace = tmp_path / "traces" / "t.swf"
    trace.write_text("1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 1 1 -1 -1 -1\n")
    (tmp_path / "p.pol").write_text(DEPTH2.read_text())
    text = ('policies = ["../p.pol"]\n'
            'workloads = ["${SWEEP_TRACES:-../traces}/t.swf"]\n')
    spec = write_spec(tmp_path / "sub", text)
    monkeypatch.delenv("SWEEP_TRACES", raising=False)
    got = read_spec(str(spec))
    assert got.policies[0].file == str(tmp_path / "p.pol")
    assert got.workloads[0].file == str(trace)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SWEEP_TRACES", "traces")  # from the current directory
    assert read_spec(str(spec)).workloads[0].file == str(trace)
    monkeypatch.setenv("SWEEP_TRACES", str(tmp_path / "nowhere"))
    with pytest.raises(Exception, match="SWEEP_TRACES"):
        read_spec(str(spec))


# (spec text, message fragment, line, column of the caret, help fragment)
MISTAKES = [
    ('policies = ["a.pol"\n', "not valid TOML", 1, 20, "sweep-spec.md"),
    ('seeds = [1,\n  2 3]\n', "not valid TOML", 2, 5, "sweep-spec.md"),
    ('polices = ["@EXAMPLES/easy.pol"]\n', "unknown key `polices`", 1, 1,
     "did you mean `policies`?"),
    ('policies = ["@EXAMPLES/easy.pol"]\n[transforms]\nload_factr = [1]\n',
     "unknown key `load_factr`", 3, 1, "did you mean `load_factor`?"),
    ('policies = ["@EXAMPLES/depth2.pol"]\n[params]\ndepht = [1]\n',
     "no policy of the sweep declares a param `depht`", 3, 1, "did you mean `depth`?"),
    ('policies = ["@EXAMPLES/depth2.pol"]\n[params]\ndepth = [1, 99]\n',
     "99", 3, 13, "depth"),
    ('policies = ["@EXAMPLES/nope.pol"]\n', "policy file not found", 1, 13,
     "relative to the spec's folder"),
    ('policies = ["@EXAMPLES/easy.pol"]\nworkloads = ["missing.swf"]\n',
     "workload file not found", 2, 14, "`bundled`"),
    ('policies = ["@EXAMPLES/easy.pol"]\nworkloads = ["${NO_SUCH_VAR_X}/a.swf"]\n',
     "NO_SUCH_VAR_X is not set", 2, 14, "set NO_SUCH_VAR_X"),
    ('policies = ["@EXAMPLES/easy.pol"]\nworkloads = ["${NO_SUCH_VAR_X:-/nowhere}/a.swf"]\n',
     "workload file not found", 2, 14, "set NO_SUCH_VAR_X"),
    ('policies = ["@EXAMPLES/easy.pol"]\nseeds = "many"\n', "`seeds` must be", 2, 9, "format"),
    ('policies = ["@EXAMPLES/easy.pol"]\nseeds = 0\n', "at least 1", 2, 9, "seeds 0..4"),
    ('policies = ["@EXAMPLES/easy.pol"]\n[transforms]\nload_factor = [100, 0]\n',
     "load_factor 0: must be a number > 0", 3, 21, "percent"),
    ('policies = ["@EXAMPLES/easy.pol"]\n[transforms]\nlimit = [1.5]\n',
     "limit 1.5", 3, 10, "first N jobs"),
    ('policies = ["@EXAMPLES/easy.pol"]\n[transforms]\nspeeds = ["32y1"]\n',
     "speeds '32y1'", 3, 11, ""),
    ('policies = ["@EXAMPLES/easy.pol"]\n[transforms]\nsigma = [1]\n',
     "sigma needs range_factor", 3, 1, "add range_factor"),
    ('policies = ["@EXAMPLES/easy.pol"]\n[transforms]\nbackground_load = [0.5]\n',
     "background_load needs speeds", 3, 1, "speeds"),
    ('[[run]]\nworkload = "bundled"\n', "names no policy", 1, 3, "policy ="),
    ('[[run]]\npolicy = "@EXAMPLES/easy.pol"\nlimt = 5\n', "unknown key `limt`", 3, 1,
     "did you mean `limit`?"),
    ('[[run]]\npolicy = "@EXAMPLES/depth2.pol"\nparams = { depth = -1 }\n', "-1", 3, 20,
     "depth"),
    ('[[run]]\npolicy = "@EXAMPLES/easy.pol"\n[[run]]\npolicy = "@EXAMPLES/easy.pol"\n'
     'params = { depth = 1 }\n', "has no param `depth`", 5, 20, "params: none"),
    ('out = 3\npolicies = ["@EXAMPLES/easy.pol"]\n', "`out` must be a folder path", 1, 7,
     "format"),
    ('lenient = true\n', "runs nothing", None, None, "[[run]]"),
    # found by the sweep-spec campaign of tests/support/input_fuzz.py
    ('policies = ["@EXAMPLES/easy.pol:nope"]\n', "no policy `nope`", 1, 13, "policies: easy"),
    ('policies = ["a\\u0000b.pol"]\n', "a path cannot contain a NUL character", 1, 13,
     "\\u0000"),
    ('out = "o\\u0000"\npolicies = ["@EXAMPLES/easy.pol"]\n', "NUL character", 1, 7, ""),
    ('[[run]]\npolicy = "@EXAMPLES/easy.pol"\nworkload = "x\\u0000.swf"\n', "NUL character",
     3, 12, ""),
    ('policies = ["@EXAMPLES/easy.pol"]\nseeds = 9223372036854775807\n',
     "a sweep makes at most 100,000 runs", 2, 9, "several sweeps"),
    ('policies = ["@EXAMPLES/easy.pol"]\nseeds = 100\n[transforms]\nload_factor = ['
     + ", ".join(str(100 + i) for i in range(1010)) + ']\n',
     "the spec makes 101,000 runs: a sweep makes at most 100,000", 2, 1, "several sweeps"),
    ('policies = ["@EXAMPLES/easy.pol"]\n[transforms]\nspeeds = ["50x1,50x2"]\n',
     "policy easy makes reservations, which a heterogeneous cluster (speeds) cannot keep",
     3, 11, "reserve 0"),
    ('[[run]]\npolicy = "@EXAMPLES/depth2.pol"\nparams = { depth = 1 }\nspeeds = "50x1,50x2"\n',
     "policy depth2 makes reservations", 4, 10, "backfill none"),
    ('policies = ["@EXAMPLES/easy.pol"]\n[["lenient"]]\npolicy = "x"\n',
     "`lenient` must be true or false, not a list", 2, 3, "format"),
    ('policies = ["@EXAMPLES/easy.pol"]\n[[resources]]\n', "unknown key `resources`", 2, 3,
     "a spec's keys are"),
    ('[capacity]\ncpus = 0\n[[run]]\npolicy = "@EXAMPLES/easy.pol"\n', "capacity cpus = 0",
     2, 8, "cpus = 128"),
]


@pytest.mark.parametrize(("text", "message", "line", "col", "help"), MISTAKES)
def test_every_mistake_is_located(tmp_path: Path, capsys, text: str, message: str,
                                  line: int | None, col: int | None, help: str) -> None:
    spec = write_spec(tmp_path, text)
    code, out, err = run_cli(capsys, "sweep", spec, "--out", tmp_path / "out")
    assert code == 2, err
    assert "Traceback" not in err and out == ""
    assert message in err and help in err, err
    where = f"{spec}:{line}:{col}" if line else str(spec)
    assert where in err, err
    if line:
        source = spec.read_text().splitlines()[line - 1]
        assert source.strip() in err and "^" in err
    assert not (tmp_path / "out" / "runs").exists()  # nothing ran


def test_a_policy_that_does_not_compile_is_reported_where_it_is(tmp_path: Path, capsys
                                                                ) -> None:
    bad = tmp_path / "bad.pol"
    bad.write_text("policy p {\n  order job.sumbit asc\n}\n")
    spec = write_spec(tmp_path, f'policies = ["{bad}"]\n')
    code, _, err = run_cli(capsys, "sweep", spec)
    assert code == 2 and f"{bad}:2:" in err and "Traceback" not in err


def test_command_line_mistakes(tmp_path: Path, capsys) -> None:
    spec = write_spec(tmp_path, GOOD)
    code, _, err = run_cli(capsys, "sweep", spec, "--workers", "0")
    assert code == 2 and "--workers 0" in err
    code, _, err = run_cli(capsys, "sweep", spec, "--workers", "2", "--scheduler", "tcp://x:1")
    assert code == 2 and "not with --scheduler" in err
    code, _, err = run_cli(capsys, "sweep", tmp_path / "none.toml")
    assert code == 2 and "sweep spec file not found" in err
    (tmp_path / "file").write_text("")
    code, _, err = run_cli(capsys, "sweep", spec, "--out", tmp_path / "file")
    assert code == 2 and "is a file" in err


def test_the_docs_spec_is_a_working_example(tmp_path: Path, monkeypatch) -> None:
    from tests.support.docs_text import DOCS, blocks

    block = blocks("toml", DOCS / "reference" / "formats" / "sweep-spec.md")[0].text
    traces = ROOT.parent / "shared" / "traces"
    if not (traces / "LANL-CM5-1994-4.1-cln.swf.gz").exists():
        pytest.skip("the shared traces are not here")
    monkeypatch.setenv("SCHEDC_TRACES", str(traces))
    spec = write_spec(tmp_path, block.replace('"../', '"@EXAMPLES/'))  # as in examples/sweeps
    runs = plan(read_spec(str(spec)))
    assert len(runs.runs) == 2 * 5 * 2 * 3 * 3 + 1  # the product, and the [[run]]


COMBINED = """param a: int = 5
param b: int = 1
policy two {
  order job.acquired asc
  reserve 0
  backfill first_fit
  mechanism suspend
  preempt by order
  resident a - b
}
"""


def test_values_fine_alone_and_out_of_range_together_are_located(tmp_path: Path,
                                                                 capsys) -> None:
    # each value binds beside the other's default (resident 1, then 3); together `resident`
    # is 0: the combination was dropped from the sweep without a word
    (tmp_path / "two.pol").write_text(COMBINED)
    spec = write_spec(tmp_path, 'policies = ["two.pol"]\n[params]\na = [2, 6]\nb = [2]\n')
    code, out, err = run_cli(capsys, "sweep", spec, "--out", tmp_path / "out")
    assert code == 2 and out == "" and "Traceback" not in err, err
    assert "with a = 2, b = 2: `resident` is 0 with `a` = 2, `b` = 2" in err, err
    assert f"{spec}:2:" in err and "must be at least 1" in err, err
