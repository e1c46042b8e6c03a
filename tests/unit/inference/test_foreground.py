"""Background model calls (shadow decisions) yield to foreground ones between tokens:
``background()`` marks the calling thread's calls, ``FOREGROUND`` counts the foreground
calls generating, and the llama adapter's stream waits while there is one."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

from mir.inference import background
from mir.inference import foreground_first as sched
from mir.inference.foreground_first import FOREGROUND, Foreground, in_background
from mir.inference.llama import _until
from mir.inference.scheduler import Scheduler


def test_background_marks_only_the_block_and_only_this_thread():
    assert not in_background()
    seen: list[bool] = []
    with background():
        assert in_background()
        other = threading.Thread(target=lambda: seen.append(in_background()))
        other.start()
        other.join()
    assert not in_background()
    assert seen == [False]  # a new thread starts in the foreground


class Chunks:
    """A stream that records how many tokens it produced and whether a foreground call
    was generating when it produced each one."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.produced = 0
        self.during_foreground: list[bool] = []
        self.closed = False

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for i in range(self.n):
            self.produced += 1
            self.during_foreground.append(FOREGROUND.busy())
            finish = "stop" if i == self.n - 1 else None
            yield {"choices": [{"delta": {"content": f"t{i}"}, "finish_reason": finish}]}

    def close(self) -> None:
        self.closed = True


def _gather(chunks: Chunks, pause: Scheduler | None, out: list[dict[str, Any]]) -> None:
    stream = iter(chunks)

    class Closable:
        def __iter__(self):
            return stream

        def close(self) -> None:
            chunks.close()

    out.append(_until(Closable(), float("inf"), pause=pause))


def test_a_background_stream_takes_no_token_while_a_foreground_call_generates():
    chunks, out = Chunks(5), []
    with FOREGROUND.running():
        consumer = threading.Thread(target=_gather, args=(chunks, Scheduler(), out))
        consumer.start()
        time.sleep(0.3)
        # The first token was asked for before the pause point; none after it.
        assert chunks.produced == 1
    consumer.join(5)
    assert not consumer.is_alive()
    assert chunks.produced == 5 and chunks.closed
    assert out[0]["choices"][0]["message"]["content"] == "t0t1t2t3t4"
    assert chunks.during_foreground[1:] == [False] * 4


def test_a_foreground_stream_never_pauses():
    chunks, out = Chunks(5), []
    with FOREGROUND.running():
        _gather(chunks, None, out)
    assert chunks.during_foreground == [True] * 5
    assert out[0]["usage"] == {"completion_tokens": 5}


def test_a_saturated_process_still_lets_a_background_call_on(monkeypatch):
    """A foreground that never ends delays each background token by at most the pause
    limit: shadows slow down under load, they never hang."""
    monkeypatch.setattr(sched, "PAUSE_LIMIT_S", 0.02)
    chunks, out = Chunks(4), []
    with FOREGROUND.running():
        consumer = threading.Thread(target=_gather, args=(chunks, Scheduler(), out))
        consumer.start()
        consumer.join(5)
        assert not consumer.is_alive() and chunks.produced == 4


def test_wait_idle_returns_at_once_when_idle_and_when_the_last_call_ends():
    gate = Foreground()
    assert gate.wait_idle(5) == 0.0
    entered = threading.Event()

    def hold() -> None:
        with gate.running():
            entered.set()
            time.sleep(0.2)

    holder = threading.Thread(target=hold)
    holder.start()
    entered.wait(5)
    assert gate.busy()
    waited = gate.wait_idle(5)
    assert not gate.busy() and 0 < waited < 5
    holder.join()


def test_a_background_call_does_not_pause_when_a_foreground_one_waits_for_its_slot(
    monkeypatch,
):
    """Same model for both (a shadow version on the production file): the production
    call queued behind the shadow's slot is not generating yet, and the shadow must
    finish rather than wait for it (which would wait for the shadow)."""
    monkeypatch.setattr(sched, "PAUSE_LIMIT_S", 60.0)  # a pause here would be a hang
    model = Scheduler()
    chunks, out = Chunks(4), []
    with model.slot(), FOREGROUND.running():
        # a foreground call that waits for the slot the background call holds
        waiter = threading.Thread(target=lambda: model.slot().__enter__())
        waiter.start()
        while not model.waiting():
            time.sleep(0.001)
        consumer = threading.Thread(target=_gather, args=(chunks, model, out))
        consumer.start()
        consumer.join(5)
        assert not consumer.is_alive(), "the background call paused for its own waiter"
        assert chunks.produced == 4 and chunks.during_foreground == [True] * 4
    waiter.join(5)


def test_foreground_counts_a_whole_block():
    from mir.inference import foreground

    assert not FOREGROUND.busy()
    with foreground():
        assert FOREGROUND.busy()
    assert not FOREGROUND.busy()
