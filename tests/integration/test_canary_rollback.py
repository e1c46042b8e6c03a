"""The canary arm: its share of real flows, and its automatic rollback on evidence.

Real registry, runtime, trace store and DuckDB; only the model layer is scripted, one
script per registry version (the resolver gives each version its own concrete route).
"""

from __future__ import annotations

import json
import shutil
import threading
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, HTTPServer
from itertools import count
from pathlib import Path

from mir.inference.domain import ModelRequest, ModelResponse
from mir.models import Stage, read_registry
from mir.releases import CanaryWatch, check_canaries, compare_arms
from mir.runtime import load_agent
from mir.traces import TraceStore

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"
VALID = '{"action": "deny", "confidence": 0.95, "amount": 0, "reason": "no"}'


def _project(tmp_path: Path, share: float, alerts: str = "") -> Path:
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    contract = root / "capabilities/refunds/agents/triage.yaml"
    text = contract.read_text()
    routes = text[text.index("routes:") : text.index("cascade_on:")]
    text = text.replace(routes, "routes:\n  - {name: remote, provider: litellm, model: triage}\n")
    contract.write_text(text.replace("retries: 2", "retries: 0"))
    (root / "models.toml").write_text(
        '# the triage model\n[[models]]\nname = "triage"\nversion = "1"\nstage = "production"\n'
        'provider = "litellm"\nartifact = "openai/triage-v1"\napi_base = "http://127.0.0.1:9/v1"\n\n'
        f'[[models]]\nname = "triage"\nversion = "2"\nstage = "canary"\nshare = {share}\n'
        'provider = "litellm"\nartifact = "openai/triage-v2"\napi_base = "http://127.0.0.1:9/v1"\n'
    )
    with (root / "pyproject.toml").open("a") as f:
        f.write("\n[tool.mir.models]\nmin_samples = 100\ncheck_every = 1000\n" + alerts)
    return root


class _Scripted:
    """Answers valid JSON except on ``bad`` calls out of every 100 (not JSON: fallback)."""

    def __init__(self, bad: int):
        self.bad, self.calls = bad, count()

    def complete(self, request: ModelRequest) -> ModelResponse:
        i = next(self.calls)
        text = "not json" if i % 100 < self.bad else VALID
        return ModelResponse(text=text, provider="scripted", model=request.model, latency_ms=1.0)

    def close(self) -> None:
        pass


def _agent(root: Path, bad: dict[str, int]):
    agent = load_agent("refunds.triage", project=root)
    scripts = {model: _Scripted(n) for model, n in bad.items()}
    return type(agent)(agent.parts, replace(agent.deps, providers=lambda r: scripts[r.model]))


def _decide(agent, n: int) -> list:
    return [agent.decide({"order_id": f"A{i}", "amount": 40, "message": "x"}) for i in range(n)]


def test_a_share_of_0_2_sends_about_a_fifth_of_1000_flows_to_the_canary(tmp_path):
    root = _project(tmp_path, 0.2)
    agent = _agent(root, {"openai/triage-v1": 0, "openai/triage-v2": 0})
    _decide(agent, 1000)
    agent.close()
    arms = compare_arms(root, "triage")
    assert arms["production"].decisions + arms["canary"].decisions == 1000
    assert 160 <= arms["canary"].decisions <= 240, arms["canary"].decisions
    assert arms["canary"].version == "2" and arms["production"].version == "1"
    assert arms["canary"].fallback == 0 and arms["canary"].valid == arms["canary"].decisions
    # nothing to roll back: the canary is as good as production
    assert check_canaries(root).rolled_back == []
    assert read_registry(root).get("triage", "2").stage == Stage.CANARY


def test_a_canary_falling_back_30_percent_is_rolled_back_traced_and_alerted(tmp_path):
    received: list[dict] = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self):
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        webhook = f"http://127.0.0.1:{server.server_port}/alert"
        root = _project(tmp_path, 0.3, f'\n[tool.mir.alerts]\nwebhook = "{webhook}"\n')
        agent = _agent(root, {"openai/triage-v1": 2, "openai/triage-v2": 30})
        watch = CanaryWatch(agent, project=root)  # check_every = 1000
        _decide(watch, 1000)
        result = watch.wait(60)
        agent.close()
    finally:
        server.shutdown()
    assert watch.last_error is None, watch.last_error
    assert result is not None and [r.version for r in result.rolled_back] == ["2"]
    text = (root / "models.toml").read_text()
    assert text.startswith("# the triage model")  # comments kept by the edit
    assert read_registry(root).get("triage", "2").stage == Stage.SHADOW
    why = result.rolled_back[0].why
    assert "fallback" in why and "canary 2 of triage" in why
    with _store(root) as store:
        events = [e for e in store.events() if "canary_rolled_back" in e.reasons]
    assert len(events) == 1 and events[0].data["version"] == "2"
    assert events[0].data["by"] == "mir (automatic rollback)"
    assert len(received) == 1 and received[0]["event"] == "canary_rollback"
    assert received[0]["model"] == "triage" and received[0]["to"] == "shadow"


def _store(root: Path) -> TraceStore:
    from mir.project import find_project

    return TraceStore.for_project(find_project(root))
