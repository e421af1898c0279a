"""Every `schedc` command of the README works from a plain clone: each file it reads is in
the repository, made by an earlier README command, or downloaded by the README's Traces
step (the Parallel Workloads Archive); none reads `../shared` (issue 13, item 9)."""

from __future__ import annotations

import re
import shlex

from repo import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```[a-z]*\n(.*?)```", README, re.DOTALL)
OUTPUTS = {"-o", "--output", "--csv", "--jobs-out", "--swf-out", "--counterexamples",
           "--report"}
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
