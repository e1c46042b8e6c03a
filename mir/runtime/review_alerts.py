"""The alert sent when a flow starts waiting for review (``[tool.mir.alerts]`` with
``review`` in ``on``): wired by the composition root (``load_agent``) into
``RuntimeDeps.on_pending``, called once the pending route event is on disk.

Best effort: a misconfigured section or a failing channel never fails the decision
(the section's error is what ``mir drift`` and ``mir review`` report)."""

from __future__ import annotations

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

Announce = Callable[[DecisionRecord], None]


def pending_announcer(
    project: Project, parts: AgentParts, redact: Callable[[Any], Any] | None = None
) -> Announce | None:
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
    log = SentLog(project.state_dir)
    spec = parts.contract.decision

    def announce(record: DecisionRecord) -> None:
        payload = review_payload(
            "review",
            flow_id=record.flow_id,
            agent=record.agent,
            action=record.action,
            fields=key_fields(record.decision or {}, spec.action_field, spec.confidence_field),
            reasons=record.reasons,
            inbox_url=review.inbox_url,
        )
        send_review_alerts(settings, log, [(0, redact(payload) if redact else payload)])

    return announce


def announce_safely(announce: Announce | None, record: DecisionRecord) -> None:
    if announce is None or record.status != "pending_review":
        return
    try:
        announce(record)
    except Exception:  # an alert never fails the decision it is about
        return
