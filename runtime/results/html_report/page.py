"""One self-contained HTML page a person reads (`--report FILE.html`): inline CSS, figures
as inline SVG, no script, no network, no file beside it.

Every text that reaches the page is escaped (policy names and paths come from users).
Sections are numbered in the order added, so the same inputs give the same bytes: no
timestamp, no random id.
"""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from attrs import frozen

from schedc.runtime.results.provenance import Provenance

_CSS = """
:root { color-scheme: light; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d232a;
  max-width: 1100px; margin: 2em auto; padding: 0 1.5em; }
h1 { font-size: 1.6em; margin-bottom: .2em; }
h2 { font-size: 1.25em; border-bottom: 1px solid #d6dbe0; padding-bottom: .2em;
  margin-top: 1.8em; }
h3 { font-size: 1.05em; }
nav ol { columns: 2; margin: .5em 0; }
table { border-collapse: collapse; margin: .6em 0; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d6dbe0; padding: .25em .6em; text-align: left;
  vertical-align: top; }
th { background: #f2f4f6; }
td.num, th.num { text-align: right; }
code, pre { font: 13px/1.4 ui-monospace, "DejaVu Sans Mono", monospace; }
pre { background: #f6f8fa; border: 1px solid #e1e4e8; padding: .6em; overflow-x: auto;
  white-space: pre-wrap; word-break: break-all; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2em 1em; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; word-break: break-all; }
figure { margin: 1em 0; }
figure svg { max-width: 100%; height: auto; display: block; }
.note { color: #4a5560; font-size: .92em; }
.s-proved { color: #176f2c; font-weight: 600; }
.s-violated { color: #b3261e; font-weight: 600; }
.s-unknown { color: #8a6100; font-weight: 600; }
.s-vacuous { color: #8e2483; font-weight: 600; }
.verdict { border-left: 4px solid #d6dbe0; padding: .1em .8em; margin: .8em 0; }
.v-violated { border-color: #b3261e; }
.v-unknown { border-color: #d4a017; }
.v-proved { border-color: #2e9b4a; }
.v-vacuous { border-color: #8e2483; }
@media print {
  body { max-width: none; margin: 0; font-size: 11pt; }
  nav { display: none; }
  h2 { break-after: avoid; }
  table, figure, pre, .verdict { break-inside: avoid; }
  pre { white-space: pre-wrap; }
}
"""


@frozen
class VerdictEntry:
    """One property's verdict as the page shows it (built from the prover's `Verdict` by
    `verify.py`; the page knows nothing of Z3)."""

    property: str
    status: str  # proved | violated | vacuous | unknown
    detail: str = ""  # the reason, with the location when there is one
    # proved: the assumptions the proof used; vacuous: those that clash
    assumptions: tuple[str, ...] = ()
    caveats: tuple[str, ...] = ()
    candidates: tuple[tuple[str, str], ...] = ()  # a dynP policy's: (candidate, status)
    candidate: str | None = None  # the candidate a verdict not proved comes from
    counterexample: Mapping[str, Any] | None = None
    state_file: str | None = None  # where the counterexample was written, if it was
    replay: str | None = None  # the command that replays it
    monitor: str | None = None  # what the simulator's monitor said on the replay
    # the counterexample as the terminal shows it: (title, columns, a row per job)
    counterexample_table: tuple[str, Sequence[str], Sequence[Sequence[str]]] | None = None
    # a property the policy waives (`waive`): the note (why its failure is expected, or the
    # warning that it is proved), and whether its failure is excused
    expected: str = ""
    excused: bool = False


@frozen
class _Section:
    title: str
    body: str


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def cell_text(value: object) -> str:
    """A table cell as text: numbers as the terminal tables show them (thousands
    separators, three decimals), None as empty."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, Fraction):
        value = float(value)
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 1e6 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _numeric(value: object) -> bool:
    return isinstance(value, int | float | Fraction) and not isinstance(value, bool)


class Page:
    """A page in the making: sections in the order added, then `write` or `html`."""

    def __init__(self, title: str) -> None:
        self.title = title
        self._sections: list[_Section] = []
        self._figures = 0

    # -- sections ------------------------------------------------------------------------
    def section(self, title: str) -> Page:
        """Start a new section (listed in the table of contents); what is added next without
        a title of its own goes into it."""
        self._sections.append(_Section(title, ""))
        return self

    def _add(self, fragment: str, title: str | None = None) -> Page:
        if title is not None or not self._sections:  # a titled part opens its own section
            self.section(self.title if title is None else title)
        last = self._sections[-1]
        self._sections[-1] = _Section(last.title, last.body + fragment)
        return self

    # -- parts ---------------------------------------------------------------------------
    def provenance(self, prov: Provenance | Sequence[Provenance] | Mapping[str, Any],
                   labels: Sequence[str] | None = None, title: str = "Provenance") -> Page:
        """What made the results: one run's facts, or several runs' (those they share,
        then each run's own, named by ``labels``), or facts given as a JSON mapping."""
        if isinstance(prov, Provenance):
            return self._add(_facts(prov.to_json()), title)
        if isinstance(prov, Mapping):
            return self._add(_facts(prov), title)
        records = list(prov)
        if len(records) == 1:
            return self._add(_facts(records[0].to_json()), title)
        from schedc.runtime.results.provenance import shared_and_own

        shared, own = shared_and_own(records)
        names = list(labels) if labels is not None else [f"run {i + 1}" for i in
                                                         range(len(records))]
        parts = ["<h3>Shared by every run</h3>", _facts(shared)]
        for name, facts in zip(names, own, strict=True):
            parts += [f"<h3>{_e(name)}</h3>", _facts(facts)]
        return self._add("".join(parts), title)

    def table(self, title: str, columns: Sequence[str], rows: Sequence[Sequence[object]],
              note: str = "") -> Page:
        """A table; a column whose cells are all numbers (or empty) is right-aligned."""
        numeric = [bool(rows) and all(_numeric(r[i]) or r[i] is None for r in rows)
                   for i in range(len(columns))]
        head = "".join(f'<th{" class=num" if n else ""} scope="col">{_e(c)}</th>'
                       for c, n in zip(columns, numeric, strict=True))
        body = "".join(
            "<tr>" + "".join(f'<td{" class=num" if n else ""}>{_e(cell_text(v))}</td>'
                             for v, n in zip(row, numeric, strict=True)) + "</tr>\n"
            for row in rows)
        text = f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}</tbody>\n</table>\n"
        if note:
            text += f'<p class="note">{_e(note)}</p>\n'
        return self._add(text, title)

    def figure(self, title: str, fig: object) -> Page:
        """A matplotlib figure (or SVG text already made) inline, its ids made unique on the
        page: two figures' clip paths or glyphs never shadow each other."""
        if isinstance(fig, str):
            svg = fig
        else:
            from schedc.runtime.results.plots import figure_svg

            svg = figure_svg(fig)
        self._figures += 1
        svg = _inline_svg(svg, f"f{self._figures}-")
        # the section's heading is its caption
        return self._add(f'<figure role="img" aria-label="{_e(title)}">\n{svg}\n</figure>\n',
                         title)

    def text(self, text: str, title: str | None = None) -> Page:
        """Plain text or a little markdown: paragraphs, `- ` lists, `code`."""
        return self._add(_markdown(text), title)

    def preformatted(self, text: str, title: str | None = None) -> Page:
        """Text shown as written (diagnostics, the dynP block), in a `<pre>`."""
        return self._add(f"<pre>{_e(text.rstrip())}</pre>\n", title)

    def verdicts(self, title: str, entries: Sequence[VerdictEntry], note: str = "") -> Page:
        """A policy's verdicts: a summary table, then each verdict not proved (and each
        proved one's assumptions) in full, a counterexample's state inline."""
        rows = "".join(
            f"<tr><td>{_e(v.property)}</td>"
            f'<td class="s-{_e(v.status)}">{_e(v.status)}'
            f"{' (expected)' if v.excused else ''}</td>"
            f"<td>{_e(v.detail)}</td></tr>\n" for v in entries)
        parts = ["<table>\n<thead><tr><th scope=col>property</th><th scope=col>verdict</th>"
                 f"<th scope=col>detail</th></tr></thead>\n<tbody>\n{rows}</tbody>\n</table>\n"]
        if note:
            parts.append(f'<p class="note">{_e(note)}</p>\n')
        parts += [_verdict_detail(v) for v in entries]
        return self._add("".join(parts), title)

    # -- output --------------------------------------------------------------------------
    def html(self) -> str:
        toc = "".join(f'<li><a href="#s{i}">{_e(s.title)}</a></li>'
                      for i, s in enumerate(self._sections, 1))
        sections = "".join(f'<section id="s{i}">\n<h2>{_e(s.title)}</h2>\n{s.body}</section>\n'
                           for i, s in enumerate(self._sections, 1))
        return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                "<meta name=\"generator\" content=\"schedc\">\n"
                # nothing may load from elsewhere: a page read offline looks the same
                "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                "style-src 'unsafe-inline'; img-src data:\">\n"
                f"<title>{_e(self.title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
                f"<header><h1>{_e(self.title)}</h1></header>\n"
                f"<nav aria-label=\"contents\"><ol>{toc}</ol></nav>\n<main>\n{sections}"
                "</main>\n</body>\n</html>\n")

    def write(self, path: str | os.PathLike[str]) -> None:
        """The page written whole or not at all (`atomicio`)."""
        from schedc.runtime.atomicio import write_text_atomic

        write_text_atomic(path, self.html())


# -- fragments -------------------------------------------------------------------------
def _facts(facts: Mapping[str, Any]) -> str:
    """A provenance mapping as a definition list: the policy, params and workload in
    words; the rest as compact JSON."""
    items = []
    for key, value in facts.items():
        if key == "command" and isinstance(value, list):
            shown = "<code>schedc " + _e(" ".join(_shell_word(w) for w in value)) + "</code>"
        elif key == "params" and isinstance(value, Mapping):
            shown = ", ".join(f"<code>{_e(n)}</code> = {_e(_json(p.get('value')))} "
                              f"({_e(p.get('from', ''))})" for n, p in value.items()
                              ) or "none"
        elif isinstance(value, Mapping):
            shown = "<br>".join(f"{_e(k)}: <code>{_e(_json(v))}</code>"
                                for k, v in value.items()) or "none"
        else:
            shown = f"<code>{_e(_json(value))}</code>"
        items.append(f"<dt>{_e(key)}</dt><dd>{shown}</dd>")
    return f'<dl class="facts">{"".join(items)}</dl>\n'


def _json(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _shell_word(word: str) -> str:
    import shlex

    return shlex.quote(word)


def _verdict_detail(v: VerdictEntry) -> str:
    if v.status == "proved" and not (v.assumptions or v.caveats or v.expected):
        return ""
    parts = [f'<div class="verdict v-{_e(v.status)}"><h3>{_e(v.property)}: '
             f'<span class="s-{_e(v.status)}">{_e(v.status)}</span>'
             + (f" (candidate <code>{_e(v.candidate)}</code>)" if v.candidate else "")
             + (" (expected)" if v.excused else "") + "</h3>\n"]
    if v.detail:
        parts.append(f"<p>{_e(v.detail)}</p>\n")
    if v.expected:
        parts.append(f"<p>{'' if v.excused else 'warning: '}{_inline(v.expected)}</p>\n")
    if v.candidates:
        parts.append("<p>per candidate: " + ", ".join(
            f'<code>{_e(c)}</code> <span class="s-{_e(s)}">{_e(s)}</span>'
            for c, s in v.candidates) + "</p>\n")
    if v.assumptions:
        used = ("assumptions that clash (no state meets them all):" if v.status == "vacuous"
                else "assumptions used:")
        parts.append(f"<p>{used}</p><ul>" + "".join(
            f"<li>{_e(a)}</li>" for a in v.assumptions) + "</ul>\n")
    if v.caveats:
        parts.append("<p>within limits:</p><ul>" + "".join(
            f"<li>{_e(c)}</li>" for c in v.caveats) + "</ul>\n")
    if v.counterexample is not None and v.counterexample_table is not None:
        title, columns, rows = v.counterexample_table
        head = "".join(f'<th scope="col">{_e(c)}</th>' for c in columns)
        body = "".join("<tr>" + "".join(f"<td>{_e(cell)}</td>" for cell in row) + "</tr>\n"
                       for row in rows)
        # the table to read, the state file's JSON folded away (to save it from the page)
        parts.append(f"<table>\n<caption>{_e(title)}</caption>\n<thead><tr>{head}</tr>"
                     f"</thead>\n<tbody>\n{body}</tbody>\n</table>\n"
                     "<details><summary>the state as JSON (the pass's decisions under "
                     "<code>pass</code>)</summary>\n"
                     f"<pre>{_e(json.dumps(v.counterexample, indent=2))}</pre></details>\n")
    elif v.counterexample is not None:
        parts.append("<p>counterexample state (the pass's decisions under "
                     "<code>pass</code>):</p>\n"
                     f"<pre>{_e(json.dumps(v.counterexample, indent=2))}</pre>\n")
    if v.counterexample is not None:
        if v.monitor:
            parts.append(f"<p>the simulator's monitor on replay: <code>{_e(v.monitor)}"
                         "</code></p>\n")
        if v.state_file:
            parts.append(f"<p>written to <code>{_e(v.state_file)}</code></p>\n")
        if v.replay:
            parts.append(f"<p>replay: <code>{_e(v.replay)}</code></p>\n")
    parts.append("</div>\n")
    return "".join(parts)


_CODE = re.compile(r"`([^`]+)`")


def _inline(text: str) -> str:
    out, last = [], 0
    for m in _CODE.finditer(text):
        out += [_e(text[last:m.start()]), f"<code>{_e(m.group(1))}</code>"]
        last = m.end()
    out.append(_e(text[last:]))
    return "".join(out)


def _markdown(text: str) -> str:
    blocks = [b for b in re.split(r"\n\s*\n", text.strip("\n")) if b.strip()]
    out = []
    for block in blocks:
        lines = block.splitlines()
        if all(line.lstrip().startswith("- ") for line in lines):
            out.append("<ul>" + "".join(f"<li>{_inline(line.lstrip()[2:])}</li>"
                                        for line in lines) + "</ul>\n")
        else:
            out.append("<p>" + "<br>".join(_inline(line) for line in lines) + "</p>\n")
    return "".join(out)


_ID = re.compile(r'\bid="([^"]+)"')


def _inline_svg(svg: str, prefix: str) -> str:
    """SVG text for inlining in HTML: no XML declaration or doctype, every id prefixed
    (and the references to it: `url(#id)`, `href="#id"`)."""
    start = svg.find("<svg")
    if start < 0:
        raise ValueError("not SVG text: no <svg> element")
    svg = svg[start:].strip()
    ids = set(_ID.findall(svg))
    if not ids:
        return svg

    def ref(m: re.Match[str]) -> str:
        name = m.group(2)
        return f"{m.group(1)}{prefix}{name}{m.group(3)}" if name in ids else m.group(0)

    svg = _ID.sub(lambda m: f'id="{prefix}{m.group(1)}"', svg)
    svg = re.sub(r'(url\(#)([^)]+)(\))', ref, svg)
    return re.sub(r'((?:xlink:)?href="#)([^"]+)(")', ref, svg)
