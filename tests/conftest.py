"""Hypothesis runs derandomized by default, so that CI passes or fails the same way on every
run of the same commit; `HYPOTHESIS_PROFILE=explore pytest` draws fresh examples to hunt for
new counterexamples (pin each one found with @example)."""

import os

import z3
from hypothesis import settings

# Z3's rlimit does not bound every check: nlsat's polynomial arithmetic (resultants of
# growing integers) does not count it, and a test's check on a random policy's nonlinear
# formula sat there for over 10 minutes (the vacuity check of fuzz seed 1029, in CI). The
# verifier's own checks have its CPU watchdog (dsl/verify/budget.py); a test's raw solvers
# get this wall-clock limit, far beyond what any of them needs, as every context inherits it.
Z3_TEST_TIMEOUT_MS = 180_000
z3.set_param("timeout", Z3_TEST_TIMEOUT_MS)

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
