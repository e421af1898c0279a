"""`schedc check` and `schedc compile`: the language side alone, no simulation."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from schedc.runtime.cli.errors import EXIT_OK, EXIT_USER_ERROR, report
from schedc.runtime.run import require_file


def run_check(args: argparse.Namespace) -> int:
    from schedc.dsl import check_file

    failed = False
    for file in args.files:
        require_file(file, "policy")
        result = check_file(file)
        if result.diagnostics:  # warnings go to standard error too, but fail nothing
            report(result.diagnostics)
        if not result.ok:
            failed = True
        else:
            names = ", ".join(result.policies) or "no policy"
            print(f"ok: {file} ({names})")
    return EXIT_USER_ERROR if failed else EXIT_OK


def run_compile(args: argparse.Namespace) -> int:
    from schedc.dsl import compile_file, policy_to_json

    require_file(args.file, "policy")
    if args.output:
        from schedc.runtime.outputs import Output, check_outputs, policy_inputs

        # never onto the policy or one of its imports
        check_outputs([Output("-o", args.output, "policy.json")],
                      policy_inputs(args.file, "FILE"))
    policy = compile_file(args.file, args.policy)
    text = json.dumps(policy_to_json(policy), indent=2) + "\n"
    if args.output:
        from schedc.runtime.atomicio import write_text_atomic

        write_text_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def add_parser(commands: Any) -> None:
    """`schedc check` and `schedc compile`'s parser."""
    check = commands.add_parser(
        "check", help="parse and type-check policy files", description="Parse and check "
        ".pol files; report every error of every file at once.")
    check.add_argument("files", nargs="+", metavar="FILE", help=".pol file(s)")

    compile_ = commands.add_parser(
        "compile", help="compile a policy to its IR", description="Compile a policy and "
        "print its intermediate representation.")
    compile_.add_argument("file", metavar="FILE", help=".pol file")
    compile_.add_argument("--policy", help="which policy of the file (if it defines several)")
    compile_.add_argument("--emit", choices=["json"], default="json",
                          help="output format (default: json)")
    compile_.add_argument("-o", "--output", metavar="PATH",
                          help="write to PATH instead of standard output")
