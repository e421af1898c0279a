"""Paper 004's experiment scripts (`python -m experiments.paper004.run`)."""
