"""Paper 002's experiment scripts (`python -m experiments.paper002.run`)."""
