"""One submitted flow decided by a worker: the body of procrastinate's ``mir.decide``.

A job runs again only when the worker holding it stopped heart-beating (``running``'s
sweep retries it, ``attempts`` + 1). Before attempt ``n`` decides under its own flow id
(``attempt_id``), every earlier attempt's flow id is claimed in the execution ledger
(``superseded``): one that had claimed an execution may have run its action, so the
submission ends ``aborted`` (``interrupted``, ``execution_in_doubt``) and is never
decided again; one that had not can never claim one now (the ledger refuses it: the
flow is held), and its outcome is refused too (``Submissions.finish`` checks the
attempt). So an action runs at most once per submission, whatever dies where.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mir.errors import MirUserError
from mir.runtime import DecisionRecord, FlowAlreadyDecided, ReasonCode, Submissions, load_agent
from mir.storage import StoreUnavailable
from mir.workers.settings import attempt_id

SUPERSEDED_BY = "mir worker (a retry of a dead worker's flow)"
FINISH_WAIT_S = 60.0  # how long an outcome waits for Postgres to come back


class JobDecider:
    """One worker process's agents, each loaded once, and the task body."""

    def __init__(
        self,
        project: Path,
        queue: Submissions,
        *,
        provider: str | None = None,
        responses: str | None = None,
        report: Callable[[str], None] | None = None,
    ):
        self.project, self.queue = project, queue
        self.provider, self.responses = provider, responses
        self.report = report or (lambda line: None)
        self.worker = f"pid {os.getpid()} on {socket.gethostname()}"
        self._agents: dict[str, Any] = {}

    def agent(self, name: str) -> Any:
        if name not in self._agents:
            self._agents[name] = load_agent(
                name, project=self.project, provider=self.provider, responses=self.responses
            )
        return self._agents[name]

    def close(self) -> None:
        for agent in self._agents.values():
            with contextlib.suppress(Exception):
                agent.close()
        self._agents.clear()

    def __call__(self, job: Any, request: dict[str, Any]) -> None:
        """procrastinate's entry (``pass_context=True``: the job, for its attempt)."""
        self.decide(request, int(job.job.attempts))

    def decide(self, request: Mapping[str, Any], attempt: int) -> str:
        """Decide one submission; what happened: ``decided``, ``had`` (an outcome was
        there already), or ``superseded`` (a retry took the flow over)."""
        flow_id, name = str(request["flow_id"]), str(request["agent"])
        if self.queue.outcome(flow_id) is not None:
            return "had"
        try:
            agent = self.agent(name)
        except MirUserError as exc:  # the agent does not load on this host
            return self._finish(request, attempt, _aborted(flow_id, name, exc), None)
        for earlier in range(attempt):
            doubt = self._fence(agent, attempt_id(flow_id, earlier), name)
            if doubt is not None:
                return self._finish(request, attempt, doubt, agent)
        try:
            record = agent.decide(
                request["input"],
                request.get("context"),
                role=request.get("role", "agent"),
                priority=request.get("priority"),
                deadline_ms=_deadline_left(request),
                requested_by=request.get("requested_by"),
                flow_id=attempt_id(flow_id, attempt),
                known_new=True,  # a new id: the submission's own, or a retry's
            )
        except FlowAlreadyDecided:  # a retry claimed this attempt's flow id: it decides
            return "superseded"
        except MirUserError as exc:
            record = _aborted(attempt_id(flow_id, attempt), name, exc)
        except Exception as exc:  # a bug outside the flow: said, and the caller told
            traceback.print_exc(file=sys.stderr)
            record = _aborted(attempt_id(flow_id, attempt), name, exc)
        return self._finish(request, attempt, record, agent)

    def _fence(self, agent: Any, earlier: str, name: str) -> DecisionRecord | None:
        """Hold an earlier attempt's flow id, so it can no longer execute; the record to
        end the submission with when it may have executed already."""
        ledger = agent.deps.ledger
        claim = ledger.claim_flow(earlier, "superseded", by=SUPERSEDED_BY)
        if claim.won:
            ledger.settle_flow(earlier, "superseded")
        if claim.won and claim.holder is None:
            return None  # it never claimed an execution: nothing ran
        holder = claim.holder
        where = f"{holder.by}, {holder.process}".rstrip(", ") if holder else "a worker"
        return DecisionRecord(
            flow_id=earlier,
            agent=name,
            status="aborted",
            reasons=[ReasonCode.INTERRUPTED.value, ReasonCode.EXECUTION_IN_DOUBT.value],
            problems=[
                f"the worker deciding {earlier} stopped after claiming its execution "
                f"({where}): its action may have run; see that host's traces"
            ],
        )

    def _finish(
        self, request: Mapping[str, Any], attempt: int, record: DecisionRecord, agent: Any
    ) -> str:
        flow_id, name = str(request["flow_id"]), str(request["agent"])
        data: dict[str, Any] = {**record.model_dump(), "problems": list(record.problems)}
        redact = getattr(getattr(getattr(agent, "deps", None), "traces", None), "redact", None)
        if redact is not None:
            data = redact(data)
        until = time.monotonic() + FINISH_WAIT_S
        while True:
            try:
                won = self.queue.finish(flow_id, name, data, worker=self.worker, attempt=attempt)
                break
            except StoreUnavailable:
                if time.monotonic() > until:
                    raise
                time.sleep(1.0)
        if not won:
            return "superseded"
        self.report(f"{flow_id} {name}: {record.status} ({', '.join(record.reasons) or 'ok'})")
        return "decided"


def _deadline_left(request: Mapping[str, Any]) -> int | None:
    """What is left of the submission's deadline (0 once it passed: the rules decide)."""
    deadline = request.get("deadline_ms")
    if deadline is None:
        return None
    waited_ms = (time.time_ns() // 1000 - int(request["submitted_us"])) / 1000
    return max(0, int(deadline - waited_ms))


def _aborted(flow_id: str, agent: str, exc: BaseException) -> DecisionRecord:
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return DecisionRecord(
        flow_id=flow_id,
        agent=agent,
        status="aborted",
        reasons=[ReasonCode.WORKER_ERROR.value],
        problems=[first],
    )
