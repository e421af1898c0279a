"""`python -m schedc.runtime.cli`: the `schedc` command."""

from schedc.runtime.cli.main import entry

entry()
