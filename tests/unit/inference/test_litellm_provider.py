"""The litellm adapter's own logic, with a fake litellm module (no import, no network)."""

from types import SimpleNamespace
from typing import Any

import pytest

from mir.errors import ConfigError
from mir.inference import (
    LiteLLMProvider,
    Message,
    ModelRequest,
    ProviderError,
    remote,
    remote_servers,
)

SCHEMA = {"type": "object", "properties": {"action": {"enum": ["refund", "reject"]}}}


class FakeLiteLLM:
    def __init__(self, *, fail: Exception | None = None, schema_models: tuple[str, ...] = ()):
        self.calls: list[dict[str, Any]] = []
        self.fail = fail
        self.schema_models = schema_models
        self.cost: float | Exception = 0.25

    def completion(self, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        if self.fail:
            raise self.fail
        return SimpleNamespace(
            choices=[
                SimpleNamespace(message=SimpleNamespace(content="{raw"), finish_reason="length")
            ],
            usage=SimpleNamespace(prompt_tokens=12, completion_tokens=4),
        )

    def completion_cost(self, completion_response: Any) -> float:
        if isinstance(self.cost, Exception):
            raise self.cost
        return self.cost

    def supports_response_schema(self, model: str) -> bool:
        if model == "unknown/model":
            raise ValueError("model not mapped")
        return model in self.schema_models


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeLiteLLM:
    fake = FakeLiteLLM(schema_models=("gpt-4o-mini",))
    monkeypatch.setattr(remote, "_litellm", lambda: fake)
    return fake


@pytest.fixture
def unblocked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(remote_servers.BLOCK_ENV, raising=False)


def request(**changes: Any) -> ModelRequest:
    base = ModelRequest(messages=(Message(role="user", content="hi"),), json_schema=SCHEMA)
    return base.model_copy(update=changes)


LOCAL = "http://127.0.0.1:8080/v1"


def test_local_server_call_shape(fake: FakeLiteLLM) -> None:
    response = LiteLLMProvider("openai/tiny", api_base=LOCAL).complete(request(timeout_s=5))
    call = fake.calls[0]
    assert call["num_retries"] == 0  # the runtime owns retries
    assert call["timeout"] == 5
    assert call["api_base"] == LOCAL
    assert call["api_key"] == remote.PLACEHOLDER_KEY
    assert call["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert (response.text, response.finish_reason) == ("{raw", "length")
    assert (response.prompt_tokens, response.completion_tokens, response.cost_usd) == (12, 4, 0.25)


def test_hosted_models_get_json_schema_when_supported(fake: FakeLiteLLM, unblocked: None) -> None:
    LiteLLMProvider("gpt-4o-mini").complete(request())
    assert fake.calls[0]["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "decision", "schema": SCHEMA},
    }


@pytest.mark.parametrize("model", ["ollama_chat/x", "unknown/model"])
def test_other_hosted_models_get_json_mode(fake: FakeLiteLLM, unblocked: None, model: str) -> None:
    LiteLLMProvider(model).complete(request())
    assert fake.calls[0]["response_format"] == {"type": "json_object"}
    assert fake.calls[0]["api_base"] is None


def test_api_key_comes_from_the_named_env_var(
    fake: FakeLiteLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_KEY", "sk-secret")
    LiteLLMProvider("openai/tiny", api_base=LOCAL, api_key_env="MY_KEY").complete(request())
    assert fake.calls[0]["api_key"] == "sk-secret"


def test_a_missing_key_variable_is_a_config_error(
    fake: FakeLiteLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MY_KEY", raising=False)
    with pytest.raises(ConfigError, match="MY_KEY is not set"):
        LiteLLMProvider("openai/tiny", api_base=LOCAL, api_key_env="MY_KEY").complete(request())
    assert fake.calls == []


def test_provider_failures_become_provider_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeLiteLLM(fail=TimeoutError("read timed out"))
    monkeypatch.setattr(remote, "_litellm", lambda: fake)
    with pytest.raises(ProviderError, match="read timed out"):
        LiteLLMProvider("openai/tiny", api_base=LOCAL).complete(request())


def test_unknown_price_is_zero_cost(fake: FakeLiteLLM) -> None:
    fake.cost = ValueError("model not in cost map")
    response = LiteLLMProvider("openai/tiny", api_base=LOCAL).complete(request())
    assert response.cost_usd == 0.0


def test_guard_refuses_non_loopback_servers(fake: FakeLiteLLM) -> None:
    provider = LiteLLMProvider("openai/x", api_base="http://10.1.2.3:8000/v1")
    with pytest.raises(ConfigError, match=r"MIR_BLOCK_REMOTE_MODELS=1.*10\.1\.2\.3"):
        provider.complete(request())
    assert fake.calls == []


def test_guard_refuses_hosted_models(fake: FakeLiteLLM) -> None:
    with pytest.raises(ConfigError, match="hosted model 'gpt-4o-mini'"):
        LiteLLMProvider("gpt-4o-mini").complete(request())
    assert fake.calls == []


def test_guard_allows_replays(fake: FakeLiteLLM) -> None:
    provider = LiteLLMProvider("gpt-4o-mini", mock_responses=['{"action": "refund"}'])
    provider.complete(request())
    assert fake.calls[0]["mock_response"] == '{"action": "refund"}'
    assert "api_key" not in fake.calls[0]


def test_replays_run_out(fake: FakeLiteLLM) -> None:
    provider = LiteLLMProvider("gpt-4o-mini", mock_responses=["a"])
    provider.complete(request())
    with pytest.raises(ProviderError, match="exhausted"):
        provider.complete(request())


def test_request_fields_override_the_route(fake: FakeLiteLLM) -> None:
    provider = LiteLLMProvider("openai/a", api_base=LOCAL)
    provider.complete(request(model="openai/b", api_base="http://localhost:9/v1"))
    assert (fake.calls[0]["model"], fake.calls[0]["api_base"]) == (
        "openai/b",
        "http://localhost:9/v1",
    )


def test_a_key_echoed_in_an_error_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-secret-123")
    fake = FakeLiteLLM(fail=RuntimeError("401: bad key sk-secret-123 for model"))
    monkeypatch.setattr(remote, "_litellm", lambda: fake)
    provider = LiteLLMProvider("openai/tiny", api_base=LOCAL, api_key_env="MY_KEY")
    with pytest.raises(ProviderError) as caught:
        provider.complete(request())
    assert "sk-secret-123" not in str(caught.value)
    assert caught.value.__cause__ is None  # the original exception (with the key) is dropped
