"""Hypothesis runs derandomized by default, so that CI passes or fails the same way on every
run of the same commit; `HYPOTHESIS_PROFILE=explore pytest` draws fresh examples to hunt for
new counterexamples (pin each one found with @example)."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_collection_modifyitems(config, items) -> None:
    """The tiers (CONTRIBUTING.md): every test of the verifier is `z3`, every test that loads
    a page in Chromium is `browser`; `slow` is set on the tests themselves."""
    import pytest

    for item in items:
        path = item.path.as_posix()
        if "/tests/dsl/verify/" in path:
            item.add_marker(pytest.mark.z3)
        if path.endswith("test_report_browser.py"):
            item.add_marker(pytest.mark.browser)
