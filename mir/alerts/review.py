"""Review alerts: a flow starts waiting for a human (``review``), or still waits after
the contract's ``review.remind_after`` (``remind``).

The payload names the flow, its agent and action, the decision's key fields (the
action's parameters and the confidence), why it waits and a link to the inbox
(``[tool.mir.review] inbox_url`` + ``/flows/<id>``). Each alert is sent at most once per
flow and period, across processes: a row in ``<state_dir>/review-alerts.db`` (a SQLite
primary key) is claimed before it is sent, so two queue reads at once never remind
twice. A failing channel is a note, never an error: a decision never fails for an alert.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mir.alerts.channels import AlertSettings, send
from mir.storage import Migration, ReviewAlertLog, migrate

Kind = Literal["review", "remind"]
SENT_LOG = "review-alerts.db"


class ReviewSettings(BaseModel):
    """``[tool.mir.review]``: where reviewers review."""

    model_config = ConfigDict(extra="allow")

    inbox_url: str | None = Field(
        None,
        description="The review inbox's address (`mir review serve`), e.g. "
        "'https://review.example.com': alerts link to <inbox_url>/flows/<flow id>.",
    )


def key_fields(
    decision: Mapping[str, Any], action_field: str = "action", confidence_field: str = "confidence"
) -> dict[str, Any]:
    """What would be executed (the action's parameters: every decision field but the
    action and the confidence), then the confidence."""
    fields = {k: v for k, v in decision.items() if k not in (action_field, confidence_field)}
    if confidence_field in decision:
        fields[confidence_field] = decision[confidence_field]
    return fields


def flow_link(inbox_url: str | None, flow_id: str) -> str | None:
    return f"{inbox_url.rstrip('/')}/flows/{flow_id}" if inbox_url else None


def review_payload(
    kind: Kind,
    *,
    flow_id: str,
    agent: str,
    action: str | None,
    fields: Mapping[str, Any],
    reasons: Sequence[str],
    inbox_url: str | None,
    age_s: float = 0.0,
    waits_for: str = "review",
) -> dict[str, Any]:
    what = "waits for review" if kind == "review" else f"still waits for review ({age_s:.0f} s)"
    return {
        "kind": kind,
        "message": f"{agent}: flow {flow_id} ({action or '?'}) {what}",
        "flow_id": flow_id,
        "agent": agent,
        "action": action,
        "fields": dict(fields),
        "reasons": list(reasons),
        "waits_for": waits_for,
        "age_s": round(age_s, 3),
        "link": flow_link(inbox_url, flow_id),
    }


def wanted(settings: AlertSettings, kind: Kind) -> bool:
    return bool(settings.command or settings.webhook) and kind in settings.on


# A log written before the migration runner holds the table already: a no-op there.
MIGRATIONS = (
    Migration(
        "0001_create_sent",
        "CREATE TABLE IF NOT EXISTS sent (flow_id TEXT NOT NULL, kind TEXT NOT NULL, "
        "period INTEGER NOT NULL, at_us INTEGER NOT NULL, "
        "PRIMARY KEY (flow_id, kind, period)) WITHOUT ROWID",
    ),
)


class SentLog:
    """Which review alerts went out: (flow, kind, period) claimed once, by one process."""

    def __init__(self, state_dir: Path, *, busy_timeout: float = 10.0):
        self.path = Path(state_dir) / SENT_LOG
        self._timeout = busy_timeout

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(self.path, timeout=self._timeout, isolation_level=None)
        try:
            migrate(con, "alerts", MIGRATIONS, where=str(self.path))
        except BaseException:
            con.close()
            raise
        return con

    def claim(self, items: Sequence[tuple[str, Kind, int]]) -> list[tuple[str, Kind, int]]:
        """The items this call claimed (every other one was sent by someone already)."""
        if not items:
            return []
        con = self._connect()
        try:
            won = []
            now = time.time_ns() // 1000
            con.execute("BEGIN IMMEDIATE")
            for flow_id, kind, period in items:
                cursor = con.execute(
                    "INSERT INTO sent VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    (flow_id, kind, period, now),
                )
                if cursor.rowcount == 1:
                    won.append((flow_id, kind, period))
            con.execute("COMMIT")
            return won
        finally:
            con.close()

    def release(self, items: Sequence[tuple[str, Kind, int]]) -> None:
        """Give claims back (alerts no channel delivered): the next read sends them."""
        if not items:
            return
        con = self._connect()
        try:
            con.executemany(
                "DELETE FROM sent WHERE flow_id = ? AND kind = ? AND period = ?", list(items)
            )
        finally:
            con.close()


def send_review_alerts(
    settings: AlertSettings,
    log: ReviewAlertLog[Kind],
    payloads: Sequence[tuple[int, dict[str, Any]]],
) -> list[str]:
    """Send each ``(period, payload)`` not sent before (claimed first); notes of failures."""
    if not payloads:
        return []
    claimed = set(log.claim([(p["flow_id"], p["kind"], period) for period, p in payloads]))
    notes: list[str] = []
    for period, payload in payloads:
        if (payload["flow_id"], payload["kind"], period) in claimed:
            notes += send(settings, payload)
    return notes
