"""Trace events: the append-only record of every decision.

A decision flow is a sequence of events sharing one ``flow_id``. Events are never
updated: resuming a flow (``mir approve``) appends more events, and the flow's current
status is the ``status`` of its latest event that sets one. Append-only events are what
let several processes write at once without coordination, and a reader rebuild any
flow exactly.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal
from uuid import uuid4

from pydantic import BaseModel, ConfigDict, Field

FlowStatus = Literal["executed", "rejected", "pending_review", "fallback", "stale", "aborted"]
Step = Literal[
    "snapshot", "infer", "validate", "route", "review", "recheck", "execute", "fallback", "final"
]


def _now() -> datetime:
    return datetime.now(UTC)


class TraceEvent(BaseModel):
    model_config = ConfigDict(frozen=True)

    event_id: str = Field(default_factory=lambda: uuid4().hex, description="Dedupe key.")
    flow_id: str
    seq: int = Field(ge=0, description="Order of the event within its flow.")
    step: Step
    agent: str
    at: datetime = Field(default_factory=_now)
    status: FlowStatus | None = Field(None, description="Flow status after this event, if set.")
    reasons: tuple[str, ...] = Field((), description="Reason codes, e.g. 'schema_invalid'.")
    provider: str | None = None
    model: str | None = None
    prompt_hash: str | None = None
    prompt_version: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_ms: float = 0.0
    data: dict[str, Any] = Field(default_factory=dict, description="Step-specific payload.")
