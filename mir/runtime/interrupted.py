"""Closing a flow whose process was killed mid-decision, before it claimed an execution.

Such a flow has events but no outcome: its decider died between the snapshot and the
end (most often inside a model call). Nothing ran: the ``claimed`` execute event is on
disk before any executor runs, so a flow without an ``execute`` event executed nothing.
``close_interrupted`` claims the flow in the ledger (one outcome per flow: the loser of a
race does nothing) and writes its ``final`` event, ``aborted`` with reason
``interrupted``; the caller (``mir run agent --batch``) then decides its row again as a
new flow. A flow with an ``execute`` event, an outcome or a waiting review is left as it
is. The caller makes sure the process that decided it is gone (the batch's workers lock).
"""

from __future__ import annotations

from collections.abc import Sequence

from mir.runtime.ports import RuntimeDeps
from mir.runtime.recorder import FlowRecorder
from mir.runtime.records import DecisionRecord, ReasonCode
from mir.traces import TraceEvent

CLOSED_BY = "batch-recovery"


def close_interrupted(
    deps: RuntimeDeps, flow_id: str, events: Sequence[TraceEvent]
) -> DecisionRecord | None:
    """The ``aborted`` record written for the cut-off flow, or None when it is not one
    that can be closed (no events, an outcome, a review waiting, an execute event, or
    another holder of its outcome)."""
    if not events or any(e.step in ("final", "execute") for e in events):
        return None
    if any(e.status == "pending_review" for e in events):
        return None
    snapshot = next((e for e in events if e.step == "snapshot"), None)
    claim = deps.ledger.claim_flow(flow_id, "aborted", by=CLOSED_BY)
    if not claim.won:
        return None
    reasons = [ReasonCode.INTERRUPTED.value]
    agent = events[0].agent
    record = DecisionRecord(flow_id=flow_id, agent=agent, status="aborted", reasons=reasons)
    data = snapshot.data if snapshot is not None else {}
    rec = FlowRecorder(deps.traces, flow_id, agent, next_seq=max(e.seq for e in events) + 1)
    rec.emit(
        "final",
        status="aborted",
        reasons=reasons,
        data={
            "record": record.model_dump(),
            "source": data.get("source", deps.source),
            "contract_hash": data.get("contract_hash"),
            "prompt_hashes": [e.prompt_hash for e in events if e.prompt_hash],
            "interrupted": {"closed_by": CLOSED_BY},
        },
    )
    rec.flush()
    deps.ledger.settle_flow(flow_id, "aborted")  # only now: the final event is on disk
    return record
