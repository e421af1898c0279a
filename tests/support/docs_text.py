"""The user docs as tests read them: README.md and every page under docs/, their fenced
code blocks by language, and the shell commands they show (continuations joined, prompts
and comments dropped). The block languages are the docs' contract (CONTRIBUTING.md):
`sh` commands are parsed and their files found (a `python -m` command's module too),
`console` transcripts are run and compared, `python` blocks run, `pol` policies compile."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from attrs import frozen

from tests.support.repo import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
FENCE = re.compile(r"^( *)```(\w*)[^\n]*\n(.*?)^\1```", re.DOTALL | re.MULTILINE)


@frozen
class Block:
    page: Path
    language: str  # "" for a bare fence
    text: str
    line: int  # of the opening fence, 1-based

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def pages() -> list[Path]:
    """README.md, then the docs pages in path order (the hooks folder is code, not a page)."""
    return [README, *sorted(p for p in DOCS.rglob("*.md") if "hooks" not in p.parts)]


def blocks(language: str | None = None, page: Path | None = None) -> list[Block]:
    out = []
    for path in [page] if page is not None else pages():
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            indent = len(match.group(1))
            body = "\n".join(line[indent:] for line in match.group(3).splitlines())
            block = Block(path, match.group(2), body, text.count("\n", 0, match.start()) + 1)
            if language is None or block.language == language:
                out.append(block)
    return out


def shell_lines(block: Block) -> list[list[str]]:
    """The block's command lines as words: continuations joined, `$ ` prompts and comments
    dropped; only lines that start a command schedc's docs show (`python` runs a benchmark or
    an experiment, `python -m benchmarks.NAME`)."""
    text = re.sub(r"\\\n\s*", " ", block.text)
    out = []
    for line in text.splitlines():
        line = line.strip().removeprefix("$ ")
        if line.startswith(("schedc ", "python ", "curl ", "mkdir ", "cd ")):
            out.append(shlex.split(line, comments=True))
    return out


def commands() -> list[tuple[Block, list[str]]]:
    """Every command of the shell blocks (`sh`, bare, `console` prompts), with its block."""
    out = []
    for block in blocks():
        if block.language in ("", "sh", "shell", "bash"):
            out += [(block, words) for words in shell_lines(block)]
        elif block.language == "console":
            prompts = "\n".join(line for line in block.text.splitlines()
                                if line.startswith("$ "))
            out += [(block, words) for words in shell_lines(
                Block(block.page, "sh", prompts, block.line))]
    return out
