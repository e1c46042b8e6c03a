"""The library API over the fixture project, with in-memory traces."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mir.errors import UsageError
from mir.runtime import approve, load_agent, reject
from mir.runtime.arguments import read_json_object
from tests.unit.runtime.fakes import MemoryTraces

FIXTURE = Path(__file__).parents[2] / "fixtures" / "runtime" / "project"
GOOD = {"action": "refund", "confidence": 0.9, "amount": 40, "reason": "broken"}


@pytest.fixture
def app(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    return root


def responses(root: Path, *decisions: dict) -> Path:
    path = root / "r.jsonl"
    path.write_text("".join(json.dumps(json.dumps(d)) + "\n" for d in decisions))
    return path


def test_decide_then_approve_through_the_api(app: Path):
    traces = MemoryTraces()
    low = {**GOOD, "confidence": 0.2}
    # low confidence cascades local -> remote: each pending decision reads two lines
    script = responses(app, GOOD, low, low, low, low)
    with load_agent(
        "refunds.triage", project=app, provider="scripted", responses=script, traces=traces
    ) as agent:
        assert agent.name == "refunds.triage"
        done = agent.decide({"order_id": "A1", "amount": 40})
        assert done.status == "executed"
        steps = [e.step for e in agent.trace(done.flow_id)]
        assert steps[0] == "snapshot" and steps[-1] == "final"
        pending = agent.decide({"order_id": "A1", "amount": 40})
        # a caller-supplied context the loader's world contradicts
        claimed = agent.decide({"order_id": "A1", "amount": 40}, {"order_total": 1})
    assert pending.status == claimed.status == "pending_review"
    approved = approve(pending.flow_id, project=app, by="ana", traces=traces)
    assert approved.status == "executed" and approved.flow_id == pending.flow_id
    assert approve(claimed.flow_id, project=app, traces=traces).status == "stale"
    assert len((app / "executed.jsonl").read_text().splitlines()) == 2


def test_reject_through_the_api(app: Path):
    traces = MemoryTraces()
    script = responses(app, {**GOOD, "confidence": 0.2})
    with load_agent(
        "refunds.triage", project=app, provider="scripted", responses=script, traces=traces
    ) as agent:
        pending = agent.decide({"order_id": "A1", "amount": 40})
    record = reject(pending.flow_id, project=app, reason="no", traces=traces)
    assert record.status == "rejected" and not (app / "executed.jsonl").exists()


def test_the_rules_provider_never_builds_a_model(app: Path):
    with load_agent("refunds.triage", project=app, provider="rules", traces=MemoryTraces()) as a:
        record = a.decide({"order_id": "A1", "amount": 5})
    assert record.status == "fallback" and record.decision["amount"] == 5


def test_a_provider_the_contract_has_no_route_for(app: Path):
    with pytest.raises(UsageError, match="has no litellm route"):
        load_agent("refunds.quick", project=app, provider="litellm", traces=MemoryTraces())


@pytest.mark.parametrize(
    ("value", "message"),
    [("{", "invalid JSON at line 1 column 2"), ("1", "expected a JSON object, got int")],
)
def test_json_arguments_name_the_option(value: str, message: str):
    with pytest.raises(UsageError, match=message) as info:
        read_json_object(value, "--context")
    assert info.value.where == "--context"


def test_json_arguments_from_a_file(tmp_path: Path):
    (tmp_path / "in.json").write_text('{"a": 1}')
    assert read_json_object(f"@{tmp_path / 'in.json'}", "--input") == {"a": 1}


def test_a_contract_tightened_before_approval_is_enforced_at_execution(app: Path):
    traces = MemoryTraces()
    low = {**GOOD, "confidence": 0.2}
    script = responses(app, low, low)
    with load_agent(
        "refunds.triage", project=app, provider="scripted", responses=script, traces=traces
    ) as agent:
        pending = agent.decide({"order_id": "A1", "amount": 40})
    contract = app / "capabilities/refunds/agents/triage.yaml"
    contract.write_text(contract.read_text().replace("maximum: 500", "maximum: 30"))
    record = approve(pending.flow_id, project=app, traces=traces)
    assert record.status == "aborted" and "limit_exceeded" in record.reasons
    review = next(e for e in traces.flow(pending.flow_id) if e.step == "review")
    assert review.data["contract_changed"] is True
    assert not (app / "executed.jsonl").exists()


def test_a_pending_flow_survives_the_project_moving(app: Path, tmp_path: Path):
    traces = MemoryTraces()
    script = responses(app, {**GOOD, "confidence": 0.2}, {**GOOD, "confidence": 0.2})
    with load_agent(
        "refunds.triage", project=app, provider="scripted", responses=script, traces=traces
    ) as agent:
        pending = agent.decide({"order_id": "A1", "amount": 40})
    snapshot = traces.flow(pending.flow_id)[0]
    assert snapshot.data["contract"] == "capabilities/refunds/agents/triage.yaml"
    moved = tmp_path / "moved"
    shutil.move(app, moved)
    record = approve(pending.flow_id, project=moved, traces=traces)
    assert record.status == "executed"
    assert (moved / "executed.jsonl").exists()
