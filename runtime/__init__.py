"""The shared event simulator: jobs, workloads, the scheduling pass, metrics and the CLI.

``run_policy(policy, workload, RunOptions(...)) -> RunResult`` is the one way to run a policy
from Python (``schedc.runtime.run``), what ``schedc run`` and ``compare`` call."""

from schedc.runtime.run import RunOptions, RunResult, run_policy

__all__ = ["RunOptions", "RunResult", "run_policy"]
