"""Worker processes leave Ctrl-C to the main process.

A terminal's Ctrl-C reaches every process of its group: a pool worker that took the interrupt would print
a traceback and die with its task, and the main process could wait for that task forever.  Workers ignore
it instead; the main process stops the pool and reports one line."""

from __future__ import annotations

import signal


def ignore_interrupts() -> None:
    """Make this (worker) process ignore SIGINT; the pool's parent handles it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
