"""Rule 4 of dsl/params.py: a preemptive policy's constant settings (`limit preemptions`,
`resident`, `quantum`, `subset`, a `cost` that reads no job, `leftover efficient when`'s
condition) lie in their ranges, at `check`
over every value the params' domains allow and at `run` for the values bound; each problem
located at the setting's formula."""

from __future__ import annotations

from fractions import Fraction

import pytest

from schedc.dsl import DiagnosticError, check_source, compile_source
from schedc.dsl.binding import bind
from schedc.dsl.params import SETTINGS, domain_problem

PARAMS = ("param lim: int in [1, 10] = 3\nparam b: bool = false\n"
          "param x: real in [0, 1] = 1/2\nparam free: int = 3\n")
HEAD = len(PARAMS.splitlines())


def policy(setting: str) -> str:
    return PARAMS + ("policy p {\n  order job.acquired asc\n  reserve 0\n  backfill first_fit\n"
                     "  mechanism checkpoint\n  preempt by order\n  leftover equal\n"
                     f"  {setting}\n}}\n")


SETTING_LINE = HEAD + 8  # the line of ``setting`` in ``policy``


def expression_col(setting: str) -> int:
    """The column of the formula of ``setting`` (indented by two) in ``policy``."""
    words = 2 if setting.startswith(("limit", "cost")) else 1
    return 3 + len(" ".join(setting.split(" ")[:words])) + 1


def errors(setting: str) -> list:
    return [d for d in check_source(policy(setting)).diagnostics if d.severity == "error"]


@pytest.mark.parametrize(("setting", "words"), [
    ("limit preemptions -lim", "`limit preemptions` is -3 with `lim` = 3 (the default, `lim` "
                               "at <string>:1:1): it must be at least 0"),
    ("limit preemptions lim - 2", "`limit preemptions` is -1 with `lim` = 1 (the domain "
                                  "[1, 10] of `lim` at <string>:1:1): it must be at least 0"),
    ("limit preemptions -3", "`limit preemptions` is -3: it must be at least 0"),
    ("resident -lim", "`resident` is -3 with `lim` = 3"),
    ("resident 0", "`resident` is 0: it must be at least 1"),
    ("resident -1", "`resident` is -1: it must be at least 1"),
    ("resident (lim - 1) * 2", "`resident` is 0 with `lim` = 1 (the domain [1, 10]"),
    ("quantum -5", "`quantum` is -5: it must be from 0 to 10^15"),
    ("quantum 2000000000000000", "`quantum` is 2e+15: it must be from 0 to 10^15"),
    ("quantum 5 - 6 * (if b then 1 else 0)", "`quantum` is -1 with `b` = true (`b` at "
                                             "<string>:2:1 is a bool)"),
    ("subset 0", "`subset` is 0: it must be at least 1"),
    ("subset lim - 1", "`subset` is 0 with `lim` = 1"),
    ("subset 20 + 10 div (lim - 2)", "`subset` has no value with `lim` = 2 (the domain"),
    ("cost dispatch 1e308", "`cost dispatch` is 1e+308: it must be from 0 to 10^15"),
    ("cost checkpoint 1e16", "`cost checkpoint` is 1e+16: it must be from 0 to 10^15"),
    ("cost resume -1", "`cost resume` is -1: it must be from 0 to 10^15"),
    ("cost dispatch x * x * 4e15", "`cost dispatch` is 4e+15 with `x` = 1 (the domain [0, 1] "
                                   "of `x` at <string>:3:1)"),
    ("limit preemptions -free", "`limit preemptions` is -3 with `free` = 3 (the default"),
])
def test_a_setting_out_of_range_is_located_at_its_formula(setting: str, words: str) -> None:
    (e,) = errors(setting)
    assert words in e.message, e.message
    assert (e.line, e.col) == (SETTING_LINE, expression_col(setting))
    assert e.help and e.source is not None


@pytest.mark.parametrize("setting", [
    "limit preemptions 0", "limit preemptions lim - 1", "resident 1", "resident lim",
    "quantum 0", "quantum 10 * lim", "quantum 1000000000000000", "subset lim",
    "cost dispatch 1e15", "cost checkpoint x * 60", "cost resume 0",
    "cost dispatch job.estimate * 1e300",  # reads the job: checked where the run evaluates it
    "limit preemptions free",  # no domain: its default here, every bound value at `run`
])
def test_a_setting_in_range_over_the_domains_passes(setting: str) -> None:
    assert errors(setting) == []


def test_every_value_of_a_small_int_domain_is_tried() -> None:
    # 0 only at lim = 7, inside the domain: neither an end, nor the default, nor 0 or 1
    (e,) = errors("resident (lim - 7) * (lim - 7)")
    assert "`resident` is 0 with `lim` = 7" in e.message


def test_the_search_finds_nothing_it_cannot_show() -> None:
    """Only a value found is an error: a domain too large to try whole is tried at its ends,
    its default and 0, 1, -1; `run` checks every value it binds."""
    src = policy("resident (lim - 5000) * (lim - 5000)").replace("[1, 10]", "[1, 100000]")
    assert [d for d in check_source(src).diagnostics if d.severity == "error"] == []
    pol = compile_source(src)
    with pytest.raises(DiagnosticError) as err:
        bind(pol, {"lim": "5000"})
    (d,) = err.value.diagnostics
    assert d.message.startswith("`resident` is 0 with `lim` = 5000: it must be at least 1")
    e = pol.preemption.resident
    assert domain_problem(SETTINGS["resident"], e, {p.name: p for p in pol.params}) is None


@pytest.mark.parametrize(("given", "words"), [
    ({"free": "-2"}, "`limit preemptions` is -2 with `free` = -2: it must be at least 0"),
    ({"free": "1" + "0" * 300}, None),
])
def test_bound_values_are_checked_at_the_setting(given: dict, words: str | None) -> None:
    pol = compile_source(policy("limit preemptions free"))
    if words is None:
        assert bind(pol, given)["free"] == 10**300  # a limit has no upper bound
        return
    with pytest.raises(DiagnosticError) as err:
        bind(pol, given)
    (d,) = err.value.diagnostics
    assert words in d.message and (d.line, d.col) == (SETTING_LINE, 21)
    assert d.help == SETTINGS["limit"].meaning


def test_a_cost_param_bound_past_the_exact_range() -> None:
    pol = compile_source(policy("cost resume c").replace("param free", "param c: real = 5\n"
                                                         "param free"))
    assert bind(pol, {"c": "1/2"})["c"] == Fraction(1, 2)
    with pytest.raises(DiagnosticError) as err:
        bind(pol, {"c": "1e300"})
    assert "`cost resume` is 1e+300 with `c` = 1e+300: it must be from 0 to 10^15" in \
        err.value.diagnostics[0].message


def test_a_value_out_of_its_domain_is_said_before_the_settings() -> None:
    pol = compile_source(policy("limit preemptions lim - 1"))
    with pytest.raises(DiagnosticError) as err:
        bind(pol, {"lim": "0"})
    assert [d.message for d in err.value.diagnostics] == [
        "value 0 for param `lim` is outside its domain [1, 10]"]


def test_a_leftover_condition_that_fails_is_refused_where_written() -> None:
    # `leftover efficient when` reads params only: `check` evaluates it over their domains
    # as it does the other settings (the run stopped at its first pass instead)
    src = policy("limit preemptions 1").replace(
        "leftover equal", "leftover efficient when 1 / (lim - 4) > 0")
    (e,) = [d for d in check_source(src).diagnostics if d.severity == "error"]
    assert e.message.startswith("`leftover efficient when` has no value with `lim` = 4 "
                                "(the domain [1, 10]"), e.message
    assert (e.line, e.col) == (HEAD + 7, len("  leftover efficient when ") + 1)
    assert "true or false" in e.help
    ok = src.replace("1 / (lim - 4) > 0", "lim > 4")
    assert [d for d in check_source(ok).diagnostics if d.severity == "error"] == []
