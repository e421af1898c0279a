"""Small hand-checked traces the tests share."""

# Three jobs on 10 cpus: 1 (6 cpus, 100 s) starts at 0; 2 (all 10 cpus) waits for it, so
# EASY reserves it at 100; 3 (4 cpus, 1000 s) fits now but would delay that reservation.
THREE_JOBS_SWF = """\
; MaxProcs: 10
1 0 -1 100 6 -1 -1 6 100 -1 1 1 1 1 1 -1 -1 -1
2 1 -1 100 10 -1 -1 10 100 -1 1 1 1 1 1 -1 -1 -1
3 2 -1 1000 4 -1 -1 4 1000 -1 1 1 1 1 1 -1 -1 -1
"""
