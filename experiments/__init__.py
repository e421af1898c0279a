"""The papers' experiments, run from the repository root: `python -m experiments.paperNNN.NAME`."""
