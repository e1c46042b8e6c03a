"""``run_agent(progress=...)`` hears each step; a failing callback changes nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mir.runtime import run_agent

FIXTURE = Path(__file__).parents[2] / "fixtures" / "runtime" / "project"
GOOD = {"action": "refund", "confidence": 0.9, "amount": 40, "reason": "broken"}
INPUT = json.dumps({"order_id": "A1", "amount": 40})


@pytest.fixture
def app(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    (root / "world.json").write_text(json.dumps({"A1": {"order_total": 80}}))
    (root / "r.jsonl").write_text(json.dumps("prose") + "\n" + json.dumps(json.dumps(GOOD)) + "\n")
    return root


def decide(app: Path, progress):
    return run_agent(
        "refunds.triage", input=INPUT, provider="scripted", responses=str(app / "r.jsonl"),
        project=app, progress=progress,
    )  # fmt: skip


def test_progress_names_each_attempt_and_the_execution(app: Path):
    steps: list[str] = []
    record = decide(app, steps.append)
    assert record.status == "executed"
    assert steps == [
        "inferring with scripted/default (attempt 1/3)",
        "inferring with scripted/default (attempt 2/3)",
        "executing refund",
    ]


def test_a_failing_progress_callback_changes_nothing(app: Path):
    def broken(step: str) -> None:
        raise RuntimeError("terminal went away")

    record = decide(app, broken)
    assert record.status == "executed" and record.executed
