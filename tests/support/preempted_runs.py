"""Small hand-checked preemptive runs that the tests of a run's outputs share (Batsim's
jobs table, the figures, the HTML page).

On 4 cpus, job 1 (4 cpus, 1000 s) starts at 0; job 2 (4 cpus, 10 s) arrives at 100 and
preempts it; job 3 (1 cpu, 5 s) comes alone at 2000. By mechanism:

- ``suspend``: job 1 is suspended over [100, 110) while job 2 runs, then runs on to 1010.
- ``requeue``: job 1 is killed at 100 (its 100 s on 4 cpus, 400 cpu-s, lost) and queued
  again; it restarts at 110, dispatching for 30 s, and runs its whole 1000 s to 1140.
- ``checkpoint``: job 1 is checkpointed over [100, 120) (its processors held), stopped until
  job 2 ends at 130, dispatched for 5 s and runs its remaining 900 s to 1035.
"""

from __future__ import annotations

from pathlib import Path

from schedc.runtime.run import RunResult, run_policy

TABLE = ("# capacity cpus=4\nid,submit,run_time,estimate,cpus\n"
         "1,0,1000,1000,4\n2,100,10,10,4\n3,2000,5,5,1\n")

_RULE = """\
  order     job.submit asc
  reserve   0
  backfill  first_fit
  mechanism {mechanism} when job.id == 1
  mechanism none
  preempt   when cand.id == 2 and victim.id == 1
"""
POLICIES = {
    "suspend": "policy suspend_once {\n" + _RULE.format(mechanism="suspend") + "}\n",
    "requeue": ("policy requeue_once {\n" + _RULE.format(mechanism="requeue")
                + "  cost      dispatch (if job.preemptions > 0 then 30 else 0)\n}\n"),
    "checkpoint": ("policy checkpoint_once {\n" + _RULE.format(mechanism="checkpoint")
                   + "  cost      checkpoint 20\n"
                   "  cost      dispatch (if job.preemptions > 0 then 5 else 0)\n}\n"),
}


def files(folder: Path, mechanism: str) -> tuple[Path, Path]:
    """The policy and the job table of a run, written into ``folder``."""
    policy, table = folder / f"{mechanism}.pol", folder / "jobs.csv"
    policy.write_text(POLICIES[mechanism])
    table.write_text(TABLE)
    return policy, table


def preempted_run(folder: Path, mechanism: str) -> RunResult:
    """The run of the module's doc under ``mechanism``."""
    return run_policy(*files(folder, mechanism))
