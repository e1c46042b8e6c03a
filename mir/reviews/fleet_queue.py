"""The review queue in fleet mode: every host's waiting flows, from the fleet store.

A flow waits when its host published it (``mir.runtime`` does, as it starts waiting)
and no outcome row exists for it yet. Each item is built from the published snapshot
and pending route event, as the local queue builds it from the traces. Flows past their
TTL are closed first, one outcome each across hosts (``expire_in_fleet``); those this
host holds are closed in its traces too. Reminders are the local queue's (not sent here).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from mir.contracts import RecordedContracts
from mir.project import Project
from mir.reviews.domain import PendingPage
from mir.reviews.pending import PendingRow, pending_flow
from mir.runtime import PublishedFlow, expire_in_fleet, fleet_due, fleet_waiting
from mir.storage import FleetStore
from mir.traces import TraceStore


def fleet_page(
    fleet: FleetStore,
    project: Project,
    *,
    offset: int,
    limit: int,
    agent: str | None,
    now: datetime | None,
    expire_at_most: int,
    flow_id: str | None = None,
) -> PendingPage:
    when = now or datetime.now(UTC)
    flows = fleet_waiting(fleet)
    if agent is not None:  # a full name, or its last part (``triage``)
        flows = [f for f in flows if agent in (f.agent, f.agent.rsplit(".", 1)[-1])]
    if flow_id is not None:
        flows = [f for f in flows if f.flow_id == flow_id]
    late = [f for f in flows if fleet_due(f, when)]
    closed: list[str] = []
    if late and expire_at_most > 0:
        from mir.runtime import expire_flows

        store = TraceStore.for_project(project)
        try:

            def expire_here(ids: list[str]) -> list[str]:
                done = expire_flows(ids, project=project, traces=store, now=when)
                return [record.flow_id for record in done.closed]

            closed = expire_in_fleet(
                fleet, project, late[:expire_at_most], store=store, expire_local=expire_here
            )
        finally:
            store.close()
    live = [f for f in flows if not fleet_due(f, when)]
    contract_of = RecordedContracts(project.root).get
    items = [_item(f, contract_of, when) for f in live[offset : offset + limit]]
    return PendingPage(
        items=items,
        total=len(live),
        offset=offset,
        expired=closed,
        still_due=max(0, len(late) - min(len(late), max(expire_at_most, 0))),
    )


def _item(flow: PublishedFlow, contract_of: Any, now: datetime) -> Any:
    found: dict[str, Any] = {"approved_by": []}
    for event in sorted(flow.events, key=lambda e: e.get("seq", 0)):
        data = event.get("data") if isinstance(event.get("data"), dict) else {}
        step, status = event.get("step"), event.get("status")
        if step == "snapshot":
            found["snapshot"] = data
        elif step == "route" and status == "pending_review":
            found["route"], found["approved_by"] = data, []
        elif step == "review" and data.get("verdict") == "approve" and data.get("by"):
            found["approved_by"].append(str(data["by"]))
    created = flow.created_at if flow.created_at.tzinfo else flow.created_at.replace(tzinfo=UTC)
    row = PendingRow(flow.flow_id, flow.agent, int(created.timestamp() * 1e6), flow.ttl_s)
    return pending_flow(row, found, contract_of, now)
