"""Hostile model outputs (H8) through the real ``mir`` CLI on a copy of examples/support_desk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.functional.test_attack_reviewers import copy_desk


@pytest.fixture
def desk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return copy_desk(tmp_path, monkeypatch)


def test_an_output_with_a_duplicate_key_is_not_json(run_mir, desk):
    """`{"action": "reject", ..., "action": "refund"}`: Python keeps the last key, other
    parsers (and a reviewer reading the raw output) the first, so what was approved and
    what runs could differ. It was accepted as a refund of 149; it must be refused."""
    raw = (
        '{"category": "damaged", "action": "reject", "order_id": "A-1002", "amount": 1.0,'
        ' "confidence": 1, "reason": "x", "action": "refund", "amount": 149.0}'
    )
    replies = desk / "duplicate.jsonl"
    replies.write_text((json.dumps(raw) + "\n") * 3, encoding="utf-8")
    done = run_mir(
        "run", "agent", "refunds.triage", "--input", "@inputs/blender_broken.json",
        "--provider", "scripted", "--responses", str(replies), "--json", cwd=desk,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["reasons"][0] == "not_json", record
    assert record["status"] == "fallback" and record["action"] == "escalate", record
