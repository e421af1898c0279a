"""The bundled sweep example reads the archive traces where docs/how-to/workloads.md's Traces
step puts them (`traces/` of the clone) when $SCHEDC_TRACES is not set."""

from __future__ import annotations

import re

from schedc.dsl.diagnostics import DiagnosticError
from schedc.runtime.tools.sweep.spec import read_spec
from tests.support.repo import ROOT

SPEC = ROOT / "examples" / "sweeps" / "easy-depth.toml"


def _readme_folder() -> str:
    """The folder docs/how-to/workloads.md's Traces step fills (`mkdir -p DIR && cd DIR`)."""
    from tests.support.docs_text import pages

    text = "".join(p.read_text(encoding="utf-8") for p in pages())
    (folder,) = set(re.findall(r"mkdir -p (\S+) && cd \1", text))
    return folder


def test_the_example_sweep_looks_for_traces_where_the_readme_puts_them(monkeypatch) -> None:
    monkeypatch.delenv("SCHEDC_TRACES", raising=False)
    where = ROOT / _readme_folder()
    try:
        spec = read_spec(str(SPEC))
    except DiagnosticError as error:  # not downloaded here: looked for there all the same
        looked = [d.message for d in error.diagnostics]
        assert looked and all(f"(looked for {where}/" in m for m in looked), looked
    else:
        archive = [w.file for w in spec.workloads if w.text != "bundled"]
        assert archive and all(f.startswith(f"{where}/") for f in archive)


def test_the_docs_spec_reads_the_same_folder() -> None:
    from tests.support.docs_text import DOCS, blocks

    block = blocks("toml", DOCS / "reference" / "formats" / "sweep-spec.md")[0].text
    example = SPEC.read_text(encoding="utf-8")
    for text in (block, example):
        defaults = re.findall(r"\$\{SCHEDC_TRACES:-([^}]*)\}", text)
        assert defaults and set(defaults) == {f"../../{_readme_folder()}"}
