"""Golden diagnostics: the exact text a user sees for common mistakes."""

from __future__ import annotations

import pytest

from schedc.dsl import check_source, render_diagnostics

GOLDEN = {
    "unknown_attr": (
        "policy p {\n  order job.estimat asc\n}\n",
        "error: a job has no attribute `estimat`\n"
        "  --> t.pol:2:13\n"
        "  |\n"
        "2 |   order job.estimat asc\n"
        "  |             ^^^^^^^\n"
        "help: did you mean `estimate`?\n",
    ),
    "type_error": (
        "policy p {\n  invariant job.procs + true\n}\n",
        "error: the right operand of `+` must be a number, but this is bool\n"
        "  --> t.pol:2:25\n"
        "  |\n"
        "2 |   invariant job.procs + true\n"
        "  |                         ^^^^\n"
        "help: a bool is not a number: write `if COND then 1 else 0` to count it\n",
    ),
    "missing_else": (
        "policy p {\n  size max(j in running: j.procs)\n}\n",
        "error: `max` over `running` needs an `else` value: the set may be empty\n"
        "  --> t.pol:2:8\n"
        "  |\n"
        "2 |   size max(j in running: j.procs)\n"
        "  |        ^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "help: add `else <value>` before the closing parenthesis\n",
    ),
    "recursion": (
        "def a = b + 1\ndef b = a\npolicy p { order a }\n",
        "error: `b` is defined in terms of itself (b -> a -> b)\n"
        "  --> t.pol:1:9\n"
        "  |\n"
        "1 | def a = b + 1\n"
        "  |         ^\n"
        "help: definitions cannot be recursive: the language is total\n"
        "\n"
        "error: `a` is defined in terms of itself (a -> b -> a)\n"
        "  --> t.pol:2:9\n"
        "  |\n"
        "2 | def b = a\n"
        "  |         ^\n"
        "help: definitions cannot be recursive: the language is total\n"
        "\n"
        "2 errors\n",
    ),
    "run_time": (
        "policy p {\n  order job.run_time\n}\n",
        "error: the actual run time of a job is not accessible\n"
        "  --> t.pol:2:13\n"
        "  |\n"
        "2 |   order job.run_time\n"
        "  |             ^^^^^^^^\n"
        "help: a scheduler cannot know how long a job really runs: "
        "use `estimate` (the requested time)\n",
    ),
    "bad_reserve": (
        "param f: real = 0.5\npolicy p {\n  reserve f\n}\n",
        "error: `reserve` needs an int param, but `f` is a real param\n"
        "  --> t.pol:3:3\n"
        "  |\n"
        "3 |   reserve f\n"
        "  |   ^^^^^^^^^\n"
        "help: write `reserve N`, `reserve all` or name an int param\n",
    ),
    "default_out_of_domain": (
        "param depth: int in [0, 64] = 70\n",
        "error: the default 70 of `depth` is outside its domain [0, 64]\n"
        "  --> t.pol:1:31\n"
        "  |\n"
        "1 | param depth: int in [0, 64] = 70\n"
        "  |                               ^^\n"
        "help: change the default or widen the domain\n",
    ),
    "import_not_found": (
        'import "nowhere.pol"\n',
        "error: cannot import `nowhere.pol`: no such file\n"
        "  --> t.pol:1:1\n"
        "  |\n"
        '1 | import "nowhere.pol"\n'
        "  | ^^^^^^^^^^^^^^^^^^^^\n"
        "help: the path is relative to the importing file; looked for `nowhere.pol`\n",
    ),
    "syntax_error": (
        "policy p {\n  order job.submit asc,\n}\n",
        "error: syntax error: unexpected `}`\n"
        "  --> t.pol:3:1\n"
        "  |\n"
        "3 | }\n"
        "  | ^\n"
        "help: expected an expression\n",
    ),
    "two_errors": (
        "policy p {\n  order job.sumbit\n  size job.procs / 2\n}\n",
        "error: a job has no attribute `sumbit`\n"
        "  --> t.pol:2:13\n"
        "  |\n"
        "2 |   order job.sumbit\n"
        "  |             ^^^^^^\n"
        "help: did you mean `submit`?\n"
        "\n"
        "error: `size` must be int, but this is real\n"
        "  --> t.pol:3:8\n"
        "  |\n"
        "3 |   size job.procs / 2\n"
        "  |        ^^^^^^^^^^^^^\n"
        "help: round it with `ceil(...)` or `floor(...)`\n"
        "\n"
        "2 errors\n",
    ),
    "power_not_literal": (
        "policy p {\n  order job.wait ^ job.procs\n}\n",
        "error: the exponent of `^` must be an integer literal in [0, 8]\n"
        "  --> t.pol:2:20\n"
        "  |\n"
        "2 |   order job.wait ^ job.procs\n"
        "  |                    ^^^^^^^^^\n"
        "help: for a fractional or variable power use `sqrt`, `log` or a product "
        "(`x ^ 3` is `x * x * x`)\n",
    ),
    "power_too_large": (
        "policy p {\n  order job.wait ^ 9\n}\n",
        "error: exponent 9 is out of range: `^` takes an integer literal in [0, 8]\n"
        "  --> t.pol:2:20\n"
        "  |\n"
        "2 |   order job.wait ^ 9\n"
        "  |                    ^\n"
        "help: write a larger power as a power of a power: `(x ^ 4) ^ 3`\n",
    ),
    "power_degree": (
        "def w = job.wait ^ 8\npolicy p {\n  order (w ^ 4) ^ 3\n}\n",
        "error: this power has degree 96, more than 64\n"
        "  --> t.pol:3:9\n"
        "  |\n"
        "3 |   order (w ^ 4) ^ 3\n"
        "  |         ^^^^^^^^^^^\n"
        "help: nested powers multiply their exponents; a priority rarely needs more than a "
        "cube: `(x ^ 4) ^ 2` is x to the 8th\n",
    ),
    "label_typo": (
        "policy p {\n  order sum(j in running where j.usr == job.user: j.procs)\n}\n",
        "error: a job has no attribute `usr`\n"
        "  --> t.pol:2:34\n"
        "  |\n"
        "2 |   order sum(j in running where j.usr == job.user: j.procs)\n"
        "  |                                  ^^^\n"
        "help: did you mean `user`?\n",
    ),
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_diagnostic(name):
    source, expected = GOLDEN[name]
    assert render_diagnostics(check_source(source, "t.pol").diagnostics) == expected


@pytest.mark.parametrize("clause", [
    "reserve 1 per job.procs or job.wait > 3 backfill first_fit",
    "invariant not job.procs",
    "invariant -(job.procs > 1)",
    "size if job.procs > 2 then 1 else true",
    "size now.x",
    "invariant job.procs + true > 1",
    "invariant (job.procs > 1) == 1",
    "size job.procs div 2.5",
    "order job.wait ^ 1.5",
    "order job.wait ^ -1",
    "order job.wait ^ (1 + 1)",
    "order true ^ 2",
    "order job.partiton",
    "order job.queue.count",
])
def test_every_type_mistake_has_a_help_line(clause: str) -> None:
    result = check_source(f"policy p {{ {clause} }}", "t.pol")
    assert not result.ok
    assert all(d.help and d.line == 1 for d in result.diagnostics), result.diagnostics


@pytest.mark.parametrize(("source", "want"), [
    ("policy p { reserve one }", "declare `param one: int = 1`"),
    ("policy p { machine nomachine reserve 1 }", "declare `machine nomachine {"),
    ("policy p extends zzz { reserve 1 }", "declare `policy zzz {"),
    ("policy p { size qqqq }", "declare it in this file"),
])
def test_unknown_names_without_a_near_miss_still_get_help(source: str, want: str) -> None:
    (d,) = check_source(source, "t.pol").diagnostics
    assert d.message.startswith("unknown") and want in d.help
