"""Every `schedc` command of the README and the docs pages works from a plain clone: it
parses with the CLI's own parser, and each file it reads is in the repository, made by a
command of the docs, or downloaded by the docs' Traces step (the Parallel Workloads
Archive); none reads `../shared`. A benchmark or an experiment is run as the module it is
(`python -m benchmarks.NAME`, `python -m experiments.paperNNN.NAME`), which is there. The
figures the docs show are made by the commands they give."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.docs_text import commands, pages
from tests.support.repo import ROOT
from tests.support.shared_traces import TRACES, shared_trace

OUTPUTS = {"-o", "--output", "--csv", "--jobs-out", "--swf-out", "--counterexamples",
           "--report", "--out", "--switches-out"}
NOT_FILES = {"--scheduler"}  # an address, tcp://HOST:8786
FILE = re.compile(r"[\w./*-]+\.(pol|swf|gz|csv|json|sarif|toml|html|png|svg)$|.*/.*")
TEXT = {p: p.read_text(encoding="utf-8") for p in pages()}


def _commands() -> list[list[str]]:
    return [words for _, words in commands()]


def _downloaded() -> set[str]:
    """`traces/NAME` for every file the Traces step's curl lines fetch."""
    return {"traces/" + c[-1].rsplit("/", 1)[1] for c in _commands() if c[0] == "curl"}


def test_the_docs_download_the_traces_from_the_archive():
    assert _downloaded() >= {"traces/LANL-CM5-1994-4.1-cln.swf.gz",
                             "traces/NASA-iPSC-1993-3.1-cln.swf.gz"}
    for c in _commands():
        if c[0] == "curl":
            assert c[-1].startswith("https://www.cs.huji.ac.il/labs/parallel/workload/")
    assert any("https://www.cs.huji.ac.il/labs/parallel/workload/logs.html" in t
               for t in TEXT.values())


def test_every_docs_command_parses_with_the_cli_parser():
    from schedc.runtime.cli.main import build_parser

    bad = []
    for block, words in commands():
        if words[0] != "schedc" or any(w in ("-h", "--help", "--version") for w in words):
            continue
        try:
            build_parser().parse_args(words[1:])
        except SystemExit:
            bad.append(f"{block.where}: {' '.join(words)}")
    assert bad == []


def test_every_file_a_docs_command_reads_is_there_from_a_clone():
    made = set(_downloaded())
    missing = []
    listed = [c for c in _commands() if c[0] == "schedc"]
    assert len(listed) > 20
    for words in listed:  # the outputs first: a page may read what another page makes
        if words[1] == "sweep" and "--out" not in words:  # its folder beside the spec
            made.add(words[2].removesuffix(".toml") + ".out")
        for i, w in enumerate(words[1:], 1):
            if words[i - 1] in OUTPUTS or w.startswith(">"):
                made.add(w.lstrip(">"))
    for words in listed:
        assert not any("../shared" in w for w in words), words
        for i, w in enumerate(words[1:], 1):
            if words[i - 1] in OUTPUTS | NOT_FILES or w.startswith(">"):
                continue
            w = re.sub(r"(\.pol):\w+$", r"\1", w)  # compare's FILE.pol:NAME reads FILE.pol
            if w.startswith("-") or "=" in w or not FILE.fullmatch(w) or w.startswith("http"):
                continue
            if re.fullmatch(r"[A-Z_]+(\.\w+)?", w):  # a placeholder: POLICY, STATE.json
                continue
            found = any(ROOT.glob(w)) if "*" in w else (ROOT / w).exists()
            if not found and w not in made and not any(w.startswith(m + "/") for m in made):
                missing.append((" ".join(words), w))
    for words in (c for c in _commands() if c[0] == "python"):
        if words[1] != "-m":  # a script of the repository is run as its module, from the root
            missing.append((" ".join(words), "python -m, not a path: " + words[1]))
        elif words[2].split(".")[0] in ("benchmarks", "experiments") and \
                not (ROOT / (words[2].replace(".", "/") + ".py")).is_file():
            missing.append((" ".join(words), words[2]))
    assert missing == []


def _figure_commands() -> list[list[str]]:
    return [c for c in _commands() if c[:2] == ["schedc", "plot"]]


FIGURES = ROOT / "docs" / "figures"


def _shown() -> set[Path]:
    """The images the pages show, as files (their links are relative to the page)."""
    return {(page.parent / link).resolve() for page, text in TEXT.items()
            for link in re.findall(r"!\[[^\]]*\]\(([^)\s]+\.png)\)", text)}


def test_the_docs_show_figures_of_each_kind():
    shown = _shown()
    assert {p.stem for p in shown} >= {"gantt", "easy-utilisation", "easy-waits",
                                       "compare-metrics", "compare-categories", "sweep"}
    for path in shown:
        assert path.parent == FIGURES and path.exists(), path
        assert path.stat().st_size < 150_000, path  # modest dpi, small files


@pytest.mark.parametrize("words", _figure_commands(), ids=lambda w: w[2] + "-" + w[-1])
def test_the_docs_figure_commands_make_their_figures(words, tmp_path, monkeypatch, capsys):
    """Each figure command of the docs, its output sent to a temporary folder, writes the
    files the docs show, of the same size in pixels as the committed ones."""
    from schedc.runtime.cli.main import main

    out = words.index("-o") + 1
    committed = ROOT / words[out]
    figures = tmp_path / "figures"
    figures.mkdir()
    argv = [*words[1:out], str(figures / committed.name), *words[out + 1:]]
    monkeypatch.chdir(ROOT)
    if words[2] == "sweep":  # the docs' sweep first, as their command above says
        spec = _sweep_before(words[3])
        for name in ("LANL-CM5-1994-4.1-cln.swf.gz", "NASA-iPSC-1993-3.1-cln.swf.gz"):
            shared_trace(name)  # its traces, else a skip saying where they are looked for
        monkeypatch.setenv("SCHEDC_TRACES", str(TRACES))  # the spec's default is traces/
        made = tmp_path / "sweep.out"
        assert main(["sweep", spec, "--out", str(made), "--no-figures", "--no-progress"]) \
            == 0, capsys.readouterr().err
        argv[2] = str(made)
    else:
        argv.append("--no-progress")
    assert main(argv) == 0, capsys.readouterr().err
    written = sorted(p.name for p in figures.iterdir())
    assert written
    for name in written:
        shown = committed.parent / name
        assert shown.resolve() in _shown(), name
        assert _png_size(figures / name) == _png_size(shown), name


def _sweep_before(directory: str) -> str:
    """The spec of the docs' `schedc sweep` command whose output ``directory`` is."""
    specs = [c[2] for c in _commands() if c[:2] == ["schedc", "sweep"]]
    (spec,) = {s for s in specs if s.removesuffix(".toml") + ".out" == directory}
    return spec


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head.startswith(b"\x89PNG\r\n\x1a\n"), path
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
