"""``encode_pass``: one pass of a compiled policy encoded for Z3 (the package's doc says
how), by ``PassEncoder``, whose steps are layered one module each: ``order``,
``assumptions`` (the inputs), ``plan``, ``sizes``, ``walk``."""

from __future__ import annotations

from schedc.dsl import ir
from schedc.dsl.verify.pass_encoding.record import JobDecision, SymbolicPass
from schedc.dsl.verify.pass_encoding.walk import WalkSteps
from schedc.dsl.verify.verdict import Bounds

TAILS = ("any", "copies")


def encode_pass(policy: ir.Policy, bounds: Bounds | None = None, *, idle: bool = False,
                depth_value: int | None | str = "policy", exact: bool = True,
                earliest: bool = True, tail: str = "any",
                resized: bool | None = None,
                kept: tuple[ir.Invariant, ...] | None = None) -> SymbolicPass:
    """Encode one pass of ``policy``. ``idle``: no running job (for the progress property);
    ``exact``: with the exact equations (else the step facts only, see the module's doc);
    ``earliest``: with the equations that make a reservation the earliest fit (the costliest
    to build; what starts on an idle machine does not depend on them). If the policy reads
    aggregates over the queue, any number of further jobs wait after the N slots
    (``QueueTail``): ``tail="any"`` lets each aggregate see arbitrary ones (every queue is
    covered: proofs), ``"copies"`` makes them copies of one job (a counterexample's state).
    ``resized``: a running rigid job may hold other cpus than it asked, as a size rule gives
    them (default: if the policy has one; a dynP candidate's, if any candidate has).
    ``kept``: the invariants a size kept from an earlier pass satisfies (`size fixed`;
    default: the policy's own, proved of every size it chooses; a dynP candidate's kept size
    may come from another candidate: those every `size fixed` candidate has)."""
    return PassEncoder(policy, bounds or Bounds(), idle=idle, depth_value=depth_value,
                       exact=exact, earliest=earliest, tail=tail,
                       resized=policy.size is not None if resized is None else resized,
                       kept=kept).encode()


class PassEncoder(WalkSteps):
    """One pass of a policy as Z3 terms, built step by step like the simulator's walk
    (``PassWalk`` in runtime/engine/walk.py): each method encodes the step of the same name.

    Z3's search follows the order in which terms are made, so the order of the calls below is
    part of every verdict: ``encode`` makes them in a fixed order, and no method is to be
    reordered or made lazily without checking that every term comes out the same."""

    def encode(self) -> SymbolicPass:
        """The inputs and their assumptions, the order, then the walk (terms in this order)."""
        self.inputs()
        self.order()
        self.declare()
        self.sizes_at_visits()
        self.walk()
        N = self.N
        decisions = tuple(
            JobDecision(q, self.visited[q], self.started[q], self.reserved[q],
                        self.res_time[q], self.allocs[q], self.final_est[q])
            for q in range(N))
        reservations_hold = (tuple(self.holds(a) for a in range(N))
                             if self.kind != "none" else ())
        return SymbolicPass(
            policy=self.policy, bounds=self.bounds, exact=self.exact, now=self.now,
            capacity=self.capacity, running=self.running, running_held=self.held,
            queue=self.queue,
            params=self.params, assumptions=tuple(self.assumptions),
            definitions=self.definitions, decisions=decisions,
            starts=tuple(self.starts_list),
            sized_estimates=tuple(self.sized_estimates),
            choice_estimates=tuple(self.choice_estimates), bpu=self.bpu, power=self.power,
            kept_size=tuple(self.fixed), fresh_sizes=tuple(self.fresh_sizes),
            steps=self.steps,
            reservations_hold=reservations_hold, used_after=tuple(self.use[self.steps][0]),
            obligations=self.obligations, obligation_steps=self.obligation_steps,
            size_results=tuple(self.sizes), size_obligations=tuple(self.size_obligations),
            fresh=self.fresh, queue_tail=self.queue_tail, encoder=self)
