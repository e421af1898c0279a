"""An independent oracle for planning policies (papers/001) and the small random states it
is checked on: serial earliest-fit insertion in a policy's order, second by second on a
free-cpus array (running jobs hold their cpus until their estimated ends). Shared by
tests/runtime/engine/test_planning.py and test_dynp_agreement.py."""

from __future__ import annotations

from hypothesis import strategies as st

from schedc.runtime.engine.planning import PlannedJob
from schedc.runtime.jobs import Job, RunningJob
from schedc.runtime.workloads.state_file import InitialState

# The three planning examples' orders, ties as the simulator breaks them (submit, index)
ORDERS = {"conservative": lambda j: (j.submit, j.index),
          "conservative_sjf": lambda j: (j.estimate, j.submit, j.index),
          "conservative_ljf": lambda j: (-j.estimate, j.submit, j.index)}


@st.composite
def states(draw, max_running: int = 3, max_queue: int = 6) -> InitialState:
    """One resource of 1..8 cpus at now in 0..20, up to ``max_running`` running jobs and
    1..``max_queue`` queued ones."""
    cpus = draw(st.integers(1, 8))
    now = draw(st.integers(0, 20))
    running = []
    used = 0
    for i in range(draw(st.integers(0, max_running))):
        procs = draw(st.integers(1, cpus))
        if used + procs > cpus:
            break
        used += procs
        est = draw(st.integers(1, 15))
        start = draw(st.integers(max(0, now - est + 1), now))
        job = Job(id=i + 1, index=i, submit=start, run_time=est, estimate=est,
                  request=(procs,))
        running.append(RunningJob(job, start, (procs,)))
    queue = []
    for q in range(draw(st.integers(1, max_queue))):
        i = len(running) + q
        est = draw(st.integers(1, 12))
        queue.append(Job(id=i + 1, index=i, submit=draw(st.integers(0, now)),
                         run_time=est, estimate=est, request=(draw(st.integers(1, cpus)),)))
    return InitialState(now=now, resources=("cpus",), capacities=(cpus,),
                        running=tuple(running), queue=tuple(queue))


def oracle_plan(state: InitialState, order) -> list[PlannedJob]:
    """Serial earliest-fit insertion in ``order``, second by second."""
    horizon = state.now + sum(j.estimate for j in state.queue) + max(
        (rj.start + rj.job.estimate for rj in state.running), default=0) + 1
    free = [state.capacities[0]] * (horizon + 1)
    for rj in state.running:
        for t in range(rj.start, rj.start + rj.job.estimate):
            free[t] -= rj.alloc[0]
    plan = []
    for job in sorted(state.queue, key=order):
        t = state.now
        while not all(free[s] >= job.procs for s in range(t, t + job.estimate)):
            t += 1
        for s in range(t, t + job.estimate):
            free[s] -= job.procs
        plan.append(PlannedJob(job, t, job.estimate, job.request))
    return plan
