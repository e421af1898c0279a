"""Tools built on runs: sweeps on Dask and the optimal planner."""
