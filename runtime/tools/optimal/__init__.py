"""`schedc optimal`: the quasi off-line problem of papers/001 (the waiting jobs at one
instant, planned optimally) solved with CP-SAT, and the policies' plans measured against it."""
