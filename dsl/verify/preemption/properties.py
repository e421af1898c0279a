"""The properties of one preemptive pass, each a formula of the encoded pass
(``passes.PreemptivePass``) that must hold in every state within the bounds.

- ``capacity``: after the pass, no processor's cpu is held by two jobs (running, dispatching
  or checkpointing), none beyond the capacity; every other resource's use (by running,
  suspended and checkpointing jobs) plus what claims hold fits its capacity, claims wait for
  no more than checkpointing jobs will release; at most `resident` jobs keep processes on a
  processor; no processor was handed to a job before its holder released it (a start or
  resume only on free processors, a claim only on unclaimed ones).
- ``size-bounds``: each `size` the pass evaluates lies in the job's range.
- ``well-defined``: no formula fails (a division by zero, ...).
- ``protected``: no job preempted inside its protected time (`keep`), at the preemption
  limit, of mechanism `none`, or not running.
- ``mechanism``: each mechanism's rules: a suspended job resumes on its own processors only,
  a migratable one restarts at its size, a job starts at a size in its range, a victim is
  preempted as its mechanism says, a claim waits only for processors being checkpointed.
- ``no-superfluous-preemption``: every victim is needed: by a rule, its candidate would not
  fit without it (a suspended candidate: it holds one of its processors); by the order, it
  did not fit beside the jobs selected before it.
- ``progress``: the head of the order (the first waiting job in the policy's order) is
  placed (started, resumed or claimed) unless it would not fit even if every running job
  that may be preempted were: the jobs that are protected, or what suspended jobs hold,
  keep it out.

A pass the simulator stops (a formula fails, a `size` out of range) decides nothing after:
every property but ``well-defined`` and ``size-bounds`` is stated of passes that run
through (``runs_through``).
"""

from __future__ import annotations

import z3

from schedc.dsl.verify.preemption.books import (
    CHECKPOINTING,
    CLAIM,
    RESUME,
    START,
)
from schedc.dsl.verify.preemption.passes import PreemptivePass
from schedc.dsl.verify.preemption.slots import (
    RUNNING,
    SUSPEND,
    SUSPENDED,
    count,
    z3_sum,
)


def runs_through(sym: PreemptivePass) -> z3.BoolRef:
    """The pass neither fails nor stops on a size out of range."""
    return z3.And(z3.Not(fails(sym)), *(z3.Implies(g, ok) for g, ok in sym.books.size_checks))


def fails(sym: PreemptivePass) -> z3.BoolRef:
    return z3.Or([o.violated() for o in sym.state.obligations] or [z3.BoolVal(False)])


def parts(sym: PreemptivePass, name: str) -> list[z3.BoolRef]:
    """Property ``name`` as the conjuncts the prover checks one at a time (small goals
    are far easier for Z3 than their conjunction)."""
    return [p for p in _parts(sym, name) if not z3.is_true(p)] or [z3.BoolVal(True)]


def _parts(sym: PreemptivePass, name: str) -> list[z3.BoolRef]:
    st, books = sym.state, sym.books
    slots = st.slots
    if name == "well-defined":
        return [z3.Not(o.violated()) for o in st.obligations]
    if name == "size-bounds":
        return [z3.Implies(g, ok) for g, ok in books.size_checks]
    if name == "capacity":
        out = [z3.Implies(g, ok) for g, ok in books.handovers]
        cpu = [z3.And(s.present, z3.Or(books.phase_after[s.n] == RUNNING,
                                       books.phase_after[s.n] == CHECKPOINTING))
               for s in slots]
        others = [z3.And(s.present, z3.Or(books.phase_after[s.n] == RUNNING,
                                          books.phase_after[s.n] == CHECKPOINTING,
                                          books.phase_after[s.n] == SUSPENDED))
                  for s in slots]
        for p in range(st.P):
            on = [z3.And(c, books.procs_after[s.n][p]) for c, s in zip(cpu, slots, strict=True)]
            out.append(count(on) <= 1)
            if not st.grouped:  # a group's processors are the machine's: its lengths sum
                # to the capacity, and an empty group holds no processor
                out.append(z3.Implies(z3.Or(on), st.exists(p)))
            if st.resident is not None:
                out.append(count([z3.And(h, books.procs_after[s.n][p])
                                  for h, s in zip(others, slots, strict=True)])
                           <= st.resident)
        for k in range(1, st.K):
            use = z3_sum([z3.If(h, s.job.request[k], 0) for h, s in zip(others, slots,
                                                                        strict=True)])
            # the use derived from the jobs' phases (as the simulator's after-pass check
            # derives it), not the books the pass decided by
            out += [use + books.claimed[k] <= st.capacity[k],
                    books.outstanding[k] <= books.checkpointing[k]]
        return out
    if name == "protected":
        return [z3.Implies(books.preempted[s.n], p)
                for s, p in zip(slots, sym.preemptible, strict=True)]
    if name == "mechanism":
        out = [z3.Implies(g, ok) for g, ok, _ in books.mechanism_checks]
        for s in slots:
            resumed = books.action[s.n] == RESUME
            out.append(z3.Implies(resumed, z3.And(s.is_(SUSPENDED), *(
                a == b for a, b in zip(books.action_procs[s.n], s.procs, strict=True)))))
            out.append(z3.Implies(books.preempted[s.n], s.is_(RUNNING)))
        return out
    if name == "no-superfluous-preemption":
        return [z3.Implies(g, ok) for g, ok in sym.needed]
    if name == "progress":
        return [z3.Implies(z3.And(h, could_fit(sym, s.n)), placed(sym, s.n))
                for s, h in zip(slots, sym.head, strict=True)]
    raise ValueError(f"unknown property {name}")


def placed(sym: PreemptivePass, n: int) -> z3.BoolRef:
    a = sym.books.action[n]
    return z3.Or(a == START, a == RESUME, a == CLAIM)


def could_fit(sym: PreemptivePass, n: int) -> z3.BoolRef:
    """Slot ``n`` (waiting) would be placed if every running job that may be preempted
    were preempted by its mechanism (suspended ones keep their other resources and
    processes): the exception of ``progress``."""
    st = sym.state
    slots, s = st.slots, st.slots[n]
    stays = [z3.And(v.is_(RUNNING), z3.Not(o)) for v, o in zip(slots, sym.preemptible,
                                                                 strict=True)]
    # what is held after: cpus by jobs that stay; others and processes by jobs that stay,
    # suspended jobs and victims that are suspended
    keeps = [z3.Or(x, v.is_(SUSPENDED), z3.And(o, v.mech == SUSPEND))
             for x, v, o in zip(stays, slots, sym.preemptible, strict=True)]
    blocked = [z3.Or([z3.And(x, v.procs[p]) for x, v in zip(stays, slots, strict=True)])
               for p in range(st.P)]
    own = z3.And([z3.Implies(b, z3.Not(x)) for b, x in zip(s.procs, blocked, strict=True)])
    usable = []
    for p in range(st.P):
        ok = z3.And(st.exists(p), z3.Not(blocked[p]))
        if st.resident is not None:
            ok = z3.And(ok, count([z3.And(k, v.procs[p]) for k, v in zip(keeps, slots,
                                                                           strict=True)])
                        < st.resident)
        usable.append(ok)
    others = [s.job.request[k] + z3_sum([z3.If(k_, v.job.request[k], 0)
                                         for k_, v in zip(keeps, slots, strict=True)])
              <= st.capacity[k] for k in range(1, st.K)]
    new = z3.And(st.weigh(usable) >= sym.cpus[n], *others)
    return z3.If(s.phase == SUSPENDED, own, new)
