"""A registry entry's ``queue`` sizes its version's model queue (llama and litellm), over
``[tool.mir.model] queue``; without one, the project setting holds."""

from __future__ import annotations

from mir.contracts import Route
from mir.inference import LiteLLMProvider, LlamaProvider, ModelSettings, provider_for
from mir.models import RouteResolver

TOML = """
[[models]]
name = "local"
version = "1"
stage = "production"
artifact = "models/local-1.gguf"
queue = 2

[[models]]
name = "local"
version = "2"
stage = "candidate"
artifact = "models/local-2.gguf"

[[models]]
name = "served"
version = "1"
stage = "production"
provider = "litellm"
artifact = "openai/tiny"
api_base = "http://127.0.0.1:8080/v1"
queue = 0
"""

SETTINGS = ModelSettings(queue=8, remote_concurrency=3)


def _provider(tmp_path, model: str):
    (tmp_path / "models.toml").write_text(TOML)
    (tmp_path / "models").mkdir()
    for version in ("1", "2"):  # LlamaProvider checks the file exists; it never loads here
        (tmp_path / f"models/local-{version}.gguf").write_bytes(b"GGUF")
    route = RouteResolver(tmp_path).resolve(Route(provider="llama", model=model), "f").route
    return route, provider_for(route, settings=SETTINGS, root=tmp_path)


def test_an_entrys_queue_sizes_its_llama_models_queue(tmp_path):
    route, provider = _provider(tmp_path, "local@1")
    assert route.queue == 2
    assert isinstance(provider, LlamaProvider) and provider.queue == 2


def test_without_an_entry_queue_the_project_setting_holds(tmp_path):
    route, provider = _provider(tmp_path, "local@2")
    assert route.queue is None
    assert isinstance(provider, LlamaProvider) and provider.queue == 8


def test_an_entrys_queue_sizes_its_remote_models_queue_even_at_zero(tmp_path):
    route, provider = _provider(tmp_path, "served")
    assert route.queue == 0
    assert isinstance(provider, LiteLLMProvider)
    assert (provider.queue, provider.concurrency) == (0, 3)


def test_a_route_may_set_its_queue_by_hand():
    route = Route(
        provider="litellm", model="openai/tiny", api_base="http://127.0.0.1:1/v1", queue=5
    )
    provider = provider_for(route, settings=SETTINGS)
    assert isinstance(provider, LiteLLMProvider) and provider.queue == 5
