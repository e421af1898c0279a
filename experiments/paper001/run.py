"""Paper 001 (Grothklags & Streit), both experiments in one command.

1. ``dynp_runs.py``: self-tuning dynP (simple and advanced decider, ARTwW) against FCFS, SJF
   and LJF planning on the four shared traces (results in ``dynp/``).
2. ``optimal_steps.py``: Table 1 in spirit: at sampled submissions of KTH-SP2 and LANL-CM5,
   the optimal plan of the waiting jobs (CP-SAT, 1-second resolution) against the best
   policy's (results in ``optimal/``).

Run from the repository root (about 20 minutes on 2 cores, most of it CP-SAT's time limits):

    python -m experiments.paper001.run

``--quick`` runs both parts in their test modes (seconds); ``--only dynp|optimal`` one part.
Each part's own script takes more options (traces, instances, time limits).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
PARTS = {"dynp": "dynp_runs.py", "optimal": "optimal_steps.py"}


def _script(name: str) -> ModuleType:
    """The part's module, experiments.paper001.dynp_runs or .optimal_steps (imported when
    its part runs)."""
    return importlib.import_module(f"experiments.paper001.{Path(PARTS[name]).stem}")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.paper001.run",
                                description="Paper 001's experiments: dynP, then optimal plans.")
    p.add_argument("--quick", action="store_true", help="both parts in their quick test modes")
    p.add_argument("--only", choices=sorted(PARTS), help="run one part only")
    p.add_argument("--out", metavar="DIR", default=str(HERE),
                   help="results go to DIR/dynp and DIR/optimal (default: this folder)")
    args = p.parse_args(argv)
    status = 0
    for name in sorted(PARTS) if args.only is None else [args.only]:
        part = ["--out", str(Path(args.out) / name)] + (["--quick"] if args.quick else [])
        if name == "dynp":
            part += ["--jobs", "2"]
        print(f"== {name}: {PARTS[name]} {' '.join(part)}", file=sys.stderr)
        status = max(status, _script(name).main(part))
    return status


if __name__ == "__main__":
    sys.exit(main())
