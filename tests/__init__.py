"""The test suite of schedc (a package, so that `tests.support` is ours and no other `tests`)."""
