"""``mir worker``: N processes, each one procrastinate worker deciding one flow at a time.

Each process loads its agents once (on its first flow of each) and runs procrastinate's
worker in its own event loop, next to a sweep that retries the jobs of workers whose
heartbeat stopped (``[tool.mir.workers] stalled_s``): procrastinate never does that by
itself (``bench/queues.md``). SIGINT / SIGTERM stop taking flows; the flow in hand
finishes first (a second signal stops at once, like a kill: a retry settles it).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from mir.errors import UsageError
from mir.project import find_project
from mir.runtime import TASK, load_agent, queue_name, start_method, submissions_of
from mir.workers.deciding import JobDecider
from mir.workers.settings import WorkerSettings


@dataclass(frozen=True)
class WorkerPlan:
    """What each worker process needs (picklable)."""

    project: str
    queues: tuple[str, ...] | None  # None: every agent's
    settings: WorkerSettings
    provider: str | None = None
    responses: str | None = None


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
) -> int:
    """``mir worker``: check, say what is watched (the first line), run; the exit code."""
    plan, names, where = plan_workers(
        agents, project=project, provider=provider, responses=responses
    )
    what = ", ".join(names) or "every agent"
    say(f"mir worker: watching {where} for {what} ({jobs} process(es); Ctrl-C stops)")
    return run_workers(plan, jobs)


def run_workers(plan: WorkerPlan, jobs: int = 1, report: Callable[[str], None] = print) -> int:
    """Run ``jobs`` worker processes until a signal stops them; the exit code."""
    if jobs < 1:
        raise UsageError(f"-j {jobs}: at least 1 worker")
    if jobs == 1:
        return work(plan, report)
    ctx = multiprocessing.get_context(start_method())
    children = [ctx.Process(target=_child, args=(plan,), daemon=False) for _ in range(jobs)]
    for child in children:
        child.start()

    def forward(signum: int, frame: object) -> None:
        for child in children:
            if child.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child.pid, signum)

    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        for child in children:
            child.join()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return max((child.exitcode or 0) for child in children)


def _child(plan: WorkerPlan) -> None:
    """A worker process of ``-j N``: in a process group of its own, so a signal to the
    parent's group (Ctrl-C) reaches it once, forwarded by the parent (a second one
    would stop it at once)."""
    os.setpgrp()
    raise SystemExit(work(plan))


def work(plan: WorkerPlan, report: Callable[[str], None] | None = None) -> int:
    """One worker process: procrastinate's worker and the stalled-job sweep. A signal
    while it starts (before procrastinate's own handlers) stops it quietly: no flow was
    in hand."""
    say = report or _stdout
    previous = signal.signal(signal.SIGTERM, _interrupt)
    decider = queue = None
    try:
        queue = submissions_of(find_project(Path(plan.project)))
        assert queue is not None  # checked by plan_workers
        decider = JobDecider(
            Path(plan.project), queue, provider=plan.provider, responses=plan.responses, report=say
        )
        app = queue.new_app()
        app.task(name=TASK, pass_context=True)(decider)
        asyncio.run(_serve(app, plan))
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        if decider is not None:
            decider.close()
        if queue is not None:
            queue.close()
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _stdout(line: str) -> None:
    print(line, flush=True)


async def _serve(app: object, plan: WorkerPlan) -> None:
    settings = plan.settings
    async with app.open_async():  # type: ignore[attr-defined]
        sweeping = asyncio.create_task(_sweep(app, settings))
        try:
            await app.run_worker_async(  # type: ignore[attr-defined]
                queues=list(plan.queues) if plan.queues else None,
                name=f"mir-{os.getpid()}",
                concurrency=1,
                fetch_job_polling_interval=settings.poll_s,
                update_heartbeat_interval=settings.heartbeat_s,
                stalled_worker_timeout=settings.stalled_s,
                delete_jobs="always",  # the input leaves the queue once decided
                install_signal_handlers=True,
            )
        finally:
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
