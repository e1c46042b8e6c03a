"""Hostile model outputs and hostile caller input through the real `mir run agent`, on a
copy of examples/support_desk: every one ends in a record and an exit code, never a
traceback, and exactly one `final` event in the traces."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO, RunMir

EXAMPLE = REPO / "examples" / "support_desk"
GOOD = {
    "category": "damaged",
    "action": "refund",
    "order_id": "A-1001",
    "amount": 24.9,
    "confidence": 1.0,
    "reason": "arrived broken",
}


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    copy = tmp_path / "support_desk"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
    return copy


def script(root: Path, *outputs: str) -> str:
    (root / "r.jsonl").write_text("".join(json.dumps(o) + "\n" for o in outputs))
    return "r.jsonl"


def decide(run_mir: RunMir, root: Path, ticket: str, *extra: str, responses: str = "r.jsonl"):
    result = run_mir(
        "run", "agent", "refunds.triage", "--input", ticket,
        "--provider", "scripted", "--responses", responses, "--json", *extra,
        cwd=root,
    )  # fmt: skip
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.stdout, f"exit {result.returncode}: {result.stderr}"
    record = json.loads(result.stdout)
    events = json.loads(run_mir("traces", "show", record["flow_id"], "--json", cwd=root).stdout)
    steps = [e["step"] for e in (events["events"] if isinstance(events, dict) else events)]
    assert steps.count("final") == 1 and steps[0] == "snapshot"
    return result.returncode, record


def _deep(text: str, depth: int) -> str:
    return text.replace('"arrived broken"', "[" * depth + "]" * depth)


HOSTILE_OUTPUTS = [
    pytest.param(
        json.dumps({k: v for k, v in GOOD.items() if k != "action"}),
        "missing_field",
        id="no-action",
    ),
    pytest.param(json.dumps(GOOD).replace("24.9", "1" * 310), "number_too_large", id="310-digits"),
    pytest.param(
        json.dumps(GOOD).replace("24.9", "1" * 5000), "number_too_large", id="5000-digits"
    ),
    pytest.param(_deep(json.dumps(GOOD), 400), "too_deep", id="nested-400"),
    pytest.param(json.dumps(GOOD).replace("24.9", "1e400"), "not_json", id="infinite-amount"),
    pytest.param("[" * 100_000, "output_too_large", id="100k-brackets"),
]


@pytest.mark.parametrize(("output", "code"), HOSTILE_OUTPUTS)
def test_hostile_model_output_ends_in_a_fallback_never_a_crash(
    run_mir: RunMir, desk: Path, output: str, code: str
):
    script(desk, output, output, output)
    exit_code, record = decide(run_mir, desk, "@inputs/damaged_mug.json")
    assert exit_code == 0
    assert code in record["reasons"] and "retries_exhausted" in record["reasons"]
    # The model's proposal never ran: the contract's rule for a small damaged item did.
    assert (record["status"], record["provider"]) == ("fallback", "rules")


@pytest.mark.parametrize(
    ("ticket", "why"),
    [
        pytest.param("{}", "order_id", id="empty"),
        pytest.param(
            '{"ticket_id": "T", "customer_id": "C-001", "order_id": "A-1001", "category": '
            f'"damaged", "requested_amount": {"9" * 400}, "message": "x"}}',
            "integer of",
            id="400-digit-amount",
        ),
        pytest.param(
            '{"ticket_id": "T", "customer_id": "C-001", "order_id": "A-1001", "category": '
            '"damaged", "requested_amount": "forty", "message": "x"}',
            "requested_amount",
            id="text-amount",
        ),
    ],
)
def test_an_input_the_contract_refuses_is_rejected_with_exit_1(
    run_mir: RunMir, desk: Path, ticket: str, why: str
):
    script(desk, json.dumps(GOOD))
    exit_code, record = decide(run_mir, desk, ticket)
    assert exit_code == 1
    assert (record["status"], record["reasons"], record["executed"]) == (
        "rejected",
        ["input_invalid"],
        False,
    )
    assert record["provider"] is None  # the model was never called
    shown = run_mir("traces", "show", record["flow_id"], "--json", cwd=desk).stdout
    assert why in shown


def test_a_refund_for_another_customers_order_is_refused(run_mir: RunMir, desk: Path):
    other = {**GOOD, "order_id": "A-1004", "amount": 149.0}
    script(desk, *[json.dumps(other)] * 3)
    exit_code, record = decide(run_mir, desk, "@inputs/blender_broken.json")
    assert exit_code == 0 and "binding_violated" in record["reasons"]
    assert record["action"] == "escalate" and record["decision"]["order_id"] == "A-1002"


def test_the_injection_ticket_is_not_refunded_whatever_the_model_says(run_mir: RunMir, desk: Path):
    exit_code, record = decide(
        run_mir, desk, "@inputs/injection.json", responses="responses/injection.jsonl"
    )
    assert exit_code == 0 and "binding_violated" in record["reasons"]
    assert record["action"] != "refund"
    shown = run_mir("traces", "show", record["flow_id"], "--json", cwd=desk).stdout
    assert "category: 'damaged' must equal $input.category" in shown
    assert "above $context.refund_allowance (0.0)" in shown


def test_a_context_loader_that_raises_is_an_aborted_traced_flow(run_mir: RunMir, desk: Path):
    script(desk, json.dumps(GOOD))
    env = {"SUPPORT_DESK_STORE": str(desk / "no-such-store.json")}
    result = run_mir(
        "run", "agent", "refunds.triage", "--input", "@inputs/damaged_mug.json",
        "--provider", "scripted", "--responses", "r.jsonl", "--json",
        cwd=desk, env=env,
    )  # fmt: skip
    assert result.returncode == 1 and "Traceback" not in result.stderr
    record = json.loads(result.stdout)
    assert (record["status"], record["reasons"]) == ("aborted", ["context_unavailable"])
    listed = json.loads(run_mir("traces", "list", "--json", cwd=desk).stdout)
    assert [(f["flow_id"], f["status"]) for f in listed] == [(record["flow_id"], "aborted")]
