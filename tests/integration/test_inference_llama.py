"""The llama provider on real llama.cpp: a tiny random model (fast) and SmolLM2 (slow)."""

import json
import time
from pathlib import Path

import jsonschema
import pytest

from mir.errors import ConfigError
from mir.inference import LlamaProvider, Message, ModelRequest, ProviderError, embedded_model_path
from mir.inference.llama import ModelCache
from tests.support.tiny_gguf import write_tiny_gguf

# Bounded strings on purpose: the grammar converter unrolls maxLength into nested rules.
DECISION = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["refund", "escalate", "reject"]},
        "amount": {"type": "number"},
        "confidence": {"type": "number"},
        "reason": {"type": "string", "maxLength": 12},
    },
    "required": ["action", "amount", "confidence", "reason"],
    "additionalProperties": False,
}


def ask(text: str, **changes: object) -> ModelRequest:
    request = ModelRequest(
        messages=(
            Message(role="system", content="Triage the refund request. Answer in JSON."),
            Message(role="user", content=text),
        ),
        json_schema=DECISION,
        max_tokens=200,
    )
    return request.model_copy(update=changes)


@pytest.fixture
def cache() -> ModelCache:
    return ModelCache()


def test_tiny_model_gives_schema_valid_json(tiny_gguf: Path, cache: ModelCache) -> None:
    provider = LlamaProvider(str(tiny_gguf), n_ctx=512, n_threads=2, cache=cache)
    response = provider.complete(ask("Order 7, 30 EUR, arrived broken."))
    assert response.finish_reason == "stop"
    # strict=False: llama.cpp's grammar lets raw control characters into strings (a known
    # converter gap; the runtime's parser decides what to accept). The shape is exact.
    jsonschema.validate(json.loads(response.text, strict=False), DECISION)
    assert response.prompt_tokens > 0 and response.completion_tokens > 0
    assert (response.provider, response.model) == ("llama", "tiny.gguf")


def test_temperature_zero_is_deterministic(tiny_gguf: Path, cache: ModelCache) -> None:
    provider = LlamaProvider(str(tiny_gguf), n_ctx=512, n_threads=2, cache=cache)
    first = provider.complete(ask("same question"))
    second = provider.complete(ask("same question"))
    assert first.text == second.text


def test_model_is_loaded_once_and_reused(tiny_gguf: Path, cache: ModelCache) -> None:
    one = LlamaProvider(str(tiny_gguf), n_ctx=512, n_threads=2, cache=cache)
    two = LlamaProvider(str(tiny_gguf), n_ctx=512, n_threads=2, cache=cache)
    one.complete(ask("a"))
    two.complete(ask("b"))
    assert cache.loads == 1
    assert one.loaded() is two.loaded()


def test_cut_output_is_returned_raw_with_length_reason(tiny_gguf: Path, cache: ModelCache) -> None:
    provider = LlamaProvider(str(tiny_gguf), n_ctx=512, n_threads=2, cache=cache)
    response = provider.complete(ask("x", max_tokens=4))
    assert response.finish_reason == "length"
    assert response.completion_tokens == 4
    with pytest.raises(json.JSONDecodeError):
        json.loads(response.text)


def test_gguf_chat_template_is_used(tiny_gguf: Path, cache: ModelCache) -> None:
    provider = LlamaProvider(str(tiny_gguf), n_ctx=512, n_threads=2, cache=cache)
    assert provider.loaded().chat_format == "chat_template.default"


def test_a_model_without_template_gets_chatml(tmp_path: Path, cache: ModelCache) -> None:
    bare = write_tiny_gguf(tmp_path / "bare.gguf", chat_template=None)
    provider = LlamaProvider(str(bare), n_ctx=512, n_threads=2, cache=cache)
    assert provider.loaded().chat_format == "chatml"
    assert provider.complete(ask("hi")).finish_reason == "stop"


def test_configured_chat_format_wins(tiny_gguf: Path, cache: ModelCache) -> None:
    provider = LlamaProvider(str(tiny_gguf), n_ctx=512, chat_format="chatml", cache=cache)
    assert provider.loaded().chat_format == "chatml"


def test_prompt_longer_than_the_context_is_a_provider_error(
    tiny_gguf: Path, cache: ModelCache
) -> None:
    provider = LlamaProvider(str(tiny_gguf), n_ctx=256, n_threads=2, cache=cache)
    with pytest.raises(ProviderError, match="context"):
        provider.complete(ask("refund " * 400))


def test_a_file_that_is_not_a_model_is_a_config_error(tmp_path: Path, cache: ModelCache) -> None:
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"GGUF not really a model")
    provider = LlamaProvider(str(junk), cache=cache)
    with pytest.raises(ConfigError, match="cannot load"):
        provider.loaded()


def test_a_schema_llama_cpp_cannot_compile_is_a_config_error_not_a_crash(
    tiny_gguf: Path, cache: ModelCache
) -> None:
    # llama-cpp-python turns this pattern into a grammar llama.cpp rejects, and would
    # then segfault on the NULL sampler: the provider must refuse it first.
    schema = {"type": "object", "properties": {"id": {"type": "string", "pattern": r"^A-\d{4}$"}}}
    provider = LlamaProvider(str(tiny_gguf), n_ctx=512, n_threads=2, cache=cache)
    with pytest.raises(ConfigError, match=r"constrained decoding.*\[0-9\]"):
        provider.complete(ask("x", json_schema=schema))
    fixed = {"type": "object", "properties": {"id": {"type": "string", "pattern": r"^A-[0-9]{4}$"}}}
    assert provider.complete(ask("x", json_schema=fixed)).finish_reason == "stop"


@pytest.mark.slow
def test_embedded_smollm2_decides_a_refund_within_the_schema(cache: ModelCache) -> None:
    provider = LlamaProvider("default", n_ctx=1024, cache=cache)
    request = ask(
        "Order A-17 total 25.00 EUR. Customer: the mug arrived broken, please refund 25 EUR.",
        max_tokens=80,
    )
    response = provider.complete(request)
    assert response.model == embedded_model_path().name
    assert response.finish_reason == "stop"
    jsonschema.validate(json.loads(response.text, strict=False), DECISION)


def test_a_background_call_waits_for_a_foreground_one_and_answers_the_same(
    tiny_gguf: Path, cache: ModelCache
) -> None:
    """A shadow decision (background) generates only while no production decision
    (foreground) does, and its streamed answer is the one it would give unpaused."""
    import threading

    from mir.inference import background
    from mir.inference.foreground_first import FOREGROUND

    provider = LlamaProvider(str(tiny_gguf), n_ctx=512, n_threads=2, cache=cache)
    unpaused = provider.complete(ask("Order 9, 12 EUR."))
    answers: list[tuple[float, str]] = []

    def shadow() -> None:
        with background():
            text = provider.complete(ask("Order 9, 12 EUR.")).text
        answers.append((time.monotonic(), text))

    with FOREGROUND.running():
        thread = threading.Thread(target=shadow)
        thread.start()
        time.sleep(0.5)
        released = time.monotonic()
    thread.join(60)
    assert answers, "the background call never finished"
    finished, text = answers[0]
    assert finished >= released  # it did not generate while the foreground did
    assert text == unpaused.text
