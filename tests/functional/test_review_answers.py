"""``mir approve`` / ``mir reject`` say who reviewed the flow and when, and an ambiguous
flow prefix lists the flows it could mean."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

from .test_run_agent import GOOD, run, script
from .test_traces_cli import project  # noqa: F401 - the seeded three-flow store


def _pending(run_mir, app: Path) -> str:
    name = script(app, {**GOOD, "confidence": 0.3})
    _, record = run(run_mir, app, "--provider", "scripted", "--responses", name, "--json")
    assert record["status"] == "pending_review"
    return record["flow_id"]


def test_approve_says_who_approved_and_when(run_mir, app: Path):
    flow_id = _pending(run_mir, app)
    before = datetime.now(UTC).replace(microsecond=0)
    approved = run_mir("approve", flow_id, "--by", "ana", cwd=app)
    assert approved.returncode == 0, approved.stderr
    [line] = [line for line in approved.stdout.splitlines() if "review" in line]
    found = re.search(r"approved by ana at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC", line)
    assert found, approved.stdout
    at = datetime.fromisoformat(found.group(1)).replace(tzinfo=UTC)
    assert before <= at <= datetime.now(UTC)


def test_reject_says_who_rejected_and_json_carries_it(run_mir, app: Path):
    flow_id = _pending(run_mir, app)
    rejected = run_mir("reject", flow_id, "--by", "bo", "--json", cwd=app)
    assert rejected.returncode == 0, rejected.stderr
    record = json.loads(rejected.stdout)
    assert record["status"] == "rejected" and record["review"]["by"] == "bo"
    assert datetime.fromisoformat(record["review"]["at"]).tzinfo is not None
    # a plain decision's record keeps its shape
    _, fresh = run(run_mir, app, "--provider", "rules", "--json")
    assert "review" not in fresh and "reviewed_by" not in fresh


def test_an_ambiguous_prefix_lists_the_candidates(run_mir, project: Path):  # noqa: F811
    for command in ("approve", "reject"):
        result = run_mir(command, "a1", cwd=project)
        assert result.returncode == 2
        assert result.stderr.strip() == (
            "error: flow id prefix 'a1' is ambiguous (a1b2c3d4, a1ffee00) "
            "(give more characters of the flow id)"
        )
