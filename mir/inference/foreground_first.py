"""Foreground first: a background model call yields to the foreground ones.

A shadow decision must not slow the production decisions it shadows: on a small
machine both compete for the same cores. A *background* call (marked with
``background()`` by the thread that makes it) streams its generation and, between
tokens, waits while any *foreground* call of this process is generating, so it costs
a foreground call at most the token (or prompt) it is in the middle of.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

PAUSE_LIMIT_S = 1.0  # a saturated process still lets a background call on, slowly
POLL_S = 0.01

_BACKGROUND: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "mir_background_inference", default=False
)


@contextmanager
def background() -> Iterator[None]:
    """Model calls made inside the block yield to foreground ones (see above)."""
    token = _BACKGROUND.set(True)
    try:
        yield
    finally:
        _BACKGROUND.reset(token)


def in_background() -> bool:
    return _BACKGROUND.get()


class Foreground:
    """How many foreground calls are generating now (counted once they hold their
    model's slot: one still queued for a slot a background call holds must not make
    that call wait for it)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._running = 0

    @contextmanager
    def running(self) -> Iterator[None]:
        with self._cond:
            self._running += 1
        try:
            yield
        finally:
            with self._cond:
                self._running -= 1
                self._cond.notify_all()

    def busy(self) -> bool:
        return self._running > 0

    def wait_idle(
        self, limit_s: float | None = None, unless: Callable[[], bool] | None = None
    ) -> float:
        """Wait until no foreground call generates, at most ``limit_s`` (default
        ``PAUSE_LIMIT_S``), or until ``unless()`` is true (checked every 10 ms: a
        foreground call now waiting for the slot the background call holds must not wait
        for its pause); the seconds waited."""
        if not self._running:  # the common case: no lock
            return 0.0
        started = time.monotonic()
        end = started + (PAUSE_LIMIT_S if limit_s is None else limit_s)
        with self._cond:
            while self._running and not (unless is not None and unless()):
                left = end - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(min(left, POLL_S) if unless is not None else left)
        return time.monotonic() - started


FOREGROUND = Foreground()


def foreground() -> AbstractContextManager[None]:
    """Count the block as a foreground call: background calls pause while it runs (the
    runtime wraps a whole production decision of an agent that has a shadow in it, not
    only its model call)."""
    return FOREGROUND.running()
