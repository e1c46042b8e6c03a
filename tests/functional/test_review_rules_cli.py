"""Review rules through the installed `mir`, on a copy of the support-desk example: the
expensive refund waits for a human whatever confidence the model reports, a small one
executes, and a rule that names what the schemas lack stops the agent from loading."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import REPO, RunMir
from tests.functional.reviewer_keys import sign_as

EXAMPLE = REPO / "examples" / "support_desk"
CONTRACT = Path("capabilities/refunds/agents/triage.yaml")
RULE = '        - {field: decision.amount, op: ">", value: 100}\n'


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    copy = tmp_path / "support_desk"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
    return copy


def ticket(amount: float) -> str:
    return json.dumps(
        {"ticket_id": "T-1", "customer_id": "C-002", "order_id": "A-1002", "category": "damaged",
         "requested_amount": amount, "message": "The blender stopped working."}
    )  # fmt: skip


def decide(run_mir: RunMir, desk: Path, amount: float, confidence: float) -> dict:
    answer = {"category": "damaged", "action": "refund", "order_id": "A-1002",
              "amount": amount, "confidence": confidence, "reason": "broken blender"}  # fmt: skip
    responses = desk / f"answer-{amount}.jsonl"
    responses.write_text(json.dumps(json.dumps(answer)) + "\n")
    ran = run_mir(
        "run", "agent", "refunds.triage", "--input", ticket(amount), "--provider", "scripted",
        "--responses", str(responses), "--json", cwd=desk,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)


def paid(desk: Path) -> list[tuple]:
    ledger = desk / ".mir" / "support_ledger.sqlite3"
    if not ledger.exists():
        return []
    with sqlite3.connect(ledger) as db:
        return db.execute("SELECT kind, order_id, amount FROM entries").fetchall()


def test_a_confident_expensive_refund_waits_with_the_rule_named(run_mir: RunMir, desk: Path):
    record = decide(run_mir, desk, 149.0, 0.99)
    assert (record["status"], record["executed"]) == ("pending_review", False)
    assert record["reasons"] == ["review_rule:expensive_refund"]
    assert paid(desk) == []
    shown = run_mir("traces", "show", record["flow_id"], "--json", cwd=desk)
    assert shown.returncode == 0, shown.stderr
    events = json.loads(shown.stdout)
    route = [e for e in events if e["step"] == "route"][-1]
    assert route["status"] == "pending_review"
    assert route["data"]["reasons"] == ["review_rule:expensive_refund"]


def test_a_small_refund_executes(run_mir: RunMir, desk: Path):
    record = decide(run_mir, desk, 30.0, 0.99)
    assert (record["status"], record["executed"], record["reasons"]) == ("executed", True, [])
    assert paid(desk) == [("refund", "A-1002", 30.0)]


def test_the_waiting_refund_is_paid_once_a_human_approves(
    run_mir: RunMir, desk: Path, tmp_path: Path
):
    key = sign_as(desk, tmp_path / "keys", None)  # a refund needs a support lead's signature
    record = decide(run_mir, desk, 149.0, 0.99)
    done = run_mir("approve", record["flow_id"], "--key", str(key), "--json", cwd=desk)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "executed"
    assert paid(desk) == [("refund", "A-1002", 149.0)]


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_a_rule_naming_what_the_schemas_lack_is_refused_with_every_problem(
    run_mir: RunMir, desk: Path
):
    contract = desk / CONTRACT
    text = contract.read_text()
    assert RULE in text
    contract.write_text(
        text.replace(
            RULE,
            '        - {field: decision.amout, op: ">", value: 100}\n'
            '        - {field: context.customr, op: "==", value: gold}\n'
            '        - {field: input.requested_amount, op: ">", value: "100"}\n'
            "  always: [refnd]\n",
        )
    )
    ran = run_mir(
        "run", "agent", "refunds.triage", "--input", ticket(149.0), "--provider", "scripted",
        "--responses", "responses/blender_broken.jsonl", cwd=desk,
    )  # fmt: skip
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "Traceback" not in ran.stderr
    where = str(contract)
    lines = [line for line in ran.stderr.splitlines() if line.startswith("error: ")]
    assert lines[0] == (
        f"error: {where}:{line_of(contract, 'decision.amout')}: review.when.0.conditions.1.field: "
        "'decision.amout' is not in the decision schema; did you mean 'decision.amount'? "
        "(fields: action, amount, category, confidence, order_id, reason)"
    )
    assert lines[1].startswith(
        f"error: {where}:{line_of(contract, 'context.customr')}: review.when.0.conditions.2.field:"
        " 'context.customr' is not in the contract's context scope; did you mean "
        "'context.customer'?"
    )
    assert lines[2].startswith(
        f"error: {where}:{line_of(contract, 'input.requested_amount')}: "
        "review.when.0.conditions.3.value: 'input.requested_amount' is a number"
    )
    assert lines[3].startswith(
        f"error: {where}:{line_of(contract, 'always: [refnd]')}: review.always.0: "
        "unknown action 'refnd'; did you mean 'refund'?"
    )
    assert len(lines) == 4
    assert paid(desk) == []


def test_a_malformed_rule_is_a_contract_error_at_its_line(run_mir: RunMir, desk: Path):
    contract = desk / CONTRACT
    text = contract.read_text()
    contract.write_text(
        text.replace("    - name: expensive_refund\n", "    - name: expensive refund\n")
    )
    ran = run_mir("run", "agent", "refunds.triage", "--input", ticket(149.0), cwd=desk)
    assert ran.returncode == 2 and "Traceback" not in ran.stderr
    assert f"{contract}:{line_of(contract, 'name: expensive refund')}: review.when.0.name" in (
        ran.stderr
    )
