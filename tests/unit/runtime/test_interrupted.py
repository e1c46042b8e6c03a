"""Closing a flow cut off mid-decision (its process killed inside the model call): one
``final`` event, aborted for ``interrupted``, claimed in the ledger; never a flow that
reached an execute event, an outcome or a review, and never one another holder has."""

from __future__ import annotations

import pytest

from mir.runtime.flow import DecisionFlow
from mir.runtime.interrupted import close_interrupted
from tests.unit.runtime.fakes import decision, harness

INPUT = {"order_id": "A1", "amount": 40, "message": "arrived broken"}
FLOW = "bkilled0000000000000000000000000"


class Killed(BaseException):
    """What SIGKILL looks like from inside: nothing after it runs."""


def _cut_off():
    h = harness([Killed()])
    with pytest.raises(Killed):
        DecisionFlow(h.parts, h.deps).decide(INPUT, {"total": 80}, flow_id=FLOW)
    return h


def test_a_flow_killed_in_its_model_call_is_closed_once_as_interrupted() -> None:
    h = _cut_off()
    events = h.traces.flow(FLOW)
    assert [e.step for e in events] == ["snapshot"]  # flushed before the model call
    record = close_interrupted(h.deps, FLOW, events)
    assert record is not None and (record.status, record.reasons) == ("aborted", ["interrupted"])
    final = h.traces.flow(FLOW)[-1]
    assert (final.step, final.status, final.seq) == ("final", "aborted", 1)
    assert final.data["record"]["reasons"] == ["interrupted"]
    assert final.data["source"] == events[0].data["source"]
    assert h.ledger.holder(FLOW).final == "aborted"
    assert close_interrupted(h.deps, FLOW, h.traces.flow(FLOW)) is None  # it has an outcome
    assert h.executions.calls == []


def test_a_flow_that_reached_its_executor_is_left_in_doubt() -> None:
    h = harness([decision()])
    record = DecisionFlow(h.parts, h.deps).decide(INPUT, {"total": 80}, flow_id=FLOW)
    assert record.executed
    without_final = [e for e in h.traces.flow(FLOW) if e.step != "final"]
    assert close_interrupted(h.deps, FLOW, without_final) is None


def test_a_flow_another_live_process_holds_is_not_closed() -> None:
    h = _cut_off()
    h.ledger.other("alive").claim_flow(FLOW, "approving", by="someone")
    assert close_interrupted(h.deps, FLOW, h.traces.flow(FLOW)) is None
    assert [e.step for e in h.traces.flow(FLOW)] == ["snapshot"]


def test_nothing_to_close_without_events() -> None:
    h = harness([])
    assert close_interrupted(h.deps, FLOW, []) is None
