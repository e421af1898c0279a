"""`waive PROPERTY "REASON"`: checked where it is written (a property `verify` checks of this
policy, once, with a reason), carried in the IR and its JSON, inherited through `extends`
as other clauses are, and a dynP policy's own (its candidates keep theirs). `promise
PROPERTY`: a child drops a waiver it inherits."""

from __future__ import annotations

import json

import pytest

from schedc.dsl import check_source, compile_source, ir, render_diagnostics
from schedc.dsl.ir_json import policy_to_json

EASY = "order job.submit asc reserve 1 backfill first_fit"
PREEMPTIVE = "preempt when cand.wait > victim.wait mechanism suspend"


def _one_error(source: str):
    (d,) = check_source(source, "t.pol").diagnostics
    assert d.severity == "error" and d.help, d
    return d


@pytest.mark.parametrize(("clause", "col", "message", "help_"), [
    # an unknown name: located on the name, with the closest property of this policy
    ('waive reservation-kept "x"', 7, "unknown property `reservation-kept`",
     "did you mean `reservations-kept`?"),
    ('waive progres "x"', 7, "unknown property `progres`", "did you mean `progress`?"),
    ('waive speed "x"', 7, "unknown property `speed`", "the properties `verify` checks here"),
    # a property of preemptive policies only, on a run-to-completion one
    ('waive protected "x"', 7, "`waive protected`: it is a property of preemptive policies",
     "drop it"),
    ('waive invariant "x"', 7, "an invariant cannot be waived", "drop the `invariant`"),
    # an empty reason, or one of spaces: the whole clause
    ('waive progress ""', 1, "`waive progress` gives no reason", "say why"),
    ('waive progress " " "  "', 1, "`waive progress` gives no reason", "say why"),
])
def test_a_faulty_waive_is_a_located_error(clause: str, col: int, message: str,
                                           help_: str) -> None:
    d = _one_error(f"policy p {{\n  {EASY}\n  {clause}\n}}\n")
    assert (d.line, d.col) == (3, 2 + col), render_diagnostics([d])
    assert d.message.startswith(message) and help_ in d.help, render_diagnostics([d])


def test_a_property_waived_twice_is_an_error_at_the_second() -> None:
    d = _one_error(f'policy p {{\n  {EASY}\n  waive progress "a"\n  waive progress "b"\n}}\n')
    assert (d.line, d.col) == (4, 3)
    assert d.message == "`waive progress` is given twice in policy `p`"


@pytest.mark.parametrize(("body", "name", "why"), [
    # reservations-kept: only where `verify` checks it (a policy that may reserve)
    ("order job.submit asc", "reservations-kept",
     "this policy makes no reservations (`reserve 0`, or `backfill none`)"),
    (f"{PREEMPTIVE}", "reservations-kept", "a preemptive pass makes no reservations"),
    (f"{PREEMPTIVE}", "reservation-safety", "a preemptive pass makes no reservations"),
])
def test_a_property_verify_does_not_check_here_cannot_be_waived(body: str, name: str,
                                                                why: str) -> None:
    d = _one_error(f'policy p {{ {body} waive {name} "x" }}')
    assert d.message == f"`waive {name}`: {why}, so `verify` does not check it", d.message


def test_the_ir_carries_each_waiver_in_the_order_written() -> None:
    p = compile_source(f'policy p {{ {EASY}\n waive reservations-kept "re-planned" "often"\n'
                       ' waive progress "never" }', "t.pol")
    assert [(w.property, w.reason) for w in p.waivers] == [
        ("reservations-kept", "re-planned often"), ("progress", "never")]
    assert p.waiver("progress").span.line == 3 and p.waiver("capacity") is None
    # in the JSON of `schedc compile --emit json`, only where there are some
    data = policy_to_json(p)
    assert data["waivers"] == [
        {"node": "Waiver", "property": "reservations-kept", "reason": "re-planned often"},
        {"node": "Waiver", "property": "progress", "reason": "never"}]
    assert "waivers" not in policy_to_json(compile_source(f"policy p {{ {EASY} }}"))
    json.dumps(data)


def test_a_preemptive_policy_waives_its_own_properties() -> None:
    p = compile_source(f'policy p {{ {PREEMPTIVE} waive no-superfluous-preemption "x"\n'
                       ' waive progress "y" }', "t.pol")
    assert [w.property for w in p.waivers] == ["no-superfluous-preemption", "progress"]


def test_extends_inherits_waivers_and_a_child_restates_one() -> None:
    source = f"""
policy base {{ {EASY}
  waive reservations-kept "early ends"
  waive progress "base's"
}}
policy child extends base {{
  order job.estimate asc
  waive reservations-kept "shorter jobs go first"
}}
"""
    child = compile_source(source, "t.pol", "child")
    assert [(w.property, w.reason) for w in child.waivers] == [
        ("reservations-kept", "shorter jobs go first"), ("progress", "base's")]
    # the restated clause is the child's, located there
    assert child.waiver("reservations-kept").span.line == 8


def test_a_dynp_policy_has_its_own_waivers_and_its_candidates_theirs() -> None:
    source = """
policy a { order job.submit asc reserve all backfill first_fit
  waive reservations-kept "re-planned" }
policy b { order job.estimate asc reserve all backfill first_fit }
policy d { candidates a, b metric artww waive progress "the tuned one's" }
"""
    d = compile_source(source, "t.pol", "d")
    assert [w.property for w in d.waivers] == ["progress"]  # not its first candidate's
    a, b = d.tuning.candidates
    assert [w.property for w in a.waivers] == ["reservations-kept"] and b.waivers == ()
    # a dynP policy may switch candidates between two passes: verify never checks it there
    bad = _one_error(source.replace('waive progress', 'waive reservations-kept'))
    assert bad.message.startswith("`waive reservations-kept`: a dynP policy may switch")


def test_waive_is_a_name_inside_formulas() -> None:
    p = compile_source("param waive: int = 2\npolicy p { order job.procs - waive asc }")
    assert p.waivers == () and isinstance(p.order[0].expr, ir.Binary)


BASE = """
policy base { order job.submit asc reserve all backfill first_fit
  waive reservations-kept "re-planned at every pass"
  waive progress "base's"
}
"""


def test_a_child_promises_a_property_its_parent_waives() -> None:
    child = compile_source(BASE + """
policy child extends base {
  reserve 1
  promise reservations-kept
}
""", "t.pol", "child")
    assert [w.property for w in child.waivers] == ["progress"]
    assert child.warnings == ()
    # a grandchild inherits the promise, and may waive the property again
    source = BASE + """
policy child extends base { promise progress }
policy grandchild extends child { reserve 2 }
policy again extends child { waive progress "the grandchild's own" }
"""
    assert [w.property for w in compile_source(source, "t.pol", "grandchild").waivers] == [
        "reservations-kept"]
    again = compile_source(source, "t.pol", "again")
    assert [(w.property, w.reason) for w in again.waivers] == [
        ("reservations-kept", "re-planned at every pass"), ("progress", "the grandchild's own")]


@pytest.mark.parametrize("change", ["reserve 0", "backfill none", f"reserve 0 {PREEMPTIVE}"])
def test_a_parent_s_waiver_of_a_property_the_child_is_not_checked_for_is_dropped(
        change: str) -> None:
    """A child of `conservative` that makes no reservations (or preempts) compiles: the
    parent's `waive reservations-kept` has nothing left to waive, and the child could not
    drop it (the error pointed at the parent's clause)."""
    child = compile_source(BASE + f"policy child extends base {{ {change} }}", "t.pol", "child")
    assert "reservations-kept" not in [w.property for w in child.waivers]
    # the child's own waiver of such a property is still refused, at its place
    d = _one_error(BASE + f'policy child extends base {{ {change}\n'
                   '  waive reservations-kept "x" }')
    assert d.line == 7 and d.message.startswith("`waive reservations-kept`: "), d.message


@pytest.mark.parametrize(("body", "line", "col", "message", "help_"), [
    ('promise progres', 3, 11, "unknown property `progres`", "did you mean `progress`?"),
    ('promise speed', 3, 11, "unknown property `speed`", "the properties are: capacity"),
    ('waive progress "x"\n  promise progress', 4, 3,
     "policy `child` both waives and promises `progress`", "keep one"),
    ('promise progress\n  waive progress "x"', 4, 3,
     "policy `child` both waives and promises `progress`", "keep one"),
    ('promise progress\n  promise progress', 4, 3,
     "`promise progress` is given twice in policy `child`", "keep one"),
])
def test_a_faulty_promise_is_a_located_error(body: str, line: int, col: int, message: str,
                                             help_: str) -> None:
    d = _one_error(f"policy base {{ {EASY} }}\npolicy child extends base {{\n  {body}\n}}\n")
    assert (d.line, d.col) == (line, col) and d.message == message, render_diagnostics([d])
    assert help_ in d.help


def test_a_promise_of_a_property_no_parent_waives_is_a_warning() -> None:
    (d,) = check_source(f"policy p {{ {EASY}\n  promise progress }}", "t.pol").diagnostics
    assert d.severity == "warning" and (d.line, d.col) == (2, 3)
    assert d.message == ("`promise progress` changes nothing: no policy this one extends "
                         "waives `progress`")
    assert compile_source(f"policy p {{ {EASY}\n  promise progress }}").waivers == ()
    # a child's promise of what its parent already promises, once, at the child's
    family = BASE + "policy child extends base { promise progress }\n" \
        "policy grandchild extends child {\n  promise progress }"
    warnings = [d for d in check_source(family, "t.pol").diagnostics]
    assert [(d.severity, d.line) for d in warnings] == [("warning", 8)], warnings
    # the warning is the tuned policy's too
    dynp = "policy a { order job.submit asc reserve all backfill first_fit }\n" \
           "policy b extends a { order job.estimate asc }\n" \
           "policy d { candidates a, b metric artww\n" \
           "  promise capacity }"
    (d,) = check_source(dynp, "t.pol").diagnostics
    assert d.severity == "warning" and d.line == 4


def test_promise_is_a_name_inside_formulas() -> None:
    p = compile_source("param promise: int = 2\npolicy p { order job.procs - promise asc }")
    assert p.waivers == () and isinstance(p.order[0].expr, ir.Binary)
