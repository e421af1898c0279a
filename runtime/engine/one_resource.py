"""The simulator's hot path for the commonest case, as one function over plain ints.

Eligible policies (``eligible``): one resource, rigid sizes, a static order, no callable that
reads the machine or queue state, and a pass of at most one reservation (backfill ``none``,
or first fit with depth 0 or 1). That covers FCFS, first fit and EASY in any static order,
which is what sweeps over long traces mostly run.

It specialises the general engine (the event loop of ``simulator._Simulation`` with the pass of
``walk.PassWalk`` and the machine of ``machine.Machine``) to those policies, and makes exactly
its decisions (DESIGN's rigid semantics): the same event order, the same walk, the same
shadow-time plan (``shadow_time.py``, inlined), the same skipped passes and continuations
(see ``_Simulation._continue_pass`` for why a continuation equals a full re-pass). What it saves is
interpretation overhead: no objects per running job, no method calls per job, jobs addressed
by their index into flat lists.

Why it is equal, and where it differs in what it reports (``on_pass``): its walk stops once
the free cpus are below the smallest request queued, the general walk once no *later* job's
request fits (a tighter bound). Between the two only jobs that cannot start are visited, so
the starts are the same; but the kernel may make there the reservation the general walk
leaves unmade (it could only matter to jobs that cannot start either), and then resume that
pass where the general engine runs a full one. So passes (times and count) and each pass's
starts are the same, and every reservation the general walk reports the kernel reports too
(same job, time and cpus), possibly with one more. ``tests/runtime/engine/
test_one_resource_kernel.py`` compares them pass by pass on the bundled trace and on random
workloads.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable

from schedc.dsl.semantics.decisions import PassDecisions, Reserved, Started
from schedc.runtime.engine.monitor import MonitorViolation, call_policy, check_invariants
from schedc.runtime.engine.policy import PassState, RuntimePolicy
from schedc.runtime.jobs import Job

Progress = Callable[[int, int], None]


def eligible(policy: RuntimePolicy, n_resources: int) -> bool:
    return (n_resources == 1 and policy.size is None and policy.order_static
            and not policy.selective and policy.slack is None  # slack: the general walk
            and policy.state_free and all(not inv.reads_state for inv in policy.invariants)
            and (policy.backfill == "none"
                 or (policy.backfill == "first_fit" and policy.depth in (0, 1))))


def run_one_resource(policy: RuntimePolicy, jobs: tuple[Job, ...], capacity: int,
                     progress: Progress | None, incremental: bool, monitor: bool,
                     on_pass: Callable[[PassDecisions], None] | None = None
                     ) -> tuple[list[int], int]:
    """Start time of every job (by index) and the number of passes run. ``on_pass`` (for
    tests) gets each pass's decisions, as ``simulate``'s does (see the module's docstring
    for how they compare)."""
    n = len(jobs)
    M = n + 1  # time * M + index packs an event key in one int
    procs = [j.request[0] for j in jobs]
    est = [j.estimate for j in jobs]
    run_time = [j.run_time for j in jobs]
    arrivals = sorted(range(n), key=lambda i: (jobs[i].submit, i))
    subs = [jobs[i].submit for i in arrivals]
    starts = [-1] * n
    state = PassState(now=0, queue=(), running=(), capacity=(capacity,), used=[0])
    order_key = policy.order_key
    invariants = policy.invariants
    none = policy.backfill == "none"
    depth = 0 if none else policy.depth
    incremental = incremental and policy.state_free and policy.order_static

    queue: list[int] = []  # job indices in policy order
    qkeys: list = []  # their keys
    qprocs: list[int] = []  # sorted cpus requests of the queue
    heap: list[int] = []  # real end * M + index
    rkeys: list[int] = []  # expected end * M + index, sorted
    used = 0
    passes = 0
    # The end state of the last pass, which a continuation resumes (memo_ok) ...
    memo_ok = False
    nres = 0  # reservations made (0 or 1)
    head = -1  # the reserved job
    shadow = extra = 0  # its shadow time and the processors left over at that time
    blocked = False  # backfill none: the pass stopped at a job that does not fit

    nxt = 0
    ended = 0
    step = max(1, -(-n // 100))
    pop, push = heapq.heappop, heapq.heappush
    while nxt < n or heap:
        now = subs[nxt] if nxt < n else heap[0] // M
        if heap and heap[0] < now * M:
            now = heap[0] // M
        finished = False
        limit = now * M + M
        while heap and heap[0] < limit:
            i = pop(heap) % M
            del rkeys[bisect_left(rkeys, (starts[i] + est[i]) * M + i)]
            used -= procs[i]
            finished = True
            ended += 1
            if progress is not None and ended % step == 0:
                progress(ended, n)
        old = len(queue)
        at_end = True
        while nxt < n and subs[nxt] == now:
            i = arrivals[nxt]
            nxt += 1
            if order_key is None:
                key = now * M + i
            else:
                state.now = now
                key = call_policy(policy, order_key, jobs[i], state, "order key") + (now, i)
            if not qkeys or qkeys[-1] < key:
                qkeys.append(key)
                queue.append(i)
            else:
                pos = bisect_left(qkeys, key)
                qkeys.insert(pos, key)
                queue.insert(pos, i)
                at_end = False
            insort(qprocs, procs[i])

        if finished or not at_end or not memo_ok or not incremental:
            first = 0  # a full pass
            memo_ok = False
            if not queue or capacity - used < qprocs[0]:
                continue  # nothing can start: the pass would change nothing
            nres, blocked = 0, False
        elif len(queue) > old:
            first = old  # a continuation: only the new jobs
            if capacity - used < qprocs[0]:
                memo_ok = False
                continue
        else:
            continue
        passes += 1
        memo_ok = True
        # Only when asked: a continuation first reports the reservation it keeps.
        decided: list[Started | Reserved] | None = None
        if on_pass is not None:
            decided = [Reserved(jobs[head].id, shadow, jobs[head].request)] if (
                first and nres) else []
        if blocked:
            if decided is not None:
                on_pass(PassDecisions(now, tuple(decided)))
            continue
        free = capacity - used
        minp = qprocs[0]  # a lower bound as jobs start (it can only grow)
        backfilled = False
        positions = []
        for qi in range(first, len(queue)):
            if free < minp:
                # No job can start now; a reservation still to make could only constrain
                # later jobs, which cannot start either. Without it, no continuation.
                if nres < depth:
                    memo_ok = False
                if none:
                    blocked = True
                break
            i = queue[qi]
            p = procs[i]
            if p <= free and (nres == 0 or now + est[i] <= shadow or p <= extra):
                free -= p
                if nres:
                    backfilled = True
                    if now + est[i] > shadow:
                        extra -= p
                starts[i] = now
                used += p
                insort(rkeys, (now + est[i]) * M + i)
                push(heap, (now + run_time[i]) * M + i)
                positions.append(qi)
                if decided is not None:
                    decided.append(Started(jobs[i].id, jobs[i].request))
                if invariants:
                    state.now = now
                    check_invariants(policy, jobs[i], state)
            elif none:
                blocked = True
                break
            elif nres < depth:
                # Shadow time: the first expected end at which, with every release at or
                # before it, the job fits; extra: what is left of the free count then.
                avail = free
                shadow = -1
                for key in rkeys:
                    end = key // M
                    if shadow >= 0 and end != shadow:
                        break
                    avail += procs[key % M]
                    if avail >= p:
                        shadow = end
                extra = avail - p
                nres = 1
                head = i
                if decided is not None:
                    decided.append(Reserved(jobs[i].id, shadow, jobs[i].request))
        if decided is not None:
            on_pass(PassDecisions(now, tuple(decided)))
        if positions:
            for qi in reversed(positions):
                del qprocs[bisect_left(qprocs, procs[queue[qi]])]
                del queue[qi], qkeys[qi]
            if monitor:
                _monitor(policy, jobs, procs, rkeys, M, capacity, used, now, backfilled,
                         head, shadow, nres)
    if progress is not None and n % step:
        progress(n, n)
    if queue or used:
        raise MonitorViolation(f"policy {policy.name}: simulation ended with {len(queue)} "
                               f"queued jobs and {used} processors in use")
    return starts, passes


def _monitor(policy: RuntimePolicy, jobs: tuple[Job, ...], procs: list[int], rkeys: list[int],
             M: int, capacity: int, used: int, now: int, backfilled: bool, head: int,
             shadow: int, nres: int) -> None:
    """Checks on the machine's own counters (kept by starts and finishes, not by the walk's
    free count): nothing is overcommitted now and, if jobs started beside a reservation, it
    still fits at its time (running jobs only release, so its start is the tightest point
    of its window; usage there is summed from the running jobs, from the shorter side)."""
    if used > capacity:
        raise MonitorViolation(f"t={now}: policy {policy.name}: `cpus` overcommitted "
                               f"({used} used of {capacity})", "capacity")
    if backfilled and nres:
        cut = bisect_right(rkeys, shadow * M + M - 1)  # rkeys[:cut] end by the shadow time
        if cut <= len(rkeys) - cut:
            held = used
            for key in rkeys[:cut]:
                held -= procs[key % M]
        else:
            held = 0
            for key in rkeys[cut:]:
                held += procs[key % M]
        if held + procs[head] > capacity:
            raise MonitorViolation(
                f"t={now}: policy {policy.name}: reservation of job {jobs[head].id} at "
                f"t={shadow} delayed: `cpus` needs {held + procs[head]} of {capacity}",
                "reservation-safety")
