"""One scheduling pass of a compiled policy, encoded for Z3 over a bounded symbolic state.

The state: K resources with capacities, R running-job slots and N queued-job slots (a slot
may be empty, so every smaller state is covered too), the time ``now`` and the policy's
params over their domains. The pass is the simulator's (``runtime/engine/simulator.py``; DESIGN,
"Rigid-job semantics") decision for decision:

* order: the policy's keys, then submit time, then file order (the slot index);
* walk in that order; with rigid sizes the walk stops once no later request fits the free
  resources (nothing later can start; the simulator does the same);
* ``backfill none``: jobs start in order while each fits, the first that does not ends it;
* ``first_fit`` with depth D: a job starts if it fits now, for its whole estimate, in the
  profile of running jobs' estimated ends, the jobs started so far and the reservations made
  so far; otherwise, while fewer than D reservations exist, it is reserved at its earliest
  fit; ``when C``: after D reservations, a job starts if it fits the free resources now and
  C holds (the reservations are not consulted: that is what a verifier must catch);
  ``best by S``: after D reservations the remaining jobs are candidates, and rounds follow:
  each starts the fitting candidate of best score (ties: queue order) until none fits;
* ``slack S``: a reservation is held from its earliest fit plus the job's slack (S floored,
  at least 0) if it fits there, else from its earliest fit; ``res_time`` is where the plan
  holds it, so the reservation-safety property is "it moves no more than its slack".

Why the encoding is finite: usage only rises at reservation starts (running jobs only
release), so a window fits if it fits at its start and at each reservation start inside it;
and the earliest fit is ``now`` or a release time (a running job's, a started job's or a
reservation's end): if a job fits from a reservation start S but not from the release or
``now`` just before, it fails at a point before S whose usage ends at a release, and from
that release it fits.

Two layers of equations (``Definitions``). The step facts say what safety needs of each
decision: a start fits the plan as it was at its step (the use at each checkpoint, ``now``
and every reservation start, after each step is a variable), a reservation fits at its
time. Every pass the simulator can make satisfies them, so a property that follows from them
is proved for the real pass, and each step's lemma stays small. The exact equations
(``exact=True``) pin every decision to the simulator's: which jobs are visited, the earliest
reservation time, the walk's early stop, the best candidate of a round. Counterexamples and
the agreement tests need them.

The modules, each a layer of ``PassEncoder`` built on the ones before it: ``state`` (what
the steps share, declared in one place), ``order``, ``assumptions`` (the inputs), ``plan``,
``sizes``, ``walk``, then ``encoder`` (``encode_pass``); ``record`` is what the prover
reads (``SymbolicPass``). No names are re-exported here: import each from its module.
"""
