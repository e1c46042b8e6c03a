"""One CPU for all models: the threads llama.cpp may run at once in this process.

llama.cpp's worker threads spin while they wait: two models generating at once with
more threads than the machine has cores slow each other down several times over (seen
as multi-second pauses while a hot swap ran the old and the new version side by side).
Every foreground llama generation of the process takes its threads from one budget of
``os.cpu_count()``; a background one (a shadow) takes none, it yields between tokens.
"""

from __future__ import annotations

import bisect
import itertools
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from mir.inference.domain import ShedError


class CpuBudget:
    """Threads llama.cpp may run at once in this process, shared by every loaded model.

    Served in order of (priority, when the call arrived at its model), not of when it
    reached this budget: during a hot swap the callers still queued on the old version
    arrived first, and a call on the new version must not overtake them (letting the
    two queues interleave doubled the old queue's wait: seconds-long pauses)."""

    def __init__(self, threads: int | None = None) -> None:
        self.total = max(1, threads or os.cpu_count() or 1)
        self._free = self.total
        self._cond = threading.Condition()
        self._queue: list[_CpuWaiter] = []  # sorted by key
        self._seq = itertools.count()

    @contextmanager
    def threads(
        self,
        n: int,
        deadline_at: float | None = None,
        *,
        priority: int = 0,
        arrived: float | None = None,
    ) -> Iterator[None]:
        """Hold ``n`` threads (at most the whole budget) for the block; ``ShedError`` when
        ``deadline_at`` passes first. ``arrived``: when the call reached its model's
        queue (monotonic; default now)."""
        need = max(1, min(n, self.total))
        since = time.monotonic() if arrived is None else arrived
        with self._cond:
            if self._queue or self._free < need:
                me = _CpuWaiter((-priority, since, next(self._seq)), need)
                bisect.insort(self._queue, me, key=lambda w: w.key)
                while not me.granted:
                    timeout = None if deadline_at is None else deadline_at - time.monotonic()
                    if timeout is not None and timeout <= 0:
                        self._queue.remove(me)
                        self._grant()  # a smaller waiter behind may fit now
                        raise ShedError("shed: the deadline passed while waiting for the CPU")
                    self._cond.wait(timeout)
            else:
                self._free -= need
        try:
            yield
        finally:
            with self._cond:
                self._free += need
                self._grant()

    def _grant(self) -> None:
        """Hand free threads to the waiters at the head of the queue, in order."""
        while self._queue and self._queue[0].need <= self._free:
            head = self._queue.pop(0)
            self._free -= head.need
            head.granted = True
        self._cond.notify_all()


@dataclass
class _CpuWaiter:
    key: tuple[int, float, int]
    need: int
    granted: bool = False


CPU = CpuBudget()
