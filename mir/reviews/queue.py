"""The review queue, read from the trace store in SQL (``TraceStore.analysis()``).

A flow waits for review when its latest status is ``pending_review`` (only a pending
route event and a final event set one), it has no ``final`` event and no ``execute``
event (an approval under way, or a replay), and it is neither an eval nor a shadow flow
(their decisions never execute). One anti-join of flow ids finds them all, then each
one's creation time and TTL come from its snapshot; only the page shown is read in full.

Every read closes the flows past their TTL first (``mir.runtime.expire_flows``: status
``expired``, traced, never executed, one outcome per flow), so a queue never shows a
decision nobody may approve any more.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mir.contracts import AgentContract, RecordedContracts
from mir.errors import MirUserError, UsageError
from mir.project import Project, find_project
from mir.reviews.domain import (
    PendingFlow,
    PendingPage,
    json_object,
)
from mir.reviews.pending import PendingRow, pending_flow
from mir.reviews.reminders import due_reminders
from mir.reviews.reminders import send as send_reminders
from mir.traces import TraceStore, resolve_agent

if TYPE_CHECKING:
    import duckdb

    from mir.traces import EventsSql

MAX_LIMIT = 10_000
# Closing a flow reads its events (tens of ms in a large store) and claims it: a read
# that finds a weekend's worth of expired flows closes this many and leaves the rest out.
EXPIRE_PER_READ = 100

# Only a pending route event and a final event set a flow's status, so a flow waits when
# it has the first and neither a final nor an execute event (an approval under way): a
# hash anti-join of flow ids, no JSON parsed. Then only those flows' snapshots are parsed,
# each once (one json_extract of four paths): created_at and the TTL as the resume reads
# them (the snapshot's `at` is the same instant, unless the store was edited).
_QUEUE = """
CREATE OR REPLACE TEMP TABLE review_queue AS
WITH pending AS (
  SELECT DISTINCT flow_id FROM ({waiting})
  ANTI JOIN (SELECT flow_id FROM ({closed})) USING (flow_id)
),
snapshots AS (
  SELECT flow_id, agent, "at",
    json_extract(data, ['$.ttl_seconds', '$.source', '$.contract', '$.created_at']) AS j
  FROM ({snapshots}) SEMI JOIN pending USING (flow_id)
  QUALIFY row_number() OVER (PARTITION BY flow_id ORDER BY seq) = 1
)
SELECT flow_id, agent,
  epoch_us(coalesce(TRY_CAST(j[4] ->> '$' AS TIMESTAMPTZ), "at")) AS created_us,
  TRY_CAST(j[1] AS DOUBLE) AS ttl_s, j[3] ->> '$' AS contract
FROM snapshots
WHERE coalesce(j[2] ->> '$', 'production') NOT IN ('eval', 'shadow')
"""
_DUE = "ttl_s IS NOT NULL AND created_us IS NOT NULL AND created_us + ttl_s * 1e6 <= $now"
_NOT_DUE = f"NOT coalesce({_DUE}, false)"
_ROW = "flow_id, agent, created_us, ttl_s"


def pending_page(
    project_root: str | Path | Project | None = None,
    *,
    offset: int = 0,
    limit: int = 50,
    agent: str | None = None,
    now: datetime | None = None,
    remind: bool = True,
    expire_at_most: int = EXPIRE_PER_READ,
    flow_id: str | None = None,
) -> PendingPage:
    """The flows waiting for review, oldest first: ``limit`` of them from ``offset``, and
    how many wait in all. Flows past their TTL are never listed: the oldest
    ``expire_at_most`` of them are closed as ``expired`` by this read (each costs a read
    of its events and a ledger claim; ``PendingPage.still_due`` says how many are left for
    the next read or ``mir review expire``), and the reminders that are due are sent
    (``remind``; see ``reminders.py``). ``flow_id``: only that flow (exact id),
    when it waits (the inbox's flow page)."""
    if offset < 0 or not 0 < limit <= MAX_LIMIT:
        raise UsageError(
            f"offset {offset}, limit {limit}: offset must be >= 0, limit 1..{MAX_LIMIT}"
        )
    proj = _project(project_root)
    from mir.runtime import fleet_of, publish_waiting

    if (fleet := fleet_of(proj)) is not None:
        from mir.reviews.fleet_queue import fleet_page

        try:  # what this host holds and the fleet never got
            publish_waiting(proj)
            missed = []
        except MirUserError as exc:  # this host's traces: never the fleet's queue
            missed = [f"this host's waiting flows were not checked for publishing: {exc}"]
        page = fleet_page(
            fleet, proj, offset=offset, limit=limit, agent=agent, now=now,
            expire_at_most=expire_at_most, flow_id=flow_id,
        )  # fmt: skip
        return replace(page, notes=[*page.notes, *missed]) if missed else page
    when = now or datetime.now(UTC)
    store = TraceStore.for_project(proj)
    contract_of = RecordedContracts(proj.root).get

    try:
        name = resolve_agent(store, agent) if agent is not None else None
        with store.analysis() as (con, events, _):
            due, total, rows = _read_queue(con, events, name, when, offset, limit, flow_id)
            items = _describe(con, events, rows, contract_of, when)

            def describe(ids: list[str]) -> list[PendingFlow]:
                return _describe(con, events, _rows(con, ids), contract_of, when)

            reminders = (
                due_reminders(con, proj, contract_of, describe, when, _NOT_DUE) if remind else []
            )
        # redacted again with the rules of now, as exports are (a line written before a
        # pattern existed must not leave the machine in an alert either)
        reminders = [(period, store.redact(payload)) for period, payload in reminders]
        closed: list[str] = []
        if due and expire_at_most > 0:
            from mir.runtime import expire_flows

            done = expire_flows(due[:expire_at_most], project=proj, traces=store, now=when)
            closed = [record.flow_id for record in done.closed]
    finally:
        store.close()
    notes = send_reminders(proj, reminders)
    return PendingPage(
        items=items,
        total=total,
        offset=offset,
        expired=closed,
        reminded=[payload["flow_id"] for _period, payload in reminders],
        notes=notes,
        still_due=max(0, len(due) - min(len(due), max(expire_at_most, 0))),
    )


def _describe(
    con: duckdb.DuckDBPyConnection,
    events: EventsSql,
    rows: list[PendingRow],
    contract_of: Callable[[str], AgentContract | None],
    now: datetime,
) -> list[PendingFlow]:
    details = _details(con, events, [r.flow_id for r in rows])
    return [pending_flow(row, details.get(row.flow_id, {}), contract_of, now) for row in rows]


def _rows(con: duckdb.DuckDBPyConnection, flow_ids: list[str]) -> list[PendingRow]:
    if not flow_ids:
        return []
    found = con.execute(
        f"SELECT {_ROW} FROM review_queue WHERE list_contains($ids, flow_id) "
        "ORDER BY created_us NULLS LAST, flow_id",
        {"ids": flow_ids},
    ).fetchall()
    return [PendingRow(*row) for row in found]


def _read_queue(
    con: duckdb.DuckDBPyConnection,
    events: EventsSql,
    agent: str | None,
    now: datetime,
    offset: int,
    limit: int,
    flow_id: str | None = None,
) -> tuple[list[str], int, list[PendingRow]]:
    scope, params = "true", {}
    if agent is not None:
        scope, params = "agent = $agent", {"agent": agent}
    if flow_id is not None:
        scope += " AND flow_id = $flow"
        params["flow"] = flow_id
    con.execute(
        _QUEUE.format(
            waiting=events(f"step = 'route' AND status = 'pending_review' AND {scope}"),
            closed=events(f"step IN ('final', 'execute') AND {scope}"),
            snapshots=events(f"step = 'snapshot' AND {scope}"),
        ),
        params,
    )
    now_us = {"now": int(now.timestamp() * 1_000_000)}
    due_rows = con.execute(
        f"SELECT flow_id FROM review_queue WHERE {_DUE} ORDER BY created_us, flow_id", now_us
    ).fetchall()
    due = [row[0] for row in due_rows]
    total = con.execute(f"SELECT count(*) FROM review_queue WHERE {_NOT_DUE}", now_us).fetchone()
    page = con.execute(
        f"SELECT {_ROW} FROM review_queue WHERE {_NOT_DUE} "
        "ORDER BY created_us NULLS LAST, flow_id LIMIT $limit OFFSET $offset",
        {**now_us, "limit": limit, "offset": offset},
    ).fetchall()
    return due, int(total[0]) if total else 0, [PendingRow(*row) for row in page]


def _details(
    con: duckdb.DuckDBPyConnection, events: EventsSql, flow_ids: list[str]
) -> dict[str, dict[str, Any]]:
    """The page's snapshots, pending route events and approvals, parsed."""
    if not flow_ids:
        return {}
    where = "step IN ('snapshot', 'route', 'review') AND list_contains($ids, flow_id)"
    rows = con.execute(
        f"SELECT flow_id, seq, step, status, data FROM ({events(where)}) ORDER BY flow_id, seq",
        {"ids": flow_ids},
    ).fetchall()
    found: dict[str, dict[str, Any]] = {}
    for flow_id, _seq, step, status, text in rows:
        flow = found.setdefault(flow_id, {"approved_by": []})
        data = json_object(text)
        if step == "snapshot":
            flow["snapshot"] = data
        elif step == "route" and status == "pending_review":
            flow["route"] = data
            flow["approved_by"] = []  # approvals count from the latest wait on
        elif step == "review" and data.get("verdict") == "approve" and data.get("by"):
            flow["approved_by"].append(str(data["by"]))
    return found


def _project(root: str | Path | Project | None) -> Project:
    if isinstance(root, Project):
        return root
    return find_project(Path(root) if root is not None else None)
