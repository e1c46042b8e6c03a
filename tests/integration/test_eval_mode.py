"""Eval mode of the runtime (``load_agent(mode="eval")``): the whole pipeline runs on real
files and a real trace store, but no executor is called, the execution ledger is never
created, and the flow is traced with ``source: eval``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mir.errors import UsageError
from mir.runtime import approve, load_agent
from mir.traces import TraceStore

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"
INPUT = {"order_id": "A1", "amount": 40, "message": "broken on arrival"}


def _decision(action: str = "refund", confidence: float = 0.9, amount: float = 40) -> str:
    return json.dumps(
        {"action": action, "confidence": confidence, "amount": amount, "reason": "ok"}
    )


@pytest.fixture
def app(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    (root / "world.json").write_text(json.dumps({"A1": {"order_total": 80}}))
    return root


def _run(app: Path, lines: list[str], context=None, *, mode="eval"):
    (app / "answers.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    with load_agent(
        "refunds.triage",
        project=app,
        provider="scripted",
        responses=app / "answers.jsonl",
        mode=mode,
    ) as agent:
        record = agent.decide(INPUT, context)
        events = agent.trace(record.flow_id)
    return record, events


def test_an_eval_passes_every_check_but_never_executes_nor_opens_the_ledger(app: Path):
    record, events = _run(app, [_decision()])
    assert record.status == "executed" and record.action == "refund"
    assert record.executed is False  # would have run; did not
    assert not (app / "executed.jsonl").exists()  # the executor was never called
    assert not (app / ".mir" / "executions.db").exists()  # nor the ledger created
    snapshot = events[0]
    assert snapshot.step == "snapshot" and snapshot.data["source"] == "eval"
    executes = [e for e in events if e.step == "execute"]
    assert [e.data["phase"] for e in executes] == ["skipped"]
    assert executes[0].data["action"] == "refund"
    assert events[-1].step == "final" and events[-1].status == "executed"


def test_production_mode_replays_still_execute_and_are_traced_as_replays(app: Path):
    # recorded answers in production mode: executed as before, never production evidence
    record, events = _run(app, [_decision()], mode="production")
    assert record.executed is True
    assert (app / "executed.jsonl").exists()
    assert events[0].data["source"] == "replay" and events[-1].data["source"] == "replay"


def test_a_case_world_replaces_the_context_loader(app: Path):
    # the loader would return {} (no world file): the case's world is used instead, and
    # the loader is not asked again at the re-check either
    (app / "world.json").unlink()
    record, events = _run(app, [_decision()], context={"order_total": 90})
    assert events[0].data["context"] == {"order_total": 90}
    assert events[0].data["context_source"] == "caller"
    recheck = next(e for e in events if e.step == "recheck")
    assert recheck.data["result"] == "skipped"
    assert record.status == "executed" and not record.executed


def test_an_eval_flow_pending_review_cannot_be_approved(app: Path):
    record, _ = _run(app, [_decision(confidence=0.2)])
    assert record.status == "pending_review"
    with pytest.raises(UsageError, match="mir eval"):
        approve(record.flow_id, project=app)
    assert not (app / "executed.jsonl").exists()


def test_traces_list_filters_by_source(app: Path):
    eval_record, _ = _run(app, [_decision()])
    prod_record, _ = _run(app, [_decision()], mode="production")
    with _store(app) as store:
        every = {f.flow_id: f.source for f in store.list_flows()}
        evals = [f.flow_id for f in store.list_flows(source="eval")]
        replays = [f.flow_id for f in store.list_flows(source="replay")]
        production = [f.flow_id for f in store.list_flows(source="production")]
    assert every == {eval_record.flow_id: "eval", prod_record.flow_id: "replay"}
    assert evals == [eval_record.flow_id]
    assert replays == [prod_record.flow_id] and production == []


def _store(app: Path) -> TraceStore:
    from mir.project import find_project

    return TraceStore.for_project(find_project(app))


def test_model_override_replaces_every_model_route(app: Path):
    with load_agent("refunds.triage", project=app, model="other.gguf", mode="eval") as agent:
        routes = agent.contract.routes
    assert [r.model for r in routes] == ["other.gguf", "other.gguf"]


def test_an_unknown_mode_is_a_usage_error(app: Path):
    with pytest.raises(UsageError, match="unknown mode"):
        load_agent("refunds.triage", project=app, mode="shadowy")  # type: ignore[arg-type]
