"""The litellm provider for real: against llama.cpp's OpenAI-compatible server on
127.0.0.1 (started by the ``llama_server`` fixture) and through ``mock_response``."""

import json
from pathlib import Path

import jsonschema
import pytest

from mir.contracts import Route
from mir.errors import ConfigError
from mir.inference import LiteLLMProvider, Message, ModelRequest, ProviderError, provider_for
from tests.support.fixtures import SERVER_ALIAS, free_port

# A server process and `import litellm` (~8 s): keep these tests on one xdist worker so
# they share one server and one import.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("llama_server")]

DECISION = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["refund", "escalate", "reject"]},
        "confidence": {"type": "number"},
    },
    "required": ["action", "confidence"],
    "additionalProperties": False,
}


def ask(**changes: object) -> ModelRequest:
    request = ModelRequest(
        messages=(Message(role="user", content="Order 7 arrived broken, refund it?"),),
        json_schema=DECISION,
        max_tokens=120,
        timeout_s=30,
    )
    return request.model_copy(update=changes)


def test_schema_constrained_json_from_a_local_server(llama_server: str) -> None:
    provider = LiteLLMProvider(f"openai/{SERVER_ALIAS}", api_base=llama_server)
    response = provider.complete(ask())
    assert response.finish_reason == "stop"
    jsonschema.validate(json.loads(response.text, strict=False), DECISION)
    assert response.prompt_tokens > 0 and response.completion_tokens > 0
    assert response.cost_usd == 0.0  # a local model has no price


def test_free_text_without_a_schema(llama_server: str) -> None:
    provider = LiteLLMProvider(f"openai/{SERVER_ALIAS}", api_base=llama_server)
    response = provider.complete(ask(json_schema=None, max_tokens=8))
    assert response.finish_reason == "length"
    assert response.completion_tokens == 8


def test_a_route_reaches_the_server_through_provider_for(llama_server: str) -> None:
    route = Route(provider="litellm", model=f"openai/{SERVER_ALIAS}", api_base=llama_server)
    response = provider_for(route).complete(ask())
    assert response.provider == "litellm"
    jsonschema.validate(json.loads(response.text, strict=False), DECISION)


def test_a_server_that_is_down_is_a_provider_error() -> None:
    provider = LiteLLMProvider("openai/nothing", api_base=f"http://127.0.0.1:{free_port()}/v1")
    with pytest.raises(ProviderError, match="Connection"):
        provider.complete(ask(timeout_s=5))


def test_replayed_responses_run_the_litellm_path_offline(tmp_path: Path) -> None:
    script = tmp_path / "responses.jsonl"
    script.write_text('"{\\"action\\": \\"refund\\", \\"confidence\\": 0.9}"\n"not json"\n')
    provider = provider_for(Route(provider="litellm", model="gpt-4o-mini"), responses=script)
    first = provider.complete(ask())
    second = provider.complete(ask())
    assert json.loads(first.text) == {"action": "refund", "confidence": 0.9}
    assert second.text == "not json"  # raw: the runtime judges it
    assert first.cost_usd > 0  # priced from litellm's bundled map, never fetched
    with pytest.raises(ProviderError, match="exhausted"):
        provider.complete(ask())


def test_guard_fails_fast_on_a_non_loopback_server() -> None:
    provider = LiteLLMProvider("openai/x", api_base="http://192.0.2.10:8000/v1")
    with pytest.raises(ConfigError, match=r"MIR_BLOCK_REMOTE_MODELS=1.*192\.0\.2\.10"):
        provider.complete(ask())


def test_guard_refuses_a_hosted_model_without_api_base() -> None:
    with pytest.raises(ConfigError, match="hosted model 'anthropic/claude-3-5-haiku"):
        LiteLLMProvider("anthropic/claude-3-5-haiku-latest").complete(ask())
