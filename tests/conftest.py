"""Hypothesis runs derandomized by default, so that CI passes or fails the same way on every
run of the same commit; `HYPOTHESIS_PROFILE=explore pytest` draws fresh examples to hunt for
new counterexamples (pin each one found with @example)."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
