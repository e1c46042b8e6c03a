"""The back-pressure scheduler with real threads: order, bounds, displacement, deadlines."""

from __future__ import annotations

import threading
import time

import pytest

from mir.inference import ShedError
from mir.inference.scheduler import Scheduler


def _hold(scheduler: Scheduler, release: threading.Event) -> threading.Thread:
    """A thread that takes the only slot and keeps it until ``release`` is set."""
    started = threading.Event()

    def run() -> None:
        with scheduler.slot():
            started.set()
            release.wait(5)

    thread = threading.Thread(target=run)
    thread.start()
    assert started.wait(5)
    return thread


def _wait_queued(scheduler: Scheduler, count: int) -> None:
    end = time.monotonic() + 5
    while scheduler.waiting() < count:
        assert time.monotonic() < end, "waiters never queued"
        time.sleep(0.001)


def _waiter(scheduler: Scheduler, priority: int, log: list, deadline_at=None) -> threading.Thread:
    def run() -> None:
        try:
            with scheduler.slot(priority, deadline_at):
                log.append(("ran", priority))
        except ShedError as exc:
            log.append(("shed", priority, str(exc)))

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_waiters_run_best_priority_first() -> None:
    scheduler, release, log = Scheduler(queue=4), threading.Event(), []
    holder = _hold(scheduler, release)
    threads = []
    for n, priority in enumerate([0, 5, 1]):
        threads.append(_waiter(scheduler, priority, log))
        _wait_queued(scheduler, n + 1)
    release.set()
    for thread in [holder, *threads]:
        thread.join(5)
    assert log == [("ran", 5), ("ran", 1), ("ran", 0)]


def test_full_queue_sheds_the_newcomer_when_it_is_the_lowest() -> None:
    scheduler, release, log = Scheduler(queue=2), threading.Event(), []
    holder = _hold(scheduler, release)
    threads = [_waiter(scheduler, 3, log), _waiter(scheduler, 3, log)]
    _wait_queued(scheduler, 2)
    with pytest.raises(ShedError, match="queue is full"), scheduler.slot(priority=3):
        pass
    release.set()
    for thread in [holder, *threads]:
        thread.join(5)
    assert log == [("ran", 3), ("ran", 3)]


def test_a_high_priority_call_displaces_the_lowest_waiter() -> None:
    scheduler, release, log = Scheduler(queue=2), threading.Event(), []
    holder = _hold(scheduler, release)
    low = _waiter(scheduler, 0, log)
    _wait_queued(scheduler, 1)
    mid = _waiter(scheduler, 1, log)
    _wait_queued(scheduler, 2)
    low.join(0.05)
    high = _waiter(scheduler, 9, log)
    low.join(5)  # shed at once, while the slot is still held
    assert log[0][:2] == ("shed", 0) and "displaced" in log[0][2]
    release.set()
    for thread in [holder, mid, high]:
        thread.join(5)
    assert log[1:] == [("ran", 9), ("ran", 1)]


def test_a_waiter_whose_deadline_passes_is_shed_then() -> None:
    scheduler, release = Scheduler(queue=4), threading.Event()
    holder = _hold(scheduler, release)
    started = time.monotonic()
    with (
        pytest.raises(ShedError, match="deadline passed while queued"),
        scheduler.slot(deadline_at=started + 0.05),
    ):
        pass
    waited = time.monotonic() - started
    release.set()
    holder.join(5)
    assert 0.04 <= waited < 0.2


def test_an_unmeetable_deadline_is_shed_at_once_from_the_service_estimate() -> None:
    scheduler, release = Scheduler(queue=4), threading.Event()
    with scheduler.slot():
        time.sleep(0.1)  # the estimate learns: one call takes ~100 ms
    holder = _hold(scheduler, release)
    started = time.monotonic()
    with (
        pytest.raises(ShedError, match="estimated wait"),
        scheduler.slot(deadline_at=started + 0.05),
    ):
        pass
    assert time.monotonic() - started < 0.02
    release.set()
    holder.join(5)
