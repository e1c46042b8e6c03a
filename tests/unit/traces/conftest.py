"""Builders shared by the trace tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from mir.traces import TraceEvent

T0 = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)


def decision_flow(
    flow_id: str,
    *,
    agent: str = "triage",
    status: str = "executed",
    at: datetime = T0,
    action: str = "refund",
) -> list[TraceEvent]:
    """A three-step flow: snapshot, a model call, and the final status."""
    return [
        TraceEvent(flow_id=flow_id, seq=0, step="snapshot", agent=agent, at=at),
        TraceEvent(
            flow_id=flow_id,
            seq=1,
            step="infer",
            agent=agent,
            at=at + timedelta(milliseconds=200),
            provider="llama",
            model="smollm2-135m",
            prompt_hash="9f2c0e4d1a7b",
            prompt_tokens=120,
            completion_tokens=30,
            cost_usd=0.0015,
            latency_ms=180.5,
            data={"decision": {"action": action, "confidence": 0.9}},
        ),
        TraceEvent(
            flow_id=flow_id,
            seq=2,
            step="final",
            agent=agent,
            at=at + timedelta(milliseconds=250),
            status=status,  # type: ignore[arg-type]
            reasons=("ok",),
            latency_ms=2.0,
        ),
    ]
