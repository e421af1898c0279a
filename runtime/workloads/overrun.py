"""Jobs that ran longer than they requested (`--overrun MODE`), and what a trace says of them.

Traces record each job's requested time (its estimate) and the time it really ran; on some
machines a job could run past its request (LANL-CM5: a third of its jobs did). Three ways to
simulate such a job:

* ``kill``: it ends at its estimate, as a batch system that enforces limits does. The work
  past the estimate is not simulated.
* ``estimate``: it runs its recorded time and its estimate is raised to that time (the usual
  cleaning of such traces: every job runs to completion, no schedule meets a job that
  outlives its estimate). The default: results then compare with the literature's, which
  runs every job of a trace to completion.
* ``extend``: it runs its recorded time while the scheduler plans with the recorded
  estimate. Once a running job passes its estimate the scheduler cannot know when it ends:
  each pass plans it to end one second later (``Machine.extend_overdue``), the least it can
  still run. A reservation made at one pass may then be pushed back at a later one by such a
  job; the monitor checks each pass against the plan that pass saw, so this is never taken
  for a policy that breaks its own reservation, and every pass still sees the state the
  proofs assume (running jobs planned to end after now).

Readers keep the run time each job recorded (``Workload.recorded_runs``) and give the jobs
killed at their estimate (today's ``kill``); ``apply_overrun`` makes the other modes.
"""

from __future__ import annotations

import math

import attrs
from attrs import frozen

from schedc.runtime.workloads.workload import Workload

MODES = ("kill", "estimate", "extend")
DEFAULT = "estimate"


@frozen
class OverrunFacts:
    """How many jobs of a workload ran past their estimate, and how much work that is."""

    jobs: int  # jobs in the workload
    over: int  # jobs whose recorded run time exceeds their estimate
    work: int  # cpu-seconds the file records (cpus x recorded run time)
    work_over: int  # of that, cpu-seconds past the estimates (lost when they are killed)
    no_estimate: int  # jobs with no requested time: their estimate is their run time
    ratios: tuple[float, ...]  # run / estimate of the jobs over, sorted

    @property
    def share_jobs(self) -> float:
        return self.over / self.jobs if self.jobs else 0.0

    @property
    def share_work(self) -> float:
        return self.work_over / self.work if self.work else 0.0

    def ratio_quantile(self, q: float) -> float | None:
        """The q-quantile (nearest rank) of run / estimate over the jobs over, or None."""
        r = self.ratios
        if not r:
            return None
        return r[max(0, math.ceil(round(q * len(r), 9)) - 1)]

    def to_dict(self, mode: str) -> dict[str, object]:
        """The facts as `--json`, the provenance and the reports show them."""
        return {
            "mode": mode, "jobs_over_estimate": self.over,
            "share_of_jobs": round(self.share_jobs, 6),
            "work_past_estimates": self.work_over, "recorded_work": self.work,
            "share_of_work": round(self.share_work, 6),
            "median_run_over_estimate": _rounded(self.ratio_quantile(0.5)),
            "p90_run_over_estimate": _rounded(self.ratio_quantile(0.9)),
            "jobs_without_requested_time": self.no_estimate,
        }


def _rounded(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


# The last workload's facts: a run asks for them three times (its warnings, its provenance,
# its JSON), a comparison once per policy on the same (shared, immutable) workload.
_last: tuple[Workload | None, OverrunFacts | None] = (None, None)


def overrun_facts(workload: Workload) -> OverrunFacts:
    """What ``workload``'s file recorded, whatever the mode it is run in."""
    global _last
    seen, facts = _last
    if seen is workload and facts is not None:
        return facts
    facts = _count(workload)
    _last = (workload, facts)
    return facts


def _count(workload: Workload) -> OverrunFacts:
    over = work = work_over = 0
    ratios = []
    for job in workload.jobs:
        run = workload.recorded_run(job.index)
        est = workload.recorded_estimate(job.index)
        cpus = job.procs
        work += cpus * run
        if run > est:
            over += 1
            work_over += cpus * (run - est)
            ratios.append(run / est)
    return OverrunFacts(len(workload.jobs), over, work, work_over, workload.no_estimate,
                        tuple(sorted(ratios)))


def apply_overrun(workload: Workload, mode: str) -> Workload:
    """``workload`` (as read: jobs killed at their estimate) in ``mode``."""
    if mode not in MODES:
        raise ValueError(f"unknown overrun mode {mode!r}: {', '.join(MODES)}")
    if mode == workload.overrun:
        return workload
    if workload.overrun != "kill":
        raise ValueError(f"the workload is already in mode {workload.overrun!r}")
    runs = workload.recorded_runs
    if not runs or mode == "kill":
        return attrs.evolve(workload, overrun=mode)
    jobs = list(workload.jobs)
    for i, job in enumerate(jobs):
        run = runs[job.index]
        if run > job.estimate:
            jobs[i] = (attrs.evolve(job, run_time=run, estimate=run) if mode == "estimate"
                       else attrs.evolve(job, run_time=run))
    estimates = tuple(j.estimate for j in workload.jobs) if mode == "estimate" else ()
    return attrs.evolve(workload, jobs=tuple(jobs), overrun=mode, recorded_estimates=estimates)


def killed(workload: Workload) -> list[bool]:
    """Per job (file order): whether the run ends it at its estimate, before the run time
    the file recorded (only in ``kill`` mode)."""
    runs = workload.recorded_runs
    if workload.overrun != "kill" or not runs:
        return [False] * len(workload.jobs)
    return [runs[j.index] > j.estimate for j in workload.jobs]
