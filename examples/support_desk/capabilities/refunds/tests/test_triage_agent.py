"""The triage agent's decision schema, its executors on real JSON files, and whole
decisions run offline through mir with recorded model outputs (``responses/``)."""

import json
import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError

from ..adapters import SqliteLedger, issue_refund, load_ticket_context, open_escalation
from ..domain import RefundRefused, TriageDecision

PROJECT = Path(__file__).resolve().parents[3]
VALID = {
    "category": "damaged",
    "action": "refund",
    "order_id": "A-1001",
    "amount": 24.9,
    "confidence": 0.9,
    "reason": "arrived broken",
}


def test_a_valid_proposal_is_accepted() -> None:
    assert TriageDecision.model_validate(VALID).action == "refund"


@pytest.mark.parametrize(
    "change",
    [
        {"action": "refund_everything"},
        {"order_id": "1001"},
        {"amount": -5},
        {"confidence": 1.5},
        {"reason": "x" * 161},
        {"category": "bored"},
    ],
)
def test_an_out_of_bounds_proposal_is_rejected(change: dict) -> None:
    with pytest.raises(ValidationError):
        TriageDecision.model_validate({**VALID, **change})


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SqliteLedger:
    path = tmp_path / "ledger.sqlite3"
    monkeypatch.setenv("SUPPORT_DESK_LEDGER", str(path))
    monkeypatch.setenv("SUPPORT_DESK_STORE", str(PROJECT / "data" / "store.json"))
    return SqliteLedger(path)


def test_refund_executor_is_idempotent_and_changes_the_context(ledger: SqliteLedger) -> None:
    params = {"category": "damaged", "order_id": "A-1001", "amount": 24.9, "reason": "broken"}
    ticket = {"order_id": "A-1001", "customer_id": "C-001"}
    assert load_ticket_context(ticket)["order"]["refundable"] == 24.9
    first = issue_refund(params, idempotency_key="k1")
    again = issue_refund(params, idempotency_key="k1")
    assert first == again
    assert ledger.refunded("A-1001") == 24.9
    assert load_ticket_context(ticket)["order"]["refundable"] == 0.0
    with pytest.raises(RefundRefused):
        issue_refund(params, idempotency_key="k2")


def test_escalation_moves_no_money(ledger: SqliteLedger) -> None:
    open_escalation({"order_id": "A-1004", "amount": 899.0}, idempotency_key="k1")
    assert ledger.refunded("A-1004") == 0.0
    assert ledger.entries()["k1"]["kind"] == "escalate"


@pytest.fixture
def desk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of this project, so decisions write traces and ledger into tmp_path."""
    copy = tmp_path / "support_desk"
    shutil.copytree(PROJECT, copy, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
    monkeypatch.delenv("SUPPORT_DESK_LEDGER", raising=False)
    monkeypatch.delenv("SUPPORT_DESK_STORE", raising=False)
    return copy


def decide(desk: Path, ticket: str):
    from mir import load_agent

    data = json.loads((desk / "inputs" / f"{ticket}.json").read_text())
    responses = desk / "responses" / f"{ticket}.jsonl"
    with load_agent(
        "refunds.triage", project=desk, provider="scripted", responses=responses
    ) as agent:
        return agent.decide(data)


@pytest.mark.parametrize(
    ("ticket", "status", "action", "executed"),
    [
        ("damaged_mug", "executed", "refund", True),
        ("blender_broken", "pending_review", "refund", False),
        ("changed_mind", "executed", "reject", True),
        ("cancelled_order", "executed", "reject", True),
        ("laptop_not_delivered", "fallback", "escalate", True),
    ],
)
def test_recorded_decisions_replay_offline(
    desk: Path, ticket: str, status: str, action: str, executed: bool
) -> None:
    record = decide(desk, ticket)
    assert (record.status, record.action, record.executed) == (status, action, executed)
