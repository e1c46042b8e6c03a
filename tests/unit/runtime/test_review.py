"""Resuming flows from stored events only: approve, reject, replay after a crash."""

from __future__ import annotations

import pytest

from mir.errors import UsageError
from mir.runtime.flow import DecisionFlow
from mir.runtime.review import read_flow, resume_flow
from tests.unit.runtime.fakes import World, decision, harness

INPUT = {"order_id": "A1", "amount": 40}


def pending(h, context=None):
    record = DecisionFlow(h.parts, h.deps).decide(INPUT, context)
    assert record.status == "pending_review"
    return record


def resume(h, flow_id, verdict="approve", **kw):
    # Only the stored events cross over: nothing of the first run's memory is reused.
    stored = read_flow(flow_id, h.traces.flow(flow_id))
    return resume_flow(h.parts, h.deps, stored, verdict, by=kw.pop("by", "ana"), **kw)


def test_approve_executes_the_stored_decision_and_records_who_and_when():
    h = harness([decision(confidence=0.4)])
    record = resume(h, pending(h).flow_id)
    assert record.status == "executed" and record.executed
    assert h.executions.calls[0][:2] == ("refund", {"amount": 40, "reason": "damaged"})
    review = next(e for e in h.traces.flow(record.flow_id) if e.step == "review")
    assert review.data["verdict"] == "approve" and review.data["by"] == "ana"
    assert review.data["at"].startswith("2026-01-01")
    assert review.data["contract_changed"] is False


def test_reject_executes_nothing_and_keeps_the_reason():
    h = harness([decision(confidence=0.4)])
    flow_id = pending(h).flow_id
    record = resume(h, flow_id, "reject", reason="customer is a known fraudster")
    assert record.status == "rejected" and not record.executed
    assert "rejected_by_reviewer" in record.reasons
    assert h.executions.calls == []
    review = next(e for e in h.traces.flow(flow_id) if e.step == "review")
    assert review.data["reason"] == "customer is a known fraudster"


def test_a_flow_cannot_be_approved_twice():
    h = harness([decision(confidence=0.4)])
    flow_id = pending(h).flow_id
    resume(h, flow_id)
    with pytest.raises(UsageError, match="not pending review"):
        resume(h, flow_id)
    assert len(h.executions.calls) == 1


def test_unknown_flow():
    with pytest.raises(UsageError, match="no flow"):
        read_flow("nope", [])


def test_approval_after_the_ttl_is_stale():
    h = harness([decision(confidence=0.4)])
    flow_id = pending(h).flow_id
    h.clock.advance(301)
    record = resume(h, flow_id)
    assert record.status == "stale" and "ttl_expired" in record.reasons
    assert h.executions.calls == []


def test_approval_rechecks_the_world_with_the_loader():
    world = World()
    h = harness([decision(confidence=0.4)], world=world)
    flow_id = pending(h).flow_id
    world.state["status"] = "refunded"
    record = resume(h, flow_id)
    assert record.status == "stale" and h.executions.calls == []


def test_without_a_loader_the_context_given_at_approval_is_compared():
    h = harness([decision(confidence=0.4), decision(confidence=0.4)])
    stale = pending(h, context={"total": 80}).flow_id
    assert resume(h, stale, current_context={"total": 10}).status == "stale"
    same = pending(h, context={"total": 80}).flow_id
    assert resume(h, same, current_context={"total": 80}).status == "executed"


def test_replay_after_a_crash_mid_execution_runs_nothing_twice():
    h = harness([decision()])
    h.executions.fail = True  # stands in for the crash: the claim exists, no outcome
    record = DecisionFlow(h.parts, h.deps).decide(INPUT)
    assert record.status == "aborted"
    # simulate a process that died after claiming: drop the outcome and the final event
    h.ledger.outcomes.clear()
    h.traces.events = [
        e for e in h.traces.events if e.step != "final" and e.data.get("phase") != "failed"
    ]
    h.executions.fail = False
    replay = resume(h, record.flow_id)
    assert replay.status == "aborted" and replay.reasons[-1] == "execution_in_doubt"
    assert h.executions.calls == []


def test_replay_of_a_completed_execution_reports_already_executed():
    h = harness([decision()])
    record = DecisionFlow(h.parts, h.deps).decide(INPUT)
    h.traces.events = [e for e in h.traces.events if e.step != "final"]  # crash before final
    replay = resume(h, record.flow_id)
    assert replay.status == "executed" and "already_executed" in replay.reasons
    assert len(h.executions.calls) == 1


def test_an_interrupted_flow_cannot_be_rejected():
    h = harness([decision()])
    record = DecisionFlow(h.parts, h.deps).decide(INPUT)
    h.traces.events = [e for e in h.traces.events if e.step != "final"]
    with pytest.raises(UsageError, match="cannot be rejected"):
        resume(h, record.flow_id, "reject")


def test_a_flow_waiting_for_review_stays_approvable_while_the_agent_is_suspended():
    h = harness([decision(confidence=0.4)])
    flow_id = pending(h).flow_id
    h.states.suspended.add("refunds.triage")
    assert resume(h, flow_id).status == "executed"
