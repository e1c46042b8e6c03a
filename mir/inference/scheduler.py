"""Back-pressure for one loaded model: a bounded priority queue in front of its slots.

Why: a llama model answers one request at a time; without a bound, a burst queues calls
behind each other until every one of them misses its deadline. Here a call that cannot be
served in time is refused AT ONCE (``ShedError``), so the runtime decides it by its next
route or its rules while the caller still has time left.

Admission (stdlib only, no clock but ``time.monotonic``):
- a free slot and nobody waiting -> run now;
- the queue full -> the lowest-priority waiter (latest arrival among equals) is shed,
  or the newcomer when it is the lowest;
- a deadline the estimated wait cannot meet (EWMA of recent service times x calls
  ahead, plus one service) -> shed now; a waiter whose deadline passes while queued ->
  shed then.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from mir.inference.domain import ShedError

DEFAULT_QUEUE = 8
# Weight of the newest service time in the estimate: recent calls matter most.
EWMA_ALPHA = 0.3
# How often callers queued on a new version look whether the old one has drained.
DRAIN_POLL_S = 0.005


@dataclass
class _Waiter:
    priority: int
    seq: int
    deadline_at: float | None
    granted: bool = False
    shed: str | None = None


class Scheduler:
    """``capacity`` calls run at once; at most ``queue`` wait, best priority first."""

    def __init__(self, capacity: int = 1, queue: int = DEFAULT_QUEUE) -> None:
        self.capacity = max(1, capacity)
        self.queue = max(0, queue)
        self._cond = threading.Condition()
        self._running = 0
        self._waiters: list[_Waiter] = []
        self._seq = itertools.count()
        self.service_s: float | None = None  # EWMA of recent service times
        # Hot swap: the calls of the version this model replaces that were already there
        # when it took over; this model's calls wait until they are gone (``follow``).
        self._inside: set[int] = set()  # tickets of the calls running or waiting here
        self._issued = -1
        self._previous: list[tuple[Scheduler, int]] = []

    @contextmanager
    def slot(self, priority: int = 0, deadline_at: float | None = None) -> Iterator[None]:
        """Hold a slot for the block, or raise ``ShedError`` before it starts."""
        ticket = self._acquire(priority, deadline_at)
        started = time.monotonic()
        try:
            yield
        finally:
            self._release(time.monotonic() - started, ticket)

    # -- hot swap ----------------------------------------------------------------------

    def follow(self, previous: Scheduler) -> None:
        """Grant no slot until every call now running or queued on ``previous`` (the
        version this model replaces) has left it; this model's callers queue meanwhile,
        in their usual order. Why: both versions share the CPU; had the new version's
        calls interleaved with the old backlog, every caller queued on the old version
        would wait about twice as long (a swap paused callers for seconds)."""
        if previous is self or previous._follows(self):
            # A quick swap back (v1 -> v2 -> v1, or through v3): waiting for a version
            # that waits for us would wait forever; serve at once instead.
            return
        mark = previous.mark()
        with self._cond:
            self._previous.append((previous, mark))
            self._cond.notify_all()  # waiters already queued start polling for the drain

    def _follows(self, other: Scheduler) -> bool:
        """This scheduler waits, directly or through others, for ``other`` to drain."""
        seen: set[int] = set()
        todo = [p for p, _ in list(self._previous)]
        while todo:
            current = todo.pop()
            if current is other:
                return True
            if id(current) not in seen:
                seen.add(id(current))
                todo.extend(p for p, _ in list(current._previous))
        return False

    def mark(self) -> int:
        with self._cond:
            return self._issued

    def drained(self, mark: int) -> bool:
        """Every call that arrived up to ``mark`` has left (finished or shed). Read
        without the lock (``list`` of a set is atomic under the GIL): a scheduler that
        follows this one asks while holding its own lock."""
        return all(ticket > mark for ticket in list(self._inside))

    def _blocked(self) -> bool:
        """(Under the lock.) A previous version still has calls from before the swap."""
        while self._previous:
            previous, mark = self._previous[0]
            if not previous.drained(mark):
                return True
            self._previous.pop(0)
        return False

    def busy(self) -> bool:
        """A call runs or waits (the model cache never unloads a busy model)."""
        with self._cond:
            return self._running > 0 or bool(self._waiters)

    def waiting(self) -> int:
        with self._cond:
            return len(self._waiters)

    def _estimate(self, ahead: int) -> float:
        if self.service_s is None:
            return 0.0
        return self.service_s * (ahead / self.capacity + 1)

    def refusal(self, priority: int = 0, deadline_at: float | None = None) -> str | None:
        """Why a call asked now would be shed at once, or None; it takes no slot. The
        runtime asks before it flushes the flow for a model call, so a shed decision costs
        no disk write before the rules decide (``slot`` still decides for real)."""
        with self._cond:
            return self._refusal(priority, deadline_at, time.monotonic())

    def _refusal(self, priority: int, deadline_at: float | None, now: float) -> str | None:
        if deadline_at is not None and now >= deadline_at:
            return "shed: the deadline passed before the call was queued"
        if self._running < self.capacity and not self._waiters and not self._blocked():
            return None
        ahead = self._running + sum(1 for w in self._waiters if w.priority >= priority)
        if deadline_at is not None and now + self._estimate(ahead) > deadline_at:
            return (
                f"shed: estimated wait {self._estimate(ahead) * 1000:.0f} ms "
                f"exceeds the {max(0.0, deadline_at - now) * 1000:.0f} ms left"
            )
        if len(self._waiters) >= self.queue:
            lowest = min(self._waiters, key=lambda w: (w.priority, -w.seq), default=None)
            if lowest is None or lowest.priority >= priority:
                return f"shed: the model's queue is full ({self.queue} waiting)"
        return None

    def _acquire(self, priority: int, deadline_at: float | None) -> int:
        with self._cond:
            refused = self._refusal(priority, deadline_at, time.monotonic())
            if refused is not None:
                raise ShedError(refused)
            ticket = self._issued = self._issued + 1
            self._inside.add(ticket)
            try:
                self._admit(priority, deadline_at)
            except ShedError:
                self._inside.discard(ticket)
                self._cond.notify_all()
                raise
            return ticket

    def _admit(self, priority: int, deadline_at: float | None) -> None:
        """(Under the lock.) Take a slot now, or wait in the queue for one."""
        if self._running < self.capacity and not self._waiters and not self._blocked():
            self._running += 1
            return
        me = _Waiter(priority, next(self._seq), deadline_at)
        if len(self._waiters) >= self.queue:
            lowest = min(self._waiters, key=lambda w: (w.priority, -w.seq), default=None)
            assert lowest is not None  # _refusal: a full queue has a lower waiter
            self._waiters.remove(lowest)
            lowest.shed = f"shed: displaced by a priority-{priority} call (queue full)"
            self._cond.notify_all()
        self._waiters.append(me)
        while not me.granted and me.shed is None:
            timeout = None if deadline_at is None else deadline_at - time.monotonic()
            if timeout is not None and timeout <= 0:
                self._waiters.remove(me)
                raise ShedError("shed: the deadline passed while queued")
            if self._previous:  # nobody here notifies when the old version drains: poll
                self._cond.wait(DRAIN_POLL_S if timeout is None else min(timeout, DRAIN_POLL_S))
                self._grant()
            else:
                self._cond.wait(timeout)
        if me.shed is not None:
            raise ShedError(me.shed)

    def _release(self, service_s: float, ticket: int) -> None:
        with self._cond:
            self._inside.discard(ticket)
            self.service_s = (
                service_s
                if self.service_s is None
                else EWMA_ALPHA * service_s + (1 - EWMA_ALPHA) * self.service_s
            )
            self._running -= 1
            self._grant()

    def _grant(self) -> None:
        """(Under the lock.) Free slots to the best waiters, unless a previous version
        still drains."""
        if self._blocked():
            return
        while self._running < self.capacity and self._waiters:
            best = max(self._waiters, key=lambda w: (w.priority, -w.seq))
            self._waiters.remove(best)
            best.granted = True
            self._running += 1
        self._cond.notify_all()
