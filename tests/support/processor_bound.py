"""Preemptive policies right on machines of at most 4 cpus only (issue 44), and the caveat a
proof within the processor bound P = 4 states: shared by the tests of that caveat and of
the proofs over groups of processors, which must not prove them for every size."""

BOUND = "proved for machines of at most 4 processors: raise --processors"

# three policies right on machines of at most 4 cpus only (issue 44): an order key that
# divides by zero for a job of 8 cpus, a rule that lets only jobs of at most 4 cpus
# preempt (the head of 5 cpus or more waits; requeued, no suspended job resumes before it),
# a size out of range from 5 cpus up
BY_EIGHT = """
policy by_eight {
  order     1 / (job.procs % 8) asc
  reserve   0
  mechanism suspend
  preempt   by order
}
"""
SMALL_ONLY = """
policy small_only {
  order     job.submit asc
  reserve   0
  mechanism requeue
  preempt   when cand.procs <= 4
}
"""
TOO_SMALL = """
policy too_small {
  order     job.acquired asc
  reserve   0
  mechanism checkpoint
  preempt   by order
  size      if job.procs >= 5 then job.min_size - 1 else job.procs
}
"""
