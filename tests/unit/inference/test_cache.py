"""The response cache: keyed on everything that decides an answer, never failing a call."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from mir.inference import (
    CachedProvider,
    LiteLLMProvider,
    Message,
    ModelRequest,
    ModelResponse,
    ProviderError,
    ResponseCache,
    ScriptedProvider,
    TokenLogprob,
    with_cache,
)
from mir.inference.cache import request_key

REQUEST = ModelRequest(
    messages=(Message(role="system", content="decide"), Message(role="user", content="hi")),
    json_schema={"type": "object"},
)
IDENTITY = {"provider": "fake", "model": "m.gguf", "size": 10, "mtime_ns": 1}


class CountingProvider:
    """A model that says a numbered answer each time it is really asked."""

    name = "fake"

    def __init__(self, identity: dict[str, Any] | None = IDENTITY, fail: bool = False):
        self.identity = identity
        self.calls = 0
        self.fail = fail

    def cache_identity(self, request: ModelRequest) -> dict[str, Any] | None:
        return self.identity

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        if self.fail:
            raise ProviderError("down")
        return ModelResponse(
            text=f'{{"n": {self.calls}}}',
            provider=self.name,
            model="m.gguf",
            finish_reason="stop",
            prompt_tokens=12,
            completion_tokens=5,
            latency_ms=800.0,
            logprobs=[TokenLogprob(token="{", logprob=-0.5, top={"{": -0.5, "[": -1.0})],
        )


@pytest.mark.parametrize(
    "change",
    [
        {"messages": (Message(role="user", content="hi!"),)},
        {"temperature": 0.7},
        {"max_tokens": 17},
        {"seed": 1},
        {"json_schema": {"type": "object", "required": ["a"]}},
        {"logprobs": True},
    ],
)
def test_every_part_of_the_request_that_decides_the_answer_is_in_the_key(change):
    assert request_key(IDENTITY, REQUEST) != request_key(
        IDENTITY, REQUEST.model_copy(update=change)
    )


def test_the_timeout_and_the_key_variable_are_not_in_the_key():
    same = REQUEST.model_copy(update={"timeout_s": 5.0, "api_key_env": "OTHER_KEY"})
    assert request_key(IDENTITY, REQUEST) == request_key(IDENTITY, same)


def test_another_model_file_is_another_key():
    touched = {**IDENTITY, "mtime_ns": 2}
    assert request_key(IDENTITY, REQUEST) != request_key(touched, REQUEST)


def test_a_second_identical_request_is_answered_from_the_cache(tmp_path: Path):
    inner = CountingProvider()
    provider = with_cache(inner, ResponseCache(tmp_path))
    first = provider.complete(REQUEST)
    again = provider.complete(REQUEST)
    assert inner.calls == 1
    assert not first.cached and again.cached
    assert again.model_dump(exclude={"cached"}) == first.model_dump(exclude={"cached"})
    other = provider.complete(REQUEST.model_copy(update={"temperature": 0.5}))
    assert inner.calls == 2 and not other.cached


def test_the_cache_outlives_the_process_that_filled_it(tmp_path: Path):
    with_cache(CountingProvider(), ResponseCache(tmp_path)).complete(REQUEST)
    later = CountingProvider()
    answer = with_cache(later, ResponseCache(tmp_path)).complete(REQUEST)
    assert later.calls == 0 and answer.cached and answer.text == '{"n": 1}'
    assert (tmp_path / "responses.sqlite3").is_file()


def test_provider_errors_are_not_cached(tmp_path: Path):
    inner = CountingProvider(fail=True)
    provider = with_cache(inner, ResponseCache(tmp_path))
    for _ in range(2):
        with pytest.raises(ProviderError):
            provider.complete(REQUEST)
    assert inner.calls == 2


def test_replays_are_never_cached(tmp_path: Path):
    cache = ResponseCache(tmp_path)
    scripted = ScriptedProvider(["a", "b"])
    assert with_cache(scripted, cache) is scripted
    mocked = LiteLLMProvider("openai/x", mock_responses=["a", "b"])
    provider = with_cache(mocked, cache)
    assert [provider.complete(REQUEST).text for _ in range(2)] == ["a", "b"]
    assert cache.hits == 0


def test_an_identity_of_none_is_not_cached(tmp_path: Path):
    inner = CountingProvider(identity=None)
    provider = with_cache(inner, ResponseCache(tmp_path))
    provider.complete(REQUEST)
    provider.complete(REQUEST)
    assert inner.calls == 2


def test_the_api_key_is_never_key_material(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MY_KEY", "sk-secret-123")
    provider = LiteLLMProvider("openai/x", api_base="http://127.0.0.1:9/v1", api_key_env="MY_KEY")
    identity = provider.cache_identity(REQUEST)
    assert identity == {
        "provider": "litellm",
        "model": "openai/x",
        "api_base": "http://127.0.0.1:9/v1",
    }
    assert "sk-secret" not in repr(identity)


def test_a_corrupt_cache_file_only_turns_the_cache_off_with_one_warning(tmp_path: Path):
    (tmp_path / "responses.sqlite3").write_bytes(b"this is not a database" * 100)
    warnings: list[str] = []
    inner = CountingProvider()
    provider = with_cache(inner, ResponseCache(tmp_path, warn=warnings.append))
    answers = [provider.complete(REQUEST) for _ in range(3)]
    assert inner.calls == 3 and not any(a.cached for a in answers)
    assert len(warnings) == 1
    assert "response cache disabled" in warnings[0] and "responses.sqlite3" in warnings[0]


def test_a_locked_cache_file_degrades_to_no_cache(tmp_path: Path, monkeypatch):
    monkeypatch.setattr("mir.inference.cache.BUSY_TIMEOUT_MS", 50)
    cache = ResponseCache(tmp_path, warn=(warnings := []).append)
    with_cache(CountingProvider(), cache).complete(REQUEST)  # creates the file
    cache.close()
    holder = sqlite3.connect(tmp_path / "responses.sqlite3")
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        inner = CountingProvider()
        fresh = ResponseCache(tmp_path, warn=warnings.append)
        answer = with_cache(inner, fresh).complete(REQUEST)
    finally:
        holder.rollback()
        holder.close()
    assert inner.calls == 1 and not answer.cached
    assert len(warnings) == 1 and "locked" in warnings[0]


def test_an_entry_written_by_another_version_is_a_miss(tmp_path: Path):
    cache = ResponseCache(tmp_path)
    provider = CachedProvider(CountingProvider(), cache)
    provider.complete(REQUEST)
    db = sqlite3.connect(tmp_path / "responses.sqlite3")
    db.execute("UPDATE responses SET response = '{\"unexpected\": 1}'")
    db.commit()
    db.close()
    assert not provider.complete(REQUEST).cached
    assert provider.complete(REQUEST).cached  # and the fresh answer replaced it


def test_the_cached_provider_hides_the_llama_warm_up_hook(tmp_path: Path):
    inner = CountingProvider()
    inner.loaded = lambda: None  # type: ignore[attr-defined]
    provider = with_cache(inner, ResponseCache(tmp_path))
    assert provider.name == "fake" and not hasattr(provider, "loaded")
