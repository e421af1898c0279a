"""Metrics on a hand-computed schedule; the per-job CSV; the monitor's own checks."""

from __future__ import annotations

import pytest

from schedc.runtime.jobs import Job, RunningJob
from schedc.runtime.metrics import area_category, compute_metrics, write_jobs_csv
from schedc.runtime.monitor import MonitorViolation, Reservation, check_reservations
from schedc.runtime.schedule import JobRecord, Schedule
from schedc.runtime.workloads.workload import Workload


def three_jobs() -> Schedule:
    # capacity 10. j1: 4 procs, submit 0, start 0, run 100. j2: 10 procs, submit 10, start
    # 100, run 5. j3: 2 procs, submit 20, start 20, run 0 (zero-length).
    jobs = (Job(1, 0, 0, 100, 100, (4,)), Job(2, 1, 10, 5, 50, (10,)),
            Job(3, 2, 20, 0, 1, (2,)))
    w = Workload(jobs, ("cpus",), (10,), {"procs < 1": 2})
    recs = (JobRecord(jobs[0], 0, 100, (4,)), JobRecord(jobs[1], 100, 105, (10,)),
            JobRecord(jobs[2], 20, 20, (2,)))
    return Schedule(recs, (10,), ("cpus",), "hand", 3, w)


def test_metrics_by_hand():
    m = compute_metrics(three_jobs())
    # waits 0, 90, 0; responses 100, 95, 0; runs 100, 5, 0
    assert m.jobs == 3 and m.skipped == 2
    assert m.mean_wait == 30 and m.max_wait == 90
    assert m.mean_response == pytest.approx(195 / 3)
    # slowdowns 1, 19, 0/max(0,1)=0; bounded: 1, 95/10=9.5, max(1, 0)=1
    assert m.mean_slowdown == pytest.approx(20 / 3)
    assert m.mean_bounded_slowdown == pytest.approx(11.5 / 3)
    assert m.makespan == 105
    assert m.utilisation == pytest.approx((400 + 50) / (10 * 105))
    assert m.artww == pytest.approx((4 * 100 + 10 * 95 + 2 * 0) / 16)
    assert m.sldwa == pytest.approx((400 * 1 + 50 * 19) / 450)
    # waits sum to 90 over the makespan 105: 0.857 jobs wait on average
    assert m.mean_queue == pytest.approx(90 / 105)
    # one resource: weights run x share = 100 x 0.4, 5 x 1.0, 0 x 0.2
    assert m.weighted_response == pytest.approx((40 * 100 + 5 * 95) / 45)
    # areas (requested procs x run): 400 -> category 2, 50 -> 1, 0 -> 0
    assert m.category_jobs == (1, 1, 1) + (0,) * 7
    assert m.category_mean_response[:3] == (0, 95, 100)
    assert m.category_mean_response[3] is None
    assert list(m.to_dict())[:3] == ["jobs", "skipped", "mean_wait"]


def test_weighted_response_averages_the_shares_of_every_resource():
    # 10 cpus and 40 GB: j1 4 cpus + 40 GB for 100 s (shares 0.4 and 1.0: weight 70),
    # j2 10 cpus + 0 GB for 10 s (1.0 and 0: weight 5), waiting 100 s behind j1
    jobs = (Job(1, 0, 0, 100, 100, (4, 40)), Job(2, 1, 0, 10, 10, (10, 0)))
    w = Workload(jobs, ("cpus", "memory"), (10, 40))
    recs = (JobRecord(jobs[0], 0, 100, (4, 40)), JobRecord(jobs[1], 100, 110, (10, 0)))
    m = compute_metrics(Schedule(recs, (10, 40), ("cpus", "memory"), "hand", 2, w))
    assert m.weighted_response == pytest.approx((70 * 100 + 5 * 110) / 75)
    assert m.mean_queue == pytest.approx(100 / 110)


def test_area_categories_are_decades():
    assert [area_category(a) for a in (0, 9, 10, 99, 100, 10**9 - 1, 10**9, 10**12)] == [
        0, 0, 1, 1, 2, 8, 9, 9]


def test_jobs_csv(tmp_path):
    out = tmp_path / "jobs.csv"
    write_jobs_csv(three_jobs(), out)
    lines = out.read_text().splitlines()
    assert lines[0] == ("job_id,submit,start,end,procs,wait,response,run_time,estimate,"
                        "requested_procs,requested_run_time,requested_estimate,"
                        "allocated_resources")
    # the processors: job 1 the lowest four; job 3 (zero length, at 20) the lowest free
    # beside job 1's; job 2 all ten once job 1 has ended
    assert lines[1].endswith(",0-3")
    assert lines[2] == "2,10,100,105,10,90,95,5,50,10,5,50,0-9"
    assert lines[3].endswith(",4-5")
    assert len(lines) == 4


def test_monitor_catches_a_delayed_reservation():
    # The DESIGN bug: 10 procs, j1 (6) runs to 100, j2 (10) reserved at 100; a 4-proc job
    # started at 2 for 1000 s breaks the reservation.
    j1, j2, j3 = (Job(1, 0, 0, 100, 100, (6,)), Job(2, 1, 1, 100, 100, (10,)),
                  Job(3, 2, 2, 1000, 1000, (4,)))
    running = [RunningJob(j1, 0, (6,)), RunningJob(j3, 2, (4,))]
    M = 10
    keys = [r.expected_end * M + r.job.index for r in running]
    res = [Reservation(j2, 100, 200, (10,))]
    with pytest.raises(MonitorViolation, match=r"reservation of job 2 at t=100 delayed"):
        check_reservations(2, "buggy", ("cpus",), (10,), [10], running, keys, M, res, [j3])
    # two reservations (the sweep path): fine without j3, broken with it
    res2 = res + [Reservation(Job(4, 3, 2, 5, 5, (1,)), 300, 305, (1,))]
    check_reservations(2, "ok", ("cpus",), (10,), [6], running[:1], keys[:1], M, res2, [])
    with pytest.raises(MonitorViolation, match=r"job\(s\) \[2\] at t=100"):
        check_reservations(2, "buggy", ("cpus",), (10,), [10], running, keys, M, res2, [j3])
