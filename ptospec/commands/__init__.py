"""One module per ``ptospec`` subcommand; each defines ``register(subparsers)``.

``MODULES`` names the module that registers each command, so that a run imports and registers only its own
(``cli.build_parser``): a command missing here still works, at the cost of importing every module, and
tests/test_cli.py checks the table against what the modules register."""

MODULES = {
    "check": "check",
    "check-program": "program",
    "compare-program": "program",
    "conformance": "conformance",
    "docs": "docs",
    "export": "export",
    "gen-tests": "gen_tests",
    "lint": "lint",
    "list": "listing",
    "merge-reports": "conformance",
    "ptoas": "ptoas",
    "run": "run",
    "run-program": "program",
    "schema": "export",
    "show": "show",
}
