"""What ``schedc verify`` assumes of every job, checked where workloads are read.

A proof (``_assume_jobs`` in ``dsl/verify/pass_encoding/assumptions.py``) holds for states
whose jobs have integer ids >= 0, all distinct, submit times >= 0, estimates >= 1 s and
requests in [0, capacity] with at least one cpu. The readers meet the last two by DESIGN's
rules (a job that cannot run is skipped and counted; an estimate is never less than 1 s);
this module checks the first three for the SWF and CSV readers, job by job in file order. A
job that breaks one is a located error, or under ``--lenient`` skipped and counted under its
reason.

Only jobs that pass the skip rules are checked: a line skipped for its run time or size is no
job of the workload (cancelled jobs in SWF logs often have -1 in many fields).
"""

from __future__ import annotations

from attrs import frozen

from schedc.runtime.workloads.workload import WorkloadError

LENIENT_HINT = " (or pass --lenient to skip and count such jobs)"


@frozen
class Problem:
    """One broken assumption of one job."""

    field: str  # the column the caret points at: "id", "submit" or "status"
    message: str
    help: str
    reason: str  # its count's name in ``Workload.skipped`` under --lenient


class JobIdentity:
    """Ids >= 0 and distinct, submit times >= 0, over the jobs admitted so far."""

    def __init__(self) -> None:
        self._first: dict[int, int] = {}  # id -> the line of the job that has it

    def vet(self, jid: int, submit: int, line: int) -> Problem | None:
        """The job's problem, or None (then its id is taken: a later job may not repeat it)."""
        problem = self._problem(jid, submit)
        if problem is None:
            self._first[jid] = line
        return problem

    def _problem(self, jid: int, submit: int) -> Problem | None:
        if jid < 0:
            what = "is -1 (unknown)" if jid == -1 else f"{jid} is negative"
            return Problem("id", f"job id {what}",
                           "job ids are integers >= 0: give the job its number", "id < 0")
        first = self._first.get(jid)
        if first is not None:
            # policies may read ids (`reserve 1 per job.id`); proofs assume they differ
            return Problem("id", f"job id {jid} is repeated: line {first} has it already",
                           "every job needs its own id: renumber one of them", "repeated id")
        if submit < 0:
            what = ("has no submit time (-1: unknown)" if submit == -1 else
                    f"is submitted at {submit}, before time 0")
            return Problem("submit", f"job {jid} {what}",
                           "a job cannot be scheduled before time 0: give a submit time >= 0",
                           "submit < 0")
        return None


def reject(problem: Problem, path: str, line: int, col: int, source_line: str, lenient: bool,
           skipped: dict[str, int]) -> None:
    """Count the job as skipped (lenient) or raise the located error."""
    if not lenient:
        raise WorkloadError(path, line, col, problem.message, help=problem.help + LENIENT_HINT,
                            source_line=source_line)
    count_skip(skipped, problem.reason)


def count_skip(skipped: dict[str, int], reason: str) -> None:
    skipped[reason] = skipped.get(reason, 0) + 1
