"""Attack on the schedulers: many threads, random priorities and deadlines, versions that
follow each other (hot swaps, and swaps straight back) and one CPU budget. Whatever the
interleaving, every call ends (run or shed), nothing hangs, and every slot, ticket and
CPU thread is given back."""

from __future__ import annotations

import random
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mir.inference import ShedError
from mir.inference.cpu_budget import CpuBudget
from mir.inference.scheduler import Scheduler


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    models=st.integers(1, 3),
    callers=st.integers(2, 10),
    queue=st.integers(0, 4),
    cores=st.integers(1, 3),
)
def test_every_call_ends_and_everything_is_given_back(seed, models, callers, queue, cores):
    rng = random.Random(seed)
    schedulers = [Scheduler(queue=queue) for _ in range(models)]
    cpu = CpuBudget(cores)
    outcomes: list[str] = []
    lock = threading.Lock()
    plans = [
        [
            (
                rng.randrange(models),
                rng.randrange(3),
                None if rng.random() < 0.5 else rng.uniform(0.001, 0.05),
                rng.uniform(0, 0.004),
                rng.randint(1, 3),
            )
            for _ in range(4)
        ]
        for _ in range(callers)
    ]

    def caller(plan) -> None:
        for model, priority, budget_s, work_s, threads in plan:
            deadline = None if budget_s is None else time.monotonic() + budget_s
            try:
                with (
                    schedulers[model].slot(priority, deadline),
                    cpu.threads(threads, deadline, priority=priority),
                ):
                    time.sleep(work_s)
                result = "ran"
            except ShedError:
                result = "shed"
            with lock:
                outcomes.append(result)

    def swapper() -> None:
        for _ in range(3):
            time.sleep(rng.uniform(0, 0.01))
            new, old = rng.sample(range(models), 2) if models > 1 else (0, 0)
            if new != old:
                schedulers[new].follow(schedulers[old])

    threads = [threading.Thread(target=caller, args=(plan,)) for plan in plans]
    threads.append(threading.Thread(target=swapper))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert not any(t.is_alive() for t in threads), "a call never ended"
    assert len(outcomes) == callers * 4
    for scheduler in schedulers:
        assert scheduler._running == 0 and not scheduler._waiters and not scheduler._inside
    assert cpu._free == cpu.total and not cpu._queue


def test_a_version_that_follows_one_whose_calls_all_shed_is_not_held():
    """The old version's queued calls shed at their deadline: they have left, so the new
    version serves."""
    old, new = Scheduler(), Scheduler()
    release = threading.Event()

    def hold() -> None:
        with old.slot():
            release.wait(5)

    holder = threading.Thread(target=hold)
    holder.start()
    while not old._running:
        time.sleep(0.001)
    with pytest.raises(ShedError), old.slot(deadline_at=time.monotonic() + 0.02):
        pass
    new.follow(old)
    release.set()
    holder.join(5)
    with new.slot(deadline_at=time.monotonic() + 1):
        pass
