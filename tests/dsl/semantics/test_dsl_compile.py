"""Semantics of compilation: imports, extends, params, JSON, the runtime policy."""

from __future__ import annotations

import json

import pytest

from schedc.dsl import (
    DiagnosticError,
    check_file,
    compile_file,
    compile_source,
    ir,
    policy_to_json,
)
from schedc.runtime.engine.from_ir import to_runtime
from schedc.runtime.engine.policy import PassState
from schedc.runtime.jobs import Job, RunningJob

EASY = """
policy easy {
  order    job.submit asc
  reserve  1
  backfill first_fit
  invariant job.size == job.procs
}
"""


def write(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    return tmp_path / name


def job(id_, submit=0, estimate=10, procs=2):
    return Job(id_, id_, submit, estimate, estimate, (procs,))


def state(now=0, queue=(), running=(), cap=(16,), used=None):
    return PassState(now, tuple(queue), tuple(running), cap, list(used or [0] * len(cap)))


def test_extends_across_import_overrides_only_stated_clauses(tmp_path):
    write(tmp_path, "easy.pol", EASY)
    f = write(tmp_path, "easy-sjf.pol", 'import "easy.pol"\n'
              "policy easy_sjf extends easy {\n  order job.estimate asc, job.submit asc\n}\n")
    p = compile_file(f)
    assert p.name == "easy_sjf" and p.depth == 1 and p.backfill.kind == "first_fit"
    assert [k.expr.attr for k in p.order] == ["estimate", "submit"]
    assert p.invariants[0].text == "job.size == job.procs"
    assert check_file(f).policies == ("easy_sjf",)  # imported policies are not its own


def test_defaults_of_an_empty_policy():
    p = compile_source("policy p { }")
    assert (p.order, p.depth, p.backfill, p.size) == ((), 0, ir.Backfill("none"), None)
    assert p.machine == ir.Machine("default", (ir.Resource("cpus", None),))


def test_import_cycle_and_extends_cycle(tmp_path):
    write(tmp_path, "a.pol", 'import "b.pol"\npolicy a { }\n')
    write(tmp_path, "b.pol", 'import "a.pol"\n')
    msgs = [d.message for d in check_file(tmp_path / "a.pol").diagnostics]
    assert any(m.startswith("import cycle:") for m in msgs)
    r = compile_source_errors("policy a extends b { }\npolicy b extends a { }")
    assert any("extends itself" in m for m in r)


def compile_source_errors(text):
    with pytest.raises(DiagnosticError) as err:
        compile_source(text, policy_name="a")
    return [d.message for d in err.value.diagnostics]


def test_name_must_be_imported(tmp_path):
    write(tmp_path, "lib.pol", "def w = job.procs\n")
    write(tmp_path, "mid.pol", "def v = w + 1\n")  # uses lib.pol without importing it
    f = write(tmp_path, "top.pol", 'import "lib.pol"\nimport "mid.pol"\npolicy p { order w }\n')
    [d] = check_file(f).diagnostics
    assert d.file.endswith("mid.pol")
    assert "does not import" in d.message and d.help.startswith("add `import")


def test_policy_choice():
    two = "policy a { }\npolicy b { }"
    with pytest.raises(DiagnosticError) as err:
        compile_source(two)
    assert err.value.diagnostics[0].help == "pass --policy NAME"
    assert compile_source(two, policy_name="b").name == "b"


def test_defs_inline_with_fresh_variables():
    p = compile_source("""
        def load(j) = sum(k in running: k.procs * j.procs)
        policy p { order sum(k in queue: load(k)) desc }""")
    agg = p.order[0].expr
    inner = agg.body.body
    # The inlined `k` of the def is renamed, so it does not capture the outer `k`.
    assert agg.var == "k" and inner.left.var != "k" and inner.right.var == "k"


def test_params_bind_and_validate():
    src = "param depth: int in [0, 8] = 2\npolicy p { reserve depth backfill first_fit }"
    p = compile_source(src)
    assert p.params == (ir.Param("depth", "int", 0, 8, 2),)
    assert to_runtime(p).depth == 2 and to_runtime(p, {"depth": "5"}).depth == 5
    for bad, words in (("9", "outside its domain"), ("x", "bad value"), ("1.5", "bad value")):
        with pytest.raises(DiagnosticError) as err:
            to_runtime(p, {"depth": bad})
        assert words in err.value.diagnostics[0].message
        # at the param's declaration: the user sees what the domain and type are
        assert (err.value.diagnostics[0].file, err.value.diagnostics[0].line) == ("<string>", 1)
    with pytest.raises(DiagnosticError) as err:
        to_runtime(p, {"dept": "1"})
    assert err.value.diagnostics[0].help == "did you mean `depth`?"


def test_json_is_deterministic_and_tagged():
    src = 'param f: real in [0, 1] = 0.5\npolicy p { order job.xfactor * f desc size job.procs }'
    a, b = (json.dumps(policy_to_json(compile_source(src))) for _ in range(2))
    assert a == b
    data = json.loads(a)
    assert data["node"] == "Policy" and data["order"][0]["expr"]["node"] == "Binary"
    assert data["params"] == [{"node": "Param", "name": "f", "type": "real", "lo": 0.0,
                               "hi": 1.0, "default": 0.5}]


def test_runtime_order_size_score_and_flags():
    p = compile_source("""
        policy p {
          order job.estimate desc, job.id
          backfill best by job.procs desc
          size min(job.procs, machine.free.cpus)
          invariant job.size <= job.procs
        }""")
    rp = to_runtime(p)
    s = state(cap=(16,), used=[10])
    assert rp.order_key(job(1, estimate=5), s) == (-5, 1)
    assert rp.score(job(1, procs=3), s) == -3
    assert rp.size(job(1, procs=8), s) == 6
    assert rp.order_static and not rp.state_free  # size reads the machine
    j = job(1, procs=8)
    after = state(running=[RunningJob(j, 0, (6,))], used=[16])
    assert rp.invariants[0].check(j, after) is True
    with pytest.raises(Exception, match="outside"):
        rp.size(job(1), state(used=[16]))


def test_dynamic_order_is_not_static():
    rp = to_runtime(compile_source("policy p { order job.xfactor desc }"))
    assert not rp.order_static and not rp.state_free
    assert rp.order_key(job(1, submit=0, estimate=10), state(now=10)) == (-2.0,)


def test_prelude_definitions_are_usable():
    p = compile_source("policy p { order ljf_key(job) desc, fcfs_key(job) }")
    assert [k.expr.attr for k in p.order] == ["estimate", "submit"]
