"""The shared event simulator: jobs, workloads, the scheduling pass, metrics and the CLI."""
