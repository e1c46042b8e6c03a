"""Deciding rows: in this process (``jobs == 1``) or in N worker processes, each with the
agent loaded once, reported to the caller as each row finishes.

With ``--provider scripted`` reply ``i`` of the responses file answers row ``i`` (in the
inputs' order), whichever process decides it and whatever was skipped, so a batch's
results do not depend on ``-j`` or on a re-run.

Workers hold the journal's workers lock (shared) for as long as they live; a row is
handed to one only after its ``start`` is in the journal. Ctrl-C: the first one stops
handing out rows (those in flight finish), a second one interrupts at once.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.util
import os
import signal
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mir.batch.outcomes import RowOutcome, from_record
from mir.batch.rows import BatchRow
from mir.runtime import Stop, start_method


@dataclass(frozen=True)
class Plan:
    """What a worker needs to decide rows the way this run does (picklable)."""

    ref: str
    project: str
    provider: str | None = None
    responses: str | None = None
    context: Mapping[str, Any] | None = None
    role: str = "agent"
    requested_by: str | None = None
    workers_lock: str | None = None


class RowDecider:
    def __init__(self, plan: Plan, agent: Any = None):
        """``agent``: one already loaded (this process's, left open); else one is loaded
        and closed with this decider."""
        from mir.inference import read_responses
        from mir.runtime import load_agent

        self.plan, self._owns = plan, agent is None
        self.agent = agent or load_agent(
            plan.ref,
            project=plan.project,
            provider=plan.provider,
            responses=plan.responses,
            watch_models=False,  # a batch decides on the versions it started with
        )
        scripted = plan.provider == "scripted" and plan.responses is not None
        self.replies = read_responses(Path(plan.responses)) if scripted else None  # type: ignore[arg-type]

    def decide(self, row: BatchRow, flow_id: str) -> RowOutcome:
        agent = self.agent
        if self.replies is not None:
            agent = agent.replaying([self.replies[row.position]])
        record = agent.decide(
            row.input,
            self.plan.context,
            role=self.plan.role,
            requested_by=self.plan.requested_by,
            flow_id=flow_id,
            known_new=True,  # from this batch's random id; a re-run looked it up first
        )
        return from_record(row.key, row.line, record.model_dump())

    def close(self) -> None:
        if self._owns:
            self.agent.close()


_WORKER: RowDecider | None = None


def _start_worker(plan: Plan) -> None:
    global _WORKER
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    if plan.workers_lock is not None:  # held until this process exits, however it does
        from mir.storage import lock_descriptor

        fd = os.open(plan.workers_lock, os.O_RDWR | os.O_CREAT, 0o600)
        lock_descriptor(fd, exclusive=False)
    _WORKER = RowDecider(plan)
    multiprocessing.util.Finalize(None, _WORKER.close, exitpriority=10)


def _decide_in_worker(row: BatchRow, flow_id: str) -> RowOutcome:
    assert _WORKER is not None
    return _WORKER.decide(row, flow_id)


Handed = Callable[[BatchRow], str]  # writes the row's start, returns its flow id
Done = Callable[[RowOutcome], None]


def decide_rows(
    rows: Iterable[BatchRow],
    plan: Plan,
    *,
    jobs: int,
    hand: Handed,
    done: Done,
    stop: Stop,
    agent: Any = None,
) -> None:
    """Decide ``rows``; ``hand`` is called for each before it is decided, ``done`` with
    each outcome (in this process, in the order they finish). ``jobs == 1`` decides
    with ``agent`` when given (this process's); N workers load their own."""
    if jobs <= 1:
        decider = RowDecider(plan, agent)
        try:
            for row in rows:
                if stop:
                    break
                done(decider.decide(row, hand(row)))
        finally:
            decider.close()
        return
    context = multiprocessing.get_context(start_method())
    pool = ProcessPoolExecutor(
        jobs, mp_context=context, initializer=_start_worker, initargs=(plan,)
    )
    queue = iter(rows)
    pending: dict[Future[RowOutcome], BatchRow] = {}
    try:
        while True:
            while not stop and len(pending) < jobs * 2:
                row = next(queue, None)
                if row is None:
                    break
                pending[pool.submit(_decide_in_worker, row, hand(row))] = row
            if not pending:
                break
            finished, _ = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
            for future in finished:
                pending.pop(future)
                done(future.result())
    except BaseException:
        for process in list(getattr(pool, "_processes", {}).values()):
            process.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
