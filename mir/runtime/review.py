"""Resuming a flow in a later process, from its stored events alone.

``mir approve`` / ``mir reject`` pick up a flow that waits for review; ``approve`` also
replays a flow whose process died after claiming execution (the ledger then reports
``already_executed`` or ``execution_in_doubt`` and nothing runs twice). Everything the
resume needs (input, context, state hash, role, creation time for the TTL, the decision
and how it was reached) was written into the events' ``data`` when the flow paused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from time import perf_counter
from typing import Any, Literal

from mir.errors import UsageError
from mir.runtime.execution import FlowState, Tail
from mir.runtime.ports import AgentParts, RuntimeDeps
from mir.runtime.recorder import FlowRecorder
from mir.runtime.records import DecisionRecord, ReasonCode
from mir.traces import TraceEvent

Verdict = Literal["approve", "reject"]


@dataclass(frozen=True)
class StoredFlow:
    """A flow rebuilt from its events: where it stopped and what it had decided."""

    flow_id: str
    agent: str
    contract_path: str
    contract_hash: str
    phase: Literal["pending", "interrupted", "ended"]
    status: str | None
    decision: dict[str, Any] | None
    status_ok: str
    reasons: list[str]
    state: FlowState
    next_seq: int


def read_flow(flow_id: str, events: Sequence[TraceEvent]) -> StoredFlow:
    if not events:
        raise UsageError(f"no flow {flow_id!r} in the traces", hint="see `mir traces list`")
    events = sorted(events, key=lambda e: e.seq)
    snapshot = next((e for e in events if e.step == "snapshot"), None)
    if snapshot is None:
        raise UsageError(f"flow {flow_id!r} has no snapshot event: it cannot be resumed")
    snap = snapshot.data
    status = next((e.status for e in reversed(events) if e.status is not None), None)
    claim = next(
        (e for e in reversed(events) if e.step == "execute" and e.data.get("phase") == "claim"),
        None,
    )
    pending = next((e for e in reversed(events) if e.status == "pending_review"), None)
    if claim is not None and not any(e.step == "final" for e in events if e.seq > claim.seq):
        phase, source = "interrupted", claim.data
    elif status == "pending_review" and pending is not None:
        phase, source = "pending", pending.data
    else:
        phase, source = "ended", {}
    state = FlowState(
        flow_id=flow_id,
        role=str(snap.get("role", "agent")),
        created_at=datetime.fromisoformat(snap["created_at"]),
        input=dict(snap.get("input", {})),
        context=dict(snap.get("context", {})),
        state_hash=str(snap.get("state_hash", "")),
        started=perf_counter(),
        tokens=sum(e.prompt_tokens + e.completion_tokens for e in events),
        cost=sum(e.cost_usd for e in events),
        provider=next((e.provider for e in reversed(events) if e.provider), None),
        model=next((e.model for e in reversed(events) if e.model), None),
    )
    return StoredFlow(
        flow_id=flow_id,
        agent=snapshot.agent,
        contract_path=str(snap.get("contract", "")),
        contract_hash=str(snap.get("contract_hash", "")),
        phase=phase,
        status=status,
        decision=source.get("decision"),
        status_ok=str(source.get("status_ok", "executed")),
        reasons=list(source.get("reasons", [])),
        state=state,
        next_seq=events[-1].seq + 1,
    )


def resume_flow(
    parts: AgentParts,
    deps: RuntimeDeps,
    flow: StoredFlow,
    verdict: Verdict,
    *,
    by: str,
    reason: str | None = None,
    current_context: Mapping[str, Any] | None = None,
) -> DecisionRecord:
    if flow.phase == "ended" or flow.decision is None:
        raise UsageError(
            f"flow {flow.flow_id} is {flow.status or 'unfinished'}, not pending review",
            hint=f"see `mir traces show {flow.flow_id}`",
        )
    if flow.phase == "interrupted" and verdict == "reject":
        raise UsageError(
            f"flow {flow.flow_id} already started executing; it cannot be rejected",
            hint=f"run `mir approve {flow.flow_id}` to replay it safely",
        )
    rec = FlowRecorder(deps.traces, flow.flow_id, parts.name, next_seq=flow.next_seq)
    tail = Tail(parts, deps, rec, flow.state)
    now = deps.clock()
    review = {
        "verdict": verdict,
        "by": by,
        "at": now.isoformat(),
        "reason": reason,
        # The decision is validated against the contract as it is NOW; say if it moved.
        "contract_changed": parts.contract_hash != flow.contract_hash,
    }
    if flow.phase == "interrupted":
        # Straight to the ledger: the world may have changed *because* the executor ran,
        # so a re-check here would wrongly call a completed action stale.
        rec.emit("review", data={**review, "verdict": "replay"})
        return tail.run_executor(flow.decision, flow.status_ok, flow.reasons)  # type: ignore[arg-type]
    rec.emit("review", data=review)
    if verdict == "reject":
        return tail.finish(
            "rejected", [*flow.reasons, ReasonCode.REJECTED_BY_REVIEWER], flow.decision
        )
    return tail.execute(
        flow.decision,
        flow.status_ok,  # type: ignore[arg-type]
        flow.reasons,
        current_context=current_context,
    )
