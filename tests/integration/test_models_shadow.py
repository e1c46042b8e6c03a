"""Shadow decisions: a registry ``shadow`` version re-decides every
production decision on the same frozen snapshot, in the background, never executed.

Only the model layer is scripted: ``deps.providers`` answers by the concrete route's
model (the resolver gives each registry version its own route); registry, resolver,
pipeline, trace store, ledger and executors are the real ones.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mir.errors import UsageError
from mir.inference import ModelRequest, ModelResponse, ProviderError
from mir.runtime import approve, load_agent
from mir.runtime.api import Agent
from mir.traces import TraceStore
from tests.integration.test_models_runtime import _project

N = 100


def _registry(production: Path, shadow: Path) -> str:
    return (
        f'[[models]]\nname = "triage"\nversion = "1"\nstage = "production"\n'
        f'artifact = "{production}"\n\n'
        f'[[models]]\nname = "triage"\nversion = "2"\nstage = "shadow"\n'
        f'artifact = "{shadow}"\n'
    )


def _answer(action: str, confidence: float = 0.95) -> str:
    return json.dumps(
        {"action": action, "confidence": confidence, "amount": 0, "reason": "scripted"}
    )


def _order(i: int) -> dict[str, Any]:
    # Every tenth order carries a word the shadow model reacts to (10 % disagreement).
    return {"order_id": f"A{i}", "amount": 40, "message": "odd-one" if i % 10 == 0 else "x"}


class ByOrder:
    """A scripted model: 'deny', or with ``differs`` 'escalate' for the odd-one orders."""

    name = "scripted"

    def __init__(self, differs: bool = False, behaviour: str = "answer", confidence: float = 0.95):
        self.differs = differs
        self.confidence = confidence
        self.behaviour = behaviour
        self.calls = 0
        self.release = threading.Event()

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        if self.behaviour == "raise":
            raise RuntimeError("shadow model exploded")
        if self.behaviour == "hang":
            self.release.wait(60)
            raise ProviderError("released")
        text = request.messages[-1].content
        action = "escalate" if self.differs and "odd-one" in text else "deny"
        return ModelResponse(
            text=_answer(action, self.confidence), provider="scripted", model="scripted"
        )

    def cache_identity(self, request: ModelRequest) -> dict[str, Any]:
        return {"provider": "scripted"}


def _setup(tmp_path: Path, tiny_gguf: Path) -> tuple[Path, Path, Path]:
    production, shadow = tmp_path / "v1.gguf", tmp_path / "v2.gguf"
    shutil.copy(tiny_gguf, production)
    shutil.copy(tiny_gguf, shadow)
    return _project(tmp_path, "triage", _registry(production, shadow)), production, shadow


def _agent(root: Path, store: TraceStore, models: dict[str, Any]) -> Agent:
    loaded = load_agent("refunds.triage", project=root, traces=store)
    return Agent(
        loaded.parts, replace(loaded.deps, providers=lambda route: models[Path(route.model).name])
    )


def _flows(store: TraceStore) -> tuple[dict[str, list], dict[str, list]]:
    """(production flows, shadow flows by the production flow they shadow)."""
    by_flow: dict[str, list] = {}
    for event in store.events():
        by_flow.setdefault(event.flow_id, []).append(event)
    production: dict[str, list] = {}
    shadows: dict[str, list] = {}
    for flow_id, events in by_flow.items():
        events.sort(key=lambda e: e.seq)
        snapshot = events[0].data
        if snapshot.get("source") == "shadow":
            shadows[snapshot["shadow_of"]] = events
        else:
            production[flow_id] = events
    return production, shadows


def _action(events: list) -> str | None:
    final = [e for e in events if e.step == "final"][-1]
    return final.data["record"]["action"]


def test_a_shadow_decides_every_production_decision_and_executes_nothing(tmp_path, tiny_gguf):
    root, _, _ = _setup(tmp_path, tiny_gguf)
    models = {"v1.gguf": ByOrder(), "v2.gguf": ByOrder(differs=True)}
    store = TraceStore(tmp_path / "traces")
    agent = _agent(root, store, models)
    records = [agent.decide(_order(i)) for i in range(N)]
    assert agent.shadow is not None and agent.shadow.wait(60)
    stats = agent.shadow.stats
    agent.close()
    assert all(r.executed and r.action == "deny" for r in records), records[0]
    assert (stats.decided, stats.failed, stats.dropped) == (N, 0, 0)
    production, shadows = _flows(store)
    assert set(production) == {r.flow_id for r in records}
    assert set(shadows) == set(production)
    agree = sum(_action(production[f]) == _action(shadows[f]) for f in production)
    assert agree == 90
    for flow_id, events in shadows.items():
        snapshot = events[0]
        original = production[flow_id][0]
        assert snapshot.data["input"] == original.data["input"]
        assert snapshot.data["context"] == original.data["context"]
        infer = next(e for e in events if e.step == "infer")
        assert infer.data["registry"]["arm"] == "shadow"
        assert infer.data["registry"]["version"] == "2"
        final = [e for e in events if e.step == "final"][-1]
        assert final.data["record"]["executed"] is False
        production_infer = next(e for e in production[flow_id] if e.step == "infer")
        assert production_infer.data["registry"]["arm"] == "production"
    # `mir traces list` shows production flows only, by default.
    assert {f.flow_id for f in store.list_flows(source="production", limit=10_000)} == set(
        production
    )
    store.close()
    executed = (root / "executed.jsonl").read_text().splitlines()
    assert len(executed) == N
    with sqlite3.connect(root / ".mir" / "executions.db") as db:
        flows = {
            json.loads(info)["flow_id"] for (info,) in db.execute("SELECT info FROM executions")
        }
    assert flows == set(production)


def _latency(agent: Agent, n: int) -> list[float]:
    times = []
    for i in range(n):
        started = time.perf_counter()
        agent.decide(_order(i))
        times.append(time.perf_counter() - started)
    return times


def test_a_shadow_that_raises_or_hangs_never_touches_production(tmp_path, tiny_gguf):
    root, _, _ = _setup(tmp_path, tiny_gguf)
    store = TraceStore(tmp_path / "traces")
    for behaviour in ("raise", "hang"):
        shadow = ByOrder(behaviour=behaviour)
        agent = _agent(root, store, {"v1.gguf": ByOrder(), "v2.gguf": shadow})
        started = time.perf_counter()
        records = [agent.decide(_order(i)) for i in range(5)]
        elapsed = time.perf_counter() - started
        assert all(r.status == "executed" and r.action == "deny" for r in records), records
        assert all(r.reasons == [] for r in records)
        assert elapsed < 5  # a hanging shadow (60 s) is not waited for
        assert agent.shadow is not None
        if behaviour == "raise":
            assert agent.shadow.wait(30)
            assert agent.shadow.stats.failed == 5  # counted, never raised to the caller
        began = time.perf_counter()
        stats = agent.shadow.close(timeout_s=0.5)
        assert time.perf_counter() - began < 2
        if behaviour == "hang":
            assert stats.dropped >= 1
            shadow.release.set()
        agent.close()
    store.close()


def test_a_shadow_flow_pending_review_cannot_be_approved(tmp_path, tiny_gguf):
    root, _, _ = _setup(tmp_path, tiny_gguf)
    store = TraceStore(tmp_path / "traces")
    agent = _agent(root, store, {"v1.gguf": ByOrder(), "v2.gguf": ByOrder(confidence=0.3)})
    record = agent.decide(_order(1))
    assert agent.shadow is not None and agent.shadow.wait(30)
    agent.close()
    _, shadows = _flows(store)
    shadow_final = [e for e in shadows[record.flow_id] if e.step == "final"]
    shadow_id = shadows[record.flow_id][0].flow_id
    assert not shadow_final or shadow_final[-1].data["record"]["status"] == "pending_review"
    with pytest.raises(UsageError, match="shadow model version"):
        approve(shadow_id, project=root, traces=store)
    store.close()
    assert len((root / "executed.jsonl").read_text().splitlines()) == 1


def test_a_shadow_given_up_at_close_still_ends_in_the_trace(tmp_path, tiny_gguf):
    # close() gives up on a running shadow decision (a slow model at the end of a CLI
    # run): its flow gets a final event (aborted, shed), and nothing it writes later
    root, _, _ = _setup(tmp_path, tiny_gguf)
    store = TraceStore(tmp_path / "traces")
    shadow = ByOrder(behaviour="hang")
    agent = _agent(root, store, {"v1.gguf": ByOrder(), "v2.gguf": shadow})
    record = agent.decide(_order(1))
    assert agent.shadow is not None
    deadline = time.monotonic() + 30
    while not shadow.calls and time.monotonic() < deadline:  # the shadow is in its model call
        time.sleep(0.01)
    stats = agent.shadow.close(timeout_s=0.3)
    assert stats.dropped == 1
    shadow.release.set()  # the abandoned flow goes on (a ProviderError, then the rules)
    time.sleep(0.5)
    agent.close()
    _, shadows = _flows(store)
    events = shadows[record.flow_id]
    finals = [e for e in events if e.step == "final"]
    assert len(finals) == 1, events
    assert finals[0].status == "aborted" and list(finals[0].reasons) == ["shed"]
    assert finals[0].data["source"] == "shadow"
    assert finals[0].data["record"]["status"] == "aborted"
    assert finals[0].seq == max(e.seq for e in events)
    store.close()
