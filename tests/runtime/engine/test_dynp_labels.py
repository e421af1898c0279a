"""A dynP run loads the labels every candidate reads, not only its first candidate's: the
same run decides the same with and without `--swf-out` (which loads every label)."""

from __future__ import annotations

from pathlib import Path

from schedc.runtime.run import RunOptions, run_policy

POLICY = """
policy fcfs_plan {
  order    job.submit asc
  reserve  all
  backfill first_fit
}

policy by_group {
  order    job.group desc
  reserve  all
  backfill first_fit
}

policy tuned {
  candidates fcfs_plan, by_group
  metric     artww
  decider    simple
  step       submit
}
"""


def test_a_later_candidate_s_label_is_loaded(tmp_path: Path) -> None:
    from tests.support.shared_traces import shared_trace

    path = tmp_path / "tuned.pol"
    path.write_text(POLICY, encoding="utf-8")
    trace = shared_trace("KTH-SP2-1996-2.1-cln.swf.gz")
    runs = [run_policy(path, trace, RunOptions(policy_name="tuned", limit=1500,
                                               all_labels=every))
            for every in (False, True)]
    assert runs[0].policy.labels_read == ("group",)
    assert {j.group for j in runs[0].workload.jobs} != {-1}  # read, not unknown
    starts = [[r.start for r in run.schedule.records] for run in runs]
    assert starts[0] == starts[1]
    # and the second candidate does decide some steps on this prefix
    assert runs[1].schedule.tuning is not None and runs[1].schedule.tuning.switches
