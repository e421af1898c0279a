"""`python -m schedc.runtime.cli`: the `schedc` command."""

import sys

from schedc.runtime.cli.main import main

sys.exit(main())
