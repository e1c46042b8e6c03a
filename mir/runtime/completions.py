"""Completion callbacks: ``Agent.when_decided(flow_id, callback)``.

One dispatcher thread per process and fleet store holds every callback; the result
listener's ``mir_decided`` notifications wake it (and a 1 s tick, for one missed while
the connection was down). It reads the outcomes of every awaited flow in one query and
calls each callback once, on its thread, with the ``DecisionRecord``. A callback that
raises is logged; past its ``timeout``, ``on_error(ResultTimeout)`` is called instead.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from mir.errors import MirUserError
from mir.runtime.records import DecisionRecord

log = logging.getLogger("mir.completions")
OnDecided = Callable[[DecisionRecord], Any]
OnError = Callable[[BaseException], Any]


class ResultTimeout(MirUserError):
    """``Agent.result(flow_id, timeout=...)``: no outcome yet (the flow stays queued or
    in a worker's hands; ask again later)."""

    exit_code = 1


class _Listener(Protocol):
    def watch(self, flow_id: str, wake: threading.Event) -> object: ...
    def unwatch(self, flow_id: str, wake: threading.Event) -> None: ...


class Decided(Protocol):
    """What the dispatcher needs of its queue (``Submissions`` is one)."""

    def outcomes(self, flow_ids: list[str]) -> dict[str, dict[str, Any]]: ...
    def listener(self) -> _Listener: ...


@dataclass
class _Waiting:
    callback: OnDecided
    on_error: OnError | None
    until: float | None


class Completions:
    """The callbacks of one ``Submissions`` (see the module docstring)."""

    def __init__(self, queue: Decided):
        self.queue = queue
        self._waiting: dict[str, list[_Waiting]] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def add(
        self,
        flow_id: str,
        callback: OnDecided,
        *,
        timeout: float | None = None,
        on_error: OnError | None = None,
    ) -> None:
        until = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            self._waiting.setdefault(flow_id, []).append(_Waiting(callback, on_error, until))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="mir-completions", daemon=True
                )
                self._thread.start()
        self.queue.listener().watch(flow_id, self._wake)
        self._wake.set()  # decided before it was watched: found on the first read

    def pending(self) -> int:
        with self._lock:
            return sum(len(w) for w in self._waiting.values())

    def _run(self) -> None:
        while not self._stopped.is_set():
            self._wake.wait(1.0)
            self._wake.clear()
            with self._lock:
                flows = list(self._waiting)
            if not flows:
                continue
            try:
                outcomes = self.queue.outcomes(flows)
            except Exception as exc:  # the server away: try again in a second
                log.debug("completions: outcomes unreadable (%s)", exc)
                outcomes = {}
            now = time.monotonic()
            for flow_id in flows:
                self._settle(flow_id, outcomes.get(flow_id), now)

    def _settle(self, flow_id: str, found: dict[str, Any] | None, now: float) -> None:
        with self._lock:
            waiting = self._waiting.get(flow_id, [])
            if found is not None:
                done, kept = waiting, []
            else:
                done = [w for w in waiting if w.until is not None and now >= w.until]
                kept = [w for w in waiting if w not in done]
            if kept:
                self._waiting[flow_id] = kept
            else:
                self._waiting.pop(flow_id, None)
        if not kept:
            self.queue.listener().unwatch(flow_id, self._wake)
        for waiter in done:
            try:
                if found is not None:
                    waiter.callback(DecisionRecord.model_validate(found))
                elif waiter.on_error is not None:
                    waiter.on_error(
                        ResultTimeout(f"flow {flow_id} has no outcome within its timeout")
                    )
            except Exception:
                log.exception("a completion callback for flow %s raised", flow_id)

    def stop(self) -> None:
        self._stopped.set()
        self._wake.set()
