"""Paper 001's experiment scripts (`python -m experiments.paper001.run`)."""
