"""Token probabilities from real providers: llama.cpp in-process on the tiny random model,
and llama.cpp's OpenAI-compatible server through litellm; the chosen action's confidence
computed from them is checked against the same rule worked out by hand."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from mir.inference import LiteLLMProvider, LlamaProvider, Message, ModelRequest, TokenLogprob
from mir.inference.model_cache import ModelCache, load_model
from mir.runtime.confidence import action_probability, string_value_span
from tests.support.fixtures import SERVER_ALIAS

ACTIONS = ("refund", "reject", "escalate")
# Only the action: the random model's free numbers and strings run to max_tokens.
DECISION = {
    "type": "object",
    "properties": {"action": {"type": "string", "enum": list(ACTIONS)}},
    "required": ["action"],
    "additionalProperties": False,
}


def ask(content: str, **changes: object) -> ModelRequest:
    request = ModelRequest(
        messages=(Message(role="user", content=content),),
        json_schema=DECISION,
        max_tokens=40,
        logprobs=True,
        top_logprobs=10,
    )
    return request.model_copy(update=changes)


def by_hand(text: str, tokens: list[TokenLogprob]) -> float:
    """The documented rule, written out independently: for every token that overlaps the
    action value (through its closing quote), put each alternative in the token's place
    in the full text and keep it when the text still reads as the same prefix before the
    value followed by a prefix of ``<action>"`` (or something past it)."""
    first, close = string_value_span(text, "action")  # type: ignore[misc]
    product, offset = 1.0, 0
    for token in tokens:
        start, end = offset, offset + len(token.token)
        offset = end
        if end <= first or start > close or not token.token:
            continue
        options = {**token.top, token.token: token.logprob}
        if len(options) == 1:
            product *= math.exp(token.logprob)
            continue
        kept = 0.0
        for alt, logprob in options.items():
            placed = text[:start] + alt
            if len(placed) < first or placed[:first] != text[:first]:
                continue
            value = placed[first:]
            if any(f'{a}"'.startswith(value) or value.startswith(f'{a}"') for a in ACTIONS):
                kept += math.exp(logprob)
        product *= math.exp(token.logprob) / kept
    return product


def test_llama_returns_token_probabilities_that_spell_its_output(tiny_gguf: Path):
    provider = LlamaProvider(str(tiny_gguf), n_ctx=512, n_threads=1, cache=ModelCache())
    response = provider.complete(ask("Order 7 arrived broken, refund it?"))
    assert response.finish_reason == "stop" and response.logprobs
    spelled = "".join(t.token for t in response.logprobs)
    assert spelled.startswith(response.text)
    assert all(t.logprob <= 0 and t.top for t in response.logprobs)
    found = action_probability(response.text, response.logprobs, "action", ACTIONS)
    assert found.value is not None and 0 < found.value <= 1
    assert found.value == pytest.approx(by_hand(response.text, response.logprobs), rel=1e-9)
    assert found.raw is not None and 0 < found.raw <= found.value


@pytest.mark.parametrize("content", ["refund please", "I changed my mind", "??"])
def test_the_confidence_is_a_probability_on_several_inputs(tiny_gguf: Path, content: str):
    provider = LlamaProvider(str(tiny_gguf), n_ctx=512, n_threads=1, cache=ModelCache())
    response = provider.complete(ask(content))
    found = action_probability(response.text, response.logprobs, "action", ACTIONS)
    assert found.value is not None and 0 < found.value <= 1
    assert found.value == pytest.approx(by_hand(response.text, response.logprobs), rel=1e-9)


def test_logits_all_is_loaded_only_when_token_probabilities_are_asked(tiny_gguf: Path):
    loads: list[bool] = []

    def loader(path, n_ctx, n_threads, chat_format, logits_all=False):
        loads.append(logits_all)
        return load_model(path, n_ctx, n_threads, chat_format, logits_all)

    provider = LlamaProvider(str(tiny_gguf), n_ctx=512, n_threads=1, cache=ModelCache(loader))
    assert loads == []  # building the provider loads nothing
    plain = provider.complete(ask("hi", logprobs=False))
    assert plain.logprobs is None and loads == [False]
    assert provider.complete(ask("hi")).logprobs and loads == [False, True]
    provider.complete(ask("again"))
    assert loads == [False, True]  # each kind is loaded once

    eager = LlamaProvider(
        str(tiny_gguf), n_ctx=512, n_threads=1, cache=ModelCache(loader), logprobs=True
    )
    assert eager.complete(ask("hi", logprobs=False)).logprobs is None
    assert loads == [False, True, True]  # a logprobs agent loads that way from the start


@pytest.mark.slow
@pytest.mark.xdist_group("llama_server")
def test_an_openai_compatible_server_returns_token_probabilities(llama_server: str):
    provider = LiteLLMProvider(f"openai/{SERVER_ALIAS}", api_base=llama_server)
    response = provider.complete(ask("Order 7 arrived broken, refund it?", max_tokens=60))
    assert response.logprobs, "llama.cpp's server returns logprobs through litellm"
    assert "".join(t.token for t in response.logprobs).startswith(response.text)
    found = action_probability(response.text, response.logprobs, "action", ACTIONS)
    assert found.value is not None and 0 < found.value <= 1
    assert found.value == pytest.approx(by_hand(response.text, response.logprobs), rel=1e-9)
