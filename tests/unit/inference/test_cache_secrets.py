"""The response cache withholds answers that hold a secret, by the traces' own rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from mir.inference import ModelResponse, ResponseCache, TokenLogprob
from mir.traces import Redactor

KEY = "0" * 64
VAULT = "hunter2-correct-horse"  # a literal secret: the value of a secret env var


@pytest.fixture
def cache(tmp_path: Path) -> ResponseCache:
    return ResponseCache(tmp_path, redact=Redactor([VAULT]).value)


def _stored(cache: ResponseCache) -> bytes:
    cache.close()
    return b"".join(p.read_bytes() for p in cache.path.parent.iterdir() if p.is_file())


@pytest.mark.parametrize(
    "response",
    [
        ModelResponse(
            text='{"reason": "use sk-proj4f9QkzT2xWb7Lm3Nc8Rv"}', provider="f", model="m"
        ),
        ModelResponse(text=f'{{"reason": "{VAULT}"}}', provider="f", model="m"),
        ModelResponse(text='{"reason": "token: abcdef123456"}', provider="f", model="m"),
        ModelResponse(
            text="{}",
            provider="f",
            model="m",
            logprobs=[TokenLogprob(token="x", logprob=-1.0, top={VAULT: -2.0})],
        ),
    ],
)
def test_an_answer_holding_a_secret_is_not_stored(cache, response):
    cache.put(KEY, response)
    assert cache.get(KEY) is None and cache.withheld == 1
    assert VAULT.encode() not in _stored(cache) and b"sk-proj" not in _stored(cache)


def test_a_clean_answer_with_logprobs_is_stored(cache):
    # "token" is a secret *key* in structured data: the logprobs' field names must not
    # make every logprobs answer look like a secret.
    response = ModelResponse(
        text='{"action": "refund", "prompt_tokens": 3}',
        provider="f",
        model="m",
        logprobs=[TokenLogprob(token="refund", logprob=-0.1, top={"reject": -2.0})],
    )
    cache.put(KEY, response)
    assert cache.get(KEY) == response and cache.withheld == 0


def test_without_a_redactor_everything_is_stored(tmp_path):
    cache = ResponseCache(tmp_path)
    cache.put(KEY, ModelResponse(text=VAULT, provider="f", model="m"))
    assert cache.get(KEY) is not None
