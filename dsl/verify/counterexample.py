"""Finding and decoding a counterexample: the least model of a violated property
(``small_model``: fewest moldable jobs, then fewest jobs, then the least numbers and ids),
read back into a state file for `schedc run --state` (``counterexample``, with
``model_value`` for each number), and ``same_state``, which excludes a state that did not
replay so that the next least one is tried.

Apart from the solver driver (``checker.py``) because it is about one model, not about
proving: it only reads a satisfiable solver's model, and the cross-pass check
(``across.py``) decodes its first pass with the same ``counterexample``.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import z3

from schedc.dsl.number_text import json_number
from schedc.dsl.verify.budget import add as add_in_time
from schedc.dsl.verify.budget import running
from schedc.dsl.verify.pass_encoding.record import SymbolicPass
from schedc.dsl.verify.verdict import Limits


def small_model(sym: SymbolicPass, constraints: Sequence[z3.BoolRef],
                limits: Limits) -> z3.ModelRef | None:
    """The least counterexample, so that it is readable and the same from run to run: fewest
    moldable jobs (a rigid story is simpler), then fewest jobs, then the least sum of every
    number in the state (times, capacities left symbolic, ids, estimates, requests, params),
    then the least ids to the first jobs (``_least``). None if no model is found (the
    caller keeps the solver's). Bounded by Z3's rlimit, not by the clock: a loaded machine
    must not turn the least counterexample into another one (a CI run under load did, with a
    short clock; the --timeout, the property's CPU time, is only a guard of last resort)."""
    solver = z3.Solver()
    solver.set("rlimit", limits.rlimit)
    add_in_time(solver, [*(a.formula for a in sym.assumptions), *sym.definitions.all(),
                         *constraints])
    objectives: list[z3.ArithRef] = []
    jobs = [*sym.running, *sym.queue]
    objectives.append(z3.Sum([z3.If(z3.And(j.present, j.moldable), 1, 0) for j in jobs]))
    objectives.append(z3.Sum([z3.If(j.present, 1, 0) for j in jobs]))
    numbers = [sym.now, *(c for c in sym.capacity if not z3.is_int_value(c))]
    numbers += [v if v.sort() == z3.IntSort() else z3.If(v, 1, 0)
                for v in sym.params.values() if v.sort() != z3.RealSort()]
    for j in jobs:
        # labels from -1 (unknown) up: a counterexample names as few users as it can
        fields = [j.id, j.submit, j.estimate, *j.request, *(v + 1 for v in j.labels.values())]
        if j.start is not None:
            fields.append(j.start)
        numbers.append(z3.If(j.present, z3.Sum(fields), 0))
        if j.start is None:  # a moldable job's range and sequential time
            numbers.append(z3.If(z3.And(j.present, j.moldable),
                                 j.min_size + j.max_size + j.work, 0))
    # a running job's cpus held, where they may differ from its request: as few as may be
    numbers += [z3.If(j.present, held[0], 0)
                for j, held in zip(sym.running, sym.running_held, strict=True)
                if held[0] is not j.request[0]]
    # its estimates on other sizes (the measured speedup a counterexample writes)
    numbers += [z3.If(sym.queue[e.slot].present, e.estimate, 0) for e in sym.sized_estimates]
    tail = sym.queue_tail
    if tail is not None:  # the fewest further jobs, then the least of them
        objectives.append(tail.count)
        if tail.copy is not None:
            c = tail.copy
            numbers.append(z3.If(tail.count >= 1, z3.Sum([
                c.id, c.submit, c.estimate, *c.request, *(v + 1 for v in c.labels.values())]), 0))
    objectives.append(z3.Sum(numbers))
    # ties between permutations of the ids: the least ids to the queue, in its order
    weights = range(len(jobs), 0, -1)
    objectives.append(z3.Sum([z3.If(j.present, w * j.id, 0)
                         for w, j in zip(weights, [*sym.queue, *sym.running], strict=True)]))
    return _least(solver, objectives, limits)


# Checks a least counterexample may take in all (each bounded by the rlimit): Z3's own
# optimiser applies the rlimit to each inner check, not to their sum, and ran for minutes
MINIMISING_CHECKS = 64


def _least(solver: z3.Solver, objectives: Sequence[z3.ArithRef],
           limits: Limits) -> z3.ModelRef | None:
    """A model of ``solver`` least in ``objectives``, lexicographically: each is pushed down
    (galloping, then bisecting) and then held at its least value while the next is. Every
    check is bounded by the rlimit and there are at most MINIMISING_CHECKS, so the result
    is the same on any machine; if the budget runs out, the least model found so far."""
    # the time limit is the property's (``budget.py``: its watchdog interrupts a check)
    budget = running()
    if solver.check() != z3.sat:
        return None
    model, checks = solver.model(), 1
    for objective in objectives:
        best = model.eval(objective, model_completion=True).as_long()
        infeasible: int | None = None  # a value known to be below every model's
        step = 1
        while checks < MINIMISING_CHECKS:
            target = best - step if infeasible is None else (infeasible + best) // 2
            if infeasible is not None and target <= infeasible:
                break
            if budget is not None and budget.expired():
                break
            solver.push()
            solver.add(objective <= target)
            result = solver.check()
            checks += 1
            if result == z3.sat:
                model = solver.model()
                best = model.eval(objective, model_completion=True).as_long()
                step *= 2
            elif result == z3.unsat:
                infeasible = target
            solver.pop()
            if result == z3.unknown:
                break
        solver.add(objective == best)
    return model


def model_value(model: z3.ModelRef, term: z3.ExprRef) -> int | Fraction | bool:
    v = model.eval(term, model_completion=True)
    if not z3.is_true(v) and not z3.is_false(v) and not _is_number(v):
        # Z3 leaves `to_int` (floor, ceil) of an irrational root unevaluated (fuzz_verify
        # seed 7059: `ceil(sqrt(queue.count))`): each root taken at 20 digits, then
        # simplified. A root is never an integer, so the floor is exact unless the root is
        # within 1e-20 of one; the counterexample is replayed by the simulator anyway
        v = z3.simplify(_roots_approximated(v))
    if z3.is_true(v) or z3.is_false(v):
        return z3.is_true(v)
    if z3.is_int_value(v):
        return v.as_long()
    if z3.is_rational_value(v):
        return Fraction(v.numerator_as_long(), v.denominator_as_long())
    if z3.is_algebraic_value(v):  # an irrational root: its 20-digit decimal
        return Fraction(v.approx(20).as_decimal(20).rstrip("?"))
    raise ValueError(f"unexpected model value {v}")


def _is_number(v: z3.ExprRef) -> bool:
    return z3.is_int_value(v) or z3.is_rational_value(v) or z3.is_algebraic_value(v)


def _roots_approximated(v: z3.ExprRef) -> z3.ExprRef:
    """``v`` with each irrational root in it replaced by its 20-digit decimal."""
    roots: dict[int, z3.ExprRef] = {}
    todo = [v]
    while todo:
        e = todo.pop()
        if z3.is_algebraic_value(e):
            roots.setdefault(e.get_id(), e)
        elif z3.is_app(e):
            todo.extend(e.children())
    pairs = [(r, z3.RealVal(Fraction(r.approx(20).as_decimal(20).rstrip("?"))))
             for r in roots.values()]
    return z3.substitute(v, *pairs) if pairs else v


def _speedup(model: z3.ModelRef, job, decision, estimate: int,
             choices: Sequence[tuple[z3.BoolRef, z3.ArithRef, z3.ArithRef]] = ()) -> str:
    """A speedup model that gives the moldable job what the pass used: its sequential time
    (``job.work``) on 1 cpu, its estimate at its request, on each size it weighed (`size
    choose`) and, if it moved, on the size it got (measured times, so that the replay
    computes exactly these)."""
    points = {1: model_value(model, job.work), model_value(model, job.request[0]): estimate}
    for ok, size, est in choices:
        if model_value(model, ok):
            points.setdefault(model_value(model, size), model_value(model, est))
    if model_value(model, decision.started) or model_value(model, decision.reserved):
        points[model_value(model, decision.alloc[0])] = model_value(model, decision.estimate)
    return "measured(" + ", ".join(f"{n}:{t}" for n, t in sorted(points.items())) + ")"


def counterexample(sym: SymbolicPass, model: z3.ModelRef) -> dict[str, Any]:
    """The model as a state file for `schedc run --state` (the format of
    runtime/workloads/state_file.py), plus what the pass decided in it."""
    names = [r.name for r in sym.policy.machine.resources]

    def request(job) -> dict[str, int]:
        return {n: model_value(model, job.request[k]) for k, n in enumerate(names)}

    def labels(job) -> dict[str, int]:  # those the policy reads; the others are -1
        return {a: model_value(model, v) for a, v in job.labels.items()}

    running = []
    for r, held in zip(sym.running, sym.running_held, strict=True):
        if not model_value(model, r.present):
            continue
        estimate = model_value(model, r.estimate)
        running.append({"id": model_value(model, r.id), "submit": model_value(model, r.submit),
                        "start": model_value(model, r.start), "estimate": estimate,
                        "run_time": estimate, "request": request(r), **labels(r)})
        if model_value(model, held[0]) != model_value(model, r.request[0]):  # a size rule's cpus
            running[-1]["size"] = model_value(model, held[0])
    queue, started, reservations = [], [], {}
    for slot, (q, d) in enumerate(zip(sym.queue, sym.decisions, strict=True)):
        if not model_value(model, q.present):
            continue
        estimate = model_value(model, q.estimate)
        job_id = model_value(model, q.id)
        job = {"id": job_id, "submit": model_value(model, q.submit), "estimate": estimate,
               "run_time": estimate, "request": request(q), **labels(q)}
        if model_value(model, q.moldable):
            job |= {"min_size": model_value(model, q.min_size),
                    "max_size": model_value(model, q.max_size),
                    "speedup": _speedup(model, q, d, estimate,
                                        [(c.valid, c.size, c.estimate)
                                         for c in sym.choice_estimates if c.slot == slot])}
        if model_value(model, sym.kept_size[slot]):
            job["size"] = model_value(model, z3.Int(f"q{slot}_size"))
        queue.append(job)
        if model_value(model, d.started):
            started.append(job_id)
        if model_value(model, d.reserved):
            reservations[str(job_id)] = model_value(model, d.reservation)
    tail = sym.queue_tail
    if tail is not None and tail.copy is not None:  # the further jobs, after the slots
        copy, ids = tail.copy, [j["id"] for j in (*running, *queue)]
        first = max(ids, default=-1) + 1
        for i in range(model_value(model, tail.count)):
            estimate = model_value(model, copy.estimate)
            queue.append({"id": first + i, "submit": model_value(model, copy.submit),
                          "estimate": estimate, "run_time": estimate,
                          "request": request(copy), **labels(copy)})
    return {
        "now": model_value(model, sym.now),
        "capacity": {n: model_value(model, sym.capacity[k]) for k, n in enumerate(names)},
        "params": {name: json_number(model_value(model, var)) for name, var in sym.params.items()},
        "running": running,
        "queue": queue,
        "pass": {"started": started, "reservations": reservations},
    }


def same_state(sym: SymbolicPass, model: z3.ModelRef) -> z3.BoolRef:
    """The pass's inputs equal their values in ``model`` (to exclude that state)."""
    inputs = [sym.now, *sym.capacity, *sym.params.values()]
    tail = sym.queue_tail
    jobs = [*sym.running, *sym.queue]
    if tail is not None:
        inputs.append(tail.count)
        jobs += [tail.copy] if tail.copy is not None else []
    for j in jobs:
        inputs += [j.present, j.id, j.submit, j.estimate, *j.request, j.moldable, j.min_size,
                   j.max_size, j.work, *j.labels.values()]
        if j.start is not None:
            inputs.append(j.start)
    inputs += [held[0] for held in sym.running_held]
    return z3.And([t == model.eval(t, model_completion=True) for t in inputs
                   if not z3.is_int_value(t)])
