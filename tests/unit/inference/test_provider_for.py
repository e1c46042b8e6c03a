"""``provider_for`` turns a contract route into the right adapter (no model is loaded)."""

from pathlib import Path

import pytest

from mir.contracts import Route
from mir.errors import ConfigError
from mir.inference import (
    LiteLLMProvider,
    LlamaProvider,
    ModelSettings,
    ScriptedProvider,
    provider_for,
)
from mir.inference.llama_setup import EMBEDDED_FILE


@pytest.fixture
def responses(tmp_path: Path) -> Path:
    path = tmp_path / "responses.jsonl"
    path.write_text('"{\\"action\\": \\"refund\\"}"\n{"text": "not json", "prompt_tokens": 3}\n')
    return path


def test_rules_routes_are_not_providers() -> None:
    with pytest.raises(ValueError, match="rules"):
        provider_for(Route(provider="rules"))


def test_scripted_route_needs_a_responses_file() -> None:
    with pytest.raises(ConfigError, match="responses file"):
        provider_for(Route(provider="scripted"))


def test_scripted_route_reads_its_file_relative_to_root(responses: Path) -> None:
    provider = provider_for(
        Route(provider="scripted", responses="responses.jsonl"), root=responses.parent
    )
    assert isinstance(provider, ScriptedProvider)


def test_litellm_route_needs_a_model() -> None:
    with pytest.raises(ConfigError, match="model id"):
        provider_for(Route(provider="litellm"))


def test_litellm_route_takes_model_and_base_from_settings() -> None:
    settings = ModelSettings(provider="litellm", model="openai/x", api_base="http://127.0.0.1:1/v1")
    provider = provider_for(Route(provider="litellm"), settings=settings)
    assert isinstance(provider, LiteLLMProvider)
    assert (provider.model, provider.api_base) == ("openai/x", "http://127.0.0.1:1/v1")


def test_route_wins_over_settings() -> None:
    settings = ModelSettings(provider="litellm", model="openai/x", api_base="http://127.0.0.1:1/v1")
    route = Route(provider="litellm", model="openai/y", api_base="http://127.0.0.1:2/v1")
    provider = provider_for(route, settings=settings)
    assert isinstance(provider, LiteLLMProvider)
    assert (provider.model, provider.api_base) == ("openai/y", "http://127.0.0.1:2/v1")


def test_llama_default_route_is_the_embedded_model() -> None:
    provider = provider_for(Route(provider="llama"))
    assert isinstance(provider, LlamaProvider)
    assert provider.path.name == EMBEDDED_FILE


def test_llama_route_uses_model_settings() -> None:
    settings = ModelSettings(n_ctx=1024, n_threads=3, chat_format="chatml")
    provider = provider_for(Route(provider="llama"), settings=settings)
    assert isinstance(provider, LlamaProvider)
    assert (provider.n_ctx, provider.n_threads, provider.chat_format) == (1024, 3, "chatml")


def test_llama_route_with_a_missing_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        provider_for(Route(provider="llama", model="models/missing.gguf"), root=tmp_path)
    assert str(tmp_path / "models" / "missing.gguf") in str(caught.value)


def test_llama_route_resolves_relative_models_against_root(tmp_path: Path) -> None:
    (tmp_path / "m.gguf").write_bytes(b"GGUF")
    provider = provider_for(Route(provider="llama", model="m.gguf"), root=tmp_path)
    assert isinstance(provider, LlamaProvider)
    assert provider.path == (tmp_path / "m.gguf").resolve()


def test_responses_replace_a_llama_route(responses: Path) -> None:
    provider = provider_for(Route(provider="llama"), responses=responses)
    assert isinstance(provider, ScriptedProvider)


def test_responses_feed_a_litellm_route_through_mock_response(responses: Path) -> None:
    provider = provider_for(Route(provider="litellm", model="gpt-4o-mini"), responses=responses)
    assert isinstance(provider, LiteLLMProvider)
    assert provider.mocked


def test_a_malformed_responses_file_is_a_config_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('"ok"\n{"txt": 1}\n')
    with pytest.raises(ConfigError, match=r"bad.jsonl:2"):
        provider_for(Route(provider="litellm", model="gpt-4o-mini"), responses=bad)
