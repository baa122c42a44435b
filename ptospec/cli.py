"""``ptospec`` command line.  Each subcommand lives in ``ptospec/commands/<name>.py``
and exposes ``register(subparsers)``; this module only discovers and dispatches.

Exit codes: 0 success, 1 a finding (lint problems, illegal invocation, stale
files), 2 bad input (arguments, files, descriptors, assembly), 3 an internal error (a defect of ptospec:
one line; ``PTOSPEC_TRACEBACK=1`` re-raises it with its traceback).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import TYPE_CHECKING

from . import __version__, classcode

# The command line, and only it, is served the dataclasses code kept between its runs (see classcode): a
# program that imports ptospec as a library keeps its dataclasses module as it found it.
classcode.install()

if TYPE_CHECKING:
    import argparse

    from .model import Database

# Everything else is imported inside ``main``'s handling of Ctrl-C: an interrupt while the modules load is
# one line too, not a traceback.


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or when ``command`` names one in ``commands.MODULES`` only of the commands its
    module defines (the others' modules are not imported): it parses that command's arguments as the whole
    parser does."""
    import argparse
    import importlib

    from . import commands

    parser = argparse.ArgumentParser(
        prog="ptospec",
        description="The PTO tile ISA as data: lint the spec database, validate and execute "
        "instructions, print and parse assembly, export the database.",
    )
    parser.add_argument("--version", action="version", version=f"ptospec {__version__}")
    parser.add_argument(
        "--specs", metavar="DIR",
        help="spec database directory (default: $PTOSPEC_SPECS, else ./specs or the nearest parent's specs/)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    if command in commands.MODULES:
        importlib.import_module(f"{commands.__name__}.{commands.MODULES[command]}").register(sub)
        if command in sub.choices:
            return parser
        return build_parser()  # the table is out of date: every module, as without it
    import pkgutil

    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        module.register(sub)
    return parser


def command_named(argv: list[str]) -> str | None:
    """The command ``argv`` names (its first word that is neither an option nor ``--specs``'s value), or None
    when it asks for help or the version first (those list every command)."""
    words = iter(argv)
    for word in words:
        long = len(word) > 2  # argparse takes any prefix of a long option's name
        if word == "-h" or (long and ("--help".startswith(word) or "--version".startswith(word))):
            return None
        if long and "--specs".startswith(word):
            next(words, None)
        elif word == "-" or not word.startswith("-"):
            return word
    return None


def main(argv: list[str] | None = None, database: Database | None = None) -> int:
    """Run one command.  ``database``: the database of ``--specs``, already loaded in this process (the site's
    kernels page runs commands in-process, in a working folder of its own): the command uses it as it is."""
    for stream in (sys.stdout, sys.stderr):  # a file name that is not UTF-8 prints escaped, never as a crash
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors="backslashreplace")
    try:
        return _main(argv, database)
    except KeyboardInterrupt:  # while the commands load (or outside a command's own handling)
        return _interrupted()
    except ImportError as exc:
        if by_interrupt(exc):
            return _interrupted()
        raise


def by_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` was caused by a Ctrl-C: an extension module interrupted while it loads (NumPy's) reports
    an ``ImportError`` whose cause is the ``KeyboardInterrupt``."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def _interrupted() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean-up short
    print("ptospec: interrupted", file=sys.stderr)
    return 130


def _main(argv: list[str] | None, database: Database | None = None) -> int:
    import traceback
    from pathlib import Path

    from .errors import PtospecError
    from .load.problems import DatabaseErrors

    parser = build_parser(command_named(sys.argv[1:] if argv is None else argv))
    args = parser.parse_args(argv)
    args.loaded_database = database
    try:
        if args.specs is not None and not args.specs.strip():  # '' would silently mean the default database
            raise PtospecError("--specs names no directory", where="--specs", rule="cli.specs")
        return int(args.func(args) or 0)
    except DatabaseErrors as exc:
        for err in exc.errors:
            print(f"ptospec: {err.one_line()}", file=sys.stderr)
        print(f"ptospec: {len(exc.errors)} problem(s) in the spec database", file=sys.stderr)
        return 1 if args.command == "lint" else 2
    except PtospecError as exc:
        print(f"ptospec: error: {exc.one_line()}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file or pipe the user named cannot be read or written
        if isinstance(exc, BrokenPipeError):
            return 0
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"ptospec: error: [io] {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return _interrupted()
    except MemoryError:
        print("ptospec: error: [memory] out of memory", file=sys.stderr)
        return 3
    except Exception as exc:  # a defect of ptospec, not of the input: one line, the traceback on request
        if by_interrupt(exc):
            return _interrupted()
        if os.environ.get("PTOSPEC_TRACEBACK"):
            raise
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        what = " ".join(str(exc).split())[:500]
        print(f"ptospec: internal error: {type(exc).__name__}: {what} (at {Path(frame.filename).name}:{frame.lineno}; "
              "please report it; PTOSPEC_TRACEBACK=1 shows the traceback)", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
