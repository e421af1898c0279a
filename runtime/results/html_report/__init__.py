"""Self-contained HTML pages of results (`--report FILE.html`): `Page` and its builders for
`run`, `compare` and `verify`."""

from schedc.runtime.results.html_report.page import Page, VerdictEntry

__all__ = ["Page", "VerdictEntry"]
