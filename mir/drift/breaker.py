"""The in-process breaker: an app's ``Agent`` checks its own drift every N decisions.

``Breaker(agent, every=500).decide(...)`` decides exactly like ``agent.decide``; every
``every`` decisions it runs ``check`` for that agent in a background thread, so no
decision ever waits for it. Past a suspend level the agent is suspended (reason in
``agents.json`` and a trace event, alerts sent) and, since the runtime reads the state
before every decision, the next one is made by the contract's rules.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mir.drift.domain import DriftReport
from mir.drift.suspensions import check
from mir.drift.windows import WindowOptions


class PeriodicCheck:
    """Decides exactly like the agent it wraps; every ``every`` decisions it runs
    ``_run`` in a background thread, after the decision, so no decision waits for it or
    fails because of it (the drift ``Breaker``, the releases ``CanaryWatch``)."""

    thread_name = "mir-check"

    def __init__(self, agent: Any, every: int) -> None:
        if every < 1:
            raise ValueError("every must be at least 1")
        self.agent = agent
        self.every = every
        self.decisions = 0
        self.last_error: Exception | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def decide(
        self, input: Mapping[str, Any], context: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> Any:
        record = self.agent.decide(input, context, **kwargs)
        with self._lock:
            self.decisions += 1
            due = self.decisions % self.every == 0
            busy = self._thread is not None and self._thread.is_alive()
            if due and not busy:  # a check still running covers this one too
                self._thread = threading.Thread(
                    target=self._guarded, name=self.thread_name, daemon=True
                )
                self._thread.start()
        return record

    def _guarded(self) -> None:
        try:
            self._run()
        except Exception as exc:  # a monitor never breaks the app it watches
            self.last_error = exc

    def _run(self) -> None:
        raise NotImplementedError

    def _join(self, timeout: float | None) -> None:
        thread = self._thread
        if thread is not None:
            thread.join(timeout)


class Breaker(PeriodicCheck):
    thread_name = "mir-drift-breaker"

    def __init__(
        self,
        agent: Any,
        *,
        every: int = 500,
        project: str | Path | None = None,
        options: WindowOptions | None = None,
    ) -> None:
        super().__init__(agent, every)
        self.project = project
        self.options = options or WindowOptions()
        self.last_report: DriftReport | None = None

    def _run(self) -> None:
        self.last_report = check(self.project, [self.agent.name], self.options)

    def wait(self, timeout: float | None = None) -> DriftReport | None:
        """Wait for a running check (tests, shutdown); returns the latest report."""
        self._join(timeout)
        return self.last_report
