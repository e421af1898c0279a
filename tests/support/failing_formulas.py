"""Preemptive policies, each with one formula that fails for a job of one cpu (a division by
zero), one per place a preemptive policy evaluates a formula: the run stops there
(`well-defined`) and `schedc verify` finds it, its counterexample replaying to that stop."""

from __future__ import annotations

HEAD = "policy p {\n  order job.submit asc\n  reserve 0\n  backfill first_fit\n"
FAILS = "10 / (job.procs - 1)"  # no value for a job of one cpu
ON_VICTIM = FAILS.replace("job", "victim")


def policy(*clauses: str, params: str = "", order: str = "job.submit asc") -> str:
    return (params + HEAD.replace("job.submit asc", order)
            + "".join(f"  {c}\n" for c in clauses) + "}\n")


FAILING = {
    "mechanism": policy(f"mechanism suspend when {FAILS} > 1", "mechanism none",
                        "preempt by order"),
    "keep": policy("mechanism suspend", f"keep {FAILS} > 1", "preempt by order"),
    "order key": policy("mechanism suspend", "preempt by order", order=f"{FAILS} asc"),
    "cost dispatch": policy("mechanism suspend", f"cost dispatch {FAILS}", "preempt by order"),
    # a job of one cpu preempted by a larger one (first in the order), then resumed
    "cost resume": policy("mechanism suspend", f"cost resume {FAILS}", "preempt by order",
                          order="job.procs desc"),
    "cost checkpoint": policy("mechanism checkpoint", f"cost checkpoint {FAILS}",
                              "preempt by order", order="job.procs desc"),
    "victims order": policy("mechanism suspend", f"victims order {ON_VICTIM} asc",
                            "preempt when cand.procs > victim.procs"),
    "the preemption rule": policy("mechanism suspend",
                                  "preempt when victim.estimate / (victim.procs - 1) > 0"),
    "size": policy("mechanism checkpoint", "preempt by order", f"size ceil({FAILS})"),
}
