"""Metrics on a hand-computed schedule; the per-job CSV; the monitor's own checks."""

from __future__ import annotations

import pytest

from schedc.runtime.engine.monitor import MonitorViolation, Reservation, check_reservations
from schedc.runtime.engine.schedule import JobRecord, Schedule
from schedc.runtime.jobs import Job, RunningJob
from schedc.runtime.results.metrics import (
    CLASSES,
    Cut,
    MetricOptions,
    _percentiles,
    area_category,
    compute_metrics,
    left_out,
    parse_cut,
    parse_tau,
    write_jobs_csv,
)
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
    capacity, *lines = out.read_text().splitlines()
    assert capacity == '# capacity: {"cpus": 10}'  # read back as a job table's machine
    assert lines[0] == ("job_id,submit,start,end,procs,wait,response,run_time,estimate,"
                        "requested_procs,requested_run_time,requested_estimate,ended,"
                        "allocated_resources")
    # the processors: job 1 the lowest four; job 3 (zero length, at 20) the lowest free
    # beside job 1's; job 2 all ten once job 1 has ended
    assert lines[1].endswith(",0-3")
    assert lines[2] == "2,10,100,105,10,90,95,5,50,10,5,50,completed,0-9"
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


# --- what papers report besides the means ---------------------------------------------------

def five_jobs(unit: int = 1) -> Schedule:
    """16 cpus; times multiplied by ``unit`` (a table in 1/unit s when unit > 1).

    job  submit  run   procs  user  start  wait   resp   bsld (tau 10)   category
    0    0       7200  16     1     0      0      7200   7200/7200 = 1   long wide
    1    100     5     1      1     7200   7100   7105   7105/10 = 710.5 short narrow
    2    200     20    4      2     7200   7000   7020   7020/20 = 351   short narrow
    3    300     4000  8      2     7200   6900   10900  10900/4000      long narrow (8 procs)
    4    400     3600  12     -1    11200  10800  14400  14400/3600 = 4  short wide (1 h)
    """
    from fractions import Fraction

    rows = ((0, 7200, 16, 1, 0), (100, 5, 1, 1, 7200), (200, 20, 4, 2, 7200),
            (300, 4000, 8, 2, 7200), (400, 3600, 12, -1, 11200))
    jobs = tuple(Job(i, i, s * unit, r * unit, r * unit, (p,), user=u)
                 for i, (s, r, p, u, _) in enumerate(rows))
    w = Workload(jobs, ("cpus",), (16,), time_unit=Fraction(1, unit))
    recs = tuple(JobRecord(j, start * unit, start * unit + j.run_time, j.request)
                 for j, (*_, start) in zip(jobs, rows, strict=True))
    return Schedule(recs, (16,), ("cpus",), "hand", 3, w)


def test_percentiles_are_nearest_rank():
    m = compute_metrics(five_jobs())
    # waits sorted 0 6900 7000 7100 10800: ranks ceil(p 5 / 100) = 3, 5, 5, 5
    assert (m.median_wait, m.p90_wait, m.p95_wait, m.p99_wait) == (7000, 10800, 10800, 10800)
    assert type(m.median_wait) is int
    # responses 7020 7105 7200 10900 14400
    assert (m.median_response, m.p90_response) == (7200, 14400)
    # bounded slowdowns 1 2.725 4 351 710.5
    assert (m.median_bounded_slowdown, m.p99_bounded_slowdown) == (4.0, 710.5)
    # ten values 10 .. 100: ranks 5, 9, ceil(9.5) = 10, ceil(9.9) = 10
    assert _percentiles("x", list(range(100, 0, -10))) == {
        "median_x": 50, "p90_x": 90, "p95_x": 100, "p99_x": 100}
    assert _percentiles("x", [3]) == {"median_x": 3, "p90_x": 3, "p95_x": 3, "p99_x": 3}
    assert list(m.to_dict())[15:20] == ["measured", "warmup_jobs", "cooldown_jobs", "bsld_tau",
                                       "median_wait"]


def test_a_table_in_smaller_units_has_its_percentiles_in_seconds():
    a, b = compute_metrics(five_jobs()), compute_metrics(five_jobs(100))
    assert (b.median_wait, b.p99_response) == (7000.0, 14400.0)
    assert b.median_bounded_slowdown == a.median_bounded_slowdown
    # tau / unit is a Fraction; the metrics stay floats (JSON takes no Fraction)
    assert all(type(v) is float for k, v in b.to_dict().items() if k.endswith("_slowdown")
               and not isinstance(v, list))
    assert b.to_dict()["p99_bounded_slowdown"] == 710.5
    assert b.class_jobs == a.class_jobs and b.class_mean_response == a.class_mean_response
    assert b.user_bsld_std == pytest.approx(a.user_bsld_std)


def test_bounded_slowdown_threshold_is_an_option():
    m = compute_metrics(five_jobs(), MetricOptions(bsld_tau=100))
    # jobs 1 and 2 now divide by 100: 71.05 and 70.2
    assert m.mean_bounded_slowdown == pytest.approx((1 + 71.05 + 70.2 + 2.725 + 4) / 5)
    assert m.bsld_tau == 100 and compute_metrics(five_jobs()).bsld_tau == 10
    # in a table of 1/100 s the threshold stays 100 s
    assert compute_metrics(five_jobs(100), MetricOptions(bsld_tau=100)
                           ).mean_bounded_slowdown == pytest.approx(m.mean_bounded_slowdown)


def test_width_length_categories():
    m = compute_metrics(five_jobs())
    # short narrow: jobs 1, 2; short wide: job 4 (exactly 1 h); long narrow: job 3 (8
    # procs); long wide: job 0
    assert CLASSES == ("short narrow", "short wide", "long narrow", "long wide")
    assert m.class_jobs == (2, 1, 1, 1)
    assert m.class_mean_response == (7062.5, 14400, 10900, 7200)
    assert m.class_mean_bounded_slowdown == (530.75, 4.0, 2.725, 1.0)
    empty = compute_metrics(three_jobs())  # all short; widths 4 and 2 narrow, 10 wide
    assert empty.class_jobs == (2, 1, 0, 0) and empty.class_mean_response[2:] == (None, None)


def test_per_user_fairness():
    m = compute_metrics(five_jobs())
    # user 1: (1 + 710.5) / 2 = 355.75; user 2: (351 + 2.725) / 2 = 176.8625; job 4 has none
    assert m.users == 2
    assert m.user_bsld_std == pytest.approx((355.75 - 176.8625) / 2)
    assert (m.user_bsld_min, m.user_bsld_max) == (176.8625, 355.75)
    assert m.user_bsld_max_over_min == pytest.approx(355.75 / 176.8625)
    none = compute_metrics(three_jobs())
    assert none.users == 0 and none.user_bsld_std is None and none.user_bsld_max is None
    assert none.to_dict()["user_bsld_max_over_min"] is None


def test_warmup_and_cooldown_leave_jobs_out_by_submit_order():
    m = compute_metrics(five_jobs(), MetricOptions(warmup=Cut(2)))
    assert (m.jobs, m.measured, m.warmup_jobs, m.cooldown_jobs) == (5, 3, 2, 0)
    assert m.mean_wait == pytest.approx((7000 + 6900 + 10800) / 3)
    assert m.makespan == 14800 - 200  # of the measured jobs alone
    by_time = compute_metrics(five_jobs(), MetricOptions(warmup=parse_cut("200s"),
                                                         cooldown=parse_cut("100s")))
    # submitted before 0 + 200: jobs 0, 1; after 400 - 100: job 4 (job 3, at 300, stays)
    assert (by_time.measured, by_time.warmup_jobs, by_time.cooldown_jobs) == (2, 2, 1)
    assert by_time.class_jobs == (1, 0, 1, 0) and by_time.users == 1
    # in a table of 1/100 s, durations stay seconds
    assert compute_metrics(five_jobs(100), MetricOptions(warmup=parse_cut("200s"))
                           ).warmup_jobs == 2
    everything = compute_metrics(five_jobs(), MetricOptions(warmup=Cut(4), cooldown=Cut(3)))
    assert (everything.measured, everything.warmup_jobs, everything.cooldown_jobs) == (0, 4, 1)
    # submit order, not file order; ties in file order
    jobs = [Job(i, i, s, 1, 1, (1,)) for i, s in enumerate((50, 0, 50, 10))]
    assert left_out(jobs, MetricOptions(warmup=Cut(2), cooldown=Cut(1))) == (
        [True, False, False, False], 2, 1)
    # submitted before 0 + 10: job 1; after 50 - 40: jobs 0 and 2 (job 3, at 10, stays)
    assert left_out(jobs, MetricOptions(warmup=Cut(10, "seconds"),
                                        cooldown=Cut(40, "seconds"))) == (
        [False, False, False, True], 1, 2)
    assert left_out(jobs, MetricOptions()) == (None, 0, 0)


@pytest.mark.parametrize(("text", "cut"), [("100", Cut(100)), ("0", Cut(0)),
                                           ("90s", Cut(90, "seconds")),
                                           ("30min", Cut(1800, "seconds")),
                                           ("2h", Cut(7200, "seconds")),
                                           ("2d", Cut(172800, "seconds"))])
def test_cuts_are_jobs_or_durations(text: str, cut: Cut):
    assert parse_cut(text) == cut


@pytest.mark.parametrize("text", ["", "-1", "1.5", "2 days", "1w", "d", "1e3"])
def test_a_bad_cut_says_why(text: str):
    with pytest.raises(ValueError, match="neither a number of jobs"):
        parse_cut(text)


def test_tau_is_seconds_or_a_duration():
    assert [parse_tau(t) for t in ("10", "2.5", "1min", "0.5min", "60s")] == [
        10, 2.5, 60, 30, 60]
    assert type(parse_tau("10")) is int and type(parse_tau("10.0")) is int
    for bad in ("0", "-3", "x", "nan", "inf"):
        with pytest.raises(ValueError):
            parse_tau(bad)
