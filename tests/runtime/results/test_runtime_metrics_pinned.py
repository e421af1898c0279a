"""compute_metrics pinned to the last bit on a real trace (values from the per-record loop)."""

from __future__ import annotations

import attrs

from schedc.runtime.engine.policy import RuntimePolicy
from schedc.runtime.engine.simulator import simulate
from schedc.runtime.results.metrics import compute_metrics
from schedc.runtime.workloads.load import load_workload
from tests.support.shared_traces import shared_trace

EASY = RuntimePolicy("easy", ("cpus",), (None,), depth=1, backfill="first_fit")

EXPECTED = {
    'jobs': 2000, 'skipped': 1, 'mean_wait': 5802.2555, 'max_wait': 168085,
    'mean_response': 10963.5855, 'mean_slowdown': 110.76401553316207,
    'mean_bounded_slowdown': 88.68838458078112, 'utilisation': 0.6167067951745289,
    'makespan': 2069601, 'artww': 20910.722394220847, 'sldwa': 3.96887538322559,
    'mean_queue': 5.607124754964846, 'weighted_response': 76484.00887933966,
    'category_jobs': [37, 464, 649, 376, 221, 234, 19, 0, 0, 0],
    'category_mean_response': [174.8918918918919, 1570.4331896551723, 3454.101694915254,
                               8174.010638297872, 16531.66968325792, 42828.55128205128,
                               115868.36842105263, None, None, None],
    # checked against a per-record loop (sorted lists, statistics.pstdev per user)
    'measured': 2000, 'warmup_jobs': 0, 'cooldown_jobs': 0, 'bsld_tau': 10,
    'median_wait': 0, 'p90_wait': 21465, 'p95_wait': 38481, 'p99_wait': 65225,
    'median_response': 564, 'p90_response': 36333, 'p95_response': 55505,
    'p99_response': 115139, 'median_bounded_slowdown': 1.0,
    'p90_bounded_slowdown': 142.2836879432624, 'p95_bounded_slowdown': 473.24271844660194,
    'p99_bounded_slowdown': 2158.1, 'users': 65, 'user_bsld_std': 223.37009408986455,
    'user_bsld_min': 1.0, 'user_bsld_max': 1578.0277777777778,
    'user_bsld_max_over_min': 1578.0277777777778, 'class_jobs': [1091, 540, 172, 197],
    'class_mean_response': [2085.082493125573, 10215.394444444444, 38481.16860465116,
                            38158.74111675127],
    'class_mean_bounded_slowdown': [64.4324880111664, 196.83301230116885,
                                    1.1655133326774634, 2.99812084024313],
}


def test_metrics_of_first_2000_kth_jobs_are_pinned():
    w = load_workload(shared_trace("KTH-SP2-1996-2.1-cln.swf.gz"))
    w = attrs.evolve(w, jobs=w.jobs[:2000])
    m = compute_metrics(simulate(EASY, w)).to_dict()
    assert m == EXPECTED  # exact floats: == on float is bit equality here
    assert all(type(m[k]) is type(EXPECTED[k]) for k in EXPECTED)
