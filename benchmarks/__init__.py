"""Timing scripts and fuzz campaigns, run from the repository root: `python -m benchmarks.NAME`."""
