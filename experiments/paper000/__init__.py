"""Paper 000's experiment scripts (`python -m experiments.paper000.run`)."""
