"""Every `schedc` command of the README works from a plain clone: each file it reads is in
the repository, made by an earlier README command, or downloaded by the README's Traces
step (the Parallel Workloads Archive); none reads `../shared` (issue 13, item 9)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from repo import ROOT
from shared_traces import TRACES, shared_trace

README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```[a-z]*\n(.*?)```", README, re.DOTALL)
OUTPUTS = {"-o", "--output", "--csv", "--jobs-out", "--swf-out", "--counterexamples",
           "--report", "--out"}
FILE = re.compile(r"[\w./*-]+\.(pol|swf|gz|csv|json|sarif)$|.*/.*")


def _commands() -> list[list[str]]:
    """The README's shell lines, continuations joined, prompts and comments dropped."""
    out = []
    for block in BLOCKS:
        text = re.sub(r"\\\n\s*", " ", block)
        for line in text.splitlines():
            line = line.strip().removeprefix("$ ")
            if line.startswith(("schedc ", "curl ", "mkdir ", "cd ")):
                out.append(shlex.split(line, comments=True))
    return out


def _downloaded() -> set[str]:
    """`traces/NAME` for every file the Traces step's curl lines fetch."""
    return {"traces/" + c[-1].rsplit("/", 1)[1] for c in _commands() if c[0] == "curl"}


def test_the_readme_downloads_the_traces_from_the_archive():
    assert _downloaded() >= {"traces/LANL-CM5-1994-4.1-cln.swf.gz",
                             "traces/NASA-iPSC-1993-3.1-cln.swf.gz"}
    for c in _commands():
        if c[0] == "curl":
            assert c[-1].startswith("https://www.cs.huji.ac.il/labs/parallel/workload/")
    assert "https://www.cs.huji.ac.il/labs/parallel/workload/logs.html" in README


def test_every_file_a_readme_command_reads_is_there_from_a_clone():
    made = set(_downloaded())
    missing = []
    commands = [c for c in _commands() if c[0] == "schedc"]
    assert len(commands) > 20
    for words in commands:
        assert not any("../shared" in w for w in words), words
        if words[1] == "sweep" and "--out" not in words:  # its folder beside the spec
            made.add(words[2].removesuffix(".toml") + ".out")
        for i, w in enumerate(words[1:], 1):
            if words[i - 1] in OUTPUTS or w.startswith(">"):
                made.add(w.lstrip(">"))
                continue
            w = re.sub(r"(\.pol):\w+$", r"\1", w)  # compare's FILE.pol:NAME reads FILE.pol
            if w.startswith("-") or "=" in w or not FILE.fullmatch(w) or w.startswith("http"):
                continue
            if re.fullmatch(r"[A-Z]+(\.\w+)?", w):  # a placeholder: POLICY, STATE.json
                continue
            found = any(ROOT.glob(w)) if "*" in w else (ROOT / w).exists()
            if not found and w not in made and not any(w.startswith(m + "/") for m in made):
                missing.append((" ".join(words), w))
    assert missing == []


def _figure_commands() -> list[list[str]]:
    return [c for c in _commands() if c[:2] == ["schedc", "plot"]]


def test_the_readme_shows_figures_of_each_kind():
    shown = set(re.findall(r"!\[[^\]]*\]\((examples/figures/[\w-]+\.png)\)", README))
    assert {Path(p).stem for p in shown} == {"gantt", "easy-utilisation", "easy-waits",
                                             "compare-metrics", "compare-categories", "sweep"}
    for path in shown:
        assert (ROOT / path).stat().st_size < 150_000, path  # modest dpi, small files


@pytest.mark.parametrize("words", _figure_commands(), ids=lambda w: w[2] + "-" + w[-1])
def test_the_readme_figure_commands_make_its_figures(words, tmp_path, monkeypatch, capsys):
    """Each README figure command, its output sent to a temporary folder, writes the files
    the README shows, of the same size in pixels as the committed ones."""
    from schedc.runtime.cli.main import main

    out = words.index("-o") + 1
    committed = ROOT / words[out]
    figures = tmp_path / "figures"
    figures.mkdir()
    argv = [*words[1:out], str(figures / committed.name), *words[out + 1:]]
    monkeypatch.chdir(ROOT)
    if words[2] == "sweep":  # the README's sweep first, as its command above says
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
        assert f"]({shown.relative_to(ROOT).as_posix()})" in README, name
        assert _png_size(figures / name) == _png_size(shown), name


def _sweep_before(directory: str) -> str:
    """The spec of the README's `schedc sweep` command whose output ``directory`` is."""
    specs = [c[2] for c in _commands() if c[:2] == ["schedc", "sweep"]]
    (spec,) = {s for s in specs if s.removesuffix(".toml") + ".out" == directory}
    return spec


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head.startswith(b"\x89PNG\r\n\x1a\n"), path
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
