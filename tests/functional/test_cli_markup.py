"""Terminal output prints model-, user- and file-written text literally, never as markup.

A reason of ``[/bold] x`` used to raise rich's MarkupError AFTER the refund was paid (the
run exited 1), and ``[blink red]PAID[/]`` showed as ``PAID``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"
INPUT = json.dumps({"order_id": "A1", "amount": 40, "message": "arrived [bold]broken[/]"})
REASONS = ["[/bold] x", "[blink red]PAID[/]"]


def scripted(root: Path, reason: str, confidence: float = 0.9) -> str:
    decision = {"action": "refund", "confidence": confidence, "amount": 40, "reason": reason}
    (root / "r.jsonl").write_text(json.dumps(json.dumps(decision)) + "\n")
    return "r.jsonl"


def executed(root: Path) -> list[dict]:
    log = root / "executed.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.mark.parametrize("reason", REASONS)
def test_run_agent_prints_a_markup_reason_as_stored(run_mir, app: Path, reason: str):
    responses = scripted(app, reason)
    result = run_mir(
        "run", "agent", "refunds.triage", "-i", INPUT,
        "--provider", "scripted", "--responses", responses, cwd=app,
    )  # fmt: skip
    # the refund was paid: the run ends as the flow ended, never 1 from rendering
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "MarkupError" not in result.stderr
    assert [e["params"]["reason"] for e in executed(app)] == [reason]
    assert json.dumps(reason) in result.stdout  # the decision line, literally

    flow_id = run_mir("traces", "list", "--json", cwd=app)
    flow = json.loads(flow_id.stdout)[0]["flow_id"]
    shown = run_mir("traces", "show", flow, cwd=app)
    assert shown.returncode == 0, shown.stderr
    assert reason in shown.stdout and "arrived [bold]broken[/]" in shown.stdout


def test_a_pending_flow_and_a_suspension_reason_print_literally(run_mir, app: Path):
    responses = scripted(app, "[blink red]PAID[/]", confidence=0.3)
    result = run_mir(
        "run", "agent", "refunds.triage", "-i", INPUT,
        "--provider", "scripted", "--responses", responses, cwd=app,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "pending_review" in result.stdout and "[blink red]PAID[/]" in result.stdout
    suspended = run_mir("agents", "suspend", "refunds.quick", "--reason", "[/bold] drift", cwd=app)
    assert suspended.returncode == 0, suspended.stderr
    listing = run_mir("agents", "list", cwd=app)
    assert listing.returncode == 0, listing.stderr
    assert "[/bold] drift" in listing.stdout


def test_an_error_echoing_user_input_prints_it_literally(run_mir, app: Path):
    result = run_mir("run", "agent", "refunds.[red]x[/]", "-i", INPUT, cwd=app)
    assert result.returncode == 2
    assert "refunds.[red]x[/]" in result.stderr
