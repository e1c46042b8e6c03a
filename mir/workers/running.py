"""``mir worker``: N processes, each one procrastinate worker deciding one flow at a time.

Each process loads its agents once (on its first flow of each) and runs procrastinate's
worker in its own event loop, next to a sweep that retries the jobs of workers whose
heartbeat stopped (``[tool.mir.workers] stalled_s``): procrastinate never does that by
itself (``bench/queues.md``). SIGINT / SIGTERM stop taking flows; the flow in hand
finishes first (a second signal stops at once, like a kill: a retry settles it).

Signals are mir's, never procrastinate's or asyncio's: they stay blocked from before the
processes fork until the worker's own loop handler is in place, so a Ctrl-C while a
process starts waits for it (a KeyboardInterrupt raised at a random point of the start
left locks held and tasks uncancellable: such a worker never exited).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from mir.errors import UsageError
from mir.project import find_project
from mir.runtime import TASK, load_agent, queue_name, start_method, submissions_of
from mir.workers.deciding import JobDecider
from mir.workers.settings import WorkerSettings

STOPS = {signal.SIGINT, signal.SIGTERM}


@dataclass(frozen=True)
class WorkerPlan:
    """What each worker process needs (picklable)."""

    project: str
    queues: tuple[str, ...] | None  # None: every agent's
    settings: WorkerSettings
    provider: str | None = None
    responses: str | None = None
    metrics: bool = False  # each process counts its decisions (``mir.metrics``)


def plan_workers(
    agents: Sequence[str],
    *,
    project: str | Path | None = None,
    provider: str | None = None,
    responses: str | None = None,
) -> tuple[WorkerPlan, list[str], str]:
    """Check everything a worker needs before one starts: the fleet store, each named
    agent (it must load here), the settings. The plan, the agents' names and where the
    queue is (for the first line)."""
    proj = find_project(Path(project) if project is not None else None)
    queue = submissions_of(proj)
    if queue is None:
        raise UsageError(
            "mir worker needs the fleet store: submissions wait in Postgres",
            hint="set [tool.mir.store] url (or $MIR_STORE_URL)",
        )
    settings = proj.section("workers", WorkerSettings)
    names = []
    for ref in agents:
        agent = load_agent(
            ref, project=proj.root, provider=provider, responses=responses, watch_models=False
        )
        names.append(agent.name)
        agent.close()
    queue.ensure_schema()  # the store is reachable and the queue's tables exist
    store = queue.store
    queue.close()
    store.close()  # no pool thread is alive when the workers fork
    queues = tuple(queue_name(n) for n in names) if names else None
    plan = WorkerPlan(str(proj.root), queues, settings, provider, responses)
    return plan, names, queue.where


def serve_workers(
    agents: Sequence[str],
    jobs: int,
    project: str | Path | None,
    provider: str | None,
    responses: str | None,
    say: Callable[[str], None],
    metrics: str | None = None,
) -> int:
    """``mir worker``: check, say what is watched (the first line), run; the exit code.
    ``metrics`` (``PORT`` or ``HOST:PORT``): every process counts, this one serves
    ``/metrics`` (bound before any process starts, serving once they have forked)."""
    with contextlib.ExitStack() as stack:
        server = None
        if metrics is not None:
            from mir.metrics import across_processes, bind_metrics, parse_address

            parse_address(metrics)  # a bad value: exit 2 before the store is reached
        plan, names, where = plan_workers(
            agents, project=project, provider=provider, responses=responses
        )
        if metrics is not None:
            if jobs > 1:  # before prometheus_client is imported: the children count there
                stack.enter_context(across_processes())
            server = bind_metrics(metrics, plan.project)
            stack.callback(server.close)
            plan = replace(plan, metrics=True)
        what = ", ".join(names) or "every agent"
        shown = f"; metrics at {server.url}" if server is not None else ""
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)  # from "watching" on: a stop
        try:  # waits for the workers' handlers (a test presses Ctrl-C once it reads the line)
            say(f"mir worker: watching {where} for {what} ({jobs} process(es){shown}; "
                "Ctrl-C stops)")  # fmt: skip
            return run_workers(plan, jobs, started=server.start if server else None)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def run_workers(
    plan: WorkerPlan,
    jobs: int = 1,
    report: Callable[[str], None] = print,
    started: Callable[[], None] | None = None,
) -> int:
    """Run ``jobs`` worker processes until a signal stops them; the exit code.
    ``started`` is called once they run (after the fork: a thread it starts is never
    alive while a process forks)."""
    if jobs < 1:
        raise UsageError(f"-j {jobs}: at least 1 worker")
    if jobs == 1:
        if started is not None:
            started()
        return work(plan, report)
    ctx = multiprocessing.get_context(start_method())
    children = [ctx.Process(target=_child, args=(plan,), daemon=False) for _ in range(jobs)]

    def forward(signum: int, frame: object) -> None:
        for child in children:
            if child.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child.pid, signum)

    mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)  # the children start blocked
    previous = {s: signal.getsignal(s) for s in STOPS}
    try:
        for child in children:
            child.start()
        if started is not None:
            started()
        for sig in STOPS:
            signal.signal(sig, forward)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)  # one that came meanwhile: forwarded
        for child in children:
            child.join()
    finally:
        signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    codes = [child.exitcode or 0 for child in children]
    return max(128 - code if code < 0 else code for code in codes)  # -9: killed: 137


def _child(plan: WorkerPlan) -> None:
    """A worker process of ``-j N``: in a process group of its own, so a signal to the
    parent's group (Ctrl-C) reaches it once, forwarded by the parent (a second one
    would stop it at once). One that reached it before it left the group is pending
    (blocked since the fork): it stops before it starts, no flow in hand."""
    signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)  # so already when forked, not spawned
    os.setpgrp()
    if STOPS & signal.sigpending():
        raise SystemExit(0)
    raise SystemExit(work(plan))


def work(plan: WorkerPlan, report: Callable[[str], None] | None = None) -> int:
    """One worker process: procrastinate's worker and the stalled-job sweep. SIGINT and
    SIGTERM are blocked while it starts; one that comes meanwhile stops it as soon as its
    loop handler is in place (no flow was in hand)."""
    say = report or _stdout
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
    decider = queue = None
    if plan.metrics:
        from mir.metrics import start_counting

        start_counting()
    try:
        queue = submissions_of(find_project(Path(plan.project)))
        assert queue is not None  # checked by plan_workers
        decider = JobDecider(
            Path(plan.project), queue, provider=plan.provider, responses=plan.responses, report=say
        )
        app = queue.new_app()
        app.task(name=TASK, pass_context=True)(decider)
        asyncio.run(_serve(app, plan))
    finally:
        if decider is not None:
            decider.close()
        if queue is not None:
            queue.close()
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    return 0


def _stdout(line: str) -> None:
    print(line, flush=True)


async def _serve(app: object, plan: WorkerPlan) -> None:
    settings = plan.settings
    loop = asyncio.get_running_loop()
    async with app.open_async():  # type: ignore[attr-defined]
        worker = asyncio.create_task(
            app.run_worker_async(  # type: ignore[attr-defined]
                queues=list(plan.queues) if plan.queues else None,
                name=f"mir-{os.getpid()}",
                concurrency=1,
                fetch_job_polling_interval=settings.poll_s,
                update_heartbeat_interval=settings.heartbeat_s,
                stalled_worker_timeout=settings.stalled_s,
                delete_jobs="always",  # the input leaves the queue once decided
                install_signal_handlers=False,  # mir's own, below
            )
        )
        sweeping = asyncio.create_task(_sweep(app, settings))
        stops = 0

        def stop() -> None:
            nonlocal stops
            stops += 1
            if stops == 1:
                worker.cancel()  # procrastinate stops fetching; the flow in hand finishes
                return
            print("mir worker: stopped at once; a retry decides the flow in hand", file=sys.stderr)
            sys.stderr.flush()
            sys.stdout.flush()
            os._exit(130)  # like a kill: the ledger's fencing keeps its action from running twice

        for sig in STOPS:
            loop.add_signal_handler(sig, stop)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)  # one pending: stop() now
        try:
            with contextlib.suppress(asyncio.CancelledError):
                await worker
        finally:
            signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
            for sig in STOPS:
                loop.remove_signal_handler(sig)
            sweeping.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sweeping


async def _sweep(app: object, settings: WorkerSettings) -> None:
    """Retry, every heartbeat, the flows held by workers that stopped heart-beating."""
    manager = app.job_manager  # type: ignore[attr-defined]
    while True:
        await asyncio.sleep(settings.heartbeat_s)
        try:
            stalled = await manager.get_stalled_jobs(
                task_name=TASK, seconds_since_heartbeat=settings.stalled_s
            )
            for job in stalled:
                with contextlib.suppress(Exception):  # another sweep retried it first
                    await manager.retry_job(job)
        except Exception as exc:  # Postgres away: the worker says so; sweep again later
            print(f"mir worker: stalled-flow sweep failed: {exc}", file=sys.stderr, flush=True)
