"""Drift's `rate.review_requested` counts every reason that sent a flow to a human: the
contract's review rules, `always` actions and risk score as well as low confidence."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from mir.drift import WindowOptions, measure
from mir.project import find_project
from mir.traces import TraceStore
from tests.support.drift_flows import decision_flow, desk

END = datetime(2026, 11, 1, tzinfo=UTC)
OPTIONS = WindowOptions(window="7d", reference="21d", now=END)
AGENT = "refunds.triage"
REVIEWED = [
    ["review_rule:expensive_refund"],
    ["review_always:refund"],
    ["review_risk:1.10/1.00"],
    ["low_confidence"],
    ["no_consensus", "low_confidence"],
]


def test_a_flow_held_by_a_review_rule_counts_as_review_requested(tmp_path: Path):
    root = desk(tmp_path)
    events = []
    for i in range(400):  # 300 in the reference window, 100 in the current one
        days = 7 + (i % 300) * 20 / 300 if i < 300 else (i - 300) * 6 / 100
        reasons = REVIEWED[i % len(REVIEWED)] if i % 2 == 0 else ["not_json"]
        record = {"flow_id": f"f{i:031d}", "agent": AGENT, "status": "executed",
                  "decision": {"action": "refund", "confidence": 0.9, "amount": 10.0},
                  "action": "refund", "reasons": reasons}  # fmt: skip
        events += decision_flow(
            f"f{i:031d}", AGENT, END - timedelta(days=days + 0.01), record,
            status="executed", reasons=reasons,
        )  # fmt: skip
    with TraceStore.for_project(find_project(root)) as traces:
        traces.append(events)
    [agent] = measure(root, options=OPTIONS).agents
    [rate] = [m for m in agent.metrics if m.metric == "rate.review_requested"]
    # every second flow carries a review reason; "not_json" alone is no review
    assert (rate.reference, rate.current) == (0.5, 0.5)
