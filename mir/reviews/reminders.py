"""Reminders: a flow still waiting after its contract's ``review.remind_after`` seconds
alerts again (``[tool.mir.alerts]`` with ``remind`` in ``on``), once per period: at
``remind_after``, ``2 x remind_after``, ... of waiting, whichever queue read comes first
(``mir review list`` / ``expire`` / ``remind``, the inbox). A read that comes after
several periods sends one reminder, for the latest.

Which reminders went out is kept in ``mir.alerts.SentLog`` (claimed before sending, so
two reads at once never send one twice); the candidates are found in SQL over the queue
table (`queue.py`), and only the claimed ones are read in full.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from mir.alerts import AlertSettings, ReviewSettings, SentLog, review_payload, send_alert, wanted
from mir.contracts import AgentContract
from mir.project import Project
from mir.reviews.domain import PendingFlow

if TYPE_CHECKING:
    import duckdb

Describe = Callable[[list[str]], list[PendingFlow]]
Contract = Callable[[str], AgentContract | None]


def remind_after(contract: AgentContract | None) -> float | None:
    """The contract's ``review.remind_after`` (seconds), if it sets one."""
    value = getattr(getattr(contract, "review", None), "remind_after", None)
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 0
    return float(value) if ok else None


def due_reminders(
    con: duckdb.DuckDBPyConnection,
    project: Project,
    contract_of: Contract,
    describe: Describe,
    now: datetime,
    not_due: str,
) -> list[tuple[int, dict[str, Any]]]:
    """The reminders this read claimed, as ``(period, payload)``, ready to send."""
    settings = project.section("alerts", AlertSettings)
    if not wanted(settings, "remind"):
        return []
    inbox = project.section("review", ReviewSettings).inbox_url
    now_us = int(now.timestamp() * 1_000_000)
    refs = [row[0] for row in con.execute("SELECT DISTINCT contract FROM review_queue").fetchall()]
    candidates: list[tuple[str, str, int, int]] = []  # flow, contract, created, period
    for ref in refs:
        every = remind_after(contract_of(ref or ""))
        if every is None:
            continue
        rows = con.execute(
            "SELECT flow_id, created_us FROM review_queue WHERE contract IS NOT DISTINCT FROM $c "
            f"AND {not_due} AND created_us IS NOT NULL AND created_us + $every <= $now",
            {"c": ref, "every": int(every * 1_000_000), "now": now_us},
        ).fetchall()
        candidates += [
            (flow_id, ref, created, int((now_us - created) // (every * 1_000_000)))
            for flow_id, created in rows
        ]
    if not candidates:
        return []
    log = SentLog(project.state_dir)
    claimed = {
        (flow_id, period)
        for flow_id, _kind, period in log.claim([(f, "remind", p) for f, _c, _t, p in candidates])
    }
    chosen = [c for c in candidates if (c[0], c[3]) in claimed]
    periods = {flow_id: period for flow_id, _ref, _created, period in chosen}
    return [
        (
            periods[flow.flow_id],
            review_payload(
                "remind",
                flow_id=flow.flow_id,
                agent=flow.agent,
                action=flow.action,
                fields=flow.fields,
                reasons=flow.reasons,
                inbox_url=inbox,
                age_s=flow.age_s,
                waits_for=flow.waits_for,
            ),
        )
        for flow in describe([c[0] for c in chosen])
    ]


def send(project: Project, payloads: list[tuple[int, dict[str, Any]]]) -> list[str]:
    """Send the claimed reminders (outside the store's read view); notes of failures. A
    reminder that no channel delivered gives its claim back: the next read retries it."""
    if not payloads:
        return []
    settings = project.section("alerts", AlertSettings)
    channels = bool(settings.command) + bool(settings.webhook)
    notes: list[str] = []
    undelivered: list[tuple[str, Literal["remind"], int]] = []
    for period, payload in payloads:
        failed = send_alert(settings, payload)
        notes += failed
        if len(failed) >= channels:
            undelivered.append((payload["flow_id"], "remind", period))
    if undelivered:
        SentLog(project.state_dir).release(undelivered)
    return notes
