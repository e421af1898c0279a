"""A misspelled keyword gets a did-you-mean (`reserv` -> `reserve`), then the words that may
come there; a word close to none of them gets the list alone."""

from __future__ import annotations

import pytest

from schedc.dsl import check_source, render_diagnostics


@pytest.mark.parametrize(("source", "wrong", "meant"), [
    ("policy p {\n  order job.submit asc\n  reserv 1\n}\n", "reserv", "reserve"),
    ("policy p {\n  ordr job.submit asc\n}\n", "ordr", "order"),
    ("polcy p {\n  order job.submit asc\n}\n", "polcy", "policy"),
    ("policy p {\n  backfil first_fit\n}\n", "backfil", "backfill"),
    ("policy p {\n  order job.submit ascc\n}\n", "ascc", "asc"),
])
def test_a_misspelled_keyword_gets_a_did_you_mean(source: str, wrong: str,
                                                  meant: str) -> None:
    text = render_diagnostics(check_source(source, "t.pol").diagnostics)
    assert f"syntax error: unexpected `{wrong}`" in text
    assert f"help: did you mean `{meant}`? (expected " in text


def test_a_word_near_no_keyword_gets_the_list_alone() -> None:
    text = render_diagnostics(check_source("policy p {\n  zzzzzz 1\n}\n", "t.pol").diagnostics)
    assert "did you mean" not in text and "help: expected `backfill`" in text
