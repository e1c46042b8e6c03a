"""The example's review rule on the embedded SmolLM2 (slow): a 149 EUR refund waits for a
human whatever confidence the model reports."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import REPO

EXAMPLE = REPO / "examples" / "support_desk"


@pytest.mark.slow
def test_the_embedded_model_cannot_pay_an_expensive_refund_without_a_human(tmp_path: Path):
    from mir import load_agent

    desk = tmp_path / "support_desk"
    shutil.copytree(EXAMPLE, desk, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
    contract = desk / "capabilities" / "refunds" / "agents" / "triage.yaml"
    text = contract.read_text()
    # No confidence can send it to review here: only the rule can.
    assert "  confidence_threshold: 0.7\n" in text
    contract.write_text(
        text.replace("  confidence_threshold: 0.7\n", "  confidence_threshold: 0\n")
    )
    blender = json.loads((desk / "inputs" / "blender_broken.json").read_text())
    assert blender["requested_amount"] == 149.0
    with load_agent("refunds.triage", project=desk) as agent:
        record = agent.decide(blender)
    assert record.provider == "llama", record
    assert (record.status, record.action, record.executed) == ("pending_review", "refund", False)
    assert record.decision is not None and record.decision["amount"] > 100
    assert record.reasons == ["review_rule:expensive_refund"], record.reasons
    with sqlite3.connect(desk / ".mir" / "support_ledger.sqlite3") as db:  # read by the world
        assert db.execute("SELECT count(*) FROM entries").fetchone() == (0,)
