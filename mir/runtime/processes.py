"""Processes that decide many flows: where worker processes come from, and Ctrl-C.

``start_method`` picks how a pool's workers start (fork where it is safe); ``Stop`` and
``first_interrupt_stops``: the first Ctrl-C stops starting new work (what is in flight
finishes, so no flow is left half-written), a second one interrupts at once. Shared by
``mir eval -j`` and ``mir run agent --batch -j``.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


class Stop:
    """Set by the first Ctrl-C (or by a caller): no new run starts."""

    def __init__(self) -> None:
        self.event = threading.Event()

    def __bool__(self) -> bool:
        return self.event.is_set()

    def set(self) -> None:
        self.event.set()


@contextmanager
def first_interrupt_stops(stop: Stop, on_stop: Callable[[], None]) -> Iterator[None]:
    """The first SIGINT sets ``stop``; a second one raises KeyboardInterrupt as usual."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        if stop:
            raise KeyboardInterrupt
        stop.set()
        on_stop()

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def start_method() -> str:
    """fork where it is safe: a worker starts with mir and the user's code already
    imported (spawn re-imports them, ~1 s a worker). Nothing that must not be shared is
    open here: the runner closed its agents and trace store before the pool starts.

    Not once llama.cpp has run in this process: its OpenMP thread pool does not survive
    a fork, and a forked worker's first decode waits forever for threads that exist only
    in the parent (an app that decided before calling ``run_eval(jobs=2)`` hung). Such a
    process starts its workers from a clean forkserver (or spawn) instead."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and "llama_cpp" not in sys.modules:
        return "fork"
    return "forkserver" if "forkserver" in methods else "spawn"
