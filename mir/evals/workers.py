"""Where case runs run: in this process (``jobs == 1``) or in N forked worker processes,
each reported as it finishes and returned by task number. Whatever the order they
finish in, a scripted replay line belongs to its run (``Task.response``), and a scripted
judge is graded here in case order, so results do not depend on ``-j``.

Ctrl-C: the first one stops starting new runs (those in flight finish, so no flow is
left half-written) and the partial results are returned; a second one interrupts at once.
"""

from __future__ import annotations

import gc
import multiprocessing
import multiprocessing.util
import signal
import sys
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from itertools import islice

from mir.errors import UsageError
from mir.evals.domain import CaseRun
from mir.evals.runner import CaseRunner, Settings, SuitePlan, Task
from mir.evals.tasks import Tasks
from mir.runtime import Stop, start_method

_WORKER: CaseRunner | None = None


def _start_worker(settings: Settings, plans: Sequence[SuitePlan]) -> None:
    global _WORKER
    # Ctrl-C is the parent's to handle: it lets the runs in flight finish, then stops us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER = CaseRunner(settings, plans)
    # Run when the pool shuts the worker down (atexit is not): its trace segment is
    # closed, so it can be compacted like any finished process's.
    multiprocessing.util.Finalize(None, _WORKER.close, exitpriority=10)


def _run_in_worker(tasks: Sequence[Task]) -> list[CaseRun]:
    assert _WORKER is not None
    return [_WORKER.run(task) for task in tasks]


# A batch of fast runs (scripted: ~1 ms each) amortises the pipe between processes; a
# slow model's runs go one by one, so progress and Ctrl-C stay prompt.
BATCH_MS = 40.0
MAX_BATCH = 64


def batch_size(mean_ms: float | None) -> int:
    if mean_ms is None:
        return 1  # nothing measured yet
    return max(1, min(MAX_BATCH, int(BATCH_MS / max(mean_ms, 0.01))))


def execute(
    tasks: Tasks,
    *,
    settings: Settings,
    plans: Sequence[SuitePlan],
    runner: CaseRunner,
    jobs: int,
    done: Callable[[Task, CaseRun], None],
    stop: Stop,
) -> dict[int, CaseRun]:
    """Every task's CaseRun by task number (fewer when stopped). ``runner`` runs them
    in this process when ``jobs`` is 1 (and is closed); N workers open their own."""
    if jobs <= 1 or len(tasks) <= 1:
        return _in_process(tasks.without_judging_later(), runner, done, stop)
    if tasks.judge_later:
        return _judged_later(tasks, settings, plans, runner, jobs, done, stop)
    runner.close()
    return _in_workers(tasks, settings, plans, min(jobs, len(tasks)), done, stop)


def _in_process(
    tasks: Iterable[Task], runner: CaseRunner, done: Callable[[Task, CaseRun], None], stop: Stop
) -> dict[int, CaseRun]:
    runs: dict[int, CaseRun] = {}
    try:
        for task in tasks:
            if stop:
                break
            runs[task.number] = run = runner.run(task)
            done(task, run)
    finally:
        runner.close()
    return runs


def _judged_later(
    tasks: Tasks,
    settings: Settings,
    plans: Sequence[SuitePlan],
    runner: CaseRunner,
    jobs: int,
    done: Callable[[Task, CaseRun], None],
    stop: Stop,
) -> dict[int, CaseRun]:
    """Workers decide and check; this process grades the judge assertions in case order
    as the runs come in (a scripted judge's lines are consumed in that order, whatever
    ``-j`` is). Workers are handed runs in case order, so what arrives is a prefix."""
    runner.close()
    order = iter(range(len(tasks)))  # task numbers are their places in case order
    expected = next(order, None)
    waiting: dict[int, tuple[Task, CaseRun]] = {}
    runs: dict[int, CaseRun] = {}

    def arrive(task: Task, run: CaseRun) -> None:
        nonlocal expected
        waiting[task.number] = (task, run)
        while expected is not None and expected in waiting:
            ready, decided = waiting.pop(expected)
            graded = runner.judge_later(ready, decided) if ready.judge_later else decided
            runs[ready.number] = graded
            done(ready, graded)
            expected = next(order, None)

    try:
        _in_workers(tasks, settings, plans, jobs, arrive, stop)
    finally:
        runner.close()
    return runs


def _in_workers(
    tasks: Tasks,
    settings: Settings,
    plans: Sequence[SuitePlan],
    jobs: int,
    done: Callable[[Task, CaseRun], None],
    stop: Stop,
) -> dict[int, CaseRun]:
    method = start_method()
    context = multiprocessing.get_context(method)
    runs: dict[int, CaseRun] = {}
    # What exists now is shared with the forked workers; frozen, their garbage collector
    # does not walk it (which would copy every page it touches into each worker).
    gc.freeze()
    pool = ProcessPoolExecutor(
        jobs, mp_context=context, initializer=_start_worker, initargs=(settings, plans)
    )
    queue, left = iter(tasks), len(tasks)  # made as they are taken, never all at once
    # A few batches in flight per worker, not every run: Ctrl-C then has little to wait
    # for, and waiting on the futures stays cheap (wait() visits every one it is given).
    window = jobs * 2
    spent_ms, measured = 0.0, 0
    try:
        pending: dict[Future[list[CaseRun]], list[Task]] = {}
        while True:
            while not stop and left > 0 and len(pending) < window:
                size = batch_size(spent_ms / measured if measured else None)
                batch = list(islice(queue, size))
                left -= len(batch)
                pending[pool.submit(_run_in_worker, batch)] = batch
            if not pending:
                break
            finished, _ = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
            for future in finished:
                batch = pending.pop(future)
                for task, run in zip(batch, future.result(), strict=True):
                    runs[task.number] = run
                    spent_ms += run.latency_ms
                    measured += 1
                    done(task, run)
    except BrokenProcessPool as exc:
        _stop_now(pool)
        if method != "fork" and not runs:
            why = "llama.cpp's threads do not survive a fork" if "llama_cpp" in sys.modules else ""
            raise UsageError(
                f"the eval worker processes could not start ({method}"
                + (f": {why})" if why else ")"),
                hint='call run_eval under `if __name__ == "__main__":`, or use jobs=1',
            ) from exc
        raise
    except BaseException:
        _stop_now(pool)
        raise
    pool.shutdown(wait=True)
    gc.unfreeze()
    return runs


def _stop_now(pool: ProcessPoolExecutor) -> None:
    for process in list(getattr(pool, "_processes", {}).values()):
        process.terminate()  # a second Ctrl-C, or a config error: stop now
    pool.shutdown(wait=False, cancel_futures=True)
    gc.unfreeze()
