"""Worker processes leave Ctrl-C to the main process.

A terminal's Ctrl-C reaches every process of its group: a pool worker that took the interrupt would print
a traceback and die with its task, and the main process could wait for that task forever.  Workers ignore
it instead, from the moment they are forked: ``fork_pool`` creates them with SIGINT blocked (a Ctrl-C in the
middle of creating the pool would otherwise leave forked workers nobody stops, or a worker interrupted before
it could ignore it), and raises a Ctrl-C that came meanwhile only once the pool exists, after stopping it.
The main process reports one line."""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable
from multiprocessing.pool import Pool
from typing import Any


def ignore_interrupts() -> None:
    """Make this (worker) process ignore SIGINT; the pool's parent handles it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _start_worker(initializer: Callable[..., Any] | None, initargs: tuple) -> None:
    ignore_interrupts()
    if initializer is not None:
        initializer(*initargs)


def fork_pool(processes: int, initializer: Callable[..., Any] | None = None, initargs: tuple = ()) -> Pool:
    """A ``fork`` pool of ``processes`` workers that ignore SIGINT from birth.  A Ctrl-C while it is created
    is held until it exists, then stops it and is raised (``KeyboardInterrupt``) here."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        pool = multiprocessing.get_context("fork").Pool(processes, initializer=_start_worker,
                                                        initargs=(initializer, initargs))
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        raise
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)  # a pending Ctrl-C is raised here
    except BaseException:
        pool.terminate()
        pool.join()
        raise
    return pool
