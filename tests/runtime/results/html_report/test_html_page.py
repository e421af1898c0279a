"""The HTML page: self-contained, escaped, deterministic, tables aligned by kind."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import pytest

from schedc.runtime.results.html_report.page import Page, VerdictEntry
from schedc.runtime.results.provenance import Provenance

HOSTILE = '<script>alert("x")</script> & "quotes" \'single\''

SVG = ('<?xml version="1.0" encoding="utf-8" standalone="no"?>\n'
       '<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x.dtd">\n'
       '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
       'width="100pt" height="50pt"><defs><clipPath id="p1"><rect width="10" height="10"/>'
       '</clipPath><path id="glyph" d="M0 0L1 1"/></defs>'
       '<g id="figure_1" clip-path="url(#p1)"><use xlink:href="#glyph"/>'
       '<rect width="100" height="50" fill="#123456"/></g></svg>')


def _provenance(policy: str = "easy") -> Provenance:
    return Provenance(
        schedc="0.1.0", command=("run", f"{policy}.pol", "--param", "depth=2"),
        policy={"name": policy, "file": f"{policy}.pol", "sha256": "ab" * 32, "imports": []},
        params={"depth": {"value": 2, "from": "given"}},
        workload={"file": "kth.swf", "sha256": "cd" * 32, "jobs": 3},
        options={"lenient": False}, seeds={})


def test_user_text_is_escaped_everywhere() -> None:
    page = Page(HOSTILE)
    page.text(HOSTILE, title=HOSTILE)
    page.table(HOSTILE, [HOSTILE], [[HOSTILE]], note=HOSTILE)
    page.preformatted(HOSTILE, title=HOSTILE)
    page.verdicts(HOSTILE, [VerdictEntry(HOSTILE, "violated", HOSTILE,
                                         counterexample={"x": HOSTILE}, replay=HOSTILE,
                                         monitor=HOSTILE, state_file=HOSTILE)])
    page.provenance(_provenance(HOSTILE))
    text = page.html()
    assert "<script" not in text and "alert(\"x\")" not in text
    assert text.count("&lt;script&gt;") >= 10


def test_a_page_loads_nothing_from_elsewhere() -> None:
    page = Page("p")
    page.figure("fig", SVG)
    page.provenance(_provenance())
    text = page.html()
    # no script, no link, no source other than the page itself (the SVG's xmlns are names)
    assert not re.search(r"<(script|link|img|iframe|object)\b", text)
    assert not re.search(r"""\b(src|href)=["'](?!#)""", text)
    assert "default-src 'none'" in text  # and a browser is told to refuse any load


def test_numeric_columns_are_right_aligned_and_formatted() -> None:
    text = Page("p").table("t", ["policy", "mean wait (s)", "jobs"],
                           [["easy", 1234.5, 28476], ["fcfs", Fraction(1, 3), None]]).html()
    assert '<th scope="col">policy</th><th class=num scope="col">mean wait (s)</th>' in text
    assert "<td>easy</td><td class=num>1,234.500</td><td class=num>28,476</td>" in text
    assert "<td class=num>0.333</td><td class=num></td>" in text


def test_sections_are_listed_in_the_table_of_contents_in_order() -> None:
    page = Page("title").text("intro")
    page.table("Metrics", ["a"], [[1]]).figure("Gantt", SVG)
    text = page.html()
    toc = re.findall(r'<li><a href="#(s\d+)">([^<]*)</a></li>', text)
    assert toc == [("s1", "title"), ("s2", "Metrics"), ("s3", "Gantt")]
    for anchor, _ in toc:
        assert f'<section id="{anchor}">' in text


def test_figures_are_inline_svg_with_ids_unique_on_the_page() -> None:
    text = Page("p").figure("one", SVG).figure("two", SVG).html()
    assert "<?xml" not in text and "<!DOCTYPE svg" not in text
    ids = re.findall(r'\bid="([^"]+)"', text)
    assert len(ids) == len(set(ids))
    assert {"f1-p1", "f2-p1", "f1-glyph", "f2-glyph"} <= set(ids)
    assert 'clip-path="url(#f2-p1)"' in text and 'xlink:href="#f2-glyph"' in text


def test_text_that_is_not_svg_is_refused() -> None:
    with pytest.raises(ValueError, match="not SVG"):
        Page("p").figure("fig", "<png>")


def test_several_runs_show_shared_facts_once_then_their_own() -> None:
    text = Page("p").provenance([_provenance("easy"), _provenance("fcfs")],
                                labels=["easy", "fcfs"]).html()
    assert text.count("kth.swf") == 1  # the workload they share
    assert "<h3>Shared by every run</h3>" in text
    assert "<h3>easy</h3>" in text and "<h3>fcfs</h3>" in text
    assert "<code>depth</code> = 2 (given)" in text


def test_the_same_inputs_give_the_same_bytes(tmp_path: Path) -> None:
    def build(path: Path) -> bytes:
        page = Page("p").provenance(_provenance()).figure("f", SVG)
        page.verdicts("v", [VerdictEntry("capacity", "proved", assumptions=("a",))])
        page.write(path)
        return path.read_bytes()

    assert build(tmp_path / "a.html") == build(tmp_path / "b.html")


def test_markdown_paragraphs_lists_and_code() -> None:
    text = Page("p").text("First `code` here.\n\n- one\n- `two`").html()
    assert "<p>First <code>code</code> here.</p>" in text
    assert "<ul><li>one</li><li><code>two</code></li></ul>" in text


def test_a_failed_write_leaves_no_file(tmp_path: Path) -> None:
    from schedc.runtime.atomicio import OutputError

    target = tmp_path / "missing" / "r.html"
    with pytest.raises(OutputError):
        Page("p").write(target)
    assert not target.exists() and not target.parent.exists()
