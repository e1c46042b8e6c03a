"""What a reviewed flow becomes: a case expecting the human's verdict, a chat line."""

from __future__ import annotations

import json
from pathlib import Path

from mir.contracts import EvalCase, EvalSuite, load_contract
from mir.reviews.export import SuiteExport, new_cases, review_case, sft_lines
from mir.reviews.reviewed import ReviewedFlow

CONTRACT = load_contract(
    Path(__file__).parents[2] / "fixtures/runtime/project/capabilities/refunds/agents/triage.yaml"
)
PROPOSAL = {"action": "refund", "confidence": 0.3, "amount": 40, "reason": "broken"}


def flow(verdict="approved", n=1, **changes) -> ReviewedFlow:
    fields = dict(
        flow_id=f"{n:032x}", agent="refunds.triage", verdict=verdict, by="ana",
        at=f"2026-12-01T00:00:0{n}+00:00", contract="x", input={"order_id": "A1", "n": n},
        context={"order_total": 80}, proposal=PROPOSAL, decision=PROPOSAL, correction=None,
        prompt="the prompt", status="executed",
    )  # fmt: skip
    return ReviewedFlow(**{**fields, **changes})


def test_an_approval_expects_the_proposal_on_the_constrained_parameters():
    case = review_case(flow(), CONTRACT, "review-1")
    assert case["tags"] == ["from-review", "approved"]
    assert case["expect"] == {"action": "refund"}
    assert case["assert"] == [{"type": "equals", "path": "amount", "value": 40}]
    EvalCase.model_validate(case)


def test_a_correction_expects_every_corrected_field():
    fixed = {**PROPOSAL, "amount": 30, "reason": "half"}
    case = review_case(
        flow("corrected", decision=fixed, correction={"amount": 30, "reason": "half"}),
        CONTRACT,
        "review-2",
    )
    assert case["assert"] == [
        {"type": "equals", "path": "amount", "value": 30},
        {"type": "equals", "path": "reason", "value": "half"},
    ]


def test_a_rejection_expects_another_action():
    case = review_case(flow("rejected"), CONTRACT, "review-3")
    assert "expect" not in case
    assert case["assert"] == [{"type": "one_of", "path": "action", "values": ["deny", "escalate"]}]


def test_duplicates_redacted_flows_and_clashing_ids_are_handled():
    suite = EvalSuite(
        agent="triage",
        cases=[
            EvalCase(id=f"review-{1:032x}"[:19], input={"order_id": "A1", "n": 9},
                     context={"order_total": 80}),
            EvalCase(id="held", input={"order_id": "A1", "n": 2}, context={"order_total": 80}),
        ],
    )  # fmt: skip
    export = SuiteExport(agent="refunds.triage", suite=Path("s.yaml"))
    flows = [
        flow(n=1),
        flow(n=2),  # the suite holds its input and world already
        flow(n=3, input={"order_id": "[REDACTED]"}),
        flow("rejected", n=4, input={"order_id": "A1", "n": 1}),  # later review, same input
    ]
    cases = new_cases(flows, CONTRACT, suite, export)
    assert export.duplicates == [flows[1].flow_id]
    assert export.left_out == [f"{flows[2].flow_id}: holds [REDACTED] values"]
    [case] = cases
    assert case["tags"] == ["from-review", "rejected"]  # the latest review of it wins
    assert case["id"] == f"review-{4:032x}"[:19] + "-2"  # its id was taken


def test_chats_of_approved_and_corrected_flows_only():
    fixed = {**PROPOSAL, "amount": 30}
    lines, left_out = sft_lines(
        [flow(), flow("rejected", n=2), flow("corrected", n=3, decision=fixed),
         flow(n=4, prompt=None)]
    )  # fmt: skip
    chats = [json.loads(line) for line in lines]
    assert [json.loads(c["messages"][1]["content"])["amount"] for c in chats] == [40, 30]
    assert chats[0]["messages"][0] == {"role": "user", "content": "the prompt"}
    assert left_out == [f"{4:032x}: no whole rendered prompt in its trace"]
