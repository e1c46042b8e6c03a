"""Shadow decisions: a registry model's ``shadow`` version re-decides every production
decision of the agent, on the production flow's frozen snapshot, off its critical path.

Why a worker thread: the production caller must not wait for a second model call. Each
``Agent`` owns one daemon thread and a bounded queue; ``submit`` never blocks (a full
queue drops the shadow decision and counts it), and the worker starts a shadow decision
only while no production decision of the agent is in flight, so the two compete for the
CPU as little as possible.

A shadow flow runs the whole pipeline in dry run (as ``mir eval`` does: no ledger, no
executor, never executed), with every registry route resolved to its shadow version
(``infer`` event ``registry.arm == "shadow"``); its snapshot carries ``source: shadow``
and ``shadow_of: <production flow id>``. It re-decides on the input and context the
production snapshot froze (passed as the caller's context: the context loader is not
called again). Anything a shadow flow raises is counted, never seen by production.

A shadow flow always ends in the trace: when ``close()`` gives up on the one running
(past its timeout, e.g. a slow model at the end of a ``mir run agent``), it writes that
flow's final event itself (``aborted``, reason ``shed``) and nothing the abandoned flow
writes afterwards is stored, so no shadow snapshot is left without its final event.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from mir.inference import background, foreground
from mir.models import RouteResolver
from mir.runtime.execution import FlowState, NoLedger
from mir.runtime.flow import DecisionFlow
from mir.runtime.ports import AgentParts, RuntimeDeps
from mir.runtime.records import DecisionRecord
from mir.runtime.shadow_sink import SHADOW, ShadowRoutes, ShadowSink

QUEUE_SIZE = 256
CLOSE_TIMEOUT_S = 30.0
log = logging.getLogger("mir.runtime.shadow")


class _NeverSuspended:
    """A shadow decides even while operations keep the agent suspended: nothing of it
    runs, and the comparison is what decides whether the new version may take over."""

    def is_suspended(self, agent: str) -> bool:
        return False


@dataclass(frozen=True)
class _Job:
    flow_id: str
    role: str
    input: dict[str, Any]
    context: dict[str, Any]


@dataclass
class ShadowStats:
    submitted: int = 0
    decided: int = 0
    failed: int = 0  # a shadow flow raised (production never sees it)
    dropped: int = 0  # queue full, or still queued/running when close() gave up


class ShadowWorker:
    def __init__(
        self,
        parts: AgentParts,
        deps: RuntimeDeps,
        resolver: RouteResolver,
        *,
        queue_size: int = QUEUE_SIZE,
    ):
        self.parts = parts
        self.resolver = resolver
        self._sink = ShadowSink(deps.traces)
        self.base = replace(
            deps,
            traces=self._sink,
            ledger=NoLedger(),
            states=_NeverSuspended(),
            source=SHADOW,
            dry_run=True,
            models=ShadowRoutes(resolver),
        )
        self.stats = ShadowStats()
        self._queue: queue.Queue[_Job] = queue.Queue(maxsize=queue_size)
        self._idle = threading.Condition()
        self._in_flight = 0
        self._closing = threading.Event()
        self._abandon = threading.Event()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()

    @classmethod
    def for_agent(cls, parts: AgentParts, deps: RuntimeDeps) -> ShadowWorker | None:
        """A worker for an agent whose decisions are production ones and that has a
        registry (whether a route has a shadow version is asked per decision)."""
        resolver = deps.models
        if not isinstance(resolver, RouteResolver) or deps.source != "production" or deps.dry_run:
            return None
        return cls(parts, deps, resolver)

    # ------------------------------------------------------------ production side
    @contextmanager
    def production(self) -> Iterator[None]:
        """Marks a production decision in flight: the worker starts no shadow decision
        meanwhile, and one already generating pauses between tokens (``foreground``)."""
        with self._idle:
            self._in_flight += 1
        try:
            with foreground():
                yield
        finally:
            with self._idle:
                self._in_flight -= 1
                self._idle.notify_all()

    def decide(
        self,
        flow: DecisionFlow,
        input: Mapping[str, Any],
        context: Mapping[str, Any] | None,
        role: str,
        *,
        priority: int | None = None,
        deadline_ms: int | None = None,
        requested_by: str | None = None,
        flow_id: str | None = None,
    ) -> DecisionRecord:
        with self.production():
            record, opened = flow.decide_opened(
                input,
                context,
                role=role,
                priority=priority,
                deadline_ms=deadline_ms,
                requested_by=requested_by,
                flow_id=flow_id,
            )
        if opened is not None:
            self.submit(opened)
        return record

    def submit(self, opened: FlowState) -> bool:
        """Queue a shadow decision of this production flow; never blocks. False when
        there is no shadow version now, or the queue is full (counted as dropped)."""
        if self._closing.is_set() or not self._has_shadow():
            return False
        job = _Job(opened.flow_id, opened.role, opened.input, opened.context)
        self.stats.submitted += 1
        try:
            self._queue.put_nowait(job)
        except queue.Full:
            self.stats.dropped += 1
            return False
        self._start()
        return True

    def _has_shadow(self) -> bool:
        try:
            return any(self.resolver.shadow(r) is not None for r in self.parts.contract.routes)
        except Exception:  # a registry swapped mid-read: no shadow this time
            return False

    # ------------------------------------------------------------ worker side
    def _start(self) -> None:
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name=f"mir-shadow-{self.parts.name}", daemon=True
                )
                self._thread.start()

    def _run(self) -> None:
        while not self._abandon.is_set():
            try:
                job = self._queue.get(timeout=0.05)
            except queue.Empty:
                if self._closing.is_set():
                    return
                continue
            try:
                if self._abandon.is_set():
                    self.stats.dropped += 1
                    continue
                self._wait_idle()
                self._decide(job)
            finally:
                self._queue.task_done()

    def _wait_idle(self) -> None:
        """Start only while no production decision runs (bounded: a busy agent still
        gets its shadows, at most 1 s late each)."""
        with self._idle:
            self._idle.wait_for(lambda: self._in_flight == 0 or self._closing.is_set(), 1.0)

    def _decide(self, job: _Job) -> None:
        try:
            deps = replace(self.base, shadow_of=job.flow_id)
            with background():  # its llama calls pause while a production one generates
                DecisionFlow(self.parts, deps).decide(job.input, job.context, role=job.role)
        except Exception as exc:
            self.stats.failed += 1
            log.warning("shadow decision of flow %s failed: %s", job.flow_id, exc)
        else:
            self.stats.decided += 1

    def wait(self, timeout_s: float = CLOSE_TIMEOUT_S) -> bool:
        """Block until every queued shadow decision is done (tests, benchmarks); False
        when some are still pending after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while self._queue.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.01)
        return not self._queue.unfinished_tasks

    def close(self, timeout_s: float = CLOSE_TIMEOUT_S) -> ShadowStats:
        """Let the queued shadow decisions finish, at most ``timeout_s``; what is left
        then is dropped (and said). A second call only returns the counts."""
        if self._closing.is_set():
            return self.stats
        self._closing.set()
        with self._idle:
            self._idle.notify_all()
        thread = self._thread
        if thread is not None:
            thread.join(timeout_s)
            if thread.is_alive():
                self._abandon.set()
                self._sink.cut(self.parts.name, self.base.clock())
                left = self._queue.qsize() + 1  # the queued ones and the one running
                self.stats.dropped += left
        if self.stats.dropped:
            log.warning(
                "%s: %d shadow decision(s) dropped (queue full or not finished in %.0f s)",
                self.parts.name,
                self.stats.dropped,
                timeout_s,
            )
        return self.stats
