"""Helpers shared by the tests, benchmarks and experiments: oracles, fuzzers, traces, paths."""
