"""``PiiGuard`` in front of a provider: what the model receives, what the caller gets
back, ``block``, the defaults per route, and the response cache behind it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from mir.contracts import Route
from mir.inference import Message, ModelRequest, ModelResponse, ResponseCache, with_cache
from mir.privacy import PiiBlocked, PiiGuard, PiiSettings, guard_pii, route_policy

EMAIL, CARD, IBAN = "jane.doe@example.com", "4111 1111 1111 1111", "DE89 3704 0044 0532 0130 00"
PROMPT = f'Request: {{"order_id": "ORD-77", "message": "mail {EMAIL}, card {CARD}, iban {IBAN}"}}'


class Recording:
    """A provider that answers with the placeholders it was shown, and keeps requests."""

    name = "litellm"

    def __init__(self) -> None:
        self.seen: list[ModelRequest] = []

    def cache_identity(self, request: ModelRequest) -> str:
        return "recording"

    def refusal(self, request: ModelRequest) -> str | None:
        return "busy"

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.seen.append(request)
        text = request.messages[-1].content
        email = next((w.strip(",") for w in text.split() if w.startswith("<EMAIL")), "none")
        answer = f'{{"order_id": "ORD-77", "reply_to": "{email}"}}'
        return ModelResponse(text=answer, provider="litellm", model="m")


def request(text: str = PROMPT) -> ModelRequest:
    return ModelRequest(
        messages=(Message(role="system", content="Be brief."), Message(role="user", content=text))
    )


def test_mask_sends_placeholders_and_restores_them_in_the_answer():
    inner = Recording()
    guard = PiiGuard(inner, "mask", PiiSettings())
    response = guard.complete(request())
    sent = inner.seen[0].messages[-1].content
    for value in (EMAIL, CARD, IBAN, CARD.replace(" ", ""), IBAN.replace(" ", "")):
        assert value not in sent
    assert "ORD-77" in sent and "<EMAIL_1>" in sent
    assert response.text == f'{{"order_id": "ORD-77", "reply_to": "{EMAIL}"}}'
    assert response.pii == {"masked": {"email": 1, "iban": 1, "card": 1}, "restored": 1}


def test_a_prompt_with_nothing_personal_goes_unchanged_and_untraced():
    inner = Recording()
    plain = request("order ORD-77, amount 40")
    response = PiiGuard(inner, "mask", PiiSettings()).complete(plain)
    assert inner.seen == [plain] and response.pii is None


def test_block_never_calls_the_model():
    inner = Recording()
    with pytest.raises(PiiBlocked, match=r"1 email, 1 iban, 1 card"):
        PiiGuard(inner, "block", PiiSettings()).complete(request())
    assert inner.seen == []


@pytest.mark.parametrize(
    ("route", "policy"),
    [
        (Route(provider="litellm", model="openai/x"), "mask"),
        (Route(provider="llama", model="default"), "allow"),
        (Route(provider="scripted", responses="r.jsonl"), "allow"),
        (Route(provider="litellm", model="openai/x", pii="allow"), "allow"),
        (Route(provider="llama", model="default", pii="block"), "block"),
    ],
)
def test_the_default_policy_masks_remote_routes_only(route, policy):
    assert route_policy(route) == policy
    inner = Recording()
    guarded = guard_pii(inner, route, PiiSettings())
    assert (guarded is inner) == (policy == "allow")


def test_the_guard_keeps_the_inner_providers_other_hooks():
    assert PiiGuard(Recording(), "mask", PiiSettings()).refusal(request()) == "busy"


def test_the_response_cache_behind_the_guard_keeps_no_personal_data(tmp_path: Path):
    cache = ResponseCache(tmp_path)
    inner = Recording()
    guard = PiiGuard(with_cache(inner, cache), "mask", PiiSettings())
    first = guard.complete(request())
    again = guard.complete(request())  # answered from the cache, restored again
    assert len(inner.seen) == 1 and again.cached and again.text == first.text
    other = guard.complete(request(PROMPT.replace("jane.doe", "omar")))
    assert "omar@example.com" in other.text and len(inner.seen) == 1
    cache.close()
    rows = sqlite3.connect(cache.path).execute("SELECT key, response FROM responses").fetchall()
    stored = repr(rows)
    assert rows and "<EMAIL_1>" in stored
    for value in (EMAIL, "omar@example.com", CARD, IBAN):
        assert value not in stored
