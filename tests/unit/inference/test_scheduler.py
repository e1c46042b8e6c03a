"""The back-pressure scheduler with real threads: order, bounds, displacement, deadlines."""

from __future__ import annotations

import threading
import time

import pytest

from mir.inference import ShedError
from mir.inference.cpu_budget import CpuBudget
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


# ---------------------------------------------------------------- the CPU budget


def test_two_generations_that_need_every_core_take_turns():
    """Two models with 2 threads each on 2 cores: the second waits for the first
    (spinning llama.cpp threads on an oversubscribed CPU slow both several times)."""
    budget = CpuBudget(2)
    order: list[str] = []
    first_in = threading.Event()

    def first() -> None:
        with budget.threads(2):
            first_in.set()
            time.sleep(0.2)
            order.append("first done")

    thread = threading.Thread(target=first)
    thread.start()
    first_in.wait(5)
    with budget.threads(2):
        order.append("second in")
    thread.join()
    assert order == ["first done", "second in"]


def test_generations_that_fit_run_side_by_side():
    budget = CpuBudget(2)
    with budget.threads(1), budget.threads(1):
        pass  # would deadlock if the second waited


def test_more_threads_than_the_budget_take_the_whole_budget_not_forever():
    budget = CpuBudget(2)
    with budget.threads(8):
        pass


def test_a_deadline_that_passes_while_waiting_for_the_cpu_sheds():
    budget = CpuBudget(1)
    with (
        budget.threads(1),
        pytest.raises(ShedError, match="waiting for the CPU"),
        budget.threads(1, deadline_at=time.monotonic() + 0.05),
    ):
        pass
    with budget.threads(1):  # the shed call took nothing
        pass


def test_the_cpu_goes_to_waiters_in_arrival_order():
    """A thread that releases and asks again at once queues behind the one already
    waiting (an unfair lock let one model's callers starve the other's for seconds)."""
    budget = CpuBudget(1)
    order: list[str] = []
    waiting = threading.Event()

    def other() -> None:
        waiting.set()
        with budget.threads(1):
            order.append("other")

    with budget.threads(1):
        thread = threading.Thread(target=other)
        thread.start()
        waiting.wait(5)
        while not budget._queue:
            time.sleep(0.001)
    with budget.threads(1):  # asks again at once: must come after "other"
        order.append("again")
    thread.join(5)
    assert order == ["other", "again"]


def test_a_call_that_arrived_earlier_at_its_model_goes_first():
    """Hot swap: a caller queued on the old version since before the swap is served
    before a call on the new version that reached the CPU queue first."""
    budget = CpuBudget(1)
    order: list[str] = []
    early = time.monotonic()

    def call(name: str, arrived: float) -> threading.Thread:
        def run() -> None:
            with budget.threads(1, arrived=arrived):
                order.append(name)

        thread = threading.Thread(target=run)
        thread.start()
        return thread

    with budget.threads(1):
        late = call("new version", time.monotonic())
        while len(budget._queue) < 1:
            time.sleep(0.001)
        old = call("old version", early)
        while len(budget._queue) < 2:
            time.sleep(0.001)
    late.join(5)
    old.join(5)
    assert order == ["old version", "new version"]


# ---------------------------------------------------------------- hot swap: follow


def _on(scheduler: Scheduler, name: str, order: list[str], hold: float = 0.0, **kw):
    def run() -> None:
        try:
            with scheduler.slot(**kw):
                order.append(name)
                time.sleep(hold)
        except ShedError:
            order.append(f"{name} shed")

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_a_new_version_serves_nothing_until_the_old_backlog_is_done_then_in_order():
    old, new = Scheduler(), Scheduler()
    order: list[str] = []
    release = threading.Event()
    holder = _hold(old, release)  # running on the old version at the swap
    queued_old = _on(old, "old queued", order)
    _wait_queued(old, 1)
    new.follow(old)
    first = _on(new, "new first", order)
    _wait_queued(new, 1)
    second = _on(new, "new second", order)
    _wait_queued(new, 2)
    time.sleep(0.05)
    assert order == []  # the old version still has its running call and its queue
    release.set()
    for thread in (holder, queued_old, first, second):
        thread.join(5)
    assert order == ["old queued", "new first", "new second"]


def test_calls_that_reach_the_old_version_after_the_swap_do_not_hold_the_new_one():
    old, new = Scheduler(), Scheduler()
    new.follow(old)  # the old version was idle at the swap
    order: list[str] = []
    release = threading.Event()
    late = _hold(old, release)  # a pinned NAME@1 route keeps using the old version
    _on(new, "new", order).join(5)
    assert order == ["new"]
    release.set()
    late.join(5)


def test_a_swap_straight_back_does_not_deadlock():
    v1, v2 = Scheduler(), Scheduler()
    release = threading.Event()
    holder = _hold(v1, release)
    v2.follow(v1)
    v1.follow(v2)  # rolled back before v1 drained: v1 must not wait for v2
    order: list[str] = []
    waiter = _on(v2, "v2", order)
    release.set()
    holder.join(5)
    waiter.join(5)
    _on(v1, "v1", order).join(5)
    assert sorted(order) == ["v1", "v2"]


def test_a_deadline_that_passes_while_the_old_version_drains_sheds():
    old, new = Scheduler(), Scheduler()
    release = threading.Event()
    holder = _hold(old, release)
    new.follow(old)
    order: list[str] = []
    _on(new, "new", order, deadline_at=time.monotonic() + 0.05).join(5)
    assert order == ["new shed"]
    release.set()
    holder.join(5)


def test_a_caller_already_queued_when_the_swap_happens_is_served_after_the_drain():
    """(Found by the stress test: it waited for a notify that never came.)"""
    old, new = Scheduler(), Scheduler()
    old_release, new_release = threading.Event(), threading.Event()
    old_holder, new_holder = _hold(old, old_release), _hold(new, new_release)
    order: list[str] = []
    queued = _on(new, "queued before the swap", order)
    _wait_queued(new, 1)
    new.follow(old)
    new_release.set()  # its slot frees while the old version still runs: not granted yet
    new_holder.join(5)
    time.sleep(0.05)
    assert order == []
    old_release.set()
    old_holder.join(5)
    queued.join(5)
    assert order == ["queued before the swap"]


def test_a_three_way_swap_back_does_not_deadlock():
    v1, v2, v3 = Scheduler(), Scheduler(), Scheduler()
    release = threading.Event()
    holder = _hold(v1, release)
    v2.follow(v1)
    v3.follow(v2)
    v1.follow(v3)  # v3 waits for v2, which waits for v1: v1 must not wait for v3
    assert not v1._previous
    order: list[str] = []
    waiter = _on(v1, "v1", order)
    release.set()
    holder.join(5)
    waiter.join(5)
    assert not waiter.is_alive() and order == ["v1"]
