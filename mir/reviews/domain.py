"""The review queue's values: a flow waiting for a human, a page of them, and what a
reviewer is shown of a decision (its key fields) and of what it waits for."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mir.alerts import key_fields

__all__ = ["PendingFlow", "PendingPage", "compact", "key_fields", "number", "waits_for"]


@dataclass(frozen=True)
class PendingFlow:
    """One flow waiting for review, as the queue (``mir review list``, the inbox) shows it.

    ``fields`` are the decision's key fields: the action's parameters (what would be
    executed) and the confidence. ``waits_for`` is what still has to happen, e.g.
    ``"1 of 2 approvals (support_lead)"`` or ``"review"``."""

    flow_id: str
    agent: str
    action: str | None
    fields: dict[str, Any]
    reasons: list[str]
    confidence: float | None
    created_at: datetime
    age_s: float
    ttl_s: float | None
    expires_at: datetime | None
    waits_for: str
    input: dict[str, Any] = field(default_factory=dict)
    context: dict[str, Any] = field(default_factory=dict)
    decision: dict[str, Any] = field(default_factory=dict)
    requested_by: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "flow_id": self.flow_id,
            "agent": self.agent,
            "action": self.action,
            "fields": self.fields,
            "reasons": list(self.reasons),
            "confidence": self.confidence,
            "created_at": self.created_at.isoformat(),
            "age_s": round(self.age_s, 3),
            "ttl_s": self.ttl_s,
            "expires_at": self.expires_at.isoformat() if self.expires_at else None,
            "waits_for": self.waits_for,
            "input": self.input,
            "context": self.context,
            "decision": self.decision,
            "requested_by": self.requested_by,
        }


@dataclass(frozen=True)
class PendingPage:
    """``items`` (oldest first) from ``offset``; ``total`` pending flows in all; ``expired``
    the flows this read closed as expired, ``reminded`` those it sent a reminder for,
    ``notes`` the alerts that failed (best effort: never an error), ``still_due`` the
    flows past their TTL this read left for the next (never listed either)."""

    items: list[PendingFlow]
    total: int
    offset: int = 0
    expired: list[str] = field(default_factory=list)
    reminded: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    still_due: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "offset": self.offset,
            "items": [item.to_json() for item in self.items],
            "expired": list(self.expired),
            "reminded": list(self.reminded),
            "notes": list(self.notes),
            "still_due": self.still_due,
        }


def number(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if ok else None


def waits_for(approvals: Any, approved_by: Sequence[str]) -> str:
    """``"k of N approvals (role, ...)"`` when the action asks for N approvals, else
    ``"review"``. ``approvals`` is the contract's ``approvals`` of the action (or None);
    ``approved_by`` the distinct reviewers who approved so far."""
    count = getattr(approvals, "count", None)
    if not isinstance(count, int) or count < 1:
        return "review"
    roles = [str(r) for r in getattr(approvals, "roles", None) or []]
    have = min(len(set(approved_by)), count)
    shown = f" ({', '.join(roles)})" if roles else ""
    return f"{have} of {count} approval{'s' if count != 1 else ''}{shown}"


def compact(value: Any, width: int = 40) -> str:
    """A field value on one table line, cut to ``width`` characters."""
    text = value if isinstance(value, str) else _json(value)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))


def json_object(text: Any) -> dict[str, Any]:
    """A stored event's ``data`` (JSON text, or already parsed) as a dict; anything else
    (not JSON, not an object: a damaged or hand-edited line) is an empty one."""
    try:
        value = json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}
