"""One pass of a preemptive policy (papers/003) encoded for Z3, and its properties proved.

The twin of ``runtime/engine/preemptive.py``'s pass, over a bounded symbolic state: job
slots in each phase (pending, running, suspended, stopped), each with what it has run so far
(service acquired, its last start, its preemptions, the fraction of its work done) and,
running or suspended, the very processors it holds (one Bool per processor of a machine of
at most P processors: a suspended job resumes on its own processors only, so processors have
identities here as in the simulator). The pass is symbolic execution of the simulator's
steps in the same order (resume, start, preempt by a rule; or the selection by the order),
the machine's books (each processor's holder and claimer, its resident processes, every
resource's use, claims and what checkpointing jobs hold) carried as Z3 terms from step to
step. The proofs of a `preempt by order` pass use a second encoding of it, symmetric in the
processors (``passes.py``'s doc): any free processors where the simulator takes the lowest,
over one numbering of each state; counterexamples come from the exact one.

Modules, each importing only the ones before it:

- ``slots.py``: the symbolic state and what every state satisfies (``PreemptiveState``);
- ``books.py``: the machine's books and the transitions (start, resume, claim, preempt);
- ``adaptive.py``: the SUBSET variant's steps and the leftover processors given out;
- ``passes.py``: the two passes (``encode_preemptive``), recording each job's action;
- ``properties.py``: each property as a formula of the encoded pass;
- ``prover.py``: the verdicts (``verify_preemptive``) and counterexamples as state files.

Outside the encoding, ``tests/support/preemptive_agreement.py`` pins a random
concrete state into the symbolic pass and checks that every job's action and processors are
the simulator's: the encoding is tested against the code it mirrors.
"""
