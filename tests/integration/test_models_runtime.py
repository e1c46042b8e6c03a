"""A route naming a registry model decides on the version the registry gives each flow
(real llama.cpp on the tiny random-weight GGUF), and the infer event says which."""

from __future__ import annotations

from pathlib import Path

import pytest

from mir.errors import ConfigError
from mir.runtime import load_agent
from mir.traces import TraceStore
from tests.support.projects import llama_route, runtime_project


def _project(tmp_path: Path, model: str, registry: str) -> Path:
    return runtime_project(tmp_path / "app", llama_route(model), registry=registry)


def _registry(gguf: Path) -> str:
    return (
        f'[[models]]\nname = "triage"\nversion = "1"\nstage = "production"\n'
        f'artifact = "{gguf}"\n\n'
        f'[[models]]\nname = "triage"\nversion = "2"\nstage = "canary"\nshare = 0.5\n'
        f'artifact = "{gguf}"\ncontext = 1024\n'
    )


def test_each_flow_decides_on_its_registry_version_and_says_so(tmp_path, tiny_gguf):
    root = _project(tmp_path, "triage", _registry(tiny_gguf))
    store = TraceStore(tmp_path / "traces")
    with load_agent("refunds.triage", project=root, traces=store) as agent:
        records = [
            agent.decide({"order_id": f"A{i}", "amount": 40, "message": "x"}) for i in range(12)
        ]
    arms = []
    for record in records:
        infer = [e for e in store.flow(record.flow_id) if e.step == "infer"]
        assert infer, record
        registry = infer[0].data["registry"]
        assert registry["name"] == "triage"
        assert (registry["version"], registry["arm"]) in {("1", "production"), ("2", "canary")}
        arms.append(registry["arm"])
    store.close()
    assert set(arms) == {"production", "canary"}  # 12 flows at share 0.5: both arms (p=0.9995)


def test_an_unknown_registry_model_is_refused_at_load(tmp_path, tiny_gguf):
    root = _project(tmp_path, "triage@7", _registry(tiny_gguf))
    with pytest.raises(ConfigError, match="triage has no version '7'"):
        load_agent("refunds.triage", project=root, traces=TraceStore(tmp_path / "t"))
