"""One waiting flow as the queue shows it, from its queue row and its events' details:
shared by the queue read from the traces (``queue``) and the fleet's (``fleet_queue``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from mir.contracts import AgentContract
from mir.reviews.domain import PendingFlow, key_fields, number, waits_for


@dataclass(frozen=True)
class PendingRow:
    flow_id: str
    agent: str
    created_us: int | None
    ttl_s: float | None


def pending_flow(
    row: PendingRow,
    found: Mapping[str, Any],
    contract_of: Callable[[str], AgentContract | None],
    now: datetime,
) -> PendingFlow:
    snap = found.get("snapshot", {})
    route = found.get("route", {})
    decision = route.get("decision") if isinstance(route.get("decision"), dict) else {}
    contract = contract_of(str(snap.get("contract", "")))
    spec = contract.decision if contract is not None else None
    action_field = spec.action_field if spec is not None else "action"
    confidence_field = spec.confidence_field if spec is not None else "confidence"
    action = decision.get(action_field)
    action = action if isinstance(action, str) else None
    spec_action = contract.actions.get(action) if contract is not None and action else None
    created = (
        datetime.fromtimestamp(row.created_us / 1e6, UTC) if row.created_us is not None else now
    )
    expires = created + timedelta(seconds=row.ttl_s) if row.ttl_s is not None else None
    return PendingFlow(
        flow_id=row.flow_id,
        agent=row.agent,
        action=action,
        fields=key_fields(decision, action_field, confidence_field),
        reasons=_strings(route.get("reasons")),
        confidence=number(decision.get(confidence_field)),
        created_at=created,
        age_s=max(0.0, (now - created).total_seconds()),
        ttl_s=row.ttl_s,
        expires_at=expires,
        waits_for=waits_for(getattr(spec_action, "approvals", None), found.get("approved_by", [])),
        input=_mapping(snap.get("input")),
        context=_mapping(snap.get("context")),
        decision=dict(decision),
        requested_by=str(snap["requested_by"]) if snap.get("requested_by") else None,
    )


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _mapping(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}
