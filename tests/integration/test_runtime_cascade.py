"""Cascade from a failing local route to a real remote one: litellm against llama.cpp's
OpenAI-compatible server on 127.0.0.1 (the tiny random-weight model of tests/support)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mir.runtime import load_agent
from mir.traces import TraceStore
from tests.support.fixtures import SERVER_ALIAS

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"

pytestmark = pytest.mark.slow  # a server process, and `import litellm` takes seconds


def test_invalid_local_output_cascades_to_the_remote_route(tmp_path: Path, llama_server: str):
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    (root / "bad.jsonl").write_text('"not json"\n' * 3)
    contract = root / "capabilities/refunds/agents/triage.yaml"
    text = contract.read_text()
    routes = text[text.index("routes:") : text.index("cascade_on:")]
    contract.write_text(
        text.replace(
            routes,
            "routes:\n"
            "  - {name: local, provider: scripted, responses: bad.jsonl}\n"
            f"  - {{name: remote, provider: litellm, model: openai/{SERVER_ALIAS}, "
            f"api_base: '{llama_server}', max_tokens: 96, timeout_s: 60}}\n",
        )
    )
    store = TraceStore(tmp_path / "traces")
    with load_agent("refunds.triage", project=root, traces=store) as agent:
        record = agent.decide({"order_id": "A1", "amount": 40, "message": "broken"})
    events = store.flow(record.flow_id)
    store.close()
    local = [e for e in events if e.step == "infer" and e.provider == "scripted"]
    remote = [e for e in events if e.step == "infer" and e.provider == "litellm"]
    cascade = [e for e in events if e.step == "route" and e.data.get("cascade")]
    assert len(local) == 3  # 1 + retries, then the contract says: cascade on invalid
    assert cascade[0].data == {"cascade": "invalid", "to": "remote"}
    assert remote and remote[0].prompt_tokens > 0  # a real completion from the server
    assert record.status in {"executed", "pending_review", "fallback"}
    executed = root / "executed.jsonl"
    lines = [json.loads(x) for x in executed.read_text().splitlines()] if executed.exists() else []
    if record.status == "executed":
        # whatever the noise model said, what ran passed the contract
        assert record.provider == "litellm"
        assert 0 <= record.decision["amount"] <= 500
        assert len(lines) == 1
