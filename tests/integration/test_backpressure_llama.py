"""Back-pressure on a real llama.cpp model (the tiny random GGUF): a burst of calls with a
deadline each either answers in time or is shed at once; none hangs, none waits past it."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mir.inference import LlamaProvider, Message, ModelRequest, ShedError
from mir.inference.llama import ModelCache
from mir.inference.scheduler import Scheduler

SLACK_S = 0.05


# An unbounded string: the random model fills it until max_tokens or the cut. (Without a
# grammar its byte tokens form incomplete UTF-8 that llama-cpp-python's stream holds back,
# so the stream gives no chance to cut until the end; the JSON grammar keeps text whole.)
LONG_TEXT = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
}


def slow_request(deadline_s: float, **changes: object) -> ModelRequest:
    """Many tokens under the JSON grammar: each call takes long enough to queue behind."""
    fields: dict = {"max_tokens": 400, "temperature": 1.0, "json_schema": LONG_TEXT, **changes}
    return ModelRequest(
        messages=(Message(role="user", content="Say anything."),),
        deadline_at=time.monotonic() + deadline_s,
        **fields,
    )


@pytest.fixture
def provider(tiny_gguf: Path) -> LlamaProvider:
    provider = LlamaProvider(str(tiny_gguf), n_ctx=1024, n_threads=2, cache=ModelCache())
    provider.loaded().scheduler = Scheduler(queue=4)
    return provider


def _call(provider: LlamaProvider, deadline_s: float) -> tuple[str, float, float]:
    request = slow_request(deadline_s)
    try:
        provider.complete(request)
        outcome = "answered"
    except ShedError:
        outcome = "shed"
    return outcome, time.monotonic(), request.deadline_at or 0.0


def test_fifty_concurrent_calls_all_return_within_deadline(provider: LlamaProvider) -> None:
    provider.complete(slow_request(5.0, max_tokens=8))  # load the model outside the clock
    with ThreadPoolExecutor(max_workers=50) as pool:
        results = list(pool.map(lambda _: _call(provider, 0.2), range(50)))
    late = [ended - deadline for _, ended, deadline in results if ended > deadline + SLACK_S]
    assert late == []
    outcomes = [outcome for outcome, _, _ in results]
    assert outcomes.count("shed") >= 50 - 1 - 4, outcomes
    assert provider.loaded().scheduler.waiting() == 0


def test_without_a_deadline_the_answer_is_whole(provider: LlamaProvider) -> None:
    response = provider.complete(
        slow_request(5.0, max_tokens=16).model_copy(update={"deadline_at": None})
    )
    assert response.completion_tokens > 0
