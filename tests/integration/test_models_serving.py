"""A registry version served by an OpenAI-compatible server (llama.cpp's own, started by the
``llama_server`` fixture on 127.0.0.1) is decided on through litellm, canaried against an
in-process llama version, and failed over from when the server is down — each traced."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mir.runtime import load_agent
from mir.traces import TraceStore
from tests.support.fixtures import SERVER_ALIAS, free_port

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("llama_server")]

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"


def _project(tmp_path: Path, registry: str, routes: str) -> Path:
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    contract = root / "capabilities/refunds/agents/triage.yaml"
    text = contract.read_text()
    old = text[text.index("routes:") : text.index("cascade_on:")]
    contract.write_text(text.replace(old, "routes:\n" + routes))
    (root / "models.toml").write_text(registry)
    return root


ONE_ROUTE = "  - {name: triage, provider: llama, model: triage, max_tokens: 48}\n"


def _server_entry(version: str, stage: str, api_base: str, extra: str = "") -> str:
    return (
        f'[[models]]\nname = "triage"\nversion = "{version}"\nstage = "{stage}"\n{extra}'
        f'provider = "litellm"\nartifact = "openai/{SERVER_ALIAS}"\napi_base = "{api_base}"\n\n'
    )


def _file_entry(version: str, stage: str, gguf: Path, extra: str = "") -> str:
    return (
        f'[[models]]\nname = "triage"\nversion = "{version}"\nstage = "{stage}"\n{extra}'
        f'artifact = "{gguf}"\n\n'
    )


def _decide(root: Path, store: TraceStore, count: int) -> list[list]:
    with load_agent("refunds.triage", project=root, traces=store) as agent:
        records = [
            agent.decide({"order_id": f"A{i}", "amount": 40, "message": "broken"})
            for i in range(count)
        ]
    return [store.flow(r.flow_id) for r in records]


def _infers(events: list) -> list:
    return [e for e in events if e.step == "infer"]


def test_a_served_version_decides_and_the_infer_event_names_it(tmp_path, llama_server):
    root = _project(tmp_path, _server_entry("5", "production", llama_server), ONE_ROUTE)
    store = TraceStore(tmp_path / "traces")
    for events in _decide(root, store, 3):
        infer = _infers(events)
        assert infer, events
        assert infer[0].data["registry"] == {
            "name": "triage",
            "version": "5",
            "stage": "production",
            "arm": "production",
        }
        assert "provider_error" not in infer[0].reasons, infer[0].data.get("error")
    store.close()


def test_a_canary_splits_flows_between_in_process_and_served(tmp_path, tiny_gguf, llama_server):
    registry = _file_entry("1", "production", tiny_gguf) + _server_entry(
        "2", "canary", llama_server, extra="share = 0.5\n"
    )
    root = _project(tmp_path, registry, ONE_ROUTE)
    store = TraceStore(tmp_path / "traces")
    seen = set()
    for events in _decide(root, store, 12):
        registry_data = _infers(events)[0].data["registry"]
        seen.add((registry_data["version"], registry_data["arm"]))
    store.close()
    assert seen == {("1", "production"), ("2", "canary")}  # 12 flows at 0.5: p=0.9995


def test_a_server_that_is_down_fails_over_to_the_next_route(tmp_path, tiny_gguf):
    down = f"http://127.0.0.1:{free_port()}/v1"
    registry = _server_entry("9", "production", down) + (
        f'[[models]]\nname = "local"\nversion = "1"\nstage = "production"\n'
        f'artifact = "{tiny_gguf}"\n'
    )
    routes = ONE_ROUTE + "  - {name: local, provider: llama, model: local, max_tokens: 48}\n"
    root = _project(tmp_path, registry, routes)
    store = TraceStore(tmp_path / "traces")
    (events,) = _decide(root, store, 1)
    store.close()
    infer = _infers(events)
    assert [e.data["registry"]["name"] for e in infer][:1] == ["triage"]
    assert infer[0].data["registry"]["version"] == "9"
    hops = [e for e in events if e.step == "route" and e.data.get("to") == "local"]
    assert hops, [(e.step, e.reasons, e.data) for e in events]
    assert infer[-1].data["registry"] == {
        "name": "local",
        "version": "1",
        "stage": "production",
        "arm": "production",
    }


def test_a_server_that_is_down_falls_back_to_the_rules(tmp_path):
    down = f"http://127.0.0.1:{free_port()}/v1"
    root = _project(tmp_path, _server_entry("9", "production", down), ONE_ROUTE)
    store = TraceStore(tmp_path / "traces")
    (events,) = _decide(root, store, 1)
    store.close()
    infer = _infers(events)
    assert infer and infer[0].data["registry"]["version"] == "9"
    assert infer[0].reasons == ("provider_error",)
    assert "Connection" in infer[0].data["error"]
    (fallback,) = [e for e in events if e.step == "fallback"]
    assert fallback.data["rule"] == "default"  # amount 40: no rule matches, escalate
