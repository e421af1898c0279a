"""Parser: the lead's example syntax parses, and print/parse round-trips (modulo spans)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedc.dsl.syntax import ast
from schedc.dsl.syntax.parser import parse
from schedc.dsl.syntax.printer import module

EXAMPLE = """
// examples/easy-sjf.pol
import "easy.pol"
/* a block
   comment */
param depth: int in [0, 64] = 1
def area_of(j) = j.procs * j.estimate
machine cm5 { resource cpus resource memory = 33554432 }
policy easy_sjf extends easy {
  machine cm5
  order job.estimate asc, job.submit asc   // trailing comment
  reserve depth
  backfill best by area_of(job) desc
  size min(job.procs, max(1, machine.free.cpus div 2))
  invariant job.size <= machine.capacity.cpus
  invariant count(j in queue where j.wait > 30min) >= 0
}
"""


def test_example_parses_to_expected_items():
    m = parse(EXAMPLE, "x.pol")
    assert isinstance(m, ast.Module)
    kinds = [type(i).__name__ for i in m.items]
    assert kinds == ["Import", "Param", "Def", "Machine", "Policy"]
    pol = m.items[-1]
    assert pol.extends == "easy"
    assert [type(c).__name__ for c in pol.clauses] == [
        "MachineClause", "OrderClause", "ReserveClause", "BackfillClause", "SizeClause",
        "InvariantClause", "InvariantClause",
    ]
    assert pol.clauses[3].descending and pol.clauses[2].is_name
    assert pol.clauses[-1].text == "count(j in queue where j.wait > 30min) >= 0"


def test_precedence_and_keywords():
    m = parse("def x = 1 + 2 * 3 div 4 < 5 and not a or b", "x.pol")
    body = m.items[0].body
    assert body.op == "or" and body.left.op == "and"
    cmp = body.left.left
    assert cmp.op == "<" and cmp.left.op == "+" and cmp.left.right.op == "//"


def test_double_slash_is_a_comment_and_durations():
    m = parse("def x = 2h // not a division\ndef y = 1d + 30s + 5min", "x.pol")
    assert m.items[0].body == ast.Duration(2, "h")
    assert len(m.items) == 2


def test_comparisons_do_not_chain():
    assert isinstance(parse("def x = 1 < 2 < 3", "x.pol"), ast.Module) is False


def test_example_round_trips():
    m = parse(EXAMPLE, "x.pol")
    assert parse(module(m), "y.pol") == m


# -- random ASTs -----------------------------------------------------------------------------

# the dynP clause words are names too wherever a name is expected
NAMES = st.sampled_from(["a", "b", "depth", "width", "x_1", "metric", "decider", "step",
                         "candidates", "keep", "cost", "limit", "quantum", "resident",
                         "victims", "mechanism", "preempt", "suspend", "dispatch"])
ATTRS = st.sampled_from(["procs", "estimate", "submit", "wait", "request", "cpus", "user",
                         "queue"])


def exprs() -> st.SearchStrategy:
    leaves = st.one_of(
        st.integers(0, 10**6).map(ast.Num),
        st.integers(0, 10**8).map(lambda n: ast.Num(Fraction(n, 100))),  # exact decimals
        st.booleans().map(ast.Bool),
        st.builds(ast.Duration, st.integers(0, 1000), st.sampled_from(["s", "min", "h", "d"])),
        st.builds(ast.Path, NAMES, st.lists(st.builds(ast.Part, ATTRS, st.booleans()),
                                            max_size=2).map(tuple)),
    )

    def extend(sub):
        return st.one_of(
            st.builds(ast.Unary, st.sampled_from(["-", "not"]), sub),
            st.builds(ast.Binary, st.sampled_from(
                ["+", "-", "*", "/", "//", "%", "^", "<", "<=", "==", "!=", "and", "or"]), sub,
                sub),
            st.builds(ast.If, sub, sub, sub),
            st.builds(ast.Call, st.sampled_from(["min", "ceil", "area_of"]),
                      st.lists(sub, max_size=3).map(tuple)),
            st.builds(ast.Aggregate, st.sampled_from(["sum", "min", "count"]), NAMES,
                      st.sampled_from(["queue", "running", "resources"]),
                      st.none() | sub, st.none() | sub, st.none() | sub),
        )

    return st.recursive(leaves, extend, max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(exprs())
def test_print_parse_round_trip(e):
    m = ast.Module((ast.Def("x", None, e), ast.Policy("p", None, (
        ast.OrderClause((ast.OrderKey(e, True), ast.OrderKey(e, False))),
        ast.BackfillClause("best", e, False), ast.InvariantClause(e))),
    ))
    text = module(m)
    assert parse(text, "x.pol") == m, text


@settings(max_examples=150, deadline=None)
@given(exprs(), exprs(), st.booleans(), st.booleans(), st.integers(1, 32), st.booleans())
def test_reserve_and_size_clauses_round_trip(a, b, per, when, n, fixed):
    # `per KEY or when COND` and `size [fixed] choose N in [LOW, HIGH]`: the key's own `or`
    # must not swallow `or when`
    reserve = ast.ReserveClause(1, per=a if per else None, when=b if when else None)
    size = ast.SizeClause(b, choices=n, low=a, fixed=fixed)
    m = ast.Module((ast.Policy("p", None, (reserve, size)),))
    text = module(m)
    assert parse(text, "x.pol") == m, text


TUNING_WORDS = st.sampled_from(["artww", "sldwa", "simple", "advanced", "submit", "change",
                                 "metric", "step", "x_1"])


@settings(max_examples=150, deadline=None)
@given(st.lists(NAMES, min_size=1, max_size=4), st.lists(st.tuples(
    st.sampled_from(["metric", "decider", "step"]), TUNING_WORDS), max_size=4), exprs())
def test_tuning_clauses_round_trip(candidates, words, inv):
    # a dynP policy's clauses, in any order and number (lowering checks them), mixed with an
    # invariant whose names may be the clause words themselves
    clauses = (ast.CandidatesClause(tuple(candidates)),
               *(ast.TuningClause(k, v) for k, v in words), ast.InvariantClause(inv))
    m = ast.Module((ast.Policy("metric", "step", clauses[::-1] + clauses),))
    text = module(m)
    assert parse(text, "x.pol") == m, text


def test_tuning_words_stay_names_elsewhere():
    text = """param metric: int = 3
param step: int in [0, 2] = 1
def decider = metric + step
def candidates(job) = job.cpus
machine m { resource step = 4 }
policy decider extends candidates {
  order candidates(job) + decider + sum(metric in queue: metric.cpus) desc
  invariant count(step in running) >= metric
}
policy q { candidates decider, metric
  metric step decider decider step metric }
"""
    m = parse(text, "x.pol")
    assert isinstance(m, ast.Module), m
    assert [type(i).__name__ for i in m.items] == ["Param", "Param", "Def", "Def", "Machine",
                                                   "Policy", "Policy"]
    q = m.items[-1]
    assert q.clauses == (ast.CandidatesClause(("decider", "metric")),
                         ast.TuningClause("metric", "step"),
                         ast.TuningClause("decider", "decider"),
                         ast.TuningClause("step", "metric"))
    assert q.clauses[0].name_spans[1].col == 32  # `metric`, for diagnostics


@pytest.mark.parametrize(("text", "tree"), [
    # `^` binds tighter than unary minus and `*`, and associates to the right
    ("-x ^ 2", "(- (^ x 2))"),
    ("2 * x ^ 3", "(* 2 (^ x 3))"),
    ("x ^ 3 * 2", "(* (^ x 3) 2)"),
    ("2 ^ 3 ^ 2", "(^ 2 (^ 3 2))"),
    ("(x ^ 2) ^ 3", "(^ (^ x 2) 3)"),
    ("x ^ -1", "(^ x (- 1))"),
    ("a / b ^ 2", "(/ a (^ b 2))"),
])
def test_power_binds_tightest_and_right(text, tree):
    def show(e) -> str:
        match e:
            case ast.Binary(op=op, left=a, right=b):
                return f"({op} {show(a)} {show(b)})"
            case ast.Unary(op=op, operand=x):
                return f"({op} {show(x)})"
            case ast.Num(value=v):
                return str(v)
            case ast.Path(root=r):
                return r
        raise AssertionError(e)

    m = parse(f"def d = {text}", "x.pol")
    assert show(m.items[0].body) == tree
    assert parse(module(m), "x.pol") == m


PREEMPT_WORDS = ["mechanism", "preempt", "victims", "keep", "cost", "limit", "preemptions",
                 "quantum", "resident", "suspend", "requeue", "dispatch", "resume",
                 "checkpoint", "leftover", "subset", "equal", "efficient"]


@settings(max_examples=150, deadline=None)
@given(exprs(), exprs(), st.sampled_from(["none", "suspend", "checkpoint", "malleable",
                                          "requeue"]), st.booleans(), st.booleans(),
       st.sampled_from(["keep", "dispatch", "resume", "checkpoint", "limit", "quantum",
                        "resident", "subset"]), st.booleans(),
       st.sampled_from(["equal", "efficient"]))
def test_preemption_clauses_round_trip(a, b, kind, when, desc, setting, by_order, leftover):
    # every clause of a preemptive policy; each word is a name wherever a clause cannot start
    m = ast.Module((ast.Policy("p", None, (
        ast.MechanismClause(kind, a if when else None),
        ast.PreemptClause(None if by_order else b),
        ast.VictimsClause((ast.OrderKey(a, desc), ast.OrderKey(b, not desc))),
        ast.PreemptSetting(setting, a), ast.InvariantClause(b),
        ast.LeftoverClause(leftover, b if when and leftover == "efficient" else None))),))
    text = module(m)
    assert parse(text, "x.pol") == m, text


@pytest.mark.parametrize("word", PREEMPT_WORDS)
def test_the_preemption_words_stay_names_inside_formulas(word):
    text = f"param {word}: int = 1\ndef x = {word} + 1\npolicy p {{ order {word} asc }}"
    m = parse(text, "x.pol")
    assert isinstance(m, ast.Module), m
    assert m.items[1].body == ast.Binary("+", ast.Path(word, ()), ast.Num(1))


# a `waive` reason: any one-line text without a double quote (a string's only limits)
REASONS = st.text(st.characters(blacklist_characters='"\n\r', blacklist_categories=("Cs",)),
                  max_size=40)
PROPERTY_NAMES = st.sampled_from(["progress", "reservations-kept", "no-superfluous-preemption",
                                  "well-defined", "x_1-y2", "capacty"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(PROPERTY_NAMES, REASONS | st.none()), max_size=4), exprs())
def test_waive_and_promise_clauses_round_trip(waivers, e):
    # names with hyphens (checked when lowering, so a typo gets a did-you-mean), any reason
    # (none: `promise NAME`), beside formulas that subtract: `a - b` stays a subtraction
    m = ast.Module((ast.Policy("p", None, (
        ast.OrderClause((ast.OrderKey(ast.Binary("-", e, e), False),)),
        *(ast.PromiseClause(name) if reason is None else ast.WaiveClause(name, reason)
          for name, reason in waivers),
        ast.InvariantClause(e))),))
    text = module(m)
    assert parse(text, "x.pol") == m, text


def test_a_waive_reason_may_span_strings_joined_by_a_space():
    m = parse('policy p {\n  waive progress "one"\n    "two" ""\n  order waive - x asc\n}',
              "x.pol")
    waive, order = m.items[0].clauses
    assert waive == ast.WaiveClause("progress", "one two ")
    assert (waive.span.line, waive.property_span.col) == (2, 9)
    # `waive` is a name inside formulas
    assert order.keys[0].expr == ast.Binary("-", ast.Path("waive", ()), ast.Path("x", ()))


@pytest.mark.parametrize(("text", "expected"), [
    ('policy p { waive progress }', "expected a quoted string"),
    ('policy p { waive "progress" "x" }', "expected a property name"),
    ('policy p { waive reservations - kept "x" }', "expected a quoted string"),
    ('policy p { waiv progress "x" }', "did you mean `waive`?"),
])
def test_a_malformed_waive_is_a_located_syntax_error(text, expected):
    d = parse(text, "x.pol")
    assert not isinstance(d, ast.Module)
    assert d.line == 1 and d.col > 11 and expected in d.help, d
