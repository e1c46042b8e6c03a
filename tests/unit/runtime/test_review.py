"""Resuming flows from stored events only: approve, reject, replay after a crash."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mir.errors import UsageError
from mir.runtime.flow import DecisionFlow
from mir.runtime.ports import FlowAlreadyDecided
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
    with pytest.raises(FlowAlreadyDecided, match=r"is already executed \(by ana, at ") as err:
        resume(h, flow_id, by="bo")
    assert err.value.exit_code == 1
    assert len(h.executions.calls) == 1


def test_the_loser_of_a_race_writes_nothing_and_learns_the_holder():
    h = harness([decision(confidence=0.4)])
    flow_id = pending(h).flow_id
    stored = read_flow(flow_id, h.traces.flow(flow_id))  # both reviewers read it pending
    assert h.ledger.other().claim_flow(flow_id, "rejected", by="bo").won
    before = list(h.traces.events)
    with pytest.raises(FlowAlreadyDecided, match=r"is already rejected \(by bo"):
        resume_flow(h.parts, h.deps, stored, "approve", by="ana")
    assert h.traces.events == before and h.executions.calls == []


def test_the_claim_is_settled_with_the_final_status():
    h = harness([decision(confidence=0.4)])
    flow_id = pending(h).flow_id
    resume(h, flow_id, "reject")
    holder = h.ledger.holder(flow_id)
    assert holder is not None and (holder.final, holder.by) == ("rejected", "ana")


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
    with pytest.raises(FlowAlreadyDecided, match=r"already executing.*cannot be rejected"):
        resume(h, record.flow_id, "reject")


class Crash(BaseException):
    """Stands in for SIGKILL: nothing after it runs, nothing catches it."""


def interrupted_before_the_ledger_claim(h):
    """A run that recorded its decision for execution and died before claiming the key."""
    claim = h.ledger.claim

    def crash(key, info):
        raise Crash

    h.ledger.claim = crash
    with pytest.raises(Crash):
        DecisionFlow(h.parts, h.deps).decide(INPUT)
    h.ledger.claim = claim
    (flow_id,) = {e.flow_id for e in h.traces.events}
    assert h.steps(flow_id)[-1] == "execute" and not h.ledger.claims
    return flow_id


def test_a_replay_with_no_claim_checks_the_ttl_like_a_first_run():
    h = harness([decision()])
    flow_id = interrupted_before_the_ledger_claim(h)
    h.clock.advance(301)
    record = resume(h, flow_id)
    assert record.status == "stale" and record.reasons[-1] == "ttl_expired"
    assert h.executions.calls == []


def test_a_replay_with_no_claim_rechecks_the_world():
    world = World()
    h = harness([decision()], world=world)
    flow_id = interrupted_before_the_ledger_claim(h)
    world.state["status"] = "refunded"
    record = resume(h, flow_id)
    assert record.status == "stale" and "state_changed" in record.reasons
    assert h.executions.calls == []


def test_a_replay_with_no_claim_and_nothing_changed_executes_once():
    h = harness([decision()])
    flow_id = interrupted_before_the_ledger_claim(h)
    assert resume(h, flow_id).status == "executed"
    with pytest.raises(FlowAlreadyDecided):
        resume(h, flow_id)
    assert len(h.executions.calls) == 1
    assert [e.step for e in h.traces.flow(flow_id)].count("final") == 1


def test_a_dead_holder_is_taken_over_and_the_flow_read_again():
    h = harness([decision(confidence=0.4)])
    flow_id = pending(h).flow_id
    stored = read_flow(flow_id, h.traces.flow(flow_id))
    ghost = h.ledger.other("ghost")
    resume_flow(h.parts, replace(h.deps, ledger=ghost), stored, "reject", by="bo")
    # bo's final event is on disk, and bo died right before settling its claim
    owner, holder = h.ledger.flows[flow_id]
    h.ledger.flows[flow_id] = (owner, replace(holder, final=None, state="rejected"))
    h.ledger.dead.add("ghost")
    reads = []

    def reload():
        reads.append(1)
        return h.traces.flow(flow_id)

    with pytest.raises(FlowAlreadyDecided, match="already rejected"):
        resume_flow(h.parts, h.deps, stored, "approve", by="ana", reload=reload)
    assert reads == [1] and h.executions.calls == []
    assert h.ledger.holder(flow_id).final == "rejected"


def test_a_flow_waiting_for_review_stays_approvable_while_the_agent_is_suspended():
    h = harness([decision(confidence=0.4)])
    flow_id = pending(h).flow_id
    h.states.suspended.add("refunds.triage")
    assert resume(h, flow_id).status == "executed"
