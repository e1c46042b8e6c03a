"""The alert sent when a flow starts waiting for review (``[tool.mir.alerts]`` with
``review`` in ``on``): wired by the composition root (``load_agent``) into
``RuntimeDeps.on_pending``, called once the pending route event is on disk, and sent
in the background (``Agent.close`` waits for it).

Best effort: a misconfigured section or a failing channel never fails the decision
(the section's error is what ``mir drift`` and ``mir review`` report)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from mir.alerts import (
    AlertSettings,
    ReviewSettings,
    SentLog,
    key_fields,
    review_payload,
    send_review_alerts,
    wanted,
)
from mir.errors import MirUserError
from mir.project import Project
from mir.runtime.ports import AgentParts
from mir.runtime.records import DecisionRecord
from mir.storage import ReviewAlertLog

Announce = Callable[[DecisionRecord], None]


class Announcer:
    """Sends each pending flow's alert on a thread of its own, so a slow channel never
    delays the decision; ``close()`` (``Agent.close``) waits for them, each at most its
    channels' deadlines. The threads are not daemons: a process that never closes its
    agent still sends what it started before it exits."""

    def __init__(
        self,
        settings: AlertSettings,
        review: ReviewSettings,
        log: ReviewAlertLog[Any],  # mir.alerts.SentLog here; a second backend's log
        parts: AgentParts,
        redact: Callable[[Any], Any] | None,
    ) -> None:
        self.settings, self.review, self.log = settings, review, log
        self.spec = parts.contract.decision
        self.redact = redact
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def __call__(self, record: DecisionRecord) -> None:
        payload = review_payload(
            "review",
            flow_id=record.flow_id,
            agent=record.agent,
            action=record.action,
            fields=key_fields(
                record.decision or {}, self.spec.action_field, self.spec.confidence_field
            ),
            reasons=record.reasons,
            inbox_url=self.review.inbox_url,
        )
        payload = self.redact(payload) if self.redact is not None else payload
        thread = threading.Thread(target=self._send, args=(payload,), name="mir-review-alert")
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
        thread.start()

    def _send(self, payload: dict[str, Any]) -> None:
        try:
            send_review_alerts(self.settings, self.log, [(0, payload)])
        except Exception:  # an alert never fails anything: best effort
            return

    def close(self) -> None:
        with self._lock:
            threads, self._threads = self._threads, []
        for thread in threads:
            thread.join(2 * self.settings.timeout_s + 1)  # a command, then a webhook


def pending_announcer(
    project: Project, parts: AgentParts, redact: Callable[[Any], Any] | None = None
) -> Announcer | None:
    """The hook for this agent's flows, or None when no channel wants review alerts.
    ``redact`` is the trace store's: a payload leaves the machine only as the traces
    would keep it (a decision that echoes a secret does not send it)."""
    try:
        settings = project.section("alerts", AlertSettings)
        review = project.section("review", ReviewSettings)
    except MirUserError:
        return None
    if not wanted(settings, "review"):
        return None
    return Announcer(settings, review, SentLog(project.state_dir), parts, redact)


def announce_safely(announce: Announce | None, record: DecisionRecord) -> None:
    if announce is None or record.status != "pending_review":
        return
    try:
        announce(record)
    except Exception:  # an alert never fails the decision it is about
        return
