"""Resuming a flow in a later process, from its stored events alone.

``mir approve`` / ``mir reject`` pick up a flow that waits for review; ``approve`` also
replays a flow whose process died after recording its decision for execution. Everything
the resume needs (input, context, state hash, role, creation time for the TTL, the
decision and how it was reached) was written into the events' ``data`` when it paused.

One outcome per flow: every resume first claims the flow in the ledger (first writer
wins, see ``ledger.py``); the loser writes nothing and is told who holds the flow and how
far they got (``FlowAlreadyDecided``, exit 1). A replay executes nothing twice: when the
ledger holds a claim for the decision's key, it reports ``already_executed`` or
``execution_in_doubt``; when it holds none, the executor never ran, and the decision is
checked like a first run (re-check of the world, TTL, limits, role) before it may run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from time import perf_counter
from typing import Any, Literal

from mir.errors import UsageError
from mir.runtime.execution import FlowState, Tail
from mir.runtime.ports import AgentParts, FlowAlreadyDecided, FlowHolder, RuntimeDeps
from mir.runtime.recorder import FlowRecorder
from mir.runtime.records import DecisionRecord, ReasonCode
from mir.traces import REDACTED, TraceEvent

Verdict = Literal["approve", "reject"]
CLAIMED = {"approve": "approved", "reject": "rejected"}  # a flow's state once claimed


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
    since: str = "?"  # when it reached its phase (final, claim or pending event)
    reviewed_by: str | None = None  # who reviewed it last, if anyone
    # Keys the trace says the ledger held (a "claimed" event after the claim succeeded):
    # a replay that finds such a key missing from the ledger knows the ledger was lost.
    ledger_claimed: frozenset[str] = frozenset()
    requested_by: str | None = None  # who asked for the decision (its snapshot says)
    reviews: tuple[dict[str, Any], ...] = ()  # every review event's data, in order
    # The approvals rules its pending event recorded when it was decided (None: a flow
    # from before they were recorded, held to the contract of today)
    approvals: dict[str, Any] | None = None


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
    final = next((e for e in reversed(events) if e.step == "final"), None)
    reviews = [e for e in events if e.step == "review" and "by" in e.data]
    if claim is not None and not any(e.step == "final" for e in events if e.seq > claim.seq):
        phase, source, since = "interrupted", claim.data, claim.at
    elif status == "pending_review" and pending is not None:
        phase, source, since = "pending", pending.data, pending.at
    else:
        phase, source, since = "ended", {}, final.at if final is not None else None
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
        ttl_seconds=_number(snap.get("ttl_seconds")),
        contract_hash=str(snap.get("contract_hash", "")) or None,
        prompt_hashes=list(
            dict.fromkeys(e.prompt_hash for e in events if e.step == "infer" and e.prompt_hash)
        ),
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
        since=since.isoformat(timespec="seconds") if since is not None else "?",
        reviewed_by=next((str(e.data["by"]) for e in reversed(reviews)), None),
        ledger_claimed=frozenset(
            str(e.data.get("key"))
            for e in events
            if e.step == "execute" and e.data.get("phase") == "claimed"
        ),
        requested_by=str(snap["requested_by"]) if snap.get("requested_by") else None,
        reviews=tuple(dict(e.data) for e in reviews),
        approvals=pending.data.get("approvals") if phase == "pending" and pending else None,
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
    reload: Callable[[], Sequence[TraceEvent]] | None = None,
    now: datetime | None = None,
    review_data: Mapping[str, Any] | None = None,
    correction: Mapping[str, Any] | None = None,
) -> DecisionRecord:
    """Approve, reject or replay ``flow`` under its one claim; the record says who
    reviewed it, when (as its review event does). ``review_data`` (the signed statement)
    goes into the review event; ``correction`` replaces fields of the proposal, and the
    corrected decision is checked and executed instead (the final event keeps both)."""
    now = now if now is not None else deps.clock()
    record = _resume_flow(
        parts, deps, flow, verdict, by=by, reason=reason, now=now,
        current_context=current_context, reload=reload,
        review_data=review_data, correction=correction,
    )  # fmt: skip
    return record.model_copy(update={"reviewed_by": by, "reviewed_at": now.isoformat()})


def _resume_flow(
    parts: AgentParts,
    deps: RuntimeDeps,
    flow: StoredFlow,
    verdict: Verdict,
    *,
    by: str,
    now: datetime,
    reason: str | None = None,
    current_context: Mapping[str, Any] | None = None,
    reload: Callable[[], Sequence[TraceEvent]] | None = None,
    review_data: Mapping[str, Any] | None = None,
    correction: Mapping[str, Any] | None = None,
) -> DecisionRecord:
    """Approve, reject or replay ``flow`` under its one claim.

    ``reload`` reads the flow's events again: needed after taking over the claim of a
    process that died, which may have written more events since ``flow`` was read.
    """
    ledger = deps.ledger
    _check_phase(flow, verdict, ledger.holder(flow.flow_id))
    state = "replaying" if flow.phase == "interrupted" else CLAIMED[verdict]
    claim = ledger.claim_flow(flow.flow_id, state, by=by)
    if not claim.won:
        assert claim.holder is not None
        raise FlowAlreadyDecided.held_by(claim.holder)
    if claim.holder is not None and reload is not None:
        flow = read_flow(flow.flow_id, reload())
        if flow.phase == "ended" and flow.status is not None:
            ledger.settle_flow(flow.flow_id, flow.status)  # it did end: record how
        elif flow.phase != "pending" and (flow.phase == "ended" or verdict == "reject"):
            ledger.release_flow(flow.flow_id)
        _check_phase(flow, verdict, None)
    rec = FlowRecorder(deps.traces, flow.flow_id, parts.name, next_seq=flow.next_seq)
    tail = Tail(parts, deps, rec, flow.state, by=by, holds_flow=True)
    review = {
        "verdict": verdict,
        "by": by,
        "at": now.isoformat(),
        "reason": reason,
        # The decision is validated against the contract as it is NOW; say if it moved.
        "contract_changed": parts.contract_hash != flow.contract_hash,
        "correction": dict(correction) if correction else None,
        **(review_data or {}),
    }
    decision = flow.decision
    assert decision is not None
    status_ok = flow.status_ok  # type: ignore[assignment]
    if flow.phase == "interrupted":
        rec.emit("review", data={**review, "verdict": "replay"})
        if ledger.claimed(tail.key(decision)):
            # Straight to the ledger: the executor may have run, and the world may have
            # changed *because* it did; a re-check would call a completed action stale.
            return tail.run_executor(decision, status_ok, flow.reasons)
        if tail.key(decision) in flow.ledger_claimed:
            # The trace saw the ledger hold this claim and the ledger does not: it was
            # deleted or replaced, and the executor may have run. Never run it again.
            rec.emit(
                "execute",
                reasons=[ReasonCode.EXECUTION_IN_DOUBT],
                data={"phase": "replay", "key": tail.key(decision), "ledger": "claim lost"},
            )
            return tail.finish("aborted", [*flow.reasons, ReasonCode.EXECUTION_IN_DOUBT], decision)
        # No claim: the process died before it, so the executor never ran. Nothing
        # vouches for the decision any more: check it like a first run.
        if _lost_to_redaction(decision):
            return tail.finish("aborted", [*flow.reasons, ReasonCode.DECISION_REDACTED], decision)
        return tail.execute(decision, status_ok, flow.reasons, current_context=current_context)
    rec.emit("review", data=review)
    if verdict == "reject":
        return tail.finish("rejected", [*flow.reasons, ReasonCode.REJECTED_BY_REVIEWER], decision)
    if _lost_to_redaction(decision):
        # Traces keep no secret, so this stored decision is not the one proposed: running
        # it would execute parameters nobody proposed or reviewed.
        return tail.finish("aborted", [*flow.reasons, ReasonCode.DECISION_REDACTED], decision)
    if correction:
        # A human override: the corrected decision runs the whole check again (schema,
        # limits, bindings, role, TTL, the world) and executes instead of the proposal.
        tail.proposal = dict(decision)
        decision = {**decision, **correction}
    return tail.execute(decision, status_ok, flow.reasons, current_context=current_context)


def _check_phase(flow: StoredFlow, verdict: Verdict, holder: FlowHolder | None) -> None:
    """Refuse what cannot be resumed: an ended flow (exit 1, its real outcome), an
    interrupted one for a reject (it may have executed), an unfinished one (exit 2)."""
    if flow.phase == "ended" and flow.status is not None:
        settled = holder is not None and holder.final is not None
        by = holder.by if holder is not None and settled else flow.reviewed_by or "its run"
        raise FlowAlreadyDecided(flow.flow_id, flow.status, by, flow.since)
    if flow.phase == "ended" or flow.decision is None:
        raise UsageError(
            f"flow {flow.flow_id} is {flow.status or 'unfinished'}, not pending review",
            hint=f"see `mir traces show {flow.flow_id}`",
        )
    if flow.phase == "interrupted" and verdict == "reject":
        hint = f"it cannot be rejected; run `mir approve {flow.flow_id}` to replay it safely"
        if holder is not None and holder.final is None:
            raise FlowAlreadyDecided.held_by(holder, hint=hint)
        raise FlowAlreadyDecided(flow.flow_id, "executing", "its run", flow.since, hint=hint)


def _lost_to_redaction(value: Any) -> bool:
    if isinstance(value, str):
        return REDACTED in value
    if isinstance(value, Mapping):
        return any(_lost_to_redaction(k) or _lost_to_redaction(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_lost_to_redaction(v) for v in value)
    return False


def _number(value: Any) -> float | None:
    """A stored TTL (flows written before it was stored have none)."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if ok else None
