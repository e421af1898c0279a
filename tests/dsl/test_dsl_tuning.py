"""Self-tuning dynP policies (papers/001) in the language: lowering to ``ir.Tuning`` and the
tuned policy per the contract, and one located diagnostic (exit 2) per mistake, through
`schedc check`."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedc.dsl import compile_file, ir
from schedc.dsl.tuning import candidate_policies
from schedc.runtime.cli.main import main
from tests.support.repo import EXAMPLES

PLANNERS = """
param width_cap: int in [1, 4096] = 64
policy fcfs { order job.submit asc  reserve all  backfill first_fit }
policy sjf extends fcfs { order job.estimate asc, job.submit asc }
policy ljf extends fcfs { order job.estimate desc  invariant job.procs <= width_cap }
policy easy { order job.submit asc  reserve 1  backfill first_fit }
machine big { resource cpus  resource memory }
policy fcfs_big { machine big  order job.submit asc  reserve all  backfill first_fit }
"""


def check(tmp_path: Path, capsys, body: str) -> tuple[int, str]:
    f = tmp_path / "t.pol"
    f.write_text(PLANNERS + body)
    code = main(["check", str(f)])
    out, err = capsys.readouterr()
    return code, out + err


def test_examples_lower_to_the_contract() -> None:
    for name, decider in (("dynp.pol", "advanced"), ("dynp-simple.pol", "simple")):
        p = compile_file(EXAMPLES / name)
        t = p.tuning
        assert [c.name for c in t.candidates] == ["conservative", "conservative_sjf",
                                                  "conservative_ljf"]
        assert (t.metric, t.decider, t.step) == ("artww", decider, "submit")
        first = t.candidates[0]
        for field in ("machine", "order", "depth", "backfill", "size", "reserve_per",
                      "reserve_when", "size_choices", "size_low", "size_fixed"):
            assert getattr(p, field) == getattr(first, field), field
        assert p.file.endswith(name) and p.invariants == ()


def test_tuned_fields_params_invariants_and_defaults(tmp_path: Path) -> None:
    f = tmp_path / "t.pol"
    f.write_text(PLANNERS + "param min_procs: int = 1\n"
                 "policy d { candidates ljf, sjf  metric sldwa\n"
                 "  invariant job.procs >= min_procs }\n")
    p = compile_file(f, "d")
    assert p.name == "d" and p.tuning.decider == "advanced" and p.tuning.step == "submit"
    assert p.tuning.metric == "sldwa"
    assert p.order == p.tuning.candidates[0].order  # ljf's
    assert [q.name for q in p.params] == ["width_cap", "min_procs"]  # candidates' and its own
    assert [i.text for i in p.invariants] == ["job.procs >= min_procs"]
    ljf, sjf = candidate_policies(p)
    assert [i.text for i in ljf.invariants] == ["job.procs <= width_cap", "job.procs >= min_procs"]
    assert [i.text for i in sjf.invariants] == ["job.procs >= min_procs"]


def test_extending_a_tuned_policy_overrides_its_words(tmp_path: Path) -> None:
    f = tmp_path / "t.pol"
    f.write_text(PLANNERS + "policy d { candidates fcfs, sjf  metric artww }\n"
                 "policy e extends d { decider simple  step change  metric makespan }\n")
    e = compile_file(f, "e")
    assert [c.name for c in e.tuning.candidates] == ["fcfs", "sjf"]
    assert (e.tuning.metric, e.tuning.decider, e.tuning.step) == ("makespan", "simple",
                                                                  "change")


# (the policy, the line:col reported, the message, a part of the help)
MISTAKES = {
    "unknown candidate": ("policy d { candidates fcfs, sjff  metric artww }",
                          "9:29", "unknown policy `sjff`", "did you mean `sjf`?"),
    "candidate twice": ("policy d { candidates fcfs, sjf, fcfs  metric artww }",
                        "9:34", "candidate `fcfs` is named twice", "once"),
    "no candidates compile": ("policy d { candidates fcfs, sjf  metric artww }\n"
                              "policy e extends fcfs { order job.estimat }\n"
                              "policy f { candidates e, fcfs  metric artww }",
                              "10:35", "a job has no attribute `estimat`", "estimate"),
    "one candidate": ("policy d { candidates fcfs  metric artww }",
                      "9:12", "needs at least two candidates, but names 1", "use that policy"),
    "not planning: depth": ("policy d { candidates fcfs, easy  metric artww }",
                            "9:29", "candidate `easy` does not plan every waiting job",
                            "`reserve all`"),
    "not planning: backfill none": ("policy strict { reserve all }\n"
                                    "policy d { candidates strict, fcfs  metric artww }",
                                    "10:23", "with `backfill none` a pass stops",
                                    "`backfill first_fit`"),
    "tuned candidate": ("policy d { candidates fcfs, sjf  metric artww }\n"
                        "policy e { candidates d, ljf  metric artww }",
                        "10:23", "candidate `d` is itself a dynP policy",
                        "name its candidates (fcfs, sjf) here instead"),
    "tuned candidates in a cycle": ("policy d { candidates fcfs, e  metric artww }\n"
                                    "policy e { candidates fcfs, d  metric artww }",
                                    "10:29", "candidate `d` is itself a dynP policy",
                                    "name planning policies only"),
    "different machines": ("policy d { candidates fcfs, fcfs_big  metric artww }",
                           "9:29", "candidate `fcfs_big` runs on machine `big`",
                           "one machine"),
    "order clause": ("policy d { candidates fcfs, sjf  metric artww  order job.procs }",
                     "9:48", "dynP policy `d` cannot have a `order` clause",
                     "belongs to its candidates"),
    "reserve clause": ("policy d { reserve all  candidates fcfs, sjf  metric artww }",
                       "9:12", "cannot have a `reserve` clause", "belongs to its candidates"),
    "size clause": ("policy d { candidates fcfs, sjf  metric artww  size job.procs }",
                    "9:48", "cannot have a `size` clause", "belongs to its candidates"),
    "missing metric": ("policy d { candidates fcfs, sjf }",
                       "9:8", "dynP policy `d` has no `metric` clause", "`metric artww`"),
    "missing candidates": ("policy d { metric artww }",
                           "9:8", "dynP policy `d` has no `candidates` clause", "two or more"),
    "unknown metric": ("policy d { candidates fcfs, sjf  metric artw }",
                       "9:41", "unknown metric `artw`", "did you mean `artww`? the metrics "
                       "are: artww, sldwa"),
    "unknown decider": ("policy d { candidates fcfs, sjf  metric artww  decider best }",
                        "9:56", "unknown decider `best`", "the deciders are: simple, advanced"),
    "unknown step": ("policy d { candidates fcfs, sjf  metric artww  step submission }",
                     "9:53", "unknown step `submission`", "did you mean `submit`?"),
    "clause twice": ("policy d { candidates fcfs, sjf  metric artww  metric sldwa }",
                     "9:48", "`metric` is given twice in policy `d`", "keep one"),
    "candidates twice": ("policy d { candidates fcfs, sjf  candidates ljf, sjf  metric artww }",
                         "9:34", "`candidates` is given twice", "keep one"),
    "mixing: tuned extends planning": ("policy d extends sjf { candidates fcfs, ljf  metric "
                                       "artww }", "9:8", "inherits a `order` clause",
                                       "may extend only another dynP policy"),
    "mixing: planning extends tuned": ("policy d { candidates fcfs, sjf  metric artww }\n"
                                       "policy e extends d { order job.procs }",
                                       "10:22", "dynP policy `e` cannot have a `order` clause",
                                       "belongs to its candidates"),
    "itself": ("policy d { candidates fcfs, d  metric artww }",
               "9:29", "dynP policy `d` names itself as a candidate", "planning policies"),
}


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_each_mistake_is_one_located_diagnostic(tmp_path: Path, capsys, name: str) -> None:
    body, where, message, help_ = MISTAKES[name]
    code, text = check(tmp_path, capsys, body + "\n")
    assert code == 2, text
    assert "Traceback" not in text
    assert f"t.pol:{where}" in text, text
    assert message in text, text
    assert "^" in text and help_ in text, text
    assert text.count("error:") == 1, text


def test_invariant_names_the_tuned_machine(tmp_path: Path, capsys) -> None:
    # the tuned policy's invariants are checked against its candidates' machine
    code, text = check(tmp_path, capsys, "policy d { candidates fcfs, sjf  metric artww  "
                       "invariant job.request.memory >= 0 }\n")
    assert code == 2 and "memory" in text and "t.pol:9:" in text, text
    ok = ir.TUNING_METRICS  # every metric the language names is accepted
    for m in ok:
        code, text = check(tmp_path, capsys, f"policy d {{ candidates fcfs, sjf  metric {m} }}\n")
        assert code == 0, text
