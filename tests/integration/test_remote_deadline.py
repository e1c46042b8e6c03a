"""A litellm call against a real loopback socket that accepts and never answers (a stalled
server): the deadline, not ``timeout_s``, ends the call, as ``ShedError``; while it holds
the only slot, a second call with no queue room is refused at once."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from mir.inference import LiteLLMProvider, Message, ModelRequest, ProviderError, ShedError
from mir.inference.remote_servers import RemoteSchedulers

SLACK_S = 0.05


@pytest.fixture
def stalled_server() -> Iterator[str]:
    """``api_base`` of a TCP listener on 127.0.0.1 that takes connections and says nothing."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    stop.set()
    thread.join()
    for connection in accepted:
        connection.close()
    listener.close()


def request(deadline_s: float | None, timeout_s: float = 30.0) -> ModelRequest:
    return ModelRequest(
        messages=(Message(role="user", content="hi"),),
        max_tokens=8,
        timeout_s=timeout_s,
        deadline_at=None if deadline_s is None else time.monotonic() + deadline_s,
    )


def test_the_deadline_ends_a_stalled_call_and_a_full_queue_sheds_at_once(stalled_server):
    provider = LiteLLMProvider(
        "openai/stalled",
        api_base=stalled_server,
        concurrency=1,
        queue=0,
        schedulers=RemoteSchedulers(),
    )
    with pytest.raises(ProviderError):  # import litellm outside the clock (timeout_s ends it)
        provider.complete(request(None, timeout_s=0.2))
    assert provider.refusal(request(5.0)) is None  # the server is idle

    outcomes: list[tuple[str, float]] = []

    def call() -> None:
        started = time.monotonic()
        try:
            provider.complete(request(0.6))
            outcomes.append(("answered", time.monotonic() - started))
        except ShedError as exc:
            outcomes.append((str(exc), time.monotonic() - started))

    first = threading.Thread(target=call)
    first.start()
    time.sleep(0.2)  # the first call holds the only slot, waiting on the server
    assert "queue is full" in (provider.refusal(request(None)) or "")
    started = time.monotonic()
    with pytest.raises(ShedError, match="queue is full"):
        provider.complete(request(None))
    assert time.monotonic() - started < SLACK_S
    first.join()
    [(reason, took)] = outcomes
    assert "deadline" in reason and took < 0.6 + SLACK_S, outcomes


def test_a_timeout_shorter_than_the_deadline_is_a_plain_failure(stalled_server):
    provider = LiteLLMProvider(
        "openai/stalled", api_base=stalled_server, schedulers=RemoteSchedulers()
    )
    with pytest.raises(ProviderError) as caught:
        provider.complete(request(5.0, timeout_s=0.3))
    assert not isinstance(caught.value, ShedError)


def test_replays_skip_the_queue():
    schedulers = RemoteSchedulers()
    provider = LiteLLMProvider(
        "openai/x", mock_responses=["a", "b"], concurrency=1, queue=0, schedulers=schedulers
    )
    assert [provider.complete(request(5.0)).text for _ in range(2)] == ["a", "b"]
    assert schedulers.peek(None, "openai/x") is None
