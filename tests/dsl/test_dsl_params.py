"""The one set of param rules (dsl/params.py): the defaults at `check`, the values `run`
binds (dsl/binding.py), and what `verify` assumes, with the same verdicts."""

from __future__ import annotations

from fractions import Fraction

import pytest

from schedc.dsl import DiagnosticError, check_source, compile_source
from schedc.dsl.binding import bind, read_value
from schedc.dsl.params import value_problem
from schedc.dsl.verify.pass_encoding.encoder import encode_pass
from schedc.dsl.verify.verdict import Bounds

DEPTH_POLICY = "policy p {{ reserve d backfill first_fit }}"


def _errors(src: str) -> list:
    return [d for d in check_source(src).diagnostics if d.severity == "error"]


def test_a_depth_param_without_domain_and_a_negative_default_is_rejected_at_its_default():
    errors = _errors("param d: int = -1\n" + DEPTH_POLICY.format())
    assert len(errors) == 1
    e = errors[0]
    assert (e.line, e.col, e.end_col) == (1, 16, 18)  # the `-1`
    assert "reservation depth" in e.message and "default -1 is negative" in e.message
    assert "`reserve d` at <string>:2:12" in e.message and e.help


def test_a_depth_param_whose_domain_allows_negatives_is_rejected_at_the_domain():
    errors = _errors("param d: int in [-2, 4] = 1\n" + DEPTH_POLICY.format())
    assert len(errors) == 1 and (errors[0].line, errors[0].col) == (1, 18)
    assert "domain allows -2" in errors[0].message


@pytest.mark.parametrize("decl", ["param d: int = 0", "param d: int = 3",
                                  "param d: int in [0, 8] = 2"])
def test_a_depth_param_that_is_never_negative_passes(decl: str):
    assert _errors(decl + "\n" + DEPTH_POLICY.format()) == []


def test_a_negative_default_is_fine_for_a_param_that_is_no_depth():
    assert _errors("param w: int = -1\npolicy p { order job.procs * w }") == []


def test_a_default_outside_its_domain_is_an_error():
    errors = _errors("param w: int in [0, 4] = 9\npolicy p { order job.procs * w }")
    assert len(errors) == 1 and "outside its domain" in errors[0].message


@pytest.mark.parametrize(("typ", "text", "value"), [
    ("int", "4", 4), ("int", "-3", -3), ("int", "90s", 90), ("int", "30min", 1800),
    ("int", "2h", 7200), ("int", "1d", 86400), ("int", "1h + 30min", 5400),
    ("real", "0.9", Fraction(9, 10)), ("real", "1/3", Fraction(1, 3)), ("real", "2", 2),
    ("real", "1d", 86400), ("real", "2e3", 2000), ("bool", "true", True),
    ("bool", "false", False),
])
def test_values_are_read_as_the_language_reads_a_constant(typ: str, text: str, value):
    p = compile_source(f"param x: {typ} = {text}\npolicy p {{ order x }}").params[0]
    assert p.default == value  # the language's own reading
    assert read_value(p, text) == value and type(read_value(p, text)) is type(
        Fraction(value) if typ == "real" else value)


@pytest.mark.parametrize(("typ", "text"), [
    ("int", "1.5"), ("int", "x"), ("int", "true"), ("int", "+4"), ("int", "1 param y: int = 2"),
    ("int", "now"), ("int", "1/0"), ("real", "inf"), ("real", "nan"), ("bool", "1"),
    ("bool", "yes"), ("int", ""),
])
def test_bad_values_are_located_at_the_declaration_with_help(typ: str, text: str):
    p = compile_source(f"param x: {typ} = {'true' if typ == 'bool' else 1}\n"
                       "policy p { order x }").params[0]
    with pytest.raises(DiagnosticError) as err:
        read_value(p, text)
    (d,) = err.value.diagnostics
    assert d.message == f"bad value `{text}` for param `x`: it is {typ}"
    assert (d.file, d.line) == ("<string>", 1) and d.help and "--param x=" in d.help


def test_a_prelude_param_reads_its_values_too():
    pol = compile_source("policy p { reserve 1 or when job.xfactor > xfactor_limit "
                         "backfill first_fit }")
    assert bind(pol, {"xfactor_limit": "5/2"}) == {"xfactor_limit": Fraction(5, 2)}


def test_bind_checks_domain_and_depth_by_the_same_rule_as_check():
    pol = compile_source("param d: int = 1\nparam w: real in [0, 1] = 0.5\n"
                         "policy p { order job.procs * w reserve d backfill first_fit }")
    assert bind(pol, {"d": "1h", "w": "1/4"}) == {"d": 3600, "w": Fraction(1, 4)}
    with pytest.raises(DiagnosticError) as err:
        bind(pol, {"d": "-1", "w": "2"})
    messages = sorted(d.message for d in err.value.diagnostics)
    assert messages == ["value -1 for param `d` is negative, but `d` is a reservation depth "
                        "(`reserve d`)", "value 2 for param `w` is outside its domain [0, 1]"]
    for p, bad in zip(pol.params, (-1, 2), strict=True):
        assert value_problem(p, bad, depth=p.name == "d") is not None
        assert value_problem(p, p.default, depth=p.name == "d") is None


def test_verify_assumes_what_run_accepts_of_a_depth_without_domain():
    pol = compile_source("param d: int = 1\n" + DEPTH_POLICY.format())
    names = [a.name for a in encode_pass(pol, Bounds(1, 1)).assumptions]
    assert "param `d` is a reservation depth: at least 0" in names
    bounded = compile_source("param d: int in [0, 3] = 1\n" + DEPTH_POLICY.format())
    names = [a.name for a in encode_pass(bounded, Bounds(1, 1)).assumptions]
    assert "param `d` lies in [0, 3]" in names
    assert not any("reservation depth" in n for n in names)
